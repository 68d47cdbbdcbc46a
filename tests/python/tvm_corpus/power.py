# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@T.prim_func(s_tir=True)
def power(A: T.Buffer((4, 4), "float32"), B: T.Buffer((4,), "float32"), T_power: T.Buffer((4, 4), "float32")):
    T.func_attr({"tirx.noalias": True})
    # with T.sblock("root"):
    for ax0, ax1 in T.grid(4, 4):
        with T.sblock("T_power"):
            v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
            T.reads(A[v_ax0, v_ax1], B[v_ax1])
            T.writes(T_power[v_ax0, v_ax1])
            T_power[v_ax0, v_ax1] = T.pow(A[v_ax0, v_ax1], B[v_ax1])
