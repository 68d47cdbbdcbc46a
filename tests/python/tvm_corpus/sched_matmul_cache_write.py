# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def sched_matmul_cache_write(A: T.Buffer((32, 16), "float32"), B: T.Buffer((16, 32), "float32"), C: T.Buffer((32, 32), "float32")):
        T.func_attr({"tirx.noalias": True})
        # with T.sblock("root"):
        C_global = T.sblock_alloc_buffer((32, 32))
        for i_0, j_0 in T.grid(4, 4):
            for k, i_1, j_1 in T.grid(16, 8, 8):
                with T.sblock("C"):
                    v_i = T.axis.spatial(32, i_0 * 8 + i_1)
                    v_j = T.axis.spatial(32, j_0 * 8 + j_1)
                    v_k = T.axis.reduce(16, k)
                    T.reads(A[v_i, v_k], B[v_k, v_j])
                    T.writes(C_global[v_i, v_j])
                    with T.init():
                        C_global[v_i, v_j] = T.float32(0.0)
                    C_global[v_i, v_j] = C_global[v_i, v_j] + A[v_i, v_k] * B[v_k, v_j]
            for ax0 in range(8):
                for ax1 in T.vectorized(8):
                    with T.sblock("C_global"):
                        v0 = T.axis.spatial(32, i_0 * 8 + ax0)
                        v1 = T.axis.spatial(32, j_0 * 8 + ax1)
                        T.reads(C_global[v0, v1])
                        T.writes(C[v0, v1])
                        C[v0, v1] = C_global[v0, v1]
