# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@T.prim_func(s_tir=True)
def mean_axes(A: T.Buffer((3, 4, 5), "float32"), T_divide: T.Buffer((3,), "float32")):
    T.func_attr({"tirx.noalias": True})
    # with T.sblock("root"):
    A_red = T.sblock_alloc_buffer((3,))
    for ax0, k1, k2 in T.grid(3, 4, 5):
        with T.sblock("A_red"):
            v_ax0, v_k1, v_k2 = T.axis.remap("SRR", [ax0, k1, k2])
            T.reads(A[v_ax0, v_k1, v_k2])
            T.writes(A_red[v_ax0])
            with T.init():
                A_red[v_ax0] = T.float32(0.0)
            A_red[v_ax0] = A_red[v_ax0] + A[v_ax0, v_k1, v_k2]
    for ax0 in range(3):
        with T.sblock("T_divide"):
            v_ax0 = T.axis.spatial(3, ax0)
            T.reads(A_red[v_ax0])
            T.writes(T_divide[v_ax0])
            T_divide[v_ax0] = A_red[v_ax0] / T.float32(20.0)
