# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@T.prim_func(s_tir=True)
def sched_reverse_compute_inline(A: T.Buffer((8, 12), "float32"), C: T.Buffer((8, 12), "float32")):
    T.func_attr({"tirx.noalias": True})
    # with T.sblock("root"):
    for i, j_0, j_1 in T.grid(8, 3, 4):
        with T.sblock("B"):
            v_i = T.axis.spatial(8, i)
            v_j = T.axis.spatial(12, j_0 * 4 + j_1)
            T.reads(A[v_i, v_j])
            T.writes(C[v_i, v_j])
            C[v_i, v_j] = T.max(A[v_i, v_j] * T.float32(3.0), T.float32(0.0))
