# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@T.prim_func(s_tir=True)
def sched_rfactor_sum(A: T.Buffer((4, 64), "float32"), B: T.Buffer((4,), "float32")):
    T.func_attr({"tirx.noalias": True})
    # with T.sblock("root"):
    B_rf = T.sblock_alloc_buffer((8, 4))
    for i, k_0, k_1 in T.grid(4, 8, 8):
        with T.sblock("B_rf"):
            vk_1, v_i, vk_0 = T.axis.remap("SSR", [k_1, i, k_0])
            T.reads(A[v_i, vk_0 * 8 + vk_1])
            T.writes(B_rf[vk_1, v_i])
            with T.init():
                B_rf[vk_1, v_i] = T.float32(0.0)
            B_rf[vk_1, v_i] = B_rf[vk_1, v_i] + A[v_i, vk_0 * 8 + vk_1]
    for i, k_1 in T.grid(4, 8):
        with T.sblock("B"):
            vk_1, v_i = T.axis.remap("RS", [k_1, i])
            T.reads(B_rf[vk_1, v_i])
            T.writes(B[v_i])
            with T.init():
                B[v_i] = T.float32(0.0)
            B[v_i] = B[v_i] + B_rf[vk_1, v_i]
