# from tvm.script import tir as T

@T.prim_func
def add(A: T.Buffer((128,), "float32"), B: T.Buffer((128,), "float32")):
    T.func_attr({"global_symbol": "add"})
    for i in range(128):
        B[i] = A[i] + T.float32(1)
