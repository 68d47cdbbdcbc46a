# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@T.prim_func(s_tir=True)
def sched_symbolic_split(A: T.Buffer(("n",), "float32"), B: T.Buffer((n,), "float32"), T_add: T.Buffer((n,), "float32")):
    n = T.int32()
    T.func_attr({"tirx.noalias": True})
    # with T.sblock("root"):
    for ax0_0 in T.parallel((n + 3) // 4):
        for ax0_1 in range(4):
            with T.sblock("T_add"):
                v_ax0 = T.axis.spatial(n, ax0_0 * 4 + ax0_1)
                T.where(ax0_0 * 4 + ax0_1 < n)
                T.reads(A[v_ax0], B[v_ax0])
                T.writes(T_add[v_ax0])
                T_add[v_ax0] = A[v_ax0] + B[v_ax0]
