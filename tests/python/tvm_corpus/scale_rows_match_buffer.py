# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@T.prim_func(s_tir=True)
def scale_rows_match_buffer(A: T.Buffer(("n", "m"), "float32"), S: T.Buffer((n,), "float32"), B: T.Buffer((n, m), "float32")):
    n, m = T.int32(), T.int32()
    # with T.sblock("root"):
    for i, j in T.grid(n, m):
        with T.sblock("scale"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(A[vi, vj], S[vi])
            T.writes(B[vi, vj])
            B[vi, vj] = A[vi, vj] * S[vi]
