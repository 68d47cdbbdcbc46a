"""A seeded, time-bounded fuzzer of the lowering (docs/fuzz_lowering.md, "Lowering fuzzer").

Random small block programs go through `tessel.build(..., target="c")` and run on NumPy arrays;
each program is also translated here, from the same generated tree, into plain Python loops (the
interpreter: TVMScript block semantics with floor division and modulo, int32 wrap-around, float32
arithmetic through NumPy scalars) and the outputs must agree. A program is either built and
matches, or the case fails: the generator only makes valid programs, so a refusal is a failure
as much as a crash or a wrong answer.

What the programs hold: loop nests of 1 to 4 levels (serial, `range`, `T.grid`, parallel,
unrolled, vectorized), blocks with spatial and reduce axes bound by `T.axis.remap` or
`T.axis.spatial/reduce` to a loop variable or a split `io * f + ii` (with `T.where` when f does
not divide the extent), loops in any order around a block (reduce loops outside spatial ones
too), `T.init` for sums, max and min, index expressions with affine combinations and `//`, `%`,
`T.min`, `T.max` by constants and by symbolic extents, `T.if_then_else` and `if`/`else`
statements on indices and on data, float32 or int32 data (`//`, `%`, `T.truncdiv`,
`T.truncmod` by negative and positive constants, bitwise operations and shifts; in some functions
values and constants over the whole int32 range, so that `+ - * <<` wrap around), extents of 1 to
7 and now and then up to 17 (vectorized loops with a remainder), fused loops bound as `f // d`
and `f % d`, plain loops without blocks, several input buffers, intermediate buffers
(`T.alloc_buffer`, global or `scope="local"`) consumed by later nests or produced and consumed
inside a shared outer loop (a local one then moves into the loop and compacts to a row),
symbolic shapes (`n`, `m`) declared by a buffer shape or by `T.int32()` and `T.match_buffer`, and
an int32 scalar parameter.

Several functions go into one `@I.ir_module` per build so that one C compile checks many
programs. Each seed runs in a child process, so a crash fails one test with the seed and batch;
batch b of seed s draws everything from `random.Random(f"{s}/{b}")`, so
`python tests/python/test_fuzz_lowering.py --seed S --batch B --show` prints and replays it.
The seeds share a time budget: TESSEL_FUZZ_SECONDS (default 20) in all.
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import time
import traceback

import numpy as np
import pytest

SEEDS = [101, 202]
SECONDS = float(os.environ.get("TESSEL_FUZZ_SECONDS", "20"))
FUNCS_PER_MODULE = 12

F32_LOWEST = "-3.4028234663852886e+38"
I32_MIN = -2**31
I32_MAX = 2**31 - 1


# ---- expressions: one tree, two renderings ----
#
# A node is a tuple whose first item is its kind. `ty` is "i" (int32) or "f" (float32); booleans
# are their own kind of node. The TVMScript rendering is `tvm(e)`, the Python one `py(e)`.


def _render(e, python):
    """The common shape of both renderings; `python` picks the leaves and operators that differ."""
    r = lambda x: _render(x, python)  # noqa: E731
    k = e[0]
    if k == "var":
        return e[1]
    if k == "int":
        return str(e[1]) if e[1] >= 0 else f"({e[1]})"
    if k == "flt":
        return f"F({e[1]!r})" if python else f"T.float32({e[1]!r})"
    if k == "bin":
        _, op, a, b, ty = e
        if op in ("max", "min"):
            return f"{op}({r(a)}, {r(b)})" if python else f"T.{op}({r(a)}, {r(b)})"
        if op in ("truncdiv", "truncmod"):
            return f"{op.upper()}({r(a)}, {r(b)})" if python else f"T.{op}({r(a)}, {r(b)})"
        if python and ty == "i" and op in ("+", "-", "*", "<<"):
            return f"W({r(a)} {op} {r(b)})"
        # Python's // and % on ints are floor division and modulo, the IR's // and %.
        return f"({r(a)} {op} {r(b)})"
    if k == "read":
        idx = ", ".join(r(i) for i in e[2])
        return f"{e[1]}[{idx}]" if not python or e[3] == "f" else f"int({e[1]}[{idx}])"
    if k == "ite":
        if python:
            return f"({r(e[2])} if {r(e[1])} else {r(e[3])})"
        return f"T.if_then_else({r(e[1])}, {r(e[2])}, {r(e[3])})"
    if k == "cmp":
        return f"({r(e[2])} {e[1]} {r(e[3])})"
    if k in ("and", "or"):
        return f"({r(e[1])} {k} {r(e[2])})"
    if k == "not":
        return f"(not {r(e[1])})"
    if k == "tof":
        return f"F({r(e[1])})" if python else f'T.Cast("float32", {r(e[1])})'
    raise AssertionError(k)


def tvm(e):
    return _render(e, python=False)


def py(e):
    return _render(e, python=True)


def W(x):
    """int32 wrap-around."""
    return (x + 2**31) % 2**32 - 2**31


def TRUNCDIV(a, b):
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def TRUNCMOD(a, b):
    return a - TRUNCDIV(a, b) * b


class Dim:
    """A buffer extent: a constant, or a symbolic variable with the value it is bound to."""

    def __init__(self, value, name=None):
        self.value, self.name = value, name

    def node(self):
        return ("var", self.name) if self.name else ("int", self.value)

    def __str__(self):
        return self.name or str(self.value)


class Atom:
    """An int32 value an index can be built from (a block or loop variable, a split
    combination, the scalar parameter), with the range of values it takes."""

    def __init__(self, node, lo, hi, extent=None):
        self.node, self.lo, self.hi, self.extent = node, lo, hi, extent


class Buf:
    def __init__(self, name, shape, dtype, role, scope="global"):
        self.name, self.shape, self.dtype, self.role = name, shape, dtype, role
        self.scope = scope

    @property
    def ty(self):
        return "f" if self.dtype == "float32" else "i"


# ---- the generator ----


class FuncGen:
    def __init__(self, rng, name):
        self.r = rng
        self.name = name
        self.dtype = rng.choice(["float32", "int32"])
        self.ty = "f" if self.dtype == "float32" else "i"
        # int32 data over the whole range, with large constants: the IR's + - * wrap around.
        self.big = self.ty == "i" and rng.random() < 0.3
        self.counter = 0
        self.syms = []
        for s in ("n", "m")[: rng.choice([0, 0, 1, 1, 2])]:
            self.syms.append(Dim(rng.randint(1, 7), s))
        self.handles = bool(self.syms) and rng.random() < 0.4
        self.scalar = rng.random() < 0.3
        self.scalar_value = rng.randint(-3, 3)
        self.params = []
        self.allocs = []
        self.readable = []  # (buffer, pinned first index node or None)
        self.text = []  # TVMScript body lines (indent, text)
        self.pyl = []  # Python body lines (indent, text)

    def fresh(self, prefix):
        self.counter += 1
        return f"{prefix}{self.counter}"

    def dim(self):
        if self.syms and self.r.random() < 0.35:
            return self.r.choice(self.syms)
        # Now and then an extent past the vector width, so vectorized loops get a remainder.
        return Dim(self.r.randint(1, 7) if self.r.random() < 0.93 else self.r.randint(8, 17))

    def emit(self, indent, tvm_line, py_line=None):
        self.text.append((indent, tvm_line))
        if py_line is not None:
            self.pyl.append((indent, py_line))

    # -- index expressions --

    def index_raw(self, atoms, depth):
        """(node, lo, hi): an int32 expression over the atoms, with bounds for the values the
        atoms take."""
        r = self.r
        c = r.random()
        if not atoms or c < 0.12:
            v = r.randint(-3, 6)
            return ("int", v), v, v
        if depth <= 0 or c < 0.45:
            a = r.choice(atoms)
            return a.node, a.lo, a.hi
        if c < 0.75:
            a = r.choice(atoms)
            k = r.choice([-3, -2, -1, 1, 2, 3])
            x, lo, hi = ("bin", "*", a.node, ("int", k), "i"), min(a.lo * k, a.hi * k), max(a.lo * k, a.hi * k)
            b, blo, bhi = self.index_raw(atoms, depth - 1)
            op = r.choice(["+", "-"])
            if op == "+":
                return ("bin", "+", x, b, "i"), lo + blo, hi + bhi
            return ("bin", "-", x, b, "i"), lo - bhi, hi - blo
        a, lo, hi = self.index_raw(atoms, depth - 1)
        d = r.randint(2, 5)
        if c < 0.88:
            return ("bin", "//", a, ("int", d), "i"), lo // d, hi // d
        if hi - lo + 1 >= d:
            return ("bin", "%", a, ("int", d), "i"), 0, d - 1
        lm, hm = lo % d, hi % d
        return ("bin", "%", a, ("int", d), "i"), min(lm, hm), max(lm, hm)

    def index(self, atoms, dim):
        """An index expression in [0, dim) for the values the atoms take."""
        r = self.r
        # The plain variable of a loop over this very extent, most of the time.
        same = [a for a in atoms if a.extent is not None and str(a.extent) == str(dim)]
        if same and r.random() < 0.5:
            return r.choice(same).node
        node, lo, hi = self.index_raw(atoms, r.randint(0, 2))
        if 0 <= lo and hi < dim.value and (dim.name is None or r.random() < 0.3):
            return node
        c = r.random()
        if c < 0.6 or lo < 0:
            return ("bin", "%", node, dim.node(), "i")
        return ("bin", "min", node, ("bin", "-", dim.node(), ("int", 1), "i"), "i")

    def cond(self, atoms, depth=1, data=True):
        r = self.r
        c = r.random()
        if depth > 0 and c < 0.15:
            return (r.choice(["and", "or"]), self.cond(atoms, depth - 1, data),
                    self.cond(atoms, depth - 1, data))
        if depth > 0 and c < 0.22:
            return ("not", self.cond(atoms, depth - 1, data))
        op = r.choice(["<", "<=", ">", ">=", "==", "!="])
        if data and self.readable and c < 0.45:
            a = self.value(atoms, 0)
            b = ("flt", float(r.randint(-2, 2))) if self.ty == "f" else ("int", r.randint(-3, 3))
            return ("cmp", op, a, b)
        a, _, _ = self.index_raw(atoms, 1)
        return ("cmp", op, a, ("int", r.randint(0, 4)))

    # -- data expressions --

    def read(self, atoms):
        buf, pin = self.r.choice(self.readable)
        idx = [self.index(atoms, d) for d in buf.shape]
        if pin is not None:
            idx[0] = pin
        return ("read", buf.name, idx, buf.ty)

    def const(self):
        if self.ty == "f":
            return ("flt", self.r.choice([-2.0, -1.0, 0.5, 1.0, 2.0, 3.0]))
        if self.big and self.r.random() < 0.5:
            return ("int", self.r.choice([65537, 2**20 + 3, 2**30 + 1, -2**30 - 7, I32_MAX,
                                          I32_MIN + 1, 46341]))
        return ("int", self.r.randint(-4, 5))

    def value(self, atoms, depth):
        r = self.r
        c = r.random()
        ty = self.ty
        if depth <= 0 or c < 0.3:
            if self.readable and r.random() < 0.8:
                return self.read(atoms)
            if atoms and r.random() < 0.5:
                a, _, _ = self.index_raw(atoms, 1)
                return ("tof", a) if ty == "f" else a
            return self.const()
        if c < 0.75:
            op = r.choice(["+", "-", "*", "max", "min", "+", "-"])
            b = self.value(atoms, depth - 1) if op != "*" else self.const()
            return ("bin", op, self.value(atoms, depth - 1), b, ty)
        if c < 0.87:
            return ("ite", self.cond(atoms), self.value(atoms, depth - 1),
                    self.value(atoms, depth - 1))
        if ty == "i":
            op = r.choice(["//", "%", "//", "%", "truncdiv", "truncmod", "&", "|", "^", "<<",
                           ">>"])
            if op in ("<<", ">>"):
                b = ("int", r.choice([0, 1, 3, 16, 31]))
            elif op in ("&", "|", "^"):
                b = self.value(atoms, depth - 1)
            else:
                b = ("int", r.choice([-5, -3, -2, 2, 3, 4, 5, 7]))
            return ("bin", op, self.value(atoms, depth - 1), b, "i")
        return ("bin", "*", self.value(atoms, depth - 1), ("flt", 0.5), "f")

    # -- buffers --

    def new_param(self, role, rank=None):
        rank = rank or self.r.randint(1, 3)
        shape = [self.dim() for _ in range(rank)]
        b = Buf(self.fresh("A" if role == "in" else "O"), shape, self.dtype, role)
        self.params.append(b)
        if role == "in":
            self.readable.append((b, None))
        return b

    def new_target(self, shape):
        """The buffer a nest writes: a new output, or an intermediate that later nests read."""
        if self.r.random() < 0.4:
            b = Buf(self.fresh("T"), shape, self.dtype, "tmp", self.scope())
            self.allocs.append(b)
        else:
            b = Buf(self.fresh("O"), shape, self.dtype, "out")
            self.params.append(b)
        return b

    # -- loop nests --

    def axis_loops(self, dim, kind):
        """The loops of one block axis: one loop over the extent, or a split in two."""
        r = self.r
        if r.random() < 0.3 and (dim.name or dim.value >= 2):
            f = r.randint(2, 4)
            io, ii = self.fresh("i"), self.fresh("i")
            if dim.name:
                outer = ("bin", "//", ("bin", "+", dim.node(), ("int", f - 1), "i"), ("int", f), "i")
                outer_value = (dim.value + f - 1) // f
            else:
                outer = ("int", -(-dim.value // f))
                outer_value = -(-dim.value // f)
            bind = ("bin", "+", ("bin", "*", ("var", io), ("int", f), "i"), ("var", ii), "i")
            pred = None
            if dim.name or dim.value % f:
                pred = ("cmp", "<", bind, dim.node())
            loops = [dict(var=io, ext=outer, value=outer_value, axis=kind),
                     dict(var=ii, ext=("int", f), value=f, axis=kind)]
            return loops, bind, pred
        v = self.fresh("i")
        return [dict(var=v, ext=dim.node(), value=dim.value, axis=kind)], ("var", v), None

    def kinds(self, loops, allow_parallel):
        r = self.r
        for lp in loops:
            const = lp["ext"][0] == "int"
            lp["kind"] = r.choice(["range", "serial", "serial"] + (["unroll"] if const else []))
        if allow_parallel and loops[0]["axis"] == "S" and r.random() < 0.35:
            loops[0]["kind"] = "parallel"
        last = loops[-1]
        if (last["axis"] == "S" and last["ext"][0] == "int" and last["kind"] != "parallel"
                and r.random() < 0.35):
            last["kind"] = "vectorized"

    def open_loops(self, indent, loops):
        i = 0
        while i < len(loops):
            lp = loops[i]
            # Runs of plain serial loops sometimes print as one T.grid.
            j = i
            while (j + 1 < len(loops) and lp["kind"] == "range" and loops[j + 1]["kind"] == "range"
                   and self.r.random() < 0.5):
                j += 1
            if j > i:
                group = loops[i:j + 1]
                self.emit(indent, f"for {', '.join(g['var'] for g in group)} in "
                          f"T.grid({', '.join(tvm(g['ext']) for g in group)}):")
                for g in group:
                    self.pyl.append((indent, f"for {g['var']} in range({py(g['ext'])}):"))
                    indent += 1
                i = j + 1
                continue
            ext = tvm(lp["ext"])
            head = {"range": f"range({ext})", "serial": f"T.serial({ext})",
                    "parallel": f"T.parallel({ext})", "unroll": f"T.unroll({ext})",
                    "vectorized": f"T.vectorized({ext})"}[lp["kind"]]
            self.emit(indent, f"for {lp['var']} in {head}:",
                      f"for {lp['var']} in range({py(lp['ext'])}):")
            indent += 1
            i += 1
        return indent

    def block_nest(self, indent, target, spatial, reduce, outer=None, allow_parallel=True,
                   pin=None):
        """A loop nest around one block writing target[spatial axes]; with reduce axes, the
        block is a reduction with T.init. `outer` is an enclosing loop variable bound to the
        first spatial axis (the fused producer/consumer nests)."""
        r = self.r
        axes = []  # (block var, S/R, dim, binding, predicate, loops)
        dims = [("S", d) for d in spatial] + [("R", d) for d in reduce]
        n = 0
        while n < len(dims):
            k, d = dims[n]
            if outer is not None and k == "S" and not axes:
                axes.append((self.fresh("v"), k, d, ("var", outer), None, []))
                n += 1
                continue
            if n + 1 < len(dims) and dims[n + 1][0] == k and r.random() < 0.25:
                # Two axes from one fused loop: f // d1 and f % d1.
                d1 = dims[n + 1][1]
                f = self.fresh("i")
                ext = (("int", d.value * d1.value) if not (d.name or d1.name) else
                       ("bin", "*", d.node(), d1.node(), "i"))
                loop = dict(var=f, ext=ext, value=d.value * d1.value, axis=k)
                axes.append((self.fresh("v"), k, d, ("bin", "//", ("var", f), d1.node(), "i"),
                             None, [loop]))
                axes.append((self.fresh("v"), k, d1, ("bin", "%", ("var", f), d1.node(), "i"),
                             None, []))
                n += 2
                continue
            loops, bind, pred = self.axis_loops(d, k)
            axes.append((self.fresh("v"), k, d, bind, pred, loops))
            n += 1
        loops = [lp for a in axes for lp in a[5]]
        if r.random() < 0.4:
            r.shuffle(loops)
        self.kinds(loops, allow_parallel)
        indent = self.open_loops(indent, loops)
        self.emit(indent, f'with T.block("{self.fresh("b")}"):')
        indent += 1
        plain = all(a[3][0] == "var" for a in axes) and r.random() < 0.5
        if plain:
            self.emit(indent, f"{', '.join(a[0] for a in axes)} = T.axis.remap("
                      f"\"{''.join(a[1] for a in axes)}\", [{', '.join(a[3][1] for a in axes)}])")
        else:
            for v, k, d, bind, _, _ in axes:
                kind = "spatial" if k == "S" else "reduce"
                self.emit(indent, f"{v} = T.axis.{kind}({d}, {tvm(bind)})")
        for v, _, _, bind, _, _ in axes:
            self.pyl.append((indent - 1, f"{v} = {py(bind)}"))
        preds = [a[4] for a in axes if a[4] is not None]
        pyindent = indent - 1
        if preds:
            p = preds[0]
            for q in preds[1:]:
                p = ("and", p, q)
            self.emit(indent, f"T.where({tvm(p)})")
            self.pyl.append((pyindent, f"if {py(p)}:"))
            pyindent += 1
        atoms = [Atom(("var", a[0]), 0, a[2].value - 1, a[2]) for a in axes]
        if self.scalar and r.random() < 0.3:
            atoms.append(Atom(("var", "s"), self.scalar_value, self.scalar_value))
        out_idx = ", ".join(a[0] for a in axes if a[1] == "S")
        if pin is not None:
            self.readable.append((pin, ("var", axes[0][0])))
        if reduce:
            self.reduction_body(indent, pyindent, target, out_idx, axes, atoms)
        else:
            self.map_body(indent, pyindent, target, out_idx, atoms)
        if pin is not None:
            self.readable.pop()

    def map_body(self, indent, pyindent, target, out_idx, atoms):
        r = self.r
        if r.random() < 0.25:
            c = self.cond(atoms)
            self.emit(indent, f"if {tvm(c)}:")
            self.pyl.append((pyindent, f"if {py(c)}:"))
            self.store(indent + 1, pyindent + 1, target, out_idx, self.value(atoms, 2))
            self.emit(indent, "else:")
            self.pyl.append((pyindent, "else:"))
            self.store(indent + 1, pyindent + 1, target, out_idx, self.value(atoms, 2))
        else:
            self.store(indent, pyindent, target, out_idx, self.value(atoms, r.randint(0, 3)))

    def store(self, indent, pyindent, target, idx, val):
        self.text.append((indent, f"{target.name}[{idx}] = {tvm(val)}"))
        self.pyl.append((pyindent, f"{target.name}[{idx}] = {py(val)}"))

    def reduction_body(self, indent, pyindent, target, out_idx, axes, atoms):
        r = self.r
        op = r.choice(["+", "+", "max", "min"])
        spatial_atoms = [a for a, ax in zip(atoms, axes) if ax[1] == "S"]
        if op == "+":
            init = self.value(spatial_atoms, 1) if r.random() < 0.3 else self.zero()
        elif op == "max":
            init = ("flt", float(F32_LOWEST)) if self.ty == "f" else ("int", I32_MIN)
        else:
            init = ("flt", -float(F32_LOWEST)) if self.ty == "f" else ("int", I32_MAX)
        if init[0] == "int" and init[1] == I32_MIN:
            init_tvm = f"T.int32({I32_MIN})"
        elif init[0] == "flt" and abs(init[1]) > 1e38:
            init_tvm = f"T.float32({init[1]!r})"
        else:
            init_tvm = tvm(init)
        self.emit(indent, "with T.init():")
        first = " and ".join(f"{a[0]} == 0" for a in axes if a[1] == "R")
        self.pyl.append((pyindent, f"if {first}:"))
        self.text.append((indent + 1, f"{target.name}[{out_idx}] = {init_tvm}"))
        self.pyl.append((pyindent + 1, f"{target.name}[{out_idx}] = {py(init)}"))
        acc = ("read", target.name, [("var", v) for v in out_idx.split(", ")], self.ty)
        x = self.value(atoms, r.randint(0, 2))
        c = r.random()
        if c < 0.2:
            x = ("ite", self.cond(atoms), x, self.zero() if op == "+" else acc)
        upd = ("bin", op, acc, x, self.ty)
        if c > 0.8:
            cnd = self.cond(atoms)
            self.emit(indent, f"if {tvm(cnd)}:")
            self.pyl.append((pyindent, f"if {py(cnd)}:"))
            indent += 1
            pyindent += 1
        self.store(indent, pyindent, target, out_idx, upd)

    def zero(self):
        return ("flt", 0.0) if self.ty == "f" else ("int", 0)

    def plain_nest(self, indent, target):
        """Loops without a block: target[...] = value over the loop variables."""
        r = self.r
        atoms, idx, guards, loops = [], [], [], []
        for d in target.shape:
            ls, bind, pred = self.axis_loops(d, "S")
            loops += ls
            idx.append(bind)
            if pred is not None:
                guards.append(pred)
            atoms.append(Atom(bind, 0, d.value - 1, d if bind[0] == "var" else None))
        if r.random() < 0.3:
            r.shuffle(loops)
        self.kinds(loops, True)
        indent = self.open_loops(indent, loops)
        pyindent = indent
        for g in guards:
            self.emit(indent, f"if {tvm(g)}:", f"if {py(g)}:")
            indent += 1
        val = self.value(atoms, r.randint(0, 3))
        self.text.append((indent, f"{target.name}[{', '.join(tvm(i) for i in idx)}] = {tvm(val)}"))
        self.pyl.append((pyindent + len(guards),
                         f"{target.name}[{', '.join(py(i) for i in idx)}] = {py(val)}"))

    def scope(self):
        # CompactBufferAllocation shrinks and moves only "local" (and "shared") buffers.
        return self.r.choice(["global", "local", "local"])

    def fused(self, indent):
        """A shared outer loop around a producer of an intermediate row and its consumer, which
        reads only that row: lowering moves the allocation into the loop and compacts it."""
        r = self.r
        d0, d1 = self.dim(), self.dim()
        tmp = Buf(self.fresh("T"), [d0, d1], self.dtype, "tmp", self.scope())
        self.allocs.append(tmp)
        o = self.fresh("i")
        kind = r.choice(["range", "serial", "parallel"])
        head = {"range": f"range({d0})", "serial": f"T.serial({d0})",
                "parallel": f"T.parallel({d0})"}[kind]
        self.emit(indent, f"for {o} in {head}:", f"for {o} in range({py(d0.node())}):")
        self.block_nest(indent + 1, tmp, [d0, d1], [], outer=o, allow_parallel=False)
        if r.random() < 0.5:
            out = self.new_target([d0])
            self.block_nest(indent + 1, out, [d0], [d1], outer=o, allow_parallel=False, pin=tmp)
        else:
            out = self.new_target([d0, self.dim()])
            self.block_nest(indent + 1, out, out.shape, [], outer=o, allow_parallel=False,
                            pin=tmp)
        self.readable.append((tmp, None))
        if out.role == "tmp":
            self.readable.append((out, None))

    def generate(self):
        r = self.r
        for _ in range(r.randint(1, 3)):
            self.new_param("in")
        if self.syms:
            # Every symbolic extent must be bound by a parameter's shape.
            first = self.params[0]
            for s in self.syms:
                if all(str(d) != s.name for p in self.params for d in p.shape):
                    free = [k for k, d in enumerate(first.shape) if d.name is None]
                    if len(first.shape) < 3 or not free:
                        first.shape.append(s)
                    else:
                        first.shape[free[0]] = s
        nests = r.randint(1, 3)
        for k in range(nests):
            c = r.random()
            if c < 0.2:
                self.fused(1)
                continue
            shape = [self.dim() for _ in range(r.randint(1, 3))]
            target = self.new_target(shape)
            if k == nests - 1 and target.role == "tmp":
                # The last nest writes an output, so that every nest can matter.
                target.role = "out"
                self.allocs.remove(target)
                self.params.append(target)
            if c < 0.35:
                self.plain_nest(1, target)
            elif c < 0.7:
                self.block_nest(1, target, shape, [])
            else:
                red = [self.dim() for _ in range(r.randint(1, 2))]
                self.block_nest(1, target, shape, red)
            if target.role == "tmp":
                self.readable.append((target, None))
        if not any(p.role == "out" for p in self.params):
            target = self.new_param("out", 1)
            self.block_nest(1, target, target.shape, [self.dim()])
        return self

    # -- rendering --

    def script(self):
        def shape(b):
            return "(" + "".join(f"{d}, " for d in b.shape)[:-1] + ")"
        sig, head = [], []
        for b in self.params:
            if self.handles:
                sig.append(f"{b.name.lower()}_h: T.handle")
                head.append(f'{b.name} = T.match_buffer({b.name.lower()}_h, {shape(b)}, '
                            f'"{self.dtype}")')
            else:
                sig.append(f'{b.name}: T.Buffer({shape(b)}, "{self.dtype}")')
        if self.scalar:
            sig.append("s: T.int32")
        lines = [f"@T.prim_func", f"def {self.name}({', '.join(sig)}):",
                 f'    T.func_attr({{"global_symbol": "{self.name}", "tir.noalias": True}})']
        if self.handles:
            lines += [f"    {s.name} = T.int32()" for s in self.syms]
            lines += [f"    {h}" for h in head]
        lines += [f'    {b.name} = T.alloc_buffer({shape(b)}, "{self.dtype}"'
                  + (f', scope="{b.scope}")' if b.scope != "global" else ")")
                  for b in self.allocs]
        lines += ["    " * i + t for i, t in self.text]
        return "\n".join(lines) + "\n"

    def reference(self):
        names = [b.name for b in self.params] + [s.name for s in self.syms] + ["s"]
        lines = [f"def ref({', '.join(names)}):"]
        for b in self.allocs:
            dims = ", ".join(py(d.node()) for d in b.shape)
            lines.append(f"    {b.name} = np.full(({dims},), np.nan, np.{self.dtype})"
                         if self.ty == "f" else
                         f"    {b.name} = np.full(({dims},), -777, np.{self.dtype})")
        lines += ["    " * i + t for i, t in self.pyl]
        lines.append("    return None")
        return "\n".join(lines) + "\n"


def make_program(rng, name):
    g = FuncGen(rng, name).generate()
    text = g.script()
    env = {"np": np, "F": np.float32, "W": W, "TRUNCDIV": TRUNCDIV, "TRUNCMOD": TRUNCMOD}
    exec(compile(g.reference(), f"<ref {name}>", "exec"), env)
    return g, text, env["ref"]


def make_inputs(g, rng):
    nrng = np.random.default_rng(rng.randrange(2**32))
    arrays = []
    for b in g.params:
        shape = tuple(d.value for d in b.shape)
        if b.role == "in":
            lo, hi = (-4, 5) if g.ty == "f" else (-9, 10)
            a = nrng.integers(lo, hi, shape)
            if g.big:
                wide = nrng.integers(I32_MIN, I32_MAX, shape, endpoint=True)
                a = np.where(nrng.random(shape) < 0.5, wide, a)
            arrays.append(a.astype(b.dtype))
        else:
            arrays.append(np.full(shape, 12345, b.dtype))
    return arrays


def module_text(progs):
    body = "\n".join("    " + ln if ln else ln
                     for _, text, _ in progs for ln in (text + "\n").splitlines())
    return ("from tessel.script import ir as I\nfrom tessel.script import tir as T\n\n"
            "@I.ir_module\nclass Module:\n" + body + "\n")


def check(fn, g, ref, rng):
    """None, or what went wrong running one built function against the interpreter."""
    arrays = make_inputs(g, rng)
    expect = [a.copy() for a in arrays]
    # float32 may overflow to inf (a max's lowest value doubled), in C as here.
    with np.errstate(over="ignore", invalid="ignore"):
        ref(*expect, *[s.value for s in g.syms], g.scalar_value)
    args = list(arrays) + ([g.scalar_value] if g.scalar else [])
    fn(*args)
    for b, got, want in zip(g.params, arrays, expect):
        try:
            if g.ty == "f":
                np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
            else:
                np.testing.assert_array_equal(got, want)
        except AssertionError as err:
            return f"{b.name} differs from the interpreter:{err}"
    return None


def make_batch(seed, batch):
    rng = random.Random(f"{seed}/{batch}")
    progs = [make_program(rng, f"f{k}") for k in range(FUNCS_PER_MODULE)]
    return rng, progs, module_text(progs)


def build(text):
    """The built module, or the exception that refused it."""
    import tessel

    try:
        return tessel.build(text, target="c")
    except Exception as err:  # noqa: BLE001 - reported with the functions it is about
        return err


def check_batch(rng, progs, text, mod):
    """Failures as text: each refused function (built alone to find it), each function that
    raised or disagrees with the interpreter."""
    if isinstance(mod, Exception):
        fails = []
        for g, t, _ in progs:
            one = build(module_text([(g, t, None)]))
            if isinstance(one, Exception):
                fails.append(f"{g.name} refused: {type(one).__name__}: {one}\n{t}")
        if not fails:
            fails.append(f"the module was refused, no function alone: {mod}\n{text}")
        return fails
    fails = []
    for g, t, ref in progs:
        try:
            bad = check(mod[g.name], g, ref, rng)
        except Exception:  # noqa: BLE001
            bad = "raised:\n" + traceback.format_exc()
        if bad:
            fails.append(f"{g.name}: {bad}\n{t}")
    return fails


def fuzz(seed, seconds, only=None, show=False):
    """Batches of seed from 0 (or only batch `only`) until the time is spent. The C compiler
    dominates, and tessel.build releases the GIL, so JOBS builds run at once in threads."""
    from concurrent.futures import ThreadPoolExecutor

    deadline = time.monotonic() + seconds
    count = 0
    jobs = 1 if only is not None else max(1, min(4, os.cpu_count() or 1))
    batch = 0 if only is None else only
    with ThreadPoolExecutor(jobs) as pool:
        while True:
            started = time.monotonic()
            group = [make_batch(seed, b) for b in range(batch, batch + jobs)]
            print(f"batch {batch} (building {jobs})", flush=True)
            mods = list(pool.map(build, [text for _, _, text in group]))
            for k, ((rng, progs, text), mod) in enumerate(zip(group, mods)):
                print(f"batch {batch + k}", flush=True)
                if show:
                    print(text, flush=True)
                fails = check_batch(rng, progs, text, mod)
                if fails:
                    for f in fails:
                        print(f"FAIL seed {seed} batch {batch + k}: {f}", flush=True)
                    return 1
                count += len(progs)
            batch += jobs
            # Stop when another group would likely end past the deadline.
            now = time.monotonic()
            if only is not None or now + (now - started) / 2 > deadline:
                break
    print(f"programs {count}", flush=True)
    return 0


@pytest.mark.parametrize("seed", SEEDS)
def test_fuzz_lowering(seed):
    env = dict(os.environ)
    env["PYTHONFAULTHANDLER"] = "1"
    budget = SECONDS / len(SEEDS)
    proc = subprocess.run(
        [sys.executable, __file__, "--seed", str(seed), "--seconds", str(budget)],
        capture_output=True, text=True, env=env, timeout=budget + 300)
    lines = proc.stdout.splitlines()
    batches = [ln for ln in lines if ln.startswith("batch ")]
    last = batches[-1].split()[1] if batches else "0"
    if proc.returncode != 0:
        # A crash while building names the first batch of the group being built.
        fails = proc.stdout[proc.stdout.find("FAIL"):] if "FAIL" in proc.stdout else (
            f"the child died (exit {proc.returncode}) in seed {seed}, {batches[-1:]}\n"
            f"{proc.stderr[-3000:]}")
        pytest.fail(f"{fails}\nreplay: python {__file__} --seed {seed} --batch {last} --show")
    count = next(int(ln.split()[1]) for ln in lines if ln.startswith("programs "))
    print(f"seed {seed}: {count} programs in {budget:.1f} s")
    assert count > 0


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--batch", type=int, default=None)
    ap.add_argument("--show", action="store_true")
    opts = ap.parse_args()
    sys.exit(fuzz(opts.seed, opts.seconds, opts.batch, opts.show))
