# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@T.prim_func(s_tir=True)
def where_bool_cond(cond: T.Buffer((3, 4), "bool"), A: T.Buffer((3, 4), "float32"), B: T.Buffer((4,), "float32"), T_where: T.Buffer((3, 4), "float32")):
    T.func_attr({"tirx.noalias": True})
    # with T.sblock("root"):
    for ax0, ax1 in T.grid(3, 4):
        with T.sblock("T_where"):
            v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
            T.reads(cond[v_ax0, v_ax1], A[v_ax0, v_ax1], B[v_ax1])
            T.writes(T_where[v_ax0, v_ax1])
            T_where[v_ax0, v_ax1] = T.Select(0 < T.Cast("int32", cond[v_ax0, v_ax1]), A[v_ax0, v_ax1], B[v_ax1])
