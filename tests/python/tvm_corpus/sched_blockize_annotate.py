# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@T.prim_func(s_tir=True)
def sched_blockize_annotate(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    T.func_attr({"tirx.noalias": True})
    # with T.sblock("root"):
    for i_0 in T.serial(4, annotations={"pragma_auto_unroll_max_step": 16}):
        with T.sblock("C_o"):
            v_i_o = T.axis.spatial(4, i_0)
            v_j_o = T.axis.spatial(1, 0)
            T.reads(A[v_i_o * 4:v_i_o * 4 + 4, 0:16], B[v_i_o * 4:v_i_o * 4 + 4, 0:16])
            T.writes(C[v_i_o * 4:v_i_o * 4 + 4, 0:16])
            for i_1, j in T.grid(4, 16):
                with T.sblock("C"):
                    v_i_i, v_j_i = T.axis.remap("SS", [i_1, j])
                    T.reads(A[v_i_o * 4 + v_i_i, v_j_i], B[v_i_o * 4 + v_i_i, v_j_i])
                    T.writes(C[v_i_o * 4 + v_i_i, v_j_i])
                    C[v_i_o * 4 + v_i_i, v_j_i] = T.exp(A[v_i_o * 4 + v_i_i, v_j_i]) + B[v_i_o * 4 + v_i_i, v_j_i]
