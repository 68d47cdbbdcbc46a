# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def gpu_elementwise_bind(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32"), C: T.Buffer((64, 64), "float32")):
        T.func_attr({"tirx.noalias": True})
        # with T.sblock("root"):
        for i_j_fused_0 in T.thread_binding(32, thread="blockIdx.x"):
            for i_j_fused_1 in T.thread_binding(128, thread="threadIdx.x"):
                with T.sblock("C"):
                    v_i = T.axis.spatial(64, (i_j_fused_0 * 128 + i_j_fused_1) // 64)
                    v_j = T.axis.spatial(64, (i_j_fused_0 * 128 + i_j_fused_1) % 64)
                    T.reads(A[v_i, v_j], B[v_i, v_j])
                    T.writes(C[v_i, v_j])
                    C[v_i, v_j] = T.exp(A[v_i, v_j]) + B[v_i, v_j]
