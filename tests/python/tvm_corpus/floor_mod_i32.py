# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@T.prim_func(s_tir=True)
def floor_mod_i32(A: T.Buffer((6, 5), "int32"), B: T.Buffer((6, 5), "int32"), T_floor_mod: T.Buffer((6, 5), "int32")):
    T.func_attr({"tirx.noalias": True})
    # with T.sblock("root"):
    for ax0, ax1 in T.grid(6, 5):
        with T.sblock("T_floor_mod"):
            v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
            T.reads(A[v_ax0, v_ax1], B[v_ax0, v_ax1])
            T.writes(T_floor_mod[v_ax0, v_ax1])
            T_floor_mod[v_ax0, v_ax1] = A[v_ax0, v_ax1] % B[v_ax0, v_ax1]
