# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@T.prim_func(s_tir=True)
def global_avg_pool(data: T.Buffer((2, 3, 5, 5), "float32"), adaptive_pool_avg: T.Buffer((2, 3, 1, 1), "float32")):
    T.func_attr({"tirx.noalias": True})
    # with T.sblock("root"):
    adaptive_pool_sum = T.sblock_alloc_buffer((2, 3, 1, 1))
    for ax0, ax1, ax2, ax3, rv0, rv1 in T.grid(2, 3, 1, 1, 5, 5):
        with T.sblock("adaptive_pool_sum"):
            v_ax0, v_ax1, v_ax2, v_ax3, v_rv0, v_rv1 = T.axis.remap("SSSSRR", [ax0, ax1, ax2, ax3, rv0, rv1])
            T.reads(data[v_ax0, v_ax1, v_ax2 * 5 + v_rv0, v_ax3 * 5 + v_rv1])
            T.writes(adaptive_pool_sum[v_ax0, v_ax1, v_ax2, v_ax3])
            with T.init():
                adaptive_pool_sum[v_ax0, v_ax1, v_ax2, v_ax3] = T.float32(0.0)
            adaptive_pool_sum[v_ax0, v_ax1, v_ax2, v_ax3] = adaptive_pool_sum[v_ax0, v_ax1, v_ax2, v_ax3] + data[v_ax0, v_ax1, v_ax2 * 5 + v_rv0, v_ax3 * 5 + v_rv1]
    for ax0, ax1, ax2, ax3 in T.grid(2, 3, 1, 1):
        with T.sblock("adaptive_pool_avg"):
            v_ax0, v_ax1, v_ax2, v_ax3 = T.axis.remap("SSSS", [ax0, ax1, ax2, ax3])
            T.reads(adaptive_pool_sum[v_ax0, v_ax1, v_ax2, v_ax3])
            T.writes(adaptive_pool_avg[v_ax0, v_ax1, v_ax2, v_ax3])
            T.sblock_attr({"schedule_rule": "meta_schedule.adaptive_pool_avg"})
            adaptive_pool_avg[v_ax0, v_ax1, v_ax2, v_ax3] = adaptive_pool_sum[v_ax0, v_ax1, v_ax2, v_ax3] / T.float32(25.0)
