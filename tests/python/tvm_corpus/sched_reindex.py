# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@T.prim_func(s_tir=True)
def sched_reindex(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32"), C: T.Buffer((8, 8), "float32")):
    T.func_attr({"tirx.noalias": True})
    # with T.sblock("root"):
    A_reindex = T.sblock_alloc_buffer((8, 8))
    C_reindex = T.sblock_alloc_buffer((8, 8))
    for ax0, ax1 in T.grid(8, 8):
        with T.sblock("A_reindex_reindex"):
            v0, v1 = T.axis.remap("SS", [ax0, ax1])
            T.reads(A[v0, v1])
            T.writes(A_reindex[v0, v1])
            A_reindex[v0, v1] = A[v0, v1]
    for i, j, k in T.grid(8, 8, 8):
        with T.sblock("C"):
            v_i, v_j, v_k = T.axis.remap("SSR", [i, j, k])
            T.reads(A_reindex[v_i, v_k], B[v_k, v_j])
            T.writes(C_reindex[v_i, v_j])
            with T.init():
                C_reindex[v_i, v_j] = T.float32(0.0)
            C_reindex[v_i, v_j] = C_reindex[v_i, v_j] + A_reindex[v_i, v_k] * B[v_k, v_j]
    for ax0, ax1 in T.grid(8, 8):
        with T.sblock("C_reindex"):
            v0, v1 = T.axis.remap("SS", [ax0, ax1])
            T.reads(C_reindex[v0, v1])
            T.writes(C[v0, v1])
            C[v0, v1] = C_reindex[v0, v1]
