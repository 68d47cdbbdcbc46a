# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@T.prim_func(s_tir=True)
def gather_axis1(A: T.Buffer((3, 5), "float32"), indices: T.Buffer((3, 4), "int32"), T_gather: T.Buffer((3, 4), "float32")):
    T.func_attr({"tirx.noalias": True})
    # with T.sblock("root"):
    for ax0, ax1 in T.grid(3, 4):
        with T.sblock("T_gather"):
            v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
            T.reads(A[v_ax0, indices[v_ax0, v_ax1]], indices[v_ax0, v_ax1])
            T.writes(T_gather[v_ax0, v_ax1])
            T_gather[v_ax0, v_ax1] = A[v_ax0, indices[v_ax0, v_ax1]]
