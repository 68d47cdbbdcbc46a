# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@T.prim_func(s_tir=True)
def reshape(A: T.Buffer((2, 3, 4), "float32"), T_reshape: T.Buffer((4, 6), "float32")):
    T.func_attr({"tirx.noalias": True})
    # with T.sblock("root"):
    for ax0, ax1 in T.grid(4, 6):
        with T.sblock("T_reshape"):
            v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
            T.reads(A[(v_ax0 * 6 + v_ax1) % 24 // 12, (v_ax0 * 6 + v_ax1) % 12 // 4, (v_ax0 * 6 + v_ax1) % 4])
            T.writes(T_reshape[v_ax0, v_ax1])
            T_reshape[v_ax0, v_ax1] = A[(v_ax0 * 6 + v_ax1) % 24 // 12, (v_ax0 * 6 + v_ax1) % 12 // 4, (v_ax0 * 6 + v_ax1) % 4]
