# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def add_symbolic(A: T.Buffer(("n",), "float32"), B: T.Buffer((n,), "float32"), T_add: T.Buffer((n,), "float32")):
        n = T.int32()
        T.func_attr({"tirx.noalias": True})
        # with T.sblock("root"):
        for ax0 in range(n):
            with T.sblock("T_add"):
                v_ax0 = T.axis.spatial(n, ax0)
                T.reads(A[v_ax0], B[v_ax0])
                T.writes(T_add[v_ax0])
                T_add[v_ax0] = A[v_ax0] + B[v_ax0]
