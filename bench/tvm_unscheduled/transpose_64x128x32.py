# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@T.prim_func(s_tir=True)
def transpose_64x128x32(A: T.Buffer((64, 128, 32), "float32"), T_transpose: T.Buffer((32, 64, 128), "float32")):
    T.func_attr({"tirx.noalias": True})
    # with T.sblock("root"):
    for ax0, ax1, ax2 in T.grid(32, 64, 128):
        with T.sblock("T_transpose"):
            v_ax0, v_ax1, v_ax2 = T.axis.remap("SSS", [ax0, ax1, ax2])
            T.reads(A[v_ax1, v_ax2, v_ax0])
            T.writes(T_transpose[v_ax0, v_ax1, v_ax2])
            T_transpose[v_ax0, v_ax1, v_ax2] = A[v_ax1, v_ax2, v_ax0]
