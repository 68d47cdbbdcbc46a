# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@T.prim_func(s_tir=True)
def sum_rows_512x512(A: T.Buffer((512, 512), "float32"), A_red: T.Buffer((512,), "float32")):
    T.func_attr({"tirx.noalias": True})
    # with T.sblock("root"):
    for ax0, k1 in T.grid(512, 512):
        with T.sblock("A_red"):
            v_ax0, v_k1 = T.axis.remap("SR", [ax0, k1])
            T.reads(A[v_ax0, v_k1])
            T.writes(A_red[v_ax0])
            with T.init():
                A_red[v_ax0] = T.float32(0.0)
            A_red[v_ax0] = A_red[v_ax0] + A[v_ax0, v_k1]
