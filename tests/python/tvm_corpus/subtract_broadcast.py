# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@T.prim_func(s_tir=True)
def subtract_broadcast(A: T.Buffer((5, 6), "float32"), B: T.Buffer((6,), "float32"), T_subtract: T.Buffer((5, 6), "float32")):
    T.func_attr({"tirx.noalias": True})
    # with T.sblock("root"):
    for ax0, ax1 in T.grid(5, 6):
        with T.sblock("T_subtract"):
            v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
            T.reads(A[v_ax0, v_ax1], B[v_ax1])
            T.writes(T_subtract[v_ax0, v_ax1])
            T_subtract[v_ax0, v_ax1] = A[v_ax0, v_ax1] - B[v_ax1]
