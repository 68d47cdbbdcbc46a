# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@T.prim_func(s_tir=True)
def sched_split_nondivisible(A: T.Buffer((37,), "float32"), compute: T.Buffer((37,), "float32")):
    T.func_attr({"tirx.noalias": True})
    # with T.sblock("root"):
    for i0_0, i0_1 in T.grid(5, 8):
        with T.sblock("compute"):
            v_i0 = T.axis.spatial(37, i0_0 * 8 + i0_1)
            T.where(i0_0 * 8 + i0_1 < 37)
            T.reads(A[v_i0])
            T.writes(compute[v_i0])
            compute[v_i0] = T.exp(A[v_i0])
