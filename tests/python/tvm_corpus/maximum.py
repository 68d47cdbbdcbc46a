# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@T.prim_func(s_tir=True)
def maximum(A: T.Buffer((7,), "float32"), B: T.Buffer((7,), "float32"), T_maximum: T.Buffer((7,), "float32")):
    T.func_attr({"tirx.noalias": True})
    # with T.sblock("root"):
    for ax0 in range(7):
        with T.sblock("T_maximum"):
            v_ax0 = T.axis.spatial(7, ax0)
            T.reads(A[v_ax0], B[v_ax0])
            T.writes(T_maximum[v_ax0])
            T_maximum[v_ax0] = T.max(A[v_ax0], B[v_ax0])
