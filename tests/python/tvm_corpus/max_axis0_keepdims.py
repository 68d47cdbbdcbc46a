# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@T.prim_func(s_tir=True)
def max_axis0_keepdims(A: T.Buffer((9, 5), "float32"), A_red: T.Buffer((1, 5), "float32")):
    T.func_attr({"tirx.noalias": True})
    # with T.sblock("root"):
    for ax0, ax1, k0 in T.grid(1, 5, 9):
        with T.sblock("A_red"):
            v_ax0, v_ax1, v_k0 = T.axis.remap("SSR", [ax0, ax1, k0])
            T.reads(A[v_k0, v_ax1])
            T.writes(A_red[v_ax0, v_ax1])
            with T.init():
                A_red[v_ax0, v_ax1] = T.float32(-340282346638528859811704183484516925440.0)
            A_red[v_ax0, v_ax1] = T.max(A_red[v_ax0, v_ax1], A[v_k0, v_ax1])
