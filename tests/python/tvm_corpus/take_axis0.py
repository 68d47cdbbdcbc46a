# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@T.prim_func(s_tir=True)
def take_axis0(A: T.Buffer((6, 4), "float32"), indices: T.Buffer((5,), "int32"), T_take: T.Buffer((5, 4), "float32")):
    T.func_attr({"tirx.noalias": True})
    # with T.sblock("root"):
    for ax0, ax1 in T.grid(5, 4):
        with T.sblock("T_take"):
            v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
            T.reads(A[indices[v_ax0], v_ax1], indices[v_ax0])
            T.writes(T_take[v_ax0, v_ax1])
            T_take[v_ax0, v_ax1] = A[indices[v_ax0], v_ax1]
