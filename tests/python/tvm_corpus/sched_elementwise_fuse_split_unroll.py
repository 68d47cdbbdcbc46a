# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@T.prim_func(s_tir=True)
def sched_elementwise_fuse_split_unroll(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    T.func_attr({"tirx.noalias": True})
    # with T.sblock("root"):
    for i_j_fused_0 in T.parallel(8):
        for i_j_fused_1 in T.unroll(4):
            for i_j_fused_2 in T.vectorized(8):
                with T.sblock("C"):
                    v_i = T.axis.spatial(16, (i_j_fused_0 * 32 + i_j_fused_1 * 8 + i_j_fused_2) // 16)
                    v_j = T.axis.spatial(16, (i_j_fused_0 * 32 + i_j_fused_1 * 8 + i_j_fused_2) % 16)
                    T.reads(A[v_i, v_j], B[v_i, v_j])
                    T.writes(C[v_i, v_j])
                    C[v_i, v_j] = T.exp(A[v_i, v_j]) + B[v_i, v_j]
