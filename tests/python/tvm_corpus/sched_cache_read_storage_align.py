# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@T.prim_func(s_tir=True)
def sched_cache_read_storage_align(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    T.func_attr({"tirx.noalias": True})
    # with T.sblock("root"):
    A_global = T.sblock_alloc_buffer((16, 16))
    for i in range(16):
        for ax0 in range(16):
            with T.sblock("A_global"):
                v0, v1 = T.axis.remap("SS", [i, ax0])
                T.reads(A[v0, v1])
                T.writes(A_global[v0, v1])
                T.sblock_attr({"buffer_dim_align": [[0, 0, 8, 1]]})
                A_global[v0, v1] = A[v0, v1]
        for j, k in T.grid(16, 16):
            with T.sblock("C"):
                v_i, v_j, v_k = T.axis.remap("SSR", [i, j, k])
                T.reads(A_global[v_i, v_k], B[v_k, v_j])
                T.writes(C[v_i, v_j])
                with T.init():
                    C[v_i, v_j] = T.float32(0.0)
                C[v_i, v_j] = C[v_i, v_j] + A_global[v_i, v_k] * B[v_k, v_j]
