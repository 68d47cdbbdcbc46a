# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@T.prim_func(s_tir=True)
def min_all(A: T.Buffer((4, 5, 6), "float32"), A_red: T.Buffer((), "float32")):
    T.func_attr({"tirx.noalias": True})
    # with T.sblock("root"):
    for k0, k1, k2 in T.grid(4, 5, 6):
        with T.sblock("A_red"):
            v_k0, v_k1, v_k2 = T.axis.remap("RRR", [k0, k1, k2])
            T.reads(A[v_k0, v_k1, v_k2])
            T.writes(A_red[()])
            with T.init():
                A_red[()] = T.float32(340282346638528859811704183484516925440.0)
            A_red[()] = T.min(A_red[()], A[v_k0, v_k1, v_k2])
