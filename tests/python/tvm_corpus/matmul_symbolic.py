# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@T.prim_func(s_tir=True)
def matmul_symbolic(A: T.Buffer(("n", "k"), "float32"), B: T.Buffer((k, "m"), "float32"), T_matmul: T.Buffer((n, m), "float32")):
    n, k = T.int32(), T.int32()
    m = T.int32()
    T.func_attr({"tirx.noalias": True})
    # with T.sblock("root"):
    for ax0, ax1, k_1 in T.grid(n, m, k):
        with T.sblock("T_matmul"):
            v_ax0, v_ax1, v_k = T.axis.remap("SSR", [ax0, ax1, k_1])
            T.reads(A[v_ax0, v_k], B[v_k, v_ax1])
            T.writes(T_matmul[v_ax0, v_ax1])
            with T.init():
                T_matmul[v_ax0, v_ax1] = T.float32(0.0)
            T_matmul[v_ax0, v_ax1] = T_matmul[v_ax0, v_ax1] + A[v_ax0, v_k] * B[v_k, v_ax1]
