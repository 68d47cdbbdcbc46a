# take / gather along axis 0 with indices clamped into range: B[i, j] = A[clamp(indices[i]), j].
# from tvm.script import tir as T

@T.prim_func
def take_gather(A: T.Buffer((1000, 64), "float32"), indices: T.Buffer((32,), "int32"), B: T.Buffer((32, 64), "float32")):
    T.func_attr({"global_symbol": "take_gather", "tir.noalias": True})
    for i in range(32):
        for j in range(64):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(A[0:1000, vj], indices[vi])
                T.writes(B[vi, vj])
                B[vi, vj] = A[T.min(T.max(indices[vi], 0), 999), vj]
