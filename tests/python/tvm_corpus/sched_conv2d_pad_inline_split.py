# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@T.prim_func(s_tir=True)
def sched_conv2d_pad_inline_split(data: T.Buffer((1, 4, 8, 8), "float32"), kernel: T.Buffer((8, 4, 3, 3), "float32"), conv2d_nchw: T.Buffer((1, 8, 8, 8), "float32")):
    T.func_attr({"tirx.noalias": True})
    # with T.sblock("root"):
    for nn in range(1):
        for ff_0 in T.parallel(2):
            for yy, rc, ry, rx, ff_1 in T.grid(8, 4, 3, 3, 4):
                for xx in T.vectorized(8):
                    with T.sblock("conv2d_nchw"):
                        v_nn = T.axis.spatial(1, nn)
                        v_ff = T.axis.spatial(8, ff_0 * 4 + ff_1)
                        v_yy, v_xx, v_rc, v_ry, v_rx = T.axis.remap("SSRRR", [yy, xx, rc, ry, rx])
                        T.reads(data[v_nn, v_rc, v_yy + v_ry - 1, v_xx + v_rx - 1], kernel[v_ff, v_rc, v_ry, v_rx])
                        T.writes(conv2d_nchw[v_nn, v_ff, v_yy, v_xx])
                        with T.init():
                            conv2d_nchw[v_nn, v_ff, v_yy, v_xx] = T.float32(0.0)
                        conv2d_nchw[v_nn, v_ff, v_yy, v_xx] = conv2d_nchw[v_nn, v_ff, v_yy, v_xx] + T.if_then_else(1 <= v_yy + v_ry and v_yy + v_ry < 9 and 1 <= v_xx + v_rx and v_xx + v_rx < 9, data[v_nn, v_rc, v_yy + v_ry - 1, v_xx + v_rx - 1], T.float32(0.0)) * kernel[v_ff, v_rc, v_ry, v_rx]
