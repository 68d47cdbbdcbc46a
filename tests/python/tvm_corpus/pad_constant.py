# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@T.prim_func(s_tir=True)
def pad_constant(A: T.Buffer((2, 3, 4), "float32"), PadInput: T.Buffer((3, 4, 9), "float32")):
    T.func_attr({"tirx.noalias": True})
    # with T.sblock("root"):
    for i0, i1, i2 in T.grid(3, 4, 9):
        with T.sblock("PadInput"):
            v_i0, v_i1, v_i2 = T.axis.remap("SSS", [i0, i1, i2])
            T.reads(A[v_i0, v_i1 - 1, v_i2 - 2])
            T.writes(PadInput[v_i0, v_i1, v_i2])
            PadInput[v_i0, v_i1, v_i2] = T.if_then_else(0 <= v_i0 and v_i0 < 2 and 1 <= v_i1 and v_i1 < 4 and 2 <= v_i2 and v_i2 < 6, A[v_i0, v_i1 - 1, v_i2 - 2], T.float32(0.5))
