# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@T.prim_func(s_tir=True)
def split3(A: T.Buffer((2, 9), "float32"), T_split_sections: T.Buffer((2, 3), "float32"), T_split_sections_1: T.Buffer((2, 3), "float32"), T_split_sections_2: T.Buffer((2, 3), "float32")):
    T.func_attr({"tirx.noalias": True})
    # with T.sblock("root"):
    for ax0, ax1 in T.grid(2, 3):
        with T.sblock("T_split_sections"):
            v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
            T.reads(A[v_ax0, v_ax1])
            T.writes(T_split_sections[v_ax0, v_ax1])
            T_split_sections[v_ax0, v_ax1] = A[v_ax0, v_ax1]
    for ax0, ax1 in T.grid(2, 3):
        with T.sblock("T_split_sections_1"):
            v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
            T.reads(A[v_ax0, v_ax1 + 3])
            T.writes(T_split_sections_1[v_ax0, v_ax1])
            T_split_sections_1[v_ax0, v_ax1] = A[v_ax0, v_ax1 + 3]
    for ax0, ax1 in T.grid(2, 3):
        with T.sblock("T_split_sections_2"):
            v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
            T.reads(A[v_ax0, v_ax1 + 6])
            T.writes(T_split_sections_2[v_ax0, v_ax1])
            T_split_sections_2[v_ax0, v_ax1] = A[v_ax0, v_ax1 + 6]
