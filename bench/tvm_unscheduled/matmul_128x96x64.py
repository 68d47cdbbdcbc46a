# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@T.prim_func(s_tir=True)
def matmul_128x96x64(A: T.Buffer((128, 64), "float32"), B: T.Buffer((64, 96), "float32"), T_matmul: T.Buffer((128, 96), "float32")):
    T.func_attr({"tirx.noalias": True})
    # with T.sblock("root"):
    for ax0, ax1, k in T.grid(128, 96, 64):
        with T.sblock("T_matmul"):
            v_ax0, v_ax1, v_k = T.axis.remap("SSR", [ax0, ax1, k])
            T.reads(A[v_ax0, v_k], B[v_k, v_ax1])
            T.writes(T_matmul[v_ax0, v_ax1])
            with T.init():
                T_matmul[v_ax0, v_ax1] = T.float32(0.0)
            T_matmul[v_ax0, v_ax1] = T_matmul[v_ax0, v_ax1] + A[v_ax0, v_k] * B[v_k, v_ax1]
