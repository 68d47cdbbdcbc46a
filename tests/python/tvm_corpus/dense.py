# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@T.prim_func(s_tir=True)
def dense(X: T.Buffer((4, 16), "float32"), W: T.Buffer((6, 16), "float32"), T_matmul_NT: T.Buffer((4, 6), "float32")):
    T.func_attr({"layout_free_buffers": [1], "tirx.noalias": True})
    # with T.sblock("root"):
    for i0, i1, k in T.grid(4, 6, 16):
        with T.sblock("T_matmul_NT"):
            v_i0, v_i1, v_k = T.axis.remap("SSR", [i0, i1, k])
            T.reads(X[v_i0, v_k], W[v_i1, v_k])
            T.writes(T_matmul_NT[v_i0, v_i1])
            with T.init():
                T_matmul_NT[v_i0, v_i1] = T.float32(0.0)
            T_matmul_NT[v_i0, v_i1] = T_matmul_NT[v_i0, v_i1] + X[v_i0, v_k] * W[v_i1, v_k]
