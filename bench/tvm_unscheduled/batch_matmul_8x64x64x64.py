# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@T.prim_func(s_tir=True)
def batch_matmul_8x64x64x64(x: T.Buffer((8, 64, 64), "float32"), y: T.Buffer((8, 64, 64), "float32"), T_batch_matmul_NT: T.Buffer((8, 64, 64), "float32")):
    T.func_attr({"layout_free_buffers": [1], "tirx.noalias": True})
    # with T.sblock("root"):
    for b, i, j, k in T.grid(8, 64, 64, 64):
        with T.sblock("T_batch_matmul_NT"):
            v_b, v_i, v_j, v_k = T.axis.remap("SSSR", [b, i, j, k])
            T.reads(x[v_b, v_i, v_k], y[v_b, v_j, v_k])
            T.writes(T_batch_matmul_NT[v_b, v_i, v_j])
            with T.init():
                T_batch_matmul_NT[v_b, v_i, v_j] = T.float32(0.0)
            T_batch_matmul_NT[v_b, v_i, v_j] = T_batch_matmul_NT[v_b, v_i, v_j] + x[v_b, v_i, v_k] * y[v_b, v_j, v_k]
