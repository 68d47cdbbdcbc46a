# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@T.prim_func(s_tir=True)
def gpu_conv2d_nhwc_bind(data: T.Buffer((1, 8, 8, 4), "float32"), kernel: T.Buffer((3, 3, 4, 16), "float32"), conv2d_nhwc: T.Buffer((1, 8, 8, 16), "float32")):
    T.func_attr({"layout_free_buffers": [1], "tirx.noalias": True})
    # with T.sblock("root"):
    for nn_yy_xx_fused in T.thread_binding(64, thread="blockIdx.x"):
        for ff in T.thread_binding(16, thread="threadIdx.x"):
            for ry, rx, rc in T.grid(3, 3, 4):
                with T.sblock("conv2d_nhwc"):
                    v_nn = T.axis.spatial(1, 0)
                    v_yy = T.axis.spatial(8, nn_yy_xx_fused // 8)
                    v_xx = T.axis.spatial(8, nn_yy_xx_fused % 8)
                    v_ff, v_ry, v_rx, v_rc = T.axis.remap("SRRR", [ff, ry, rx, rc])
                    T.reads(data[v_nn, v_yy + v_ry - 1, v_xx + v_rx - 1, v_rc], kernel[v_ry, v_rx, v_rc, v_ff])
                    T.writes(conv2d_nhwc[v_nn, v_yy, v_xx, v_ff])
                    with T.init():
                        conv2d_nhwc[v_nn, v_yy, v_xx, v_ff] = T.float32(0.0)
                    conv2d_nhwc[v_nn, v_yy, v_xx, v_ff] = conv2d_nhwc[v_nn, v_yy, v_xx, v_ff] + T.if_then_else(1 <= v_yy + v_ry and v_yy + v_ry < 9 and 1 <= v_xx + v_rx and v_xx + v_rx < 9, data[v_nn, v_yy + v_ry - 1, v_xx + v_rx - 1, v_rc], T.float32(0.0)) * kernel[v_ry, v_rx, v_rc, v_ff]
