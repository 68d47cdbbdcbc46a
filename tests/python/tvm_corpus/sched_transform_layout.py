# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@T.prim_func(s_tir=True)
def sched_transform_layout(A: T.Buffer((16, 8), "float32"), B: T.Buffer((8, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    T.func_attr({"tirx.noalias": True})
    # with T.sblock("root"):
    B_global = T.sblock_alloc_buffer((4, 8, 4))
    for ax0, ax1 in T.grid(8, 16):
        with T.sblock("B_global"):
            v0, v1 = T.axis.remap("SS", [ax0, ax1])
            T.reads(B[v0, v1])
            T.writes(B_global[v1 // 4, v0, v1 % 4])
            B_global[v1 // 4, v0, v1 % 4] = B[v0, v1]
    for i, j, k in T.grid(16, 16, 8):
        with T.sblock("C"):
            v_i, v_j, v_k = T.axis.remap("SSR", [i, j, k])
            T.reads(A[v_i, v_k], B_global[v_j // 4, v_k, v_j % 4])
            T.writes(C[v_i, v_j])
            with T.init():
                C[v_i, v_j] = T.float32(0.0)
            C[v_i, v_j] = C[v_i, v_j] + A[v_i, v_k] * B_global[v_j // 4, v_k, v_j % 4]
