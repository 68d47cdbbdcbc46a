# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@T.prim_func(s_tir=True)
def where_greater(A: T.Buffer((4, 6), "float32"), B: T.Buffer((4, 6), "float32"), T_where: T.Buffer((4, 6), "float32")):
    T.func_attr({"tirx.noalias": True})
    # with T.sblock("root"):
    T_greater = T.sblock_alloc_buffer((4, 6), "bool")
    T_multiply = T.sblock_alloc_buffer((4, 6))
    for ax0, ax1 in T.grid(4, 6):
        with T.sblock("T_greater"):
            v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
            T.reads(B[v_ax0, v_ax1], A[v_ax0, v_ax1])
            T.writes(T_greater[v_ax0, v_ax1])
            T_greater[v_ax0, v_ax1] = B[v_ax0, v_ax1] < A[v_ax0, v_ax1]
    for ax0, ax1 in T.grid(4, 6):
        with T.sblock("T_multiply"):
            v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
            T.reads(B[v_ax0, v_ax1])
            T.writes(T_multiply[v_ax0, v_ax1])
            T_multiply[v_ax0, v_ax1] = B[v_ax0, v_ax1] * T.float32(2.0)
    for ax0, ax1 in T.grid(4, 6):
        with T.sblock("T_where"):
            v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
            T.reads(T_greater[v_ax0, v_ax1], A[v_ax0, v_ax1], T_multiply[v_ax0, v_ax1])
            T.writes(T_where[v_ax0, v_ax1])
            T_where[v_ax0, v_ax1] = T.Select(0 < T.Cast("int32", T_greater[v_ax0, v_ax1]), A[v_ax0, v_ax1], T_multiply[v_ax0, v_ax1])
