# Layer normalization over the last axis: mean, variance, then (x - mean) * rsqrt(var + eps) * gamma + beta.
from __future__ import annotations

from tessel.script import tir as T

@T.prim_func
def layernorm(X: T.Buffer((32, 768), "float32"), gamma: T.Buffer((768,), "float32"), beta: T.Buffer((768,), "float32"), Y: T.Buffer((32, 768), "float32")):
    T.func_attr({"global_symbol": "layernorm", "tir.noalias": True})
    with T.block("root"):
        T.reads()
        T.writes()
        mean = T.alloc_buffer((32,), "float32")
        sq_sum = T.alloc_buffer((32,), "float32")
        for i in range(32):
            for k in range(768):
                with T.block("sums"):
                    vi, vk = T.axis.remap("SR", [i, k])
                    T.reads(X[vi, vk])
                    T.writes(mean[vi], sq_sum[vi])
                    with T.init():
                        mean[vi] = T.float32(0)
                        sq_sum[vi] = T.float32(0)
                    mean[vi] = mean[vi] + X[vi, vk] * T.float32(0.0013020833333333333)
                    sq_sum[vi] = sq_sum[vi] + X[vi, vk] * X[vi, vk] * T.float32(0.0013020833333333333)
        for i in range(32):
            for j in range(768):
                with T.block("Y"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    T.reads(X[vi, vj], mean[vi], sq_sum[vi], gamma[vj], beta[vj])
                    T.writes(Y[vi, vj])
                    Y[vi, vj] = (X[vi, vj] - mean[vi]) * T.rsqrt(sq_sum[vi] - mean[vi] * mean[vi] + T.float32(1e-05)) * gamma[vj] + beta[vj]
