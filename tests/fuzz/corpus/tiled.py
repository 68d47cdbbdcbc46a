@T.prim_func
def tiled(A: T.Buffer((1024, 1024), "float16"), B: T.Buffer((1024,), "float16")):
    for bx in T.thread_binding(64, thread="blockIdx.x"):
        for tx in T.thread_binding(16, thread="threadIdx.x"):
            with T.block("tile"):
                v0 = T.axis.spatial(64, bx)
                v1 = T.axis.spatial((0, 16), tx)
                T.where(bx * 16 + tx < 1024)
                T.reads(A[v0 * 16:v0 * 16 + 16, 0:1024])
                T.writes(B[v0 * 16 + v1])
                T.block_attr({"meta": 1, "l": [1, 2.5, "s", None, True]})
                A_shared = T.alloc_buffer((16, 1024), "float16", scope="shared")
                A_sub = T.match_buffer(A[v0 * 16:v0 * 16 + 16, 0:1024], (16, 1024), "float16")
                for k in T.serial(1024, annotations={"pragma_unroll": 4}):
                    A_shared[v1, k] = A_sub[v1, k]
                B[v0 * 16 + v1] = A_shared[v1, 0]
