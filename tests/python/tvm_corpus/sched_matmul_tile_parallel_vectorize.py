# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@T.prim_func(s_tir=True)
def sched_matmul_tile_parallel_vectorize(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32"), C: T.Buffer((64, 64), "float32")):
    T.func_attr({"tirx.noalias": True})
    # with T.sblock("root"):
    for i_0_j_0_fused in T.parallel(32):
        for i_1_init in range(16):
            for j_1_init in T.vectorized(8):
                with T.sblock("C_init"):
                    v_i = T.axis.spatial(64, i_0_j_0_fused // 8 * 16 + i_1_init)
                    v_j = T.axis.spatial(64, i_0_j_0_fused % 8 * 8 + j_1_init)
                    T.reads()
                    T.writes(C[v_i, v_j])
                    C[v_i, v_j] = T.float32(0.0)
        for k_0, i_1 in T.grid(16, 16):
            for k_1 in T.unroll(4):
                for j_1 in T.vectorized(8):
                    with T.sblock("C_update"):
                        v_i = T.axis.spatial(64, i_0_j_0_fused // 8 * 16 + i_1)
                        v_j = T.axis.spatial(64, i_0_j_0_fused % 8 * 8 + j_1)
                        v_k = T.axis.reduce(64, k_0 * 4 + k_1)
                        T.reads(C[v_i, v_j], A[v_i, v_k], B[v_k, v_j])
                        T.writes(C[v_i, v_j])
                        C[v_i, v_j] = C[v_i, v_j] + A[v_i, v_k] * B[v_k, v_j]
