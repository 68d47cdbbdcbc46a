# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@T.prim_func(s_tir=True)
def log_softmax(A: T.Buffer((3, 12), "float32"), compute: T.Buffer((3, 12), "float32")):
    T.func_attr({"tirx.noalias": True})
    # with T.sblock("root"):
    T_softmax_maxelem = T.sblock_alloc_buffer((3,))
    compute_1 = T.sblock_alloc_buffer((3,))
    for i0, k in T.grid(3, 12):
        with T.sblock("T_softmax_maxelem"):
            v_i0, v_k = T.axis.remap("SR", [i0, k])
            T.reads(A[v_i0, v_k])
            T.writes(T_softmax_maxelem[v_i0])
            with T.init():
                T_softmax_maxelem[v_i0] = T.float32(-340282346638528859811704183484516925440.0)
            T_softmax_maxelem[v_i0] = T.max(T_softmax_maxelem[v_i0], A[v_i0, v_k])
    for i0, k in T.grid(3, 12):
        with T.sblock("compute"):
            v_i0, v_k = T.axis.remap("SR", [i0, k])
            T.reads(A[v_i0, v_k], T_softmax_maxelem[v_i0])
            T.writes(compute_1[v_i0])
            with T.init():
                compute_1[v_i0] = T.float32(0.0)
            compute_1[v_i0] = compute_1[v_i0] + T.exp(A[v_i0, v_k] - T_softmax_maxelem[v_i0])
    for i0, i1 in T.grid(3, 12):
        with T.sblock("compute_1"):
            v_i0, v_i1 = T.axis.remap("SS", [i0, i1])
            T.reads(A[v_i0, v_i1], T_softmax_maxelem[v_i0], compute_1[v_i0])
            T.writes(compute[v_i0, v_i1])
            T.sblock_attr({"axis": 1})
            compute[v_i0, v_i1] = A[v_i0, v_i1] - T_softmax_maxelem[v_i0] - T.log(compute_1[v_i0])
