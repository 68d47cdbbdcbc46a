# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@T.prim_func(s_tir=True)
def sched_matmul_cache_read_compute_at(A: T.Buffer((16, 32), "float32"), B: T.Buffer((32, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    T.func_attr({"tirx.noalias": True})
    # with T.sblock("root"):
    A_global = T.sblock_alloc_buffer((16, 32))
    for k_0 in range(4):
        for ax0, ax1 in T.grid(16, 8):
            with T.sblock("A_global"):
                v0 = T.axis.spatial(16, ax0)
                v1 = T.axis.spatial(32, k_0 * 8 + ax1)
                T.reads(A[v0, v1])
                T.writes(A_global[v0, v1])
                A_global[v0, v1] = A[v0, v1]
        for i, j, k_1 in T.grid(16, 16, 8):
            with T.sblock("C"):
                v_i, v_j = T.axis.remap("SS", [i, j])
                v_k = T.axis.reduce(32, k_0 * 8 + k_1)
                T.reads(A_global[v_i, v_k], B[v_k, v_j])
                T.writes(C[v_i, v_j])
                with T.init():
                    C[v_i, v_j] = T.float32(0.0)
                C[v_i, v_j] = C[v_i, v_j] + A_global[v_i, v_k] * B[v_k, v_j]
