# from tvm.script import ir as I
# from tvm.script import tir as T

@I.ir_module
class Module:
    @T.prim_func
    def kernel(a: T.handle, n: T.int32):
        A = T.match_buffer(a, (n,), "float16", index_dtype="int64")
        m = T.int32(is_size_var=True)
        x: T.int32 = n * 2 + 1
        assert x > 0, "positive\n"
        buf = T.allocate([16], "float32", "shared")
        S = T.decl_buffer((16,), "float32", data=buf, scope="shared")
        for bx in T.thread_binding(4, thread="blockIdx.x"):
            for t in T.vectorized(4):
                if bx < 2 and not t == 1:
                    S[t] = T.Cast("float32", A[T.Cast("int64", t)])
                elif bx >= 3:
                    T.evaluate(T.call_extern("int32", "f", x << 1 | 3 & ~x ^ 5))
                else:
                    S[0:4] = T.Broadcast(T.float32(0), 4)
        while n > m:
            with T.attr(buf, "k", T.Let(y // 2 % 3, where={y: T.truncdiv(n, 4)})):
                T.evaluate(T.Select(n < 0, T.min(n, 1), T.max(n, T.if_then_else(n > 1, 2, 3))))

    @T.prim_func
    def helper(x: T.int64) -> T.int64:
        T.evaluate(T.call_global("kernel", "int32", T.int64(3), x // x))
