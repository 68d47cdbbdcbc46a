"""Every function of the TVM 0.27 corpus (tests/python/tvm_corpus, text exactly as Apache TVM prints
it, made by tvm_corpus/generate.py) parses, round-trips through tessel's printer, builds, and computes
what NumPy computes. TVM itself is not needed here: the manifest carries the shapes and the
references below are plain NumPy."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
import tvm_ffi

from conftest import gpu_torch

import tessel
from tessel import ir

CORPUS = Path(__file__).resolve().parent / "tvm_corpus"
MANIFEST = json.loads((CORPUS / "manifest.json").read_text())


# ---------------------------------------------------------------- NumPy references
# Each takes the input arrays in parameter order (plus the manifest's ref_args) and returns the
# output array, or a list of them in the order of the manifest's outputs.

def _conv2d_nchw(x, w, stride, pad, dilation):
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    n, c, h, wd = xp.shape
    f, _, kh, kw = w.shape
    oh = (h - dilation * (kh - 1) - 1) // stride + 1
    ow = (wd - dilation * (kw - 1) - 1) // stride + 1
    out = np.zeros((n, f, oh, ow), np.float64)
    for ry in range(kh):
        for rx in range(kw):
            y0, x0 = ry * dilation, rx * dilation
            win = xp[:, :, y0:y0 + stride * (oh - 1) + 1:stride, x0:x0 + stride * (ow - 1) + 1:stride]
            out += np.einsum("nchw,fc->nfhw", win, w[:, :, ry, rx])
    return out


def _conv2d_nhwc(x, w, stride, pad, dilation):  # w is HWIO
    out = _conv2d_nchw(x.transpose(0, 3, 1, 2), w.transpose(3, 2, 0, 1), stride, pad, dilation)
    return out.transpose(0, 2, 3, 1)


def _depthwise_conv2d_nchw(x, w, stride, pad):  # w is (C, 1, KH, KW)
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    _, _, h, wd = xp.shape
    _, _, kh, kw = w.shape
    oh, ow = (h - kh) // stride + 1, (wd - kw) // stride + 1
    out = np.zeros(x.shape[:2] + (oh, ow), np.float64)
    for ry in range(kh):
        for rx in range(kw):
            win = xp[:, :, ry:ry + stride * (oh - 1) + 1:stride, rx:rx + stride * (ow - 1) + 1:stride]
            out += win * w[None, :, 0, ry, rx, None, None]
    return out


def _windows(x, k, s, pad, fill):
    """(N, C, OH, OW, K, K) windows of x padded by `pad` with `fill`."""
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)), constant_values=fill)
    oh, ow = (xp.shape[2] - k) // s + 1, (xp.shape[3] - k) // s + 1
    win = np.lib.stride_tricks.sliding_window_view(xp, (k, k), axis=(2, 3))
    return win[:, :, ::s, ::s][:, :, :oh, :ow]


def _avg_pool2d(x, k, s, pad, count_include_pad):
    total = _windows(x, k, s, pad, 0.0).sum(axis=(-1, -2))
    if count_include_pad:
        return total / (k * k)
    count = _windows(np.ones_like(x), k, s, pad, 0.0).sum(axis=(-1, -2))
    return total / count


def _resize2d_linear(x, size):
    """Bilinear, half_pixel coordinates, source indices clamped to the edge (TVM's topi)."""
    h, w = x.shape[2:]
    oh, ow = size

    def axis(o, n):
        src = (np.arange(o) + 0.5) * (n / o) - 0.5
        lo = np.floor(src).astype(np.int64)
        frac = src - lo
        return np.clip(lo, 0, n - 1), np.clip(lo + 1, 0, n - 1), frac

    y0, y1, fy = axis(oh, h)
    x0, x1, fx = axis(ow, w)
    fy, fx = fy[:, None], fx[None, :]
    top = x[:, :, y0][:, :, :, x0] * (1 - fx) + x[:, :, y0][:, :, :, x1] * fx
    bottom = x[:, :, y1][:, :, :, x0] * (1 - fx) + x[:, :, y1][:, :, :, x1] * fx
    return top * (1 - fy) + bottom * fy


def _softmax(a, axis=-1):
    e = np.exp(a - a.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _strided_slice(a, begin, end, strides):
    return a[tuple(slice(b, e, s) for b, e, s in zip(begin, end, strides))]


REFS = {
    "exp": np.exp,
    "tanh": np.tanh,
    "sigmoid": lambda a: 1 / (1 + np.exp(-a)),
    "erf": np.vectorize(math.erf),
    "sqrt": np.sqrt,
    "log": np.log,
    "rsqrt": lambda a: 1 / np.sqrt(a),
    "relu": lambda a: np.maximum(a, 0),
    "abs_neg": lambda a: -np.abs(a),
    "floor": np.floor,
    "leaky_relu": lambda a, alpha: np.where(a > 0, a, a * alpha),
    "add": np.add,
    "subtract": np.subtract,
    "multiply": np.multiply,
    "divide": np.divide,
    "maximum": np.maximum,
    "power": np.power,
    "floor_divide": np.floor_divide,
    "floor_mod": np.mod,
    "cast": lambda a, dtype: a.astype(dtype),
    "where_greater": lambda a, b: np.where(a > b, a, b * 2),
    "where": np.where,
    "clip": lambda a, lo, hi: np.clip(a, lo, hi),
    "sum": lambda a, axis: a.sum(axis=axis),
    "max": lambda a, axis, keepdims: a.max(axis=axis, keepdims=keepdims),
    "min": lambda a, axis: a.min(axis=axis),
    "mean": lambda a, axis: a.mean(axis=tuple(axis)),
    "prod": lambda a, axis: a.prod(axis=axis, dtype=a.dtype),
    "argmax": lambda a, axis: a.argmax(axis=axis).astype("int32"),
    "argmin": lambda a, axis: a.argmin(axis=axis).astype("int32"),
    "softmax": _softmax,
    "log_softmax": lambda a: np.log(_softmax(a)),
    "layer_norm": lambda a, g, b, axis, eps: (
        (a - a.mean(axis=tuple(axis), keepdims=True))
        / np.sqrt(a.var(axis=tuple(axis), keepdims=True) + eps) * g + b),
    "rms_norm": lambda a, g, axis, eps: (
        a / np.sqrt((a * a).mean(axis=tuple(axis), keepdims=True) + eps) * g),
    "matmul": np.matmul,
    "dense": lambda x, w: x @ w.T,
    "dense_bias": lambda x, w, b: x @ w.T + b,
    "batch_matmul": lambda x, y: x @ y.transpose(0, 2, 1),
    "conv2d_nchw": _conv2d_nchw,
    "conv2d_nhwc": _conv2d_nhwc,
    "depthwise_conv2d_nchw": _depthwise_conv2d_nchw,
    "max_pool2d": lambda x, k, s, pad: _windows(x, k, s, pad, -np.inf).max(axis=(-1, -2)),
    "avg_pool2d": _avg_pool2d,
    "global_avg_pool": lambda x: x.mean(axis=(2, 3), keepdims=True),
    "pad": lambda a, before, after, value: np.pad(a, list(zip(before, after)), constant_values=value),
    "transpose": lambda a, axes: a.transpose(axes),
    "reshape": lambda a, shape: a.reshape(shape),
    "concatenate": lambda *xs, axis: np.concatenate(xs, axis=axis),
    "split": lambda a, parts, axis: np.split(a, parts, axis=axis),
    "strided_slice": _strided_slice,
    "take": lambda a, i, axis: np.take(a, i, axis=axis),
    "gather": lambda a, i, axis: np.take_along_axis(a, i, axis=axis),
    "cumsum": lambda a, axis: np.cumsum(a, axis=axis),
    "resize2d_linear": _resize2d_linear,
    "flip": lambda a, axis: np.flip(a, axis=axis),
    "one_hot": lambda i, depth, on, off: np.where(np.arange(depth) == i[..., None], on, off),
    "exp_add": lambda a, b: np.exp(a) + b,
    "scale_relu": lambda a: np.maximum(a * 3, 0),
    "scale_rows": lambda a, s: a * s[:, None],
}

# (rtol, atol) per output dtype; integers and booleans must match exactly.
TOLERANCE = {"float16": (2e-3, 2e-3), "float32": (1e-4, 1e-5), "float64": (1e-10, 1e-12)}


# ---------------------------------------------------------------- inputs and checking
def _shape(param, sym):
    return tuple(d if isinstance(d, int) else sym[d] for d in param["shape"])


def _random(param, shape, rng):
    dtype = param["dtype"]
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if dtype.startswith("int"):
        low, high = param.get("range", [-10, 10])
        return rng.integers(low, high, size=shape).astype(dtype)
    low, high = param.get("range", [-2.0, 2.0])
    return rng.uniform(low, high, size=shape).astype(dtype)


def _arrays(entry, seed=0):
    rng = np.random.default_rng(seed)
    inputs, outputs = [], []
    for p in entry["params"]:
        shape = _shape(p, entry["sym"])
        if p["name"] in entry["outputs"]:
            outputs.append(np.zeros(shape, p["dtype"]))
        else:
            inputs.append(_random(p, shape, rng))
    return inputs, outputs


def _expected(entry, inputs):
    got = REFS[entry["ref"]](*inputs, **entry["ref_args"])
    return list(got) if isinstance(got, (list, tuple)) else [got]


def _compare(entry, outputs, expected):
    for name, out, want in zip(entry["outputs"], outputs, expected):
        want = np.asarray(want)
        assert want.size == out.size, f"{name}: reference has shape {want.shape}, output {out.shape}"
        want = want.reshape(out.shape)
        if out.dtype.kind in "biu":
            np.testing.assert_array_equal(out, want.astype(out.dtype), err_msg=name)
        else:
            rtol, atol = TOLERANCE[str(out.dtype)]
            np.testing.assert_allclose(out, want.astype(np.float64), rtol=rtol, atol=atol,
                                       err_msg=name)


# TVM lowers a reduction whose reduce loop is bound to threadIdx as a cross-thread all-reduce;
# tessel has no such lowering yet, and refuses these (the loop's threads would race on the
# accumulator) instead of building a wrong kernel. When the lowering lands, this list empties.
NOT_SUPPORTED = {}


@pytest.mark.parametrize("entry", MANIFEST, ids=[e["function"] for e in MANIFEST])
def test_tvm_corpus(entry):
    path = CORPUS / entry["file"]
    text = path.read_text()

    # (a) TVM's text parses.
    f = tessel.parse(text, str(path))

    # (b) tessel's own print of it parses back to a structurally equal node.
    ir.assert_structural_equal(f, tessel.parse(tessel.as_text(f)), map_free_vars=True)

    # (c) it builds; (d) it computes what NumPy computes.
    inputs, outputs = _arrays(entry)
    expected = _expected(entry, inputs)
    args, outs = iter(inputs), iter(outputs)
    ordered = [next(outs) if p["name"] in entry["outputs"] else next(args) for p in entry["params"]]
    if entry["function"] in NOT_SUPPORTED:
        with pytest.raises(ValueError, match=NOT_SUPPORTED[entry["function"]]):
            tessel.build(f, target="cuda -arch=sm_90" if entry["target"] == "cuda" else "c")
        return
    if entry["target"] == "cuda":
        mod = tessel.build(f, target="cuda -arch=sm_90")
        torch = gpu_torch()
        if torch is None:
            pytest.skip("built for CUDA sm_90; not run: PyTorch with a CUDA device is not available")
        on_device = [torch.from_numpy(x).cuda() for x in ordered]
        mod[entry["function"]](*on_device)
        torch.cuda.synchronize()
        by_name = dict(zip((p["name"] for p in entry["params"]), on_device))
        outputs = [by_name[name].cpu().numpy() for name in entry["outputs"]]
    else:
        mod = tessel.build(f, target="c")
        mod[entry["function"]](*(tvm_ffi.from_dlpack(x) for x in ordered))
    _compare(entry, outputs, expected)
