# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def sched_softmax_compute_at(A: T.Buffer((4, 32), "float32"), T_softmax_norm: T.Buffer((4, 32), "float32")):
        T.func_attr({"tirx.noalias": True})
        # with T.sblock("root"):
        T_softmax_maxelem = T.sblock_alloc_buffer((4,))
        T_softmax_exp = T.sblock_alloc_buffer((4, 32))
        T_softmax_expsum = T.sblock_alloc_buffer((4,))
        for i0 in T.parallel(4):
            for ax0 in range(32):
                with T.sblock("T_softmax_maxelem"):
                    v_i0, v_k = T.axis.remap("SR", [i0, ax0])
                    T.reads(A[v_i0, v_k])
                    T.writes(T_softmax_maxelem[v_i0])
                    with T.init():
                        T_softmax_maxelem[v_i0] = T.float32(-340282346638528859811704183484516925440.0)
                    T_softmax_maxelem[v_i0] = T.max(T_softmax_maxelem[v_i0], A[v_i0, v_k])
            for ax0 in range(32):
                with T.sblock("T_softmax_exp"):
                    v_i0, v_i1 = T.axis.remap("SS", [i0, ax0])
                    T.reads(A[v_i0, v_i1], T_softmax_maxelem[v_i0])
                    T.writes(T_softmax_exp[v_i0, v_i1])
                    T_softmax_exp[v_i0, v_i1] = T.exp(A[v_i0, v_i1] - T_softmax_maxelem[v_i0])
            for ax0 in range(32):
                with T.sblock("T_softmax_expsum"):
                    v_i0, v_k = T.axis.remap("SR", [i0, ax0])
                    T.reads(T_softmax_exp[v_i0, v_k])
                    T.writes(T_softmax_expsum[v_i0])
                    with T.init():
                        T_softmax_expsum[v_i0] = T.float32(0.0)
                    T_softmax_expsum[v_i0] = T_softmax_expsum[v_i0] + T_softmax_exp[v_i0, v_k]
            for i1 in range(32):
                with T.sblock("T_softmax_norm"):
                    v_i0, v_i1 = T.axis.remap("SS", [i0, i1])
                    T.reads(T_softmax_exp[v_i0, v_i1], T_softmax_expsum[v_i0])
                    T.writes(T_softmax_norm[v_i0, v_i1])
                    T.sblock_attr({"axis": 1})
                    T_softmax_norm[v_i0, v_i1] = T_softmax_exp[v_i0, v_i1] / T_softmax_expsum[v_i0]
