# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@T.prim_func(s_tir=True)
def cumsum(A: T.Buffer((3, 7), "float32", offset_factor=1), out_buf: T.Buffer((3, 7), "float32")):
    T.func_attr({"tirx.noalias": True})
    with T.sblock("cumsum_generic"):
        T.reads()
        T.writes()
        for v in T.parallel(3):
            out_buf[v * 7 // 7, v * 7 % 7] = A[v * 7 // 7, v * 7 % 7]
            for v_1 in range(6):
                out_buf[(v * 7 + (v_1 + 1)) // 7, (v * 7 + (v_1 + 1)) % 7] = out_buf[(v * 7 + (v_1 + 1 - 1)) // 7, (v * 7 + (v_1 + 1 - 1)) % 7] + A[(v * 7 + (v_1 + 1)) // 7, (v * 7 + (v_1 + 1)) % 7]
