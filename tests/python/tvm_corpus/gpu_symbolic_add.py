# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@T.prim_func(s_tir=True)
def gpu_symbolic_add(A: T.Buffer(("n",), "float32"), B: T.Buffer((n,), "float32"), T_add: T.Buffer((n,), "float32")):
    n = T.int32()
    T.func_attr({"tirx.noalias": True})
    # with T.sblock("root"):
    for ax0_0 in T.thread_binding((n + 255) // 256, thread="blockIdx.x"):
        for ax0_1 in T.thread_binding(256, thread="threadIdx.x"):
            with T.sblock("T_add"):
                v_ax0 = T.axis.spatial(n, ax0_0 * 256 + ax0_1)
                T.where(ax0_0 * 256 + ax0_1 < n)
                T.reads(A[v_ax0], B[v_ax0])
                T.writes(T_add[v_ax0])
                T_add[v_ax0] = A[v_ax0] + B[v_ax0]
