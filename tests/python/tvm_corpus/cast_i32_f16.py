# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@T.prim_func(s_tir=True)
def cast_i32_f16(A: T.Buffer((12,), "int32"), compute: T.Buffer((12,), "float16")):
    T.func_attr({"tirx.noalias": True})
    # with T.sblock("root"):
    for i0 in range(12):
        with T.sblock("compute"):
            v_i0 = T.axis.spatial(12, i0)
            T.reads(A[v_i0])
            T.writes(compute[v_i0])
            compute[v_i0] = T.Cast("float16", A[v_i0])
