# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@T.prim_func(s_tir=True)
def avg_pool2d_pad(data: T.Buffer((1, 2, 6, 6), "float32"), pool_avg: T.Buffer((1, 2, 6, 6), "float32")):
    T.func_attr({"tirx.noalias": True})
    # with T.sblock("root"):
    pad_temp = T.sblock_alloc_buffer((1, 2, 8, 8))
    pool_sum = T.sblock_alloc_buffer((1, 2, 6, 6))
    for ax0, ax1, ax2, ax3 in T.grid(1, 2, 8, 8):
        with T.sblock("pad_temp"):
            v_ax0, v_ax1, v_ax2, v_ax3 = T.axis.remap("SSSS", [ax0, ax1, ax2, ax3])
            T.reads(data[v_ax0, v_ax1, v_ax2 - 1, v_ax3 - 1])
            T.writes(pad_temp[v_ax0, v_ax1, v_ax2, v_ax3])
            pad_temp[v_ax0, v_ax1, v_ax2, v_ax3] = T.if_then_else(1 <= v_ax2 and v_ax2 < 7 and 1 <= v_ax3 and v_ax3 < 7, data[v_ax0, v_ax1, v_ax2 - 1, v_ax3 - 1], T.float32(0.0))
    for ax0, ax1, ax2, ax3, rv0, rv1 in T.grid(1, 2, 6, 6, 3, 3):
        with T.sblock("pool_sum"):
            v_ax0, v_ax1, v_ax2, v_ax3, v_rv0, v_rv1 = T.axis.remap("SSSSRR", [ax0, ax1, ax2, ax3, rv0, rv1])
            T.reads(pad_temp[v_ax0, v_ax1, v_ax2 + v_rv0, v_ax3 + v_rv1])
            T.writes(pool_sum[v_ax0, v_ax1, v_ax2, v_ax3])
            with T.init():
                pool_sum[v_ax0, v_ax1, v_ax2, v_ax3] = T.float32(0.0)
            pool_sum[v_ax0, v_ax1, v_ax2, v_ax3] = pool_sum[v_ax0, v_ax1, v_ax2, v_ax3] + pad_temp[v_ax0, v_ax1, v_ax2 + v_rv0, v_ax3 + v_rv1]
    for ax0, ax1, ax2, ax3 in T.grid(1, 2, 6, 6):
        with T.sblock("pool_avg"):
            v_ax0, v_ax1, v_ax2, v_ax3 = T.axis.remap("SSSS", [ax0, ax1, ax2, ax3])
            T.reads(pool_sum[v_ax0, v_ax1, v_ax2, v_ax3])
            T.writes(pool_avg[v_ax0, v_ax1, v_ax2, v_ax3])
            T.sblock_attr({"schedule_rule": "meta_schedule.pool_avg"})
            pool_avg[v_ax0, v_ax1, v_ax2, v_ax3] = pool_sum[v_ax0, v_ax1, v_ax2, v_ax3] / T.Cast("float32", T.max((T.min(1, 5 - v_ax2) + 2 - T.max(1 - v_ax2, 0)) * (T.min(1, 5 - v_ax3) + 2 - T.max(1 - v_ax3, 0)), 1))
