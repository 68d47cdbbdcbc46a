"""The host wrapper fuzzer's cases (docs/reliability.md, "Host wrapper fuzzer"), shared by
test_fuzz_host.py (target c) and test_fuzz_host_gpu.py (cuda and metal): the kernels and their
NumPy references, random argument lists with at most one fault, and the check of each call.

A `Target` says how a run differs by target: the kernels' text, the device the tensors must be
on, how an array reaches the call, and what a call that passes every check does (runs and is
compared with NumPy, or stops at the launch because no GPU driver is there).

Case i of a seed draws everything from `default_rng([seed, i])`; `main` gives every test file the
same command line (`--seed S --case I` replays one case)."""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import math
import mmap
import os
import subprocess
import sys
import time

import numpy as np
import pytest

KERNELS = '''
@I.ir_module
class Module:
    @T.prim_func
    def add(A: T.Buffer((n,), "float32"), B: T.Buffer((n,), "float32"), C: T.Buffer((n,), "float32")):
        T.func_attr({"global_symbol": "add"})
        for i in range(n):
            C[i] = A[i] + B[i]

    @T.prim_func
    def strided(A: T.Buffer((M, N), "float32", strides=(s0, s1), elem_offset=off), B: T.Buffer((M, N), "float32")):
        T.func_attr({"global_symbol": "strided"})
        for i in range(M):
            for j in range(N):
                B[i, j] = A[i, j] * T.float32(2) + T.float32(1)

    @T.prim_func
    def axpb(A: T.Buffer((n,), "int64"), B: T.Buffer((n,), "int64"), k: T.int64, m: T.int32):
        T.func_attr({"global_symbol": "axpb"})
        for i in range(n):
            B[i] = A[i] * k + T.Cast("int64", m)

    @T.prim_func
    def half(A: T.Buffer((n,), "float16"), B: T.Buffer((n,), "float16"), x: T.float16):
        T.func_attr({"global_symbol": "half"})
        for i in range(n):
            B[i] = A[i] * x

    @T.prim_func
    def pairs(A: T.Buffer((n * 2,), "float32"), B: T.Buffer((n,), "float32")):
        T.func_attr({"global_symbol": "pairs"})
        for i in range(n):
            B[i] = A[i * 2] + A[i * 2 + 1]
'''

# The same functions for a GPU target: one thread an element (a row for `strided`), guarded.
GPU_KERNELS = '''
@I.ir_module
class Module:
    @T.prim_func
    def add(A: T.Buffer((n,), "float32"), B: T.Buffer((n,), "float32"), C: T.Buffer((n,), "float32")):
        T.func_attr({"global_symbol": "add"})
        for bx in T.thread_binding((n + 63) // 64, thread="blockIdx.x"):
            for tx in T.thread_binding(64, thread="threadIdx.x"):
                if bx * 64 + tx < n:
                    C[bx * 64 + tx] = A[bx * 64 + tx] + B[bx * 64 + tx]

    @T.prim_func
    def strided(A: T.Buffer((M, N), "float32", strides=(s0, s1), elem_offset=off), B: T.Buffer((M, N), "float32")):
        T.func_attr({"global_symbol": "strided"})
        for bx in T.thread_binding((M + 63) // 64, thread="blockIdx.x"):
            for tx in T.thread_binding(64, thread="threadIdx.x"):
                if bx * 64 + tx < M:
                    for j in range(N):
                        B[bx * 64 + tx, j] = A[bx * 64 + tx, j] * T.float32(2) + T.float32(1)

    @T.prim_func
    def axpb(A: T.Buffer((n,), "int64"), B: T.Buffer((n,), "int64"), k: T.int64, m: T.int32):
        T.func_attr({"global_symbol": "axpb"})
        for bx in T.thread_binding((n + 63) // 64, thread="blockIdx.x"):
            for tx in T.thread_binding(64, thread="threadIdx.x"):
                if bx * 64 + tx < n:
                    B[bx * 64 + tx] = A[bx * 64 + tx] * k + T.Cast("int64", m)

    @T.prim_func
    def half(A: T.Buffer((n,), "float16"), B: T.Buffer((n,), "float16"), x: T.float16):
        T.func_attr({"global_symbol": "half"})
        for bx in T.thread_binding((n + 63) // 64, thread="blockIdx.x"):
            for tx in T.thread_binding(64, thread="threadIdx.x"):
                if bx * 64 + tx < n:
                    B[bx * 64 + tx] = A[bx * 64 + tx] * x

    @T.prim_func
    def pairs(A: T.Buffer((n * 2,), "float32"), B: T.Buffer((n,), "float32")):
        T.func_attr({"global_symbol": "pairs"})
        for bx in T.thread_binding((n + 63) // 64, thread="blockIdx.x"):
            for tx in T.thread_binding(64, thread="threadIdx.x"):
                if bx * 64 + tx < n:
                    B[bx * 64 + tx] = A[(bx * 64 + tx) * 2] + A[(bx * 64 + tx) * 2 + 1]
'''


I64 = (-2**63, 2**63 - 1)
I32 = (-2**31, 2**31 - 1)


def _ref_add(a):
    return {2: a[0] + a[1]}


def _ref_strided(a):
    return {1: a[0] * np.float32(2) + np.float32(1)}


def _ref_axpb(a):
    with np.errstate(over="ignore"):
        return {1: a[0] * np.int64(a[2]) + np.int64(a[3])}


def _ref_half(a):
    with np.errstate(over="ignore", invalid="ignore"):
        return {1: a[0] * np.float16(float(a[2]))}


def _ref_pairs(a):
    return {1: a[0][0::2] + a[0][1::2]}


# name: (parameters as (name, dtype, shape template or None for a scalar), output index, reference).
# A shape template names the size variables; `n2` is `n * 2`.
SPECS = {
    "add": ([("A", "float32", ("n",)), ("B", "float32", ("n",)), ("C", "float32", ("n",))], 2,
            _ref_add),
    "strided": ([("A", "float32", ("M", "N")), ("B", "float32", ("M", "N"))], 1, _ref_strided),
    "axpb": ([("A", "int64", ("n",)), ("B", "int64", ("n",)), ("k", "int64", None),
              ("m", "int32", None)], 1, _ref_axpb),
    "half": ([("A", "float16", ("n",)), ("B", "float16", ("n",)), ("x", "float16", None)], 1,
             _ref_half),
    "pairs": ([("A", "float32", ("n2",)), ("B", "float32", ("n",))], 1, _ref_pairs),
}
# Buffers whose strides and offset the kernel declares: any layout is legal.
DECLARED_LAYOUT = {("strided", "A")}

DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16",
          "float32", "float64", "bool", "complex64"]


# ---- DLPack capsules made by hand: any device, byte offset, data pointer, shape and strides ----
class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


_Deleter = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class _DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p),
                ("deleter", _Deleter)]


# The memory stays with the FakeTensor objects, which live until the process ends (_KEEP).
_NOOP_DELETER = _Deleter(lambda p: None)
_KEEP = []
_capsule_new = ctypes.pythonapi.PyCapsule_New
_capsule_new.restype = ctypes.py_object
_capsule_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_DL_CODES = {"i": 0, "u": 1, "f": 2, "c": 5, "b": 6}


class FakeTensor:
    """A DLPack producer over `base`'s memory with any DLTensor fields overridden."""

    def __init__(self, base, device=(1, 0), byte_offset=0, data=None, shape=None, strides=None):
        self.base = base
        self.device = device
        shape = list(base.shape if shape is None else shape)
        strides = list([s // base.itemsize for s in base.strides] if strides is None else strides)
        self._shape = (ctypes.c_int64 * max(1, len(shape)))(*shape)
        self._strides = (ctypes.c_int64 * max(1, len(strides)))(*strides)
        m = _DLManagedTensor()
        t = m.dl_tensor
        t.data = base.ctypes.data if data is None else data
        t.device = _DLDevice(*device)
        t.ndim = len(shape)
        t.dtype = _DLDataType(_DL_CODES[base.dtype.kind], base.itemsize * 8, 1)
        t.shape = self._shape
        t.strides = self._strides
        t.byte_offset = byte_offset
        m.deleter = _NOOP_DELETER
        self._managed = m
        _KEEP.append(self)

    def __dlpack_device__(self):
        return self.device

    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
        return _capsule_new(ctypes.addressof(self._managed), b"dltensor", None)


# ---- targets ----
class Target:
    """What differs between the targets a run builds for.

    `device` is the (DLPack type, id) the wrapper requires; `wrong_devices` six others, where
    (type, 1) is a second device of the right type. `present(fuzzer, array)` turns a NumPy array
    into what the call gets (None: the C target's mix of NumPy, tvm_ffi tensors and capsules);
    `fake(fuzzer, base, **FakeTensor fields)`, when given, makes the hand-made tensors (else a
    FakeTensor over `base` on `device`).
    `launch_error`, when set, is part of the RuntimeError that a call passing every check gets
    because no GPU driver is there to launch it (the cases then cannot check results); `context`
    is entered around a run (the Metal emulator's installation)."""

    def __init__(self, name, kernels, device, wrong_devices, present=None, fake=None,
                 launch_error=None, context=contextlib.nullcontext):
        self.name, self.kernels, self.device = name, kernels, device
        self.wrong_devices, self.present, self.launch_error = wrong_devices, present, launch_error
        self.context = context
        self._fake = fake

    def fake(self, fuzzer, base, **kw):
        if self._fake is not None:
            return self._fake(fuzzer, base, **kw)
        import tvm_ffi

        kw.setdefault("device", self.device)
        return tvm_ffi.from_dlpack(FakeTensor(base, **kw))


C_TARGET = Target("c", KERNELS, (1, 0), [(2, 0), (8, 0), (4, 1), (1, 1), (13, 0), (99, 0)])


# ---- one case ----
class Case:
    """The arguments of one call and what it must do: `must` is "ok" (succeed, outputs as NumPy
    says), "error" (a TypeError/ValueError naming one of `names`), "either" (one of the two), or
    "refused" (the DLPack exporter, NumPy, refuses the array: BufferError)."""

    def __init__(self, kernel, args, must, names=(), kind=None, what=""):
        self.kernel, self.args, self.must, self.names, self.kind = kernel, args, must, names, kind
        self.what = what
        self.inputs = None  # NumPy copies of the arguments, for the reference
        self.after = []  # called after the call, before its outputs are read (GPU copies back)

    def __str__(self):
        return f"{self.kernel}: {self.what} -> {self.must}" + (
            f" {self.kind.__name__ if self.kind else ''} naming {list(self.names)}"
            if self.must in ("error", "either") else "")


class Fuzzer:
    def __init__(self, funcs, rng, big, target=C_TARGET):
        self.funcs, self.rng, self.big, self.target = funcs, rng, big, target
        self.after = []

    # values
    def array(self, dtype, shape):
        r = self.rng
        if dtype == "bool":
            return r.random(shape) < 0.5
        if dtype.startswith("complex"):
            return (r.standard_normal(shape) + 1j * r.standard_normal(shape)).astype(dtype)
        if dtype.startswith(("int", "uint")):
            info = np.iinfo(dtype)
            lo, hi = max(info.min, -1000), min(info.max, 1000)
            if dtype == "int64" and r.random() < 0.3:
                lo, hi = info.min, info.max
            return r.integers(lo, hi, size=shape, dtype=dtype, endpoint=True)
        return (r.standard_normal(shape) * 4).astype(dtype)

    def sizes(self, names):
        small = [0, 1, 2, 3, 5, 8, 17, 64]
        return {v: int(self.rng.choice(small if self.rng.random() < 0.9 else [0, 1, 1000]))
                for v in names}

    def shape_of(self, template, sizes):
        return tuple(2 * sizes["n"] if d == "n2" else sizes[d] for d in template)

    def layout(self, a, allow_noncompact):
        """The same values in a random memory layout: compact, stepped, transposed, reversed."""
        r = self.rng
        k = int(r.integers(0, 10))
        if k == 0 or k > 4 or a.ndim == 0:
            return a, "compact"
        if k == 1:
            step = int(r.integers(2, 4))
            wide = np.zeros(a.shape[:-1] + (a.shape[-1] * step,), a.dtype) if a.ndim else a
            wide[..., ::step] = a
            return wide[..., ::step], f"step {step}"
        if k == 2 and a.ndim == 2:
            return np.ascontiguousarray(a.T).T, "transposed"
        if k == 3:
            rev = a[(slice(None, None, -1),) * a.ndim].copy()
            return rev[(slice(None, None, -1),) * a.ndim], "reversed"
        if k == 4 and allow_noncompact and a.ndim == 2 and a.shape[1] > 0:
            wide = np.zeros((a.shape[0], a.shape[1] + 3), a.dtype)
            wide[:, 1:1 + a.shape[1]] = a
            return wide[:, 1:1 + a.shape[1]], "column window"
        return a, "compact"

    def scalar(self, dtype):
        """A value for a scalar parameter and whether it is legal."""
        r = self.rng
        if dtype in ("int64", "int32"):
            lo, hi = I64 if dtype == "int64" else I32
            good = [0, 1, -1, lo, hi, int(r.integers(lo, hi, endpoint=True)), True, False,
                    np.int64(7), np.int32(-3), np.uint8(200)]
            wide = [hi + 1, lo - 1, 2**63 - 1, -2**63, 2**63, -2**63 - 1, 2**64, 10**30]
            bad_type = [1.5, None, "3", b"3", object(), [1], {"k": 1}, np.float64(2.0), 1 + 2j]
            pool = r.choice(3, p=[0.75, 0.15, 0.1])
            if pool == 0:
                return good[int(r.integers(len(good)))], "ok", None
            if pool == 1:
                v = wide[int(r.integers(len(wide)))]
                if lo <= v <= hi:
                    return v, "ok", None
                return v, "error", ValueError
            return bad_type[int(r.integers(len(bad_type)))], "error", TypeError
        good = [0.0, -0.0, 1.0, 0.5, math.inf, -math.inf, math.nan, 1e10, 65504.0, 65520.0, 1e-8,
                6e-8, float(r.standard_normal() * 100), 3, -2**63, 2**63 - 1, np.float32(1.25),
                np.float16(2.5)]
        # 2**70 reaches the wrapper as an ffi.BigInt, which a float parameter does not take.
        bad_type = [None, "1.0", object(), [1.0], np.int64(2), 1 + 2j, 2**70]
        if r.random() < 0.85:
            return good[int(r.integers(len(good)))], "ok", None
        v = bad_type[int(r.integers(len(bad_type)))]
        # np.int64 arrives as an int, which a float parameter takes.
        return v, ("ok" if isinstance(v, np.integer) else "error"), TypeError

    def wrap(self, a):
        """A NumPy array as the call sees it: itself, a tvm_ffi tensor, or a hand-made capsule;
        on a GPU target, what the target presents."""
        import tvm_ffi

        if self.target.present is not None:
            return self.target.present(self, a) if isinstance(a, np.ndarray) else a
        k = int(self.rng.integers(0, 3))
        if k == 0 or not isinstance(a, np.ndarray):
            return a
        if k == 1:
            return tvm_ffi.from_dlpack(a)
        return tvm_ffi.from_dlpack(FakeTensor(a))

    def fake(self, base, **kw):
        return self.target.fake(self, base, **kw)

    # the case
    def make(self):
        r = self.rng
        kernel = list(SPECS)[int(r.integers(len(SPECS)))]
        params, out, _ = SPECS[kernel]
        tensors = [p for p in params if p[2] is not None]
        tnames = tuple(p[0] for p in tensors)
        sizes = self.sizes({d for p in tensors for d in p[2] if d != "n2"} | (
            {"n"} if any("n2" in p[2] for p in tensors) else set()))
        # Every fault as (must, names, kind); combined at the end.
        args, faults, what, layouts = [], [], [], {}
        for name, dtype, template in params:
            if template is None:
                v, m, k = self.scalar(dtype)
                args.append(v)
                what.append(f"{name}={v!r}")
                if m == "error":
                    faults.append(("error", (name,), k))
                continue
            a = self.array(dtype, self.shape_of(template, sizes))
            a, how = self.layout(a, (kernel, name) in DECLARED_LAYOUT)
            if how != "compact" and (kernel, name) not in DECLARED_LAYOUT and a.size > 1:
                faults.append(("either", (name,), ValueError))
                layouts[len(args)] = how
            what.append(f"{name}{list(a.shape)}{'' if how == 'compact' else ' ' + how}")
            args.append(a)
        # One fault, most of the time.
        fault = r.choice(["none", "count", "nontensor", "dtype", "ndim", "shape", "device",
                          "offset", "null", "negative", "huge", "readonly", "alias", "span"],
                         p=[0.25, 0.04, 0.08, 0.08, 0.06, 0.08, 0.06, 0.08, 0.03, 0.03, 0.03, 0.03,
                            0.05, 0.1])
        arrays = [i for i, p in enumerate(params) if p[2] is not None]
        i = int(r.choice(arrays))
        if fault in ("offset", "null") and i == out:
            # The kernel would write into a copy that the result check does not see.
            i = arrays[0]
        name, dtype, template = params[i]
        a = args[i]
        if fault == "count":
            k = int(r.choice([0, len(args) - 1, len(args) + 1, len(args) + 2]))
            args = (args + [np.zeros(1, "float32"), None])[:k]
            return self._finish(kernel, args, "error", (), TypeError, f"{k} arguments")
        elif fault == "nontensor":
            v = [None, 0, 1.5, "A", b"A", True, object(), [1, 2], {"a": 1}, (), len,
                 np.float32(1), 1 + 2j, np.dtype("float32")][int(r.integers(14))]
            args[i] = v
            fault_case = ("error", (name,), TypeError, f"{name}={v!r}")
        elif fault == "dtype":
            other = [d for d in DTYPES if d != dtype][int(r.integers(len(DTYPES) - 1))]
            args[i] = self.array(other, a.shape)
            fault_case = ("error", (name,), TypeError, f"{name} as {other}")
        elif fault == "ndim":
            args[i] = a[None] if (a.ndim == 1 or r.random() < 0.5) else a.reshape(-1)
            fault_case = ("error", (name,), ValueError, f"{name} with shape {args[i].shape}")
        elif fault == "shape":
            shape = list(a.shape)
            d = int(r.integers(len(shape)))
            shape[d] = int(r.choice([s for s in [0, 1, 2, 3, 7, 9, 16] if s != shape[d]]))
            args[i] = self.array(dtype, tuple(shape))
            # The first tensor rebinds the sizes; the next one that uses them is named, or a
            # tensor whose extent must be even.
            fault_case = ("error", tnames, ValueError, f"{name} with shape {tuple(shape)}")
        elif fault == "device":
            dev = self.target.wrong_devices[int(r.integers(6))]
            if dev == (self.target.device[0], 1) and i == arrays[0]:
                # Device 1 is of the right type: the next tensor, on device 0, disagrees.
                fault_case = ("error", tnames, ValueError, f"{name} on {dev}")
            else:
                fault_case = ("error", (name,), ValueError, f"{name} on device {dev}")
            args[i] = self.fake(np.ascontiguousarray(a), device=dev)
        elif fault == "offset":
            c = np.ascontiguousarray(a)
            flat = c.reshape(-1)
            item = c.itemsize
            skip = int(r.integers(0, 3))
            bad = r.random() < 0.4 and item > 1
            extra = int(r.integers(1, item)) if bad else 0
            # The values sit `skip` elements into the backing array; byte_offset reaches them.
            backing = np.concatenate([np.zeros(skip, c.dtype), flat])
            args[i] = self.fake(backing, byte_offset=skip * item + extra, shape=c.shape,
                                strides=[s // item for s in c.strides])
            if bad:
                fault_case = ("error", (name,), ValueError, f"{name} byte_offset +{extra}")
            else:
                fault_case = ("ok", (), None, f"{name} byte_offset {skip * item}")
                self._value_of = {i: c}
        elif fault == "null":
            args[i] = self.fake(np.ascontiguousarray(a), data=0)
            fault_case = (("ok", (), None, f"{name} NULL, no elements") if a.size == 0 else
                          ("error", (name,), ValueError, f"{name} NULL data"))
            if a.size == 0:
                self._value_of = {i: a}
        elif fault == "negative":
            shape = list(a.shape)
            shape[int(r.integers(len(shape)))] = int(r.choice([-1, -2**31, -2**63]))
            args[i] = self.fake(np.zeros(1, dtype), shape=shape, strides=[0] * len(shape))
            fault_case = ("error", tnames, ValueError, f"{name} with shape {shape}")
        elif fault == "huge":
            ext = [2**31, 2**32 + 1, 2**62, 2**63 - 1][int(r.integers(4))]
            shape = [ext] + [int(r.choice([1, 2, 2**31]))] * (a.ndim - 1)
            args[i] = self.fake(np.zeros(1, dtype), shape=shape, strides=[0] * len(shape))
            fault_case = ("error", tnames, ValueError, f"{name} with shape {shape}")
        elif fault == "readonly":
            ro = np.array(a)
            ro.flags.writeable = False
            args[i] = ro
            fault_case = ("refused", (name,), None, f"{name} read-only")
        elif fault == "alias" and i != out and a.shape == args[out].shape and (
                params[out][1] == dtype) and isinstance(args[out], np.ndarray):
            args[i] = args[out]
            fault_case = ("ok", (), None, f"{name} is {params[out][0]}")
            if out in layouts:
                faults.append(("either", (name,), ValueError))
        elif fault == "span" and kernel == "strided" and self.big is not None:
            return self._span_case(kernel, args)
        else:
            fault_case = ("ok", (), None, "")
        m, nm, k, w = fault_case
        what.append(w)
        if m != "ok":
            faults.append((m, nm, k))
        musts = {f[0] for f in faults}
        must = ("refused" if "refused" in musts else "error" if "error" in musts else
                "either" if "either" in musts else "ok")
        # The wrapper stops at the first bad argument, so any fault may be the one named.
        names = tuple(dict.fromkeys(n for f in faults for n in f[1]))
        kinds = {f[2] for f in faults}
        kind = kinds.pop() if len(kinds) == 1 else None
        return self._finish(kernel, args, must, names, kind, ", ".join(x for x in what if x))

    def _finish(self, kernel, args, must, names, kind, what):
        values = getattr(self, "_value_of", {})
        self._value_of = {}
        case = Case(kernel, [], must, names, kind, what)
        case.after = self.after
        case.inputs = [values.get(j, a) for j, a in enumerate(args)]
        case.inputs = [a.copy() if isinstance(a, np.ndarray) else a for a in case.inputs]
        case.outputs = [a for a in args if isinstance(a, np.ndarray) and a.flags.writeable]
        case.before = [a.copy() for a in case.outputs]
        out = SPECS[kernel][1]
        case.result = args[out] if out < len(args) and isinstance(args[out], np.ndarray) else None
        # A read-only array goes as itself: NumPy refuses to export it, at the call.
        case.args = [a if j in values or (isinstance(a, np.ndarray) and not a.flags.writeable)
                     else self.wrap(a) for j, a in enumerate(args)]
        return case

    def _span_case(self, kernel, args):
        """A strided view over real (lazily mapped) memory whose element indices reach just inside
        or just past int32: the kernel indexes it correctly or the wrapper refuses it."""
        from numpy.lib.stride_tricks import as_strided

        r = self.rng
        big = self.big
        rows = int(r.integers(2, 4))
        limit = 2**31 - 1
        stride = limit // (rows - 1) + int(r.choice([-1, 0, 1, 2]))
        negative = r.random() < 0.5
        span = (rows - 1) * stride
        if span >= big.size:
            return self._finish(kernel, args, "ok", (), None, "")
        start = span if negative else 0
        base = big[start:]
        view = as_strided(base, shape=(rows, 2), strides=(4 * (-stride if negative else stride), 4))
        for k in range(rows):
            view[k] = [k + 1, -k]
        # Column 1 adds one to the largest index.
        fits = span <= 2**31 if negative else span + 1 <= limit
        out = np.zeros((rows, 2), "float32")
        what = f"A rows {rows} stride {'-' if negative else ''}{stride} (span {span})"
        if fits:
            case = self._finish(kernel, [view, out], "ok", (), None, what)
        else:
            case = self._finish(kernel, [view, out], "error", ("A",), ValueError, what)
        # Through NumPy's own DLPack export, or on the target's device.
        case.args[0] = view if self.target.present is None else self.fake(view)
        return case


def message_ok(kernel, case, err):
    msg = str(err)
    if not msg.startswith(kernel + ": "):
        return f"message does not start with '{kernel}: ': {msg!r}"
    if not case.names:
        n = len(SPECS[kernel][0])
        if msg != f"{kernel}: expected {n} argument{'s' if n != 1 else ''}, got {len(case.args)}":
            return f"unexpected argument-count message: {msg!r}"
        return None
    body = msg[len(kernel) + 2:]
    if not any(body.startswith(p + ":") or body.startswith(p + ".") or f"from {p}." in body
               for p in case.names):
        return f"message names none of {list(case.names)}: {msg!r}"
    if "expected" not in body or "got" not in body:
        return f"message lacks 'expected' / 'got': {msg!r}"
    return None


def run_case(funcs, case, target=C_TARGET):
    """None when the call did what the case allows, else what went wrong."""
    kernel = case.kernel
    try:
        try:
            funcs[kernel](*case.args)
        finally:
            for f in case.after:
                f()
    except BufferError as err:
        if case.must == "refused":
            return None
        return f"BufferError: {err}"
    except (TypeError, ValueError) as err:
        if case.must in ("ok", "refused"):
            return f"unexpected {type(err).__name__}: {err}"
        if case.kind is not None and case.must == "error" and not isinstance(err, case.kind):
            return f"expected {case.kind.__name__}, got {type(err).__name__}: {err}"
        bad = message_ok(kernel, case, err)
        if bad:
            return bad
        for a, b in zip(case.outputs, case.before):
            if not np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"):
                return f"an output changed although the call was refused ({err})"
        return None
    except RuntimeError as err:
        if target.launch_error is None or target.launch_error not in str(err):
            return f"unexpected RuntimeError: {err}"
        # Every check passed and the call went on to the launch, which needs a GPU driver.
        if case.must in ("ok", "either"):
            return None
        return f"reached the launch although it must be refused: {err}"
    except Exception as err:  # noqa: BLE001 - any other kind is a finding
        return f"unexpected {type(err).__name__}: {err}"
    if case.must in ("error", "refused"):
        return "no error raised"
    _, out, ref = SPECS[kernel]
    want = ref(case.inputs)[out]
    got = case.result
    if got is None and want.size == 0:
        return None
    if got is None or got.shape != want.shape or not np.array_equal(got, want, equal_nan=True):
        return f"wrong result: got {got!r}, expected {want!r}"
    return None


def big_memory():
    """8 GiB of address space, touched only where a case writes (MAP_NORESERVE): strided views
    over it reach past int32 element indices with real memory behind every element."""
    try:
        flags = mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | getattr(mmap, "MAP_NORESERVE", 0)
        mm = mmap.mmap(-1, 2**33 + 64, flags=flags)
    except (OSError, ValueError, OverflowError):
        return None
    return np.frombuffer(mm, "float32")


def fuzz(seed, seconds, only=None, target=C_TARGET, big=True):
    """Runs cases of `seed` until `seconds` pass (or only case `only`); prints each case before
    its call, a FAIL line for the first that goes wrong (then returns 1), and the count."""
    import tessel

    mod = tessel.build(target.kernels, target=target.name)
    funcs = {k: mod[k] for k in SPECS}
    big = big_memory() if big else None
    deadline = time.monotonic() + seconds
    count = 0
    i = 0 if only is None else only
    with target.context():
        while True:
            rng = np.random.default_rng([seed, i])
            case = Fuzzer(funcs, rng, big, target).make()
            print(f"case {i}: {case}", flush=True)
            bad = run_case(funcs, case, target)
            if bad:
                print(f"FAIL seed {seed} case {i}: {case}\n  {bad}", flush=True)
                return 1
            count += 1
            i += 1
            if only is not None or time.monotonic() > deadline:
                break
    print(f"inputs {count}", flush=True)
    return 0


def run_seed(script, seed, budget, extra=(), env=None):
    """Runs `script --seed seed` in a child (a crash then fails one test, with the seed, the last
    case and the child's stack), with `env` added to its environment; fails the calling test with
    a replay line, or returns the count of inputs."""
    env = {**os.environ, **(env or {}), "PYTHONFAULTHANDLER": "1"}
    proc = subprocess.run(
        [sys.executable, script, "--seed", str(seed), "--seconds", str(budget), *extra],
        capture_output=True, text=True, env=env, timeout=budget + 120)
    lines = proc.stdout.splitlines()
    cases = [ln for ln in lines if ln.startswith("case ")]
    fails = [ln for ln in lines if ln.startswith(("FAIL", "  "))]
    if proc.returncode != 0:
        last = cases[-1] if cases else "(before the first case)"
        detail = "\n".join(fails) if fails else (
            f"the child died (exit {proc.returncode}) in seed {seed}, {last}\n"
            f"{proc.stderr[-3000:]}")
        replay = " ".join([script, "--seed", str(seed), *extra, "--case",
                           last.split(":")[0].split()[-1] if cases else "0"])
        pytest.fail(f"{detail}\nreplay: python {replay}")
    count = next(int(ln.split()[1]) for ln in lines if ln.startswith("inputs "))
    print(f"seed {seed}: {count} inputs in {budget:.1f} s")
    assert count > 0
    return count


def arguments(argv=None, extra=None):
    """The command line of every fuzz test file: --seed, --seconds, --case; `extra(parser)` adds
    a file's own options."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--case", type=int, default=None)
    if extra is not None:
        extra(ap)
    return ap.parse_args(argv)
