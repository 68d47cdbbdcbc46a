# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@T.prim_func(s_tir=True)
def divide(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32"), T_divide: T.Buffer((8, 8), "float32")):
    T.func_attr({"tirx.noalias": True})
    # with T.sblock("root"):
    for ax0, ax1 in T.grid(8, 8):
        with T.sblock("T_divide"):
            v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
            T.reads(A[v_ax0, v_ax1], B[v_ax0, v_ax1])
            T.writes(T_divide[v_ax0, v_ax1])
            T_divide[v_ax0, v_ax1] = A[v_ax0, v_ax1] / B[v_ax0, v_ax1]
