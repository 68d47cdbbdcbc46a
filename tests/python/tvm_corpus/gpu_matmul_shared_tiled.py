# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@T.prim_func(s_tir=True)
def gpu_matmul_shared_tiled(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32"), C: T.Buffer((64, 64), "float32")):
    T.func_attr({"tirx.noalias": True})
    # with T.sblock("root"):
    C_local = T.sblock_alloc_buffer((64, 64), scope="local")
    A_shared = T.sblock_alloc_buffer((64, 64), scope="shared")
    B_shared = T.sblock_alloc_buffer((64, 64), scope="shared")
    for i_0 in T.thread_binding(4, thread="blockIdx.y"):
        for j_0 in T.thread_binding(4, thread="blockIdx.x"):
            for i_1 in T.thread_binding(8, thread="threadIdx.y"):
                for j_1 in T.thread_binding(8, thread="threadIdx.x"):
                    for i_2_init, j_2_init in T.grid(2, 2):
                        with T.sblock("C_init"):
                            v_i = T.axis.spatial(64, i_0 * 16 + i_1 * 2 + i_2_init)
                            v_j = T.axis.spatial(64, j_0 * 16 + j_1 * 2 + j_2_init)
                            T.reads()
                            T.writes(C_local[v_i, v_j])
                            C_local[v_i, v_j] = T.float32(0.0)
                    for k_0 in range(8):
                        for ax0_ax1_fused_0 in range(2):
                            for ax0_ax1_fused_1 in T.thread_binding(8, thread="threadIdx.y"):
                                for ax0_ax1_fused_2 in T.thread_binding(8, thread="threadIdx.x"):
                                    with T.sblock("A_shared"):
                                        v0 = T.axis.spatial(64, i_0 * 16 + (ax0_ax1_fused_0 * 64 + ax0_ax1_fused_1 * 8 + ax0_ax1_fused_2) // 8)
                                        v1 = T.axis.spatial(64, k_0 * 8 + (ax0_ax1_fused_0 * 64 + ax0_ax1_fused_1 * 8 + ax0_ax1_fused_2) % 8)
                                        T.reads(A[v0, v1])
                                        T.writes(A_shared[v0, v1])
                                        A_shared[v0, v1] = A[v0, v1]
                        for ax0_ax1_fused_0 in range(2):
                            for ax0_ax1_fused_1 in T.thread_binding(8, thread="threadIdx.y"):
                                for ax0_ax1_fused_2 in T.thread_binding(8, thread="threadIdx.x"):
                                    with T.sblock("B_shared"):
                                        v0 = T.axis.spatial(64, k_0 * 8 + (ax0_ax1_fused_0 * 64 + ax0_ax1_fused_1 * 8 + ax0_ax1_fused_2) // 16)
                                        v1 = T.axis.spatial(64, j_0 * 16 + (ax0_ax1_fused_0 * 64 + ax0_ax1_fused_1 * 8 + ax0_ax1_fused_2) % 16)
                                        T.reads(B[v0, v1])
                                        T.writes(B_shared[v0, v1])
                                        B_shared[v0, v1] = B[v0, v1]
                        for k_1, i_2, j_2 in T.grid(8, 2, 2):
                            with T.sblock("C_update"):
                                v_i = T.axis.spatial(64, i_0 * 16 + i_1 * 2 + i_2)
                                v_j = T.axis.spatial(64, j_0 * 16 + j_1 * 2 + j_2)
                                v_k = T.axis.reduce(64, k_0 * 8 + k_1)
                                T.reads(C_local[v_i, v_j], A_shared[v_i, v_k], B_shared[v_k, v_j])
                                T.writes(C_local[v_i, v_j])
                                C_local[v_i, v_j] = C_local[v_i, v_j] + A_shared[v_i, v_k] * B_shared[v_k, v_j]
                    for ax0, ax1 in T.grid(2, 2):
                        with T.sblock("C_local"):
                            v0 = T.axis.spatial(64, i_0 * 16 + i_1 * 2 + ax0)
                            v1 = T.axis.spatial(64, j_0 * 16 + j_1 * 2 + ax1)
                            T.reads(C_local[v0, v1])
                            T.writes(C[v0, v1])
                            C[v0, v1] = C_local[v0, v1]
