# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@T.prim_func(s_tir=True)
def strided_slice(A: T.Buffer((8, 8), "float32"), T_strided_slice: T.Buffer((3, 3), "float32")):
    T.func_attr({"tirx.noalias": True})
    # with T.sblock("root"):
    for ax0, ax1 in T.grid(3, 3):
        with T.sblock("T_strided_slice"):
            v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
            T.reads(A[v_ax0 * 2 + 1, v_ax1 * 3])
            T.writes(T_strided_slice[v_ax0, v_ax1])
            T_strided_slice[v_ax0, v_ax1] = A[v_ax0 * 2 + 1, v_ax1 * 3]
