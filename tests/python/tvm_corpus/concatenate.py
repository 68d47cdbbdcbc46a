# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@T.prim_func(s_tir=True)
def concatenate(A: T.Buffer((2, 3), "float32"), B: T.Buffer((2, 1), "float32"), C: T.Buffer((2, 4), "float32"), T_concat: T.Buffer((2, 8), "float32")):
    T.func_attr({"tirx.noalias": True})
    # with T.sblock("root"):
    for ax0, ax1 in T.grid(2, 8):
        with T.sblock("T_concat"):
            v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
            T.reads(C[v_ax0, v_ax1 - 4], B[v_ax0, v_ax1 - 3], A[v_ax0, v_ax1])
            T.writes(T_concat[v_ax0, v_ax1])
            T_concat[v_ax0, v_ax1] = T.if_then_else(4 <= v_ax1, C[v_ax0, v_ax1 - 4], T.if_then_else(3 <= v_ax1, B[v_ax0, v_ax1 - 3], A[v_ax0, v_ax1]))
