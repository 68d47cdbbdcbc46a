# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@T.prim_func(s_tir=True)
def leaky_relu(A: T.Buffer((16,), "float32"), compute: T.Buffer((16,), "float32")):
    T.func_attr({"tirx.noalias": True})
    # with T.sblock("root"):
    for i0 in range(16):
        with T.sblock("compute"):
            v_i0 = T.axis.spatial(16, i0)
            T.reads(A[v_i0])
            T.writes(compute[v_i0])
            compute[v_i0] = T.Select(T.float32(0.0) < A[v_i0], A[v_i0], A[v_i0] * T.float32(0.10000000000000001))
