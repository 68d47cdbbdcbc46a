"""Generate the TVM 0.27 corpus: PrimFuncs made by Apache TVM itself, saved exactly as TVM prints them.

Each case builds a PrimFunc with TVM (operator-library ops through `te.create_prim_func`, symbolic
shapes, functions rewritten by `tvm.s_tir.Schedule` for the CPU and for CUDA), checks that TVM itself
can compile it (`tvm.compile`, target "llvm" for CPU cases, "cuda" for GPU ones), and writes

  <name>.py       the text of `func.script()` (or `mod.script()` for the `@I.ir_module` cases),
                  untouched;
  manifest.json   per case: file, function (the global symbol to call), each parameter's name, dtype
                  and shape (symbolic dims by name), values for the symbolic dims when testing, which
                  parameters are outputs, the target ("c" or "cuda") and the NumPy reference key with
                  its arguments (tests/python/test_tvm_corpus.py holds the references).

TVM is never a dependency of tessel: run this with a separate environment, outside the repository:

    python3 -m venv /tmp/tvm027
    /tmp/tvm027/bin/pip install apache-tvm==0.27.0.post1 numpy
    /tmp/tvm027/bin/python tests/python/tvm_corpus/generate.py

Ops left out because TVM prints them as calls to packed functions, not plain TIR: topi.sort,
topi.argsort and topi.topk (`T.call_packed("tvm.contrib.sort.sort" / ".argsort" / ".topk", ...)`).
"""

from __future__ import annotations

import json
from pathlib import Path

import tvm
import tvm.s_tir
from tvm import te, topi
from tvm.script import tirx as T  # noqa: F401  (TVMScript source below uses T)

OUT = Path(__file__).resolve().parent
CASES = []


def case(name, ref, outputs=1, target="c", sym=None, ranges=None, ref_args=None, module=False,
         kind="topi"):
    """Register a builder returning a PrimFunc; `outputs` counts trailing parameters that are outputs
    (or lists their names); `ranges` maps an input name to the [low, high) of its random values."""

    def wrap(build):
        CASES.append(dict(name=name, build=build, ref=ref, outputs=outputs, target=target,
                          sym=sym or {}, ranges=ranges or {}, ref_args=ref_args or {},
                          module=module, kind=kind))
        return build

    return wrap


def ph(shape, name, dtype="float32"):
    return te.placeholder(shape, name=name, dtype=dtype)


def prim(*tensors):
    return te.create_prim_func(list(tensors))


# ---------------------------------------------------------------- elementwise unary
def _unary(name, op, ref, low=-2.0, high=2.0, shape=(4, 8), dtype="float32"):
    @case(name, ref, ranges={"A": [low, high]})
    def build():
        a = ph(shape, "A", dtype)
        return prim(a, op(a))


_unary("exp", topi.exp, "exp")
_unary("tanh", topi.tanh, "tanh")
_unary("sigmoid", topi.sigmoid, "sigmoid")
_unary("erf", topi.erf, "erf")
_unary("sqrt", topi.sqrt, "sqrt", low=0.1, high=4.0)
_unary("log", topi.log, "log", low=0.1, high=4.0)
_unary("rsqrt", topi.rsqrt, "rsqrt", low=0.1, high=4.0, shape=(3, 5, 7))
_unary("relu", topi.nn.relu, "relu", shape=(2, 3, 4, 5))
_unary("abs_neg", lambda a: topi.negative(topi.abs(a)), "abs_neg")
_unary("floor", topi.floor, "floor", low=-5.0, high=5.0)
_unary("exp_f64", topi.exp, "exp", dtype="float64")


@case("leaky_relu", "leaky_relu", ref_args={"alpha": 0.1})
def _():
    a = ph((16,), "A")
    return prim(a, topi.nn.leaky_relu(a, 0.1))


# ---------------------------------------------------------------- elementwise binary, broadcasting
def _binary(name, op, ref, sa=(4, 1, 8), sb=(3, 8), dtype="float32", ranges=None):
    @case(name, ref, ranges=ranges)
    def build():
        a, b = ph(sa, "A", dtype), ph(sb, "B", dtype)
        return prim(a, b, op(a, b))


_binary("add_broadcast", topi.add, "add")
_binary("subtract_broadcast", topi.subtract, "subtract", sa=(5, 6), sb=(6,))
_binary("multiply_broadcast", topi.multiply, "multiply", sa=(2, 3, 1), sb=(1, 1, 4))
_binary("divide", topi.divide, "divide", sa=(8, 8), sb=(8, 8), ranges={"B": [0.5, 2.0]})
_binary("maximum", topi.maximum, "maximum", sa=(7,), sb=(7,))
_binary("power", topi.power, "power", sa=(4, 4), sb=(4,), ranges={"A": [0.5, 2.0]})
_binary("floor_divide_i32", topi.floor_divide, "floor_divide", sa=(6, 5), sb=(5,), dtype="int32",
        ranges={"A": [-50, 50], "B": [1, 7]})
_binary("floor_mod_i32", topi.floor_mod, "floor_mod", sa=(6, 5), sb=(6, 5), dtype="int32",
        ranges={"A": [-50, 50], "B": [1, 7]})


@case("cast_f32_i32", "cast", ref_args={"dtype": "int32"}, ranges={"A": [-100.0, 100.0]})
def _():
    a = ph((5, 6), "A")
    return prim(a, topi.cast(a, "int32"))


@case("cast_i32_f16", "cast", ref_args={"dtype": "float16"}, ranges={"A": [-1000, 1000]})
def _():
    a = ph((12,), "A", "int32")
    return prim(a, topi.cast(a, "float16"))


@case("where_greater", "where_greater")
def _():
    a, b = ph((4, 6), "A"), ph((4, 6), "B")
    return prim(a, b, topi.where(topi.greater(a, b), a, b * 2.0))


@case("where_bool_cond", "where")
def _():
    c, a, b = ph((3, 4), "cond", "bool"), ph((3, 4), "A"), ph((4,), "B")
    return prim(c, a, b, topi.where(c, a, b))


@case("clip", "clip", ref_args={"lo": -0.5, "hi": 0.75})
def _():
    a = ph((10, 3), "A")
    return prim(a, topi.clip(a, -0.5, 0.75))


# ---------------------------------------------------------------- reductions
@case("sum_axis1", "sum", ref_args={"axis": 1})
def _():
    a = ph((6, 16), "A")
    return prim(a, topi.sum(a, axis=1))


@case("max_axis0_keepdims", "max", ref_args={"axis": 0, "keepdims": True})
def _():
    a = ph((9, 5), "A")
    return prim(a, topi.max(a, axis=0, keepdims=True))


@case("min_all", "min", ref_args={"axis": None})
def _():
    a = ph((4, 5, 6), "A")
    return prim(a, topi.min(a))


@case("mean_axes", "mean", ref_args={"axis": [1, 2]})
def _():
    a = ph((3, 4, 5), "A")
    return prim(a, _mean(a, [1, 2]))


def _mean(a, axis):
    s = topi.sum(a, axis=axis)
    n = 1
    for ax in axis:
        n *= int(a.shape[ax])
    return topi.divide(s, float(n))


@case("prod_i32", "prod", ref_args={"axis": 1}, ranges={"A": [-3, 4]})
def _():
    a = ph((4, 5), "A", "int32")
    return prim(a, topi.prod(a, axis=1))


@case("argmax", "argmax", ref_args={"axis": 1})
def _():
    a = ph((5, 9), "A")
    return prim(a, topi.argmax(a, axis=1))


@case("argmin", "argmin", ref_args={"axis": 0})
def _():
    a = ph((7, 3), "A")
    return prim(a, topi.argmin(a, axis=0))


# ---------------------------------------------------------------- normalisations
@case("softmax", "softmax", ref_args={"axis": -1})
def _():
    a = ph((4, 10), "A")
    return prim(a, topi.nn.softmax(a, axis=-1))


@case("log_softmax", "log_softmax")
def _():
    a = ph((3, 12), "A")
    return prim(a, topi.nn.log_softmax(a))


@case("layer_norm", "layer_norm", ref_args={"axis": [1], "eps": 1e-5})
def _():
    a, g, b = ph((4, 16), "A"), ph((16,), "gamma"), ph((16,), "beta")
    return prim(a, g, b, topi.nn.layer_norm(a, g, b, axis=[1], epsilon=1e-5))


@case("rms_norm", "rms_norm", ref_args={"axis": [1], "eps": 1e-5})
def _():
    a, g = ph((3, 8), "A"), ph((8,), "weight")
    return prim(a, g, topi.nn.rms_norm(a, g, axis=[1], epsilon=1e-5))


# ---------------------------------------------------------------- linear algebra
@case("matmul", "matmul")
def _():
    a, b = ph((8, 12), "A"), ph((12, 10), "B")
    return prim(a, b, topi.matmul(a, b))


@case("dense", "dense")
def _():
    x, w = ph((4, 16), "X"), ph((6, 16), "W")
    return prim(x, w, topi.nn.dense(x, w))


@case("dense_bias", "dense_bias")
def _():
    x, w, b = ph((4, 16), "X"), ph((6, 16), "W"), ph((6,), "bias")
    return prim(x, w, b, topi.add(topi.nn.dense(x, w), b))


@case("batch_matmul", "batch_matmul")
def _():
    x, y = ph((2, 4, 8), "X"), ph((2, 5, 8), "Y")
    return prim(x, y, topi.nn.batch_matmul(x, y))


# ---------------------------------------------------------------- convolution, pooling
@case("conv2d_nchw", "conv2d_nchw", ref_args={"stride": 1, "pad": 1, "dilation": 1})
def _():
    x, w = ph((1, 3, 8, 8), "data"), ph((4, 3, 3, 3), "kernel")
    return prim(x, w, topi.nn.conv2d_nchw(x, w, 1, 1, 1))


@case("conv2d_nchw_stride2_dil2", "conv2d_nchw", ref_args={"stride": 2, "pad": 2, "dilation": 2})
def _():
    x, w = ph((2, 2, 9, 9), "data"), ph((3, 2, 3, 3), "kernel")
    return prim(x, w, topi.nn.conv2d_nchw(x, w, 2, 2, 2))


@case("conv2d_nhwc", "conv2d_nhwc", ref_args={"stride": 1, "pad": 1, "dilation": 1}, module=True)
def _():
    x, w = ph((1, 6, 6, 3), "data"), ph((3, 3, 3, 4), "kernel")  # HWIO
    return prim(x, w, topi.nn.conv2d_nhwc(x, w, 1, 1, 1))


@case("depthwise_conv2d_nchw", "depthwise_conv2d_nchw", ref_args={"stride": 1, "pad": 1})
def _():
    x, w = ph((1, 4, 7, 7), "data"), ph((4, 1, 3, 3), "kernel")
    return prim(x, w, topi.nn.depthwise_conv2d_nchw(x, w, 1, 1, 1))


@case("max_pool2d", "max_pool2d", ref_args={"k": 2, "s": 2, "pad": 0})
def _():
    x = ph((1, 2, 8, 8), "data")
    return prim(x, topi.nn.pool2d(x, (2, 2), (2, 2), (1, 1), (0, 0, 0, 0), "max"))


@case("avg_pool2d_pad", "avg_pool2d", ref_args={"k": 3, "s": 1, "pad": 1, "count_include_pad": False})
def _():
    x = ph((1, 2, 6, 6), "data")
    return prim(x, topi.nn.pool2d(x, (3, 3), (1, 1), (1, 1), (1, 1, 1, 1), "avg",
                                  count_include_pad=False))


@case("global_avg_pool", "global_avg_pool")
def _():
    x = ph((2, 3, 5, 5), "data")
    return prim(x, topi.nn.global_pool(x, "avg"))


# ---------------------------------------------------------------- data movement
@case("pad_constant", "pad", ref_args={"before": [0, 1, 2], "after": [1, 0, 3], "value": 0.5})
def _():
    a = ph((2, 3, 4), "A")
    return prim(a, topi.nn.pad(a, [0, 1, 2], [1, 0, 3], pad_value=0.5))


@case("transpose", "transpose", ref_args={"axes": [2, 0, 1]})
def _():
    a = ph((2, 3, 4), "A")
    return prim(a, topi.transpose(a, [2, 0, 1]))


@case("reshape", "reshape", ref_args={"shape": [4, 6]})
def _():
    a = ph((2, 3, 4), "A")
    return prim(a, topi.reshape(a, (4, 6)))


@case("concatenate", "concatenate", ref_args={"axis": 1})
def _():
    a, b, c = ph((2, 3), "A"), ph((2, 1), "B"), ph((2, 4), "C")
    return prim(a, b, c, topi.concatenate([a, b, c], axis=1))


@case("split3", "split", outputs=3, ref_args={"parts": 3, "axis": 1})
def _():
    a = ph((2, 9), "A")
    outs = topi.split(a, 3, axis=1)
    return prim(a, *outs)


@case("strided_slice", "strided_slice", ref_args={"begin": [1, 0], "end": [7, 8], "strides": [2, 3]})
def _():
    a = ph((8, 8), "A")
    return prim(a, topi.strided_slice(a, [1, 0], [7, 8], [2, 3]))


@case("take_axis0", "take", ref_args={"axis": 0}, ranges={"indices": [0, 6]})
def _():
    a, i = ph((6, 4), "A"), ph((5,), "indices", "int32")
    return prim(a, i, topi.take(a, i, axis=0))


@case("gather_axis1", "gather", ref_args={"axis": 1}, ranges={"indices": [0, 5]})
def _():
    a, i = ph((3, 5), "A"), ph((3, 4), "indices", "int32")
    return prim(a, i, topi.gather(a, 1, i))


@case("cumsum", "cumsum", ref_args={"axis": 1})
def _():
    a = ph((3, 7), "A")
    return prim(a, topi.cumsum(a, axis=1))


@case("resize2d_linear", "resize2d_linear", ref_args={"size": [8, 6]})
def _():
    a = ph((1, 2, 4, 3), "A")
    return prim(a, topi.image.resize2d(a, [0.0, 0.0, 0.0, 0.0], (8, 6), layout="NCHW",
                                       method="linear", coordinate_transformation_mode="half_pixel"))


@case("flip", "flip", ref_args={"axis": 1})
def _():
    a = ph((3, 5), "A")
    return prim(a, topi.flip(a, axis=1))


@case("one_hot", "one_hot", ref_args={"depth": 5, "on": 1.0, "off": 0.0},
      ranges={"indices": [0, 5]})
def _():
    i = ph((4,), "indices", "int32")
    on, off = tvm.tirx.const(1.0, "float32"), tvm.tirx.const(0.0, "float32")
    return prim(i, topi.one_hot(i, on, off, 5, -1, "float32"))


# ---------------------------------------------------------------- symbolic shapes
@case("add_symbolic", "add", sym={"n": 7}, kind="symbolic", module=True)
def _():
    n = te.var("n")
    a, b = ph((n,), "A"), ph((n,), "B")
    return prim(a, b, topi.add(a, b))


@case("sum_symbolic_2d", "sum", sym={"n": 5, "m": 6}, kind="symbolic", ref_args={"axis": 1})
def _():
    n, m = te.var("n"), te.var("m")
    a = ph((n, m), "A")
    return prim(a, topi.sum(a, axis=1))


@case("matmul_symbolic", "matmul", sym={"n": 5, "k": 7, "m": 3}, kind="symbolic")
def _():
    n, k, m = te.var("n"), te.var("k"), te.var("m")
    a, b = ph((n, k), "A"), ph((k, m), "B")
    return prim(a, b, topi.matmul(a, b))


@case("softmax_symbolic", "softmax", sym={"n": 3, "m": 9}, kind="symbolic", ref_args={"axis": -1})
def _():
    n, m = te.var("n"), te.var("m")
    a = ph((n, m), "A")
    return prim(a, topi.nn.softmax(a, axis=-1))


@case("transpose_symbolic_i64", "transpose", sym={"n": 4, "m": 3}, kind="symbolic", ref_args={"axes": [1, 0]})
def _():
    n, m = te.var("n", "int64"), te.var("m", "int64")
    a = ph((n, m), "A")
    return prim(a, topi.transpose(a, [1, 0]))


# A hand-written TVMScript function with handles and T.match_buffer; what is saved is TVM's print.
@T.prim_func(s_tir=True)
def _scale_rows(a: T.handle, s: T.handle, b: T.handle):
    n = T.int32()
    m = T.int32()
    A = T.match_buffer(a, (n, m), "float32")
    S = T.match_buffer(s, (n,), "float32")
    B = T.match_buffer(b, (n, m), "float32")
    for i, j in T.grid(n, m):
        with T.sblock("scale"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * S[vi]


@case("scale_rows_match_buffer", "scale_rows", sym={"n": 4, "m": 5}, kind="script")
def _():
    return _scale_rows


# ---------------------------------------------------------------- CPU schedules
def _matmul_func(m=64, k=64, n=64, name="C"):
    a, b = ph((m, k), "A"), ph((k, n), "B")
    r = te.reduce_axis((0, k), "k")
    c = te.compute((m, n), lambda i, j: te.sum(a[i, r] * b[r, j], axis=r), name=name)
    return prim(a, b, c)


@case("sched_matmul_tile_parallel_vectorize", "matmul", kind="schedule")
def _():
    s = tvm.s_tir.Schedule(_matmul_func())
    blk = s.get_sblock("C")
    i, j, k = s.get_loops(blk)
    io, ii = s.split(i, [None, 16])
    jo, ji = s.split(j, [None, 8])
    ko, ki = s.split(k, [None, 4])
    s.reorder(io, jo, ko, ii, ki, ji)
    s.parallel(s.fuse(io, jo))
    s.unroll(ki)
    s.vectorize(ji)
    s.decompose_reduction(blk, ko)
    return s.mod["main"]


@case("sched_matmul_cache_write", "matmul", kind="schedule", module=True)
def _():
    s = tvm.s_tir.Schedule(_matmul_func(32, 16, 32))
    blk = s.get_sblock("C")
    cw = s.cache_write(blk, 0, "global")
    i, j, k = s.get_loops(blk)
    io, ii = s.split(i, [None, 8])
    jo, ji = s.split(j, [None, 8])
    s.reorder(io, jo, k, ii, ji)
    s.reverse_compute_at(cw, jo)
    s.vectorize(s.get_loops(cw)[-1])
    return s.mod["main"]


@case("sched_matmul_cache_read_compute_at", "matmul", kind="schedule")
def _():
    s = tvm.s_tir.Schedule(_matmul_func(16, 32, 16))
    blk = s.get_sblock("C")
    ar = s.cache_read(blk, 0, "global")
    i, j, k = s.get_loops(blk)
    ko, ki = s.split(k, [None, 8])
    s.reorder(ko, i, j, ki)
    s.compute_at(ar, ko)
    return s.mod["main"]


@case("sched_compute_inline", "exp_add", kind="schedule")
def _():
    a, b = ph((8, 8), "A"), ph((8, 8), "B")
    e = te.compute((8, 8), lambda i, j: te.exp(a[i, j]), name="E")
    c = te.compute((8, 8), lambda i, j: e[i, j] + b[i, j], name="C")
    s = tvm.s_tir.Schedule(prim(a, b, c))
    s.compute_inline(s.get_sblock("E"))
    return s.mod["main"]


@case("sched_reverse_compute_inline", "scale_relu", kind="schedule")
def _():
    a = ph((8, 12), "A")
    b = te.compute((8, 12), lambda i, j: a[i, j] * tvm.tirx.const(3.0, "float32"), name="B")
    c = te.compute((8, 12), lambda i, j: te.max(b[i, j], tvm.tirx.const(0.0, "float32")), name="C")
    s = tvm.s_tir.Schedule(prim(a, c))
    i, j = s.get_loops(s.get_sblock("B"))
    s.split(j, [None, 4])
    s.reverse_compute_inline(s.get_sblock("C"))
    return s.mod["main"]


@case("sched_rfactor_sum", "sum", kind="schedule", ref_args={"axis": 1})
def _():
    a = ph((4, 64), "A")
    r = te.reduce_axis((0, 64), "k")
    b = te.compute((4,), lambda i: te.sum(a[i, r], axis=r), name="B")
    s = tvm.s_tir.Schedule(prim(a, b))
    blk = s.get_sblock("B")
    _, k = s.get_loops(blk)
    ko, ki = s.split(k, [None, 8])
    s.rfactor(ki, 0)
    return s.mod["main"]


@case("sched_reindex", "matmul", kind="schedule")
def _():
    s = tvm.s_tir.Schedule(_matmul_func(8, 8, 8))
    blk = s.get_sblock("C")
    s.reindex(blk, ("read", 0))
    s.reindex(blk, ("write", 0))
    return s.mod["main"]


@case("sched_conv2d_pad_inline_split", "conv2d_nchw", kind="schedule",
      ref_args={"stride": 1, "pad": 1, "dilation": 1})
def _():
    x, w = ph((1, 4, 8, 8), "data"), ph((8, 4, 3, 3), "kernel")
    f = prim(x, w, topi.nn.conv2d_nchw(x, w, 1, 1, 1))
    s = tvm.s_tir.Schedule(f)
    s.compute_inline(s.get_sblock("pad_temp"))
    blk = s.get_sblock("conv2d_nchw")
    nn, ff, yy, xx, rc, ry, rx = s.get_loops(blk)
    fo, fi = s.split(ff, [None, 4])
    s.reorder(nn, fo, yy, rc, ry, rx, fi, xx)
    s.vectorize(xx)
    s.parallel(fo)
    return s.mod["main"]


@case("sched_softmax_compute_at", "softmax", kind="schedule", ref_args={"axis": -1}, module=True)
def _():
    a = ph((4, 32), "A")
    s = tvm.s_tir.Schedule(prim(a, topi.nn.softmax(a, axis=-1)))
    out = s.get_sblock("T_softmax_norm")
    row = s.get_loops(out)[0]
    s.parallel(row)
    for name in ("T_softmax_expsum", "T_softmax_exp", "T_softmax_maxelem"):
        s.compute_at(s.get_sblock(name), row)
    return s.mod["main"]


@case("sched_elementwise_fuse_split_unroll", "exp_add", kind="schedule")
def _():
    a, b = ph((16, 16), "A"), ph((16, 16), "B")
    c = te.compute((16, 16), lambda i, j: te.exp(a[i, j]) + b[i, j], name="C")
    s = tvm.s_tir.Schedule(prim(a, b, c))
    i, j = s.get_loops(s.get_sblock("C"))
    f = s.fuse(i, j)
    o, u, v = s.split(f, [None, 4, 8])
    s.parallel(o)
    s.unroll(u)
    s.vectorize(v)
    return s.mod["main"]


@case("sched_split_nondivisible", "exp", kind="schedule")
def _():
    a = ph((37,), "A")
    s = tvm.s_tir.Schedule(prim(a, topi.exp(a)))
    (i,) = s.get_loops(s.get_sblock("compute"))
    s.split(i, [None, 8])
    return s.mod["main"]


@case("sched_symbolic_split", "add", kind="schedule", sym={"n": 21})
def _():
    n = te.var("n")
    a, b = ph((n,), "A"), ph((n,), "B")
    s = tvm.s_tir.Schedule(prim(a, b, topi.add(a, b)))
    (i,) = s.get_loops(s.get_sblock("T_add"))
    io, ii = s.split(i, [None, 4])
    s.parallel(io)
    return s.mod["main"]


@case("sched_blockize_annotate", "exp_add", kind="schedule")
def _():
    a, b = ph((16, 16), "A"), ph((16, 16), "B")
    c = te.compute((16, 16), lambda i, j: te.exp(a[i, j]) + b[i, j], name="C")
    s = tvm.s_tir.Schedule(prim(a, b, c))
    blk = s.get_sblock("C")
    i, j = s.get_loops(blk)
    io, ii = s.split(i, [None, 4])
    s.blockize(ii)
    s.annotate(io, "pragma_auto_unroll_max_step", 16)
    return s.mod["main"]


@case("sched_transform_layout", "matmul", kind="schedule")
def _():
    s = tvm.s_tir.Schedule(_matmul_func(16, 8, 16))
    blk = s.get_sblock("C")
    s.cache_read(blk, 1, "global")
    s.transform_layout(blk, ("read", 1), lambda k, j: (j // 4, k, j % 4))
    return s.mod["main"]


@case("sched_cache_read_storage_align", "matmul", kind="schedule")
def _():
    s = tvm.s_tir.Schedule(_matmul_func(16, 16, 16))
    blk = s.get_sblock("C")
    ar = s.cache_read(blk, 0, "global")
    s.storage_align(ar, 0, axis=0, factor=8, offset=1)
    i, j, k = s.get_loops(blk)
    s.compute_at(ar, i)
    return s.mod["main"]


# ---------------------------------------------------------------- GPU schedules
@case("gpu_elementwise_bind", "exp_add", kind="gpu", target="cuda", module=True)
def _():
    a, b = ph((64, 64), "A"), ph((64, 64), "B")
    c = te.compute((64, 64), lambda i, j: te.exp(a[i, j]) + b[i, j], name="C")
    s = tvm.s_tir.Schedule(prim(a, b, c))
    i, j = s.get_loops(s.get_sblock("C"))
    bx, tx = s.split(s.fuse(i, j), [None, 128])
    s.bind(bx, "blockIdx.x")
    s.bind(tx, "threadIdx.x")
    return s.mod["main"]


@case("gpu_symbolic_add", "add", kind="gpu", target="cuda", sym={"n": 1000})
def _():
    n = te.var("n")
    a, b = ph((n,), "A"), ph((n,), "B")
    s = tvm.s_tir.Schedule(prim(a, b, topi.add(a, b)))
    (i,) = s.get_loops(s.get_sblock("T_add"))
    bx, tx = s.split(i, [None, 256])
    s.bind(bx, "blockIdx.x")
    s.bind(tx, "threadIdx.x")
    return s.mod["main"]


@case("gpu_matmul_shared_tiled", "matmul", kind="gpu", target="cuda")
def _():
    s = tvm.s_tir.Schedule(_matmul_func(64, 64, 64))
    blk = s.get_sblock("C")
    cl = s.cache_write(blk, 0, "local")
    i, j, k = s.get_loops(blk)
    by, ty, ii = s.split(i, [None, 8, 2])
    bx, tx, ji = s.split(j, [None, 8, 2])
    ko, ki = s.split(k, [None, 8])
    s.reorder(by, bx, ty, tx, ko, ki, ii, ji)
    s.bind(by, "blockIdx.y")
    s.bind(bx, "blockIdx.x")
    s.bind(ty, "threadIdx.y")
    s.bind(tx, "threadIdx.x")
    s.reverse_compute_at(cl, tx)
    for idx in (0, 1):
        sh = s.cache_read(blk, idx, "shared")
        s.compute_at(sh, ko)
        fused = s.fuse(*s.get_loops(sh)[-2:])
        _, sty, stx = s.split(fused, [None, 8, 8])
        s.bind(sty, "threadIdx.y")
        s.bind(stx, "threadIdx.x")
    s.decompose_reduction(blk, ko)
    return s.mod["main"]


@case("gpu_sum_cross_thread", "sum", kind="gpu", target="cuda", ref_args={"axis": 1})
def _():
    a = ph((8, 128), "A")
    r = te.reduce_axis((0, 128), "k")
    b = te.compute((8,), lambda i: te.sum(a[i, r], axis=r), name="B")
    s = tvm.s_tir.Schedule(prim(a, b))
    i, k = s.get_loops(s.get_sblock("B"))
    s.bind(i, "blockIdx.x")
    s.bind(k, "threadIdx.x")
    return s.mod["main"]


@case("gpu_softmax_row", "softmax", kind="gpu", target="cuda", ref_args={"axis": -1})
def _():
    a = ph((16, 64), "A")
    s = tvm.s_tir.Schedule(prim(a, topi.nn.softmax(a, axis=-1)))
    out = s.get_sblock("T_softmax_norm")
    row, col = s.get_loops(out)
    s.bind(row, "blockIdx.x")
    s.bind(col, "threadIdx.x")
    for name in ("T_softmax_expsum", "T_softmax_exp", "T_softmax_maxelem"):
        blk = s.get_sblock(name)
        s.compute_at(blk, row)
        s.set_scope(blk, 0, "shared")
        s.bind(s.get_loops(blk)[-1], "threadIdx.x")
    return s.mod["main"]


@case("gpu_conv2d_nhwc_bind", "conv2d_nhwc", kind="gpu", target="cuda",
      ref_args={"stride": 1, "pad": 1, "dilation": 1})
def _():
    x, w = ph((1, 8, 8, 4), "data"), ph((3, 3, 4, 16), "kernel")
    s = tvm.s_tir.Schedule(prim(x, w, topi.nn.conv2d_nhwc(x, w, 1, 1, 1)))
    s.compute_inline(s.get_sblock("pad_temp"))
    blk = s.get_sblock("conv2d_nhwc")
    nn, yy, xx, ff, ry, rx, rc = s.get_loops(blk)
    s.bind(s.fuse(nn, yy, xx), "blockIdx.x")
    s.bind(ff, "threadIdx.x")
    return s.mod["main"]


# ---------------------------------------------------------------- writing
def _shape(buf):
    out = []
    for d in buf.shape:
        if hasattr(d, "value"):
            out.append(int(d.value))
        elif hasattr(d, "name"):
            out.append(d.name)
        else:
            raise ValueError(f"dim {d} is neither a constant nor a variable")
    return out


def _check_compiles(func, target):
    """TVM must lower and compile the function itself (LLVM for CPU cases: TVM's own "c" backend
    leaves some intrinsics such as fabs unresolved)."""
    mod = tvm.IRModule({func.attrs["global_symbol"]: func})
    return tvm.compile(mod, target="llvm" if target == "c" else target)


def main():
    manifest = []
    for c in CASES:
        name = c["name"]
        func = c["build"]().with_attr("global_symbol", name)
        _check_compiles(func, c["target"])
        if c["module"]:
            text = tvm.IRModule({name: func}).script()
        else:
            text = func.script()
        (OUT / f"{name}.py").write_text(text + "\n")
        params, seen = [], {}
        for p in func.params:
            buf = p  # in TVM 0.27 a buffer parameter is the buffer itself
            # Repeated names are printed as name, name_1, name_2, ...: record the printed ones.
            count = seen.get(buf.name, 0)
            seen[buf.name] = count + 1
            pname = buf.name if count == 0 else f"{buf.name}_{count}"
            assert f"{pname}: T.Buffer" in text, f"{name}: parameter {pname} not in the text"
            entry = {"name": pname, "dtype": str(buf.dtype), "shape": _shape(buf)}
            if buf.name in c["ranges"]:
                entry["range"] = c["ranges"][buf.name]
            params.append(entry)
        outs = c["outputs"]
        if isinstance(outs, int):
            outs = [p["name"] for p in params[-outs:]]
        manifest.append({
            "file": f"{name}.py", "function": name, "form": "ir_module" if c["module"] else "prim_func",
            "kind": c["kind"], "target": c["target"], "params": params, "outputs": outs,
            "sym": c["sym"], "ref": c["ref"], "ref_args": c["ref_args"],
        })
    (OUT / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    print(f"wrote {len(manifest)} functions to {OUT} with TVM {tvm.__version__}")


if __name__ == "__main__":
    main()
