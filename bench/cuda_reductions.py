"""Row softmax, LayerNorm and RMSNorm on the GPU (issue 15): tessel's register-resident kernels
against torch (torch.softmax, F.layer_norm, F.rms_norm), a Triton peer written here (one program
per row, the whole row in one block, the classic num_warps heuristic) and the device's copy
bandwidth (torch `copy_` of a tensor of the same size).

The kernels are TVMScript made by the generator below: examples/softmax_gpu_fast.py,
examples/layernorm_gpu.py and examples/rmsnorm_gpu.py are its output for the variants of
`DISPATCH` (`--emit OP` prints one; tests/python/test_reductions_gpu.py checks they agree).
`PROPOSED` is a dispatch over more kernels (a float32 half in shared memory, staged output), timed
on the H200 on 2026-12-02 02:26 UTC and slower there than `DISPATCH` where they differ; it stays
for comparison. The benchmark times both dispatches and,
with --candidates, single-variant functions (`CANDIDATES`) to compare row mappings at each row
length.

    python bench/cuda_reductions.py [--arch sm_90] [--candidates] [--jobs N] [--json PATH]
                                    [--emit softmax|layernorm|rmsnorm [--proposed]]
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


VEC = {"float32": 4, "float16": 8, "bfloat16": 8}  # elements in 16 bytes
SHORT = {"float32": "f32", "float16": "f16", "bfloat16": "bf16"}
EPS = {"layernorm": "1e-05", "rmsnorm": "1e-06"}


@dataclass(frozen=True)
class Variant:
    """How one kernel maps rows to threads.

    threads: threads per row (32: one warp per row); rows: rows per block (warp variant only);
    elems: row elements each thread keeps in registers (0: the scalar fallback, which rereads
    the row from global memory and handles any length); packed: float16/bfloat16 elements stay in
    registers as loaded (two per 32-bit register) and are converted to float32 where each pass
    reads them, so a thread holds twice the elements in the registers of the float32 kernel
    (ignored for float32); shared: row elements each thread keeps in shared memory besides
    (float32 registers only: a row too long for the registers of two blocks per multiprocessor);
    staged: LayerNorm and RMSNorm compute every output chunk of a part (registers, shared) in
    registers before storing any (`_staged_output`; ignored for softmax)."""

    threads: int
    rows: int = 1
    elems: int = 32
    packed: bool = False
    shared: int = 0
    staged: bool = False

    def capacity(self) -> int:
        return self.threads * (self.elems + self.shared)

    def tag(self) -> str:
        if not self.elems:
            return f"s{self.threads}"
        kind = f"w{self.rows}" if self.threads == 32 else f"b{self.threads}"
        return (f"{kind}x{self.elems}{'p' if self.packed else ''}"
                f"{f's{self.shared}' if self.shared else ''}{'t' if self.staged else ''}")

    def holds(self, dtype) -> str:
        """The dtype of x, the registers that hold the row: float32, float16 (packed halves), or
        uint32 (packed bfloat16 pairs, the low element in the low half)."""
        if not self.packed or dtype == "float32":
            return "float32"
        return "float16" if dtype == "float16" else "uint32"


class Lines:
    """TVMScript lines at a current indentation depth."""

    def __init__(self, depth=0):
        self.out = []
        self.depth = depth

    def __call__(self, text):
        self.out.append("    " * self.depth + text)

    @contextlib.contextmanager
    def block(self, head):
        """`head` at this depth, then what the with-body adds one level deeper."""
        self(head)
        self.depth += 1
        yield
        self.depth -= 1


def _load(dtype, expr):
    return expr if dtype == "float32" else f'T.Cast("float32", {expr})'


def _store(dtype, expr):
    return expr if dtype == "float32" else f'T.Cast("{dtype}", {expr})'


def _f(x):
    return f"T.float32({x})"


def params(op, dtype):
    a = f'A: T.Buffer((n, m), "{dtype}")'
    out = f'B: T.Buffer((n, m), "{dtype}")'
    if op == "softmax":
        return [a, out]
    w = f'W: T.Buffer((m,), "{dtype}")'
    if op == "layernorm":
        return [a, w, f'Bias: T.Buffer((m,), "{dtype}")', out]
    return [a, w, out]


def _reduce(L, v, slot, kind, var):
    """Combine s[slot] over the threads of one row: shuffles within the warp, then (v.threads > 32)
    through the shared buffer `var`, read whole by every thread."""
    comb = (lambda a, b: f"T.max({a}, {b})") if kind == "max" else (lambda a, b: f"{a} + {b}")
    with L.block("for j in T.unroll(5):"):
        L(f"s[{slot}] = {comb(f's[{slot}]', f'T.shfl_xor(s[{slot}], 16 >> j, 32)')}")
    if v.threads > 32:
        nw = v.threads // 32
        with L.block("if tx % 32 == 0:"):
            L(f"{var}[tx // 32] = s[{slot}]")
        L(f"s[{slot}] = {var}[0]")
        with L.block(f"for w in T.unroll({nw - 1}):"):
            L(f"s[{slot}] = {comb(f's[{slot}]', f'{var}[w + 1]')}")


def _local(L, name, size, dtype):
    L(f'{name}_data = T.allocate([{size}], "{dtype}", "local")')
    L(f'{name} = T.decl_buffer(({size},), "{dtype}", data={name}_data, scope="local")')


def kernel(L, op, dtype, v: Variant):
    """One kernel (a thread-binding nest) at L's current depth."""
    fill = 'T.float32("-inf")' if op == "softmax" else _f(0)
    nw = v.threads // 32
    with contextlib.ExitStack() as nest:
        if v.threads == 32:
            blocks = f"(n + {v.rows - 1}) // {v.rows}"
            bx = f'T.thread_binding({blocks}, thread="blockIdx.x")'
            ty = f'T.thread_binding({v.rows}, thread="threadIdx.y")'
            nest.enter_context(L.block(f"for bx in {bx}:"))
            nest.enter_context(L.block(f"for ty in {ty}:"))
            row = f"bx * {v.rows} + ty"
        else:
            nest.enter_context(L.block('for bx in T.thread_binding(n, thread="blockIdx.x"):'))
            row = "bx"
            for var in ("red0", "red1") if op != "rmsnorm" else ("red0",):
                L(f'{var}_data = T.allocate([{nw}], "float32", "shared")')
                L(f'{var} = T.decl_buffer(({nw},), "float32", data={var}_data, scope="shared")')
            if v.shared:
                n = v.threads * v.shared
                L(f'xs_data = T.allocate([{n}], "float32", "shared.dyn")')
                L(f'xs = T.decl_buffer(({n},), "float32", data=xs_data, scope="shared.dyn")')
        threads = f'T.thread_binding({v.threads}, thread="threadIdx.x")'
        nest.enter_context(L.block(f"for tx in {threads}:"))
        if v.elems:
            R = v.holds(dtype)
            _local(L, "x", v.elems // 2 if R == "uint32" else v.elems, R)
            if R != "float32":  # one 16-byte chunk of output, and of W and Bias
                for buf in ["o", "w", "b"][:{"softmax": 1, "rmsnorm": 2}.get(op, 3)]:
                    _local(L, buf, VEC[dtype], dtype)
        _local(L, "s", 2, "float32")
        if v.threads == 32:
            nest.enter_context(L.block(f"if {row} < n:"))
        if v.elems:
            _vector_body(L, op, dtype, v, row, VEC[dtype], fill)
        else:
            _scalar_body(L, op, dtype, v, row)


LOG2E = "1.4426950408889634"


def _vector_body(L, op, dtype, v, row, V, fill):
    """Load the row into x (and xs), reduce its statistics there, write it from there; the row
    moves through global memory in 16-byte chunks, chunk k of a thread being columns
    (k * threads + tx) * V + [0, V).

    float32 registers: passes that transform the row (exp, centring) overwrite x in place. Packed
    16-bit registers: x keeps the input, each pass converts what it reads, and the output pass
    recomputes exp / the centring (one rounding of each output, as in the float32 kernel) into a
    16-byte chunk `o` stored whole (W and Bias are loaded whole into `w` and `b` first); softmax
    there takes exp(t) as exp2(t * log2(e)) (MUFU.EX2 without expf's range reduction), as Triton's
    tl.exp does, spelled differently in the sum and the output pass: spelled alike, nvcc computed
    each exp once and kept all of them live across the reduction (128 registers, not 64).
    bfloat16 is held as uint32 pairs and widened by a shift or a mask: held as 16-bit registers,
    ptxas unpacked them (LayerNorm at 64 elements per thread: 83 registers, not 60)."""
    T_, K, KS = v.threads, v.elems // V, v.shared // V
    R = v.holds(dtype)
    packed = R != "float32"

    def at(kg):
        """The first column of chunk kg."""
        return f"({kg} * {T_} + tx) * {V}"

    def live(kg):
        return f"{kg} * {T_} + tx < mv"

    # (loop extent, global chunk index, element e of the chunk as stored) for x, then xs
    parts = [(K, "k", f"x[k * {V} + e]")]
    if KS:
        parts.append((KS, f"(k + {K})", f"xs[(k * {T_} + tx) * {V} + e]"))

    def xv(ref):
        """An element as float32."""
        if R == "float16":
            return f'T.Cast("float32", {ref})'
        if R == "uint32":  # even element: the low half shifted up; odd: the high half, masked
            i = ref[len("x["):-1]
            return (f'T.reinterpret("float32", x[({i}) // 2] << T.Cast("uint32", 16 - ({i}) % 2 '
                    f'* 16) & T.uint32(4294901760))')
        return ref

    def shared(ref):
        """Whether ref is in xs, which passes only read: a write there after the loads would need
        a barrier under the thread-dependent guard (no other thread reads it; InjectSharedBarriers
        cannot tell)."""
        return ref.startswith("xs")

    def sweep(lines, guarded=False):
        """lines(ref, kg) for each element of the row part this thread holds (unguarded, the
        registers in one flat loop)."""
        for n, kg, ref in parts:
            if not guarded and not shared(ref):
                with L.block(f"for i in T.unroll({v.elems}):"):
                    for line in lines("x[i]", None):
                        L(line)
                continue
            with L.block(f"for k in T.unroll({n}):"):
                with contextlib.ExitStack() as guard:
                    if guarded:
                        guard.enter_context(L.block(f"if {live(kg)}:"))
                    with L.block(f"for e in T.unroll({V}):"):
                        for line in lines(ref, kg):
                            L(line)

    for n, kg, ref in parts:
        with L.block(f"for k in T.unroll({n}):"):
            with L.block(f"if {live(kg)}:"):
                lanes, a, r = _chunk(R, V, T_, row, kg, "A", ref)
                with L.block(f"for e in T.vectorized({lanes}):"):
                    L(f"{r} = {a if packed else _load(dtype, a)}")
            with L.block("else:"):
                if R == "uint32":  # bfloat16 -inf is 0xff80
                    word = "T.uint32(4286644096)" if op == "softmax" else "T.uint32(0)"
                    with L.block(f"for e in T.vectorized({V // 2}):"):
                        L(f"x[k * {V // 2} + e] = {word}")
                else:
                    with L.block(f"for e in T.vectorized({V}):"):
                        L(f"{ref} = {_store(dtype, fill) if packed else fill}")
    c = _f(LOG2E)
    if op == "softmax":
        L('s[0] = T.float32("-inf")')
        sweep(lambda r, kg: [f"s[0] = T.max(s[0], {xv(r)})"])
        _reduce(L, v, 0, "max", "red0")
        L(f"s[1] = {_f(0)}")
        if packed:  # two spellings of exp(x - max), so that nvcc keeps no values between passes
            sweep(lambda r, kg: [f"s[1] = s[1] + T.exp2({xv(r)} * {c} - s[0] * {c})"])
        else:
            sweep(lambda r, kg: [f"s[1] = s[1] + T.exp({r} - s[0])"] if shared(r) else
                  [f"{r} = T.exp({r} - s[0])", f"s[1] = s[1] + {r}"])
        _reduce(L, v, 1, "sum", "red1")
        L(f"s[1] = {_f(1)} / s[1]")
        out = lambda r, kg: (f"T.exp2(({xv(r)} - s[0]) * {c}) * s[1]" if packed  # noqa: E731
                             else f"T.exp({r} - s[0]) * s[1]" if shared(r) else f"{r} * s[1]")
    elif op == "layernorm":
        L(f"s[0] = {_f(0)}")
        sweep(lambda r, kg: [f"s[0] = s[0] + {xv(r)}"])
        _reduce(L, v, 0, "sum", "red0")
        L('s[0] = s[0] / T.Cast("float32", m)')
        L(f"s[1] = {_f(0)}")
        sweep(lambda r, kg: [f"s[1] = s[1] + ({xv(r)} - s[0]) * ({xv(r)} - s[0])"]
              if packed or shared(r) else [f"{r} = {r} - s[0]", f"s[1] = s[1] + {r} * {r}"], True)
        _reduce(L, v, 1, "sum", "red1")
        L(f'''s[1] = T.rsqrt(s[1] / T.Cast("float32", m) + {_f(EPS[op])})''')
        if packed:
            out = lambda r, kg: (f'({xv(r)} - s[0]) * s[1] * T.Cast("float32", w[e]) + '  # noqa
                                 f'T.Cast("float32", b[e])')
        else:
            out = lambda r, kg: (f"{f'({r} - s[0])' if shared(r) else r} * s[1] * "  # noqa
                                 f"{_load(dtype, f'W[{at(kg)} + e]')} + "
                                 f"{_load(dtype, f'Bias[{at(kg)} + e]')}")
    else:
        L(f"s[0] = {_f(0)}")
        sweep(lambda r, kg: [f"s[0] = s[0] + {xv(r)} * {xv(r)}"])
        _reduce(L, v, 0, "sum", "red0")
        L(f'''s[0] = T.rsqrt(s[0] / T.Cast("float32", m) + {_f(EPS[op])})''')
        if packed:
            out = lambda r, kg: f'{xv(r)} * s[0] * T.Cast("float32", w[e])'  # noqa: E731
        else:
            out = lambda r, kg: f"{r} * s[0] * {_load(dtype, f'W[{at(kg)} + e]')}"  # noqa
    staged = v.staged and op != "softmax"
    assert not (staged and KS > K), "the shared part is staged through x"
    for n, kg, ref in parts:
        if staged:
            _staged_output(L, op, dtype, v, row, V, R, out, n, kg, ref)
            continue
        with L.block(f"for k in T.unroll({n}):"):
            with L.block(f"if {live(kg)}:"):
                dst = f"Bf[({row}) * mv * {V} + {at(kg)} + e]"
                if packed:  # a loop with exp2 or reads of w stays scalar: compute, then store 16 B
                    _load_weights(L, op, V, at(kg))
                    with L.block(f"for e in T.unroll({V}):"):
                        L(f"o[e] = {_store(dtype, out(ref, kg))}")
                    with L.block(f"for e in T.vectorized({V}):"):
                        L(f"{dst} = o[e]")
                else:
                    with L.block(f"for e in T.vectorized({V}):"):
                        L(f"{dst} = {_store(dtype, out(ref, kg))}")


def _chunk(R, V, T_, row, kg, tensor, ref):
    """(lanes, global element, held element) of a 16-byte chunk's vectorized copy between the
    row of `tensor` (A or B) and its place `ref` on chip: for bfloat16 held as pairs, 4 uint32
    words through the flat uint32 view (Aw, Bw), else V elements through the flat view."""
    if R == "uint32":
        return (V // 2, f"{tensor}w[({row}) * mv * {V // 2} + ({kg} * {T_} + tx) * {V // 2} + e]",
                f"x[k * {V // 2} + e]")
    return V, f"{tensor}f[({row}) * mv * {V} + ({kg} * {T_} + tx) * {V} + e]", ref


def _load_weights(L, op, V, at):
    """W (and Bias) of one chunk into the local w (and b), 16 bytes each."""
    if op == "softmax":
        return
    with L.block(f"for e in T.vectorized({V}):"):
        L(f"w[e] = W[{at} + e]")
        if op == "layernorm":
            L(f"b[e] = Bias[{at} + e]")


def _staged_output(L, op, dtype, v, row, V, R, out, n, kg, ref):
    """The output of one part of the row (n chunks, chunk kg of the row, element ref) in two loops:
    every chunk's output computed into x (in place for the register part; the shared part after
    the register part is stored), reading W and Bias but storing nothing, then every chunk stored.
    The kernel's pointers are not __restrict__, so nvcc keeps a load of W or Bias after any earlier
    store to B: one loop that loads, computes and stores waits an L2 round trip per chunk."""
    T_ = v.threads
    at = f"({kg} * {T_} + tx) * {V}"
    live = f"{kg} * {T_} + tx < mv"
    held = f"x[k * {V} + e]"
    with L.block(f"for k in T.unroll({n}):"):
        with L.block(f"if {live}:"):
            if R == "float32":
                with L.block(f"for e in T.vectorized({V}):"):
                    L(f"{held} = {out(ref, kg)}")
            else:
                _load_weights(L, op, V, at)
                with L.block(f"for e in T.unroll({V}):"):
                    L(f"o[e] = {_store(dtype, out(ref, kg))}")
                if R == "uint32":  # two bfloat16 a word, the lower column in the low half
                    with L.block(f"for e in T.unroll({V // 2}):"):
                        L(f'x[k * {V // 2} + e] = T.Cast("uint32", T.reinterpret("uint16", '
                          f'o[e * 2])) | T.Cast("uint32", T.reinterpret("uint16", o[e * 2 + 1])) '
                          f"<< T.uint32(16)")
                else:
                    with L.block(f"for e in T.unroll({V}):"):
                        L(f"{held} = o[e]")
    with L.block(f"for k in T.unroll({n}):"):
        with L.block(f"if {live}:"):
            lanes, dst, r = _chunk(R, V, T_, row, kg, "B", held)
            with L.block(f"for e in T.vectorized({lanes}):"):
                L(f"{dst} = {r if R == 'uint32' else _store(dtype, r)}")


def _scalar_body(L, op, dtype, v, row):
    T_ = v.threads
    steps = f"(m + {T_ - 1}) // {T_}"
    a = _load(dtype, f"A[{row}, k * {T_} + tx]")
    guard = f"k * {T_} + tx < m"

    def sweep(update):
        with L.block(f"for k in range({steps}):"):
            with L.block(f"if {guard}:"):
                for u in update:
                    L(u)

    if op == "softmax":
        L('s[0] = T.float32("-inf")')
        sweep([f"s[0] = T.max(s[0], {a})"])
        _reduce(L, v, 0, "max", "red0")
        L(f"s[1] = {_f(0)}")
        sweep([f"s[1] = s[1] + T.exp({a} - s[0])"])
        _reduce(L, v, 1, "sum", "red1")
        L(f"s[1] = {_f(1)} / s[1]")
        out = f"T.exp({a} - s[0]) * s[1]"
    elif op == "layernorm":
        L(f"s[0] = {_f(0)}")
        sweep([f"s[0] = s[0] + {a}"])
        _reduce(L, v, 0, "sum", "red0")
        L('s[0] = s[0] / T.Cast("float32", m)')
        L(f"s[1] = {_f(0)}")
        sweep([f"s[1] = s[1] + ({a} - s[0]) * ({a} - s[0])"])
        _reduce(L, v, 1, "sum", "red1")
        L(f'''s[1] = T.rsqrt(s[1] / T.Cast("float32", m) + {_f(EPS[op])})''')
        out = (f"({a} - s[0]) * s[1] * {_load(dtype, f'W[k * {T_} + tx]')} + "
               f"{_load(dtype, f'Bias[k * {T_} + tx]')}")
    else:
        L(f"s[0] = {_f(0)}")
        sweep([f"s[0] = s[0] + {a} * {a}"])
        _reduce(L, v, 0, "sum", "red0")
        L(f'''s[0] = T.rsqrt(s[0] / T.Cast("float32", m) + {_f(EPS[op])})''')
        out = f"{a} * s[0] * {_load(dtype, f'W[k * {T_} + tx]')}"
    sweep([f"B[{row}, k * {T_} + tx] = {_store(dtype, out)}"])


def function(op, dtype, name, variants, depth=0):
    """A PrimFunc whose host part picks the first variant whose row capacity holds m (vector
    variants need m % VEC == 0); the last variant is taken otherwise."""
    L = Lines(depth)
    V = VEC[dtype]
    L("@T.prim_func")
    with L.block(f"def {name}({', '.join(params(op, dtype))}):"):
        L(f'T.func_attr({{"global_symbol": "{name}", "target": "cuda", "tir.noalias": True}})')
        if any(v.elems for v in variants):
            L(f"mv = m // {V}")
            L(f'Af = T.decl_buffer((n * m,), "{dtype}", data=A.data)')
            L(f'Bf = T.decl_buffer((n * m,), "{dtype}", data=B.data)')
            if any(v.elems and v.holds(dtype) == "uint32" for v in variants):
                L('Aw = T.decl_buffer((n * m // 2,), "uint32", data=A.data)')
                if op != "softmax" and any(v.staged for v in variants):
                    L('Bw = T.decl_buffer((n * m // 2,), "uint32", data=B.data)')
        if len(variants) == 1:
            kernel(L, op, dtype, variants[0])
            return "\n".join(L.out)
        for i, v in enumerate(variants):
            if i == len(variants) - 1:
                head = "else:"
            else:
                cond = f"m % {V} == 0 and m <= {v.capacity()}" if v.elems else "True"
                head = ("if " if i == 0 else "elif ") + cond + ":"
            with L.block(head):
                kernel(L, op, dtype, v)
    return "\n".join(L.out)


HEADER = ("from __future__ import annotations\n\n"
          "from tessel.script import ir as I\nfrom tessel.script import tir as T\n")


def module(op, name, dtypes, variants):
    """An IRModule of one function per dtype; variants: dtype -> the variants its host part picks
    from."""
    parts = [HEADER, "@I.ir_module", "class Module:"]
    for dt in dtypes:
        parts.append(function(op, dt, f"{name}_{SHORT[dt]}", variants[dt], depth=1))
        parts.append("")
    return "\n".join(parts)


# ---- the dispatching modules (the examples) ----

# op -> (file in examples/, function name without the dtype suffix)
EXAMPLES = {"softmax": ("softmax_gpu_fast", "softmax_fast"),
            "layernorm": ("layernorm_gpu", "layernorm"),
            "rmsnorm": ("rmsnorm_gpu", "rmsnorm")}
DTYPES = ["float32", "float16", "bfloat16"]

# Per dtype, the kernels the host part picks from by row length (the first whose capacity holds m;
# the scalar kernel for longer rows or lengths 16 bytes do not divide).
# DISPATCH, the examples' own: chosen from the H200 sweep of 2026-12-02 01:40 UTC
# (docs/performance.md, "Row reductions on the H200"): 32 float32 registers a thread everywhere.
_MEASURED = [Variant(32, rows=4), Variant(128), Variant(256), Variant(1024), Variant(256, elems=0)]
# float16/bfloat16: the packed kernels, picked from the candidate sweep of 2026-12-02 02:26 UTC
# (the fastest or within 3% at every op and length; the staged forms were slower there).
_PACKED = [Variant(32, rows=4, packed=True), Variant(128, packed=True), Variant(256, packed=True),
           Variant(512, elems=64, packed=True), Variant(256, elems=0)]
DISPATCH = {"float32": _MEASURED, "float16": _PACKED, "bfloat16": _PACKED}
# PROPOSED: a dispatch over the staged and shared-memory kernels too; timed at 02:26 UTC and not
# faster than DISPATCH anywhere (the float32 shared-memory kernel was 15-20% slower at 32768):
# `--candidates` times every kernel of it, and both dispatching modules, in one run; adopt what
# that run supports by editing DISPATCH.
PROPOSED = {
    "float32": [Variant(32, rows=4, staged=True), Variant(128, staged=True),
                Variant(256, staged=True), Variant(512, shared=32, staged=True),
                Variant(256, elems=0)],
    "float16": [Variant(32, rows=4, packed=True, staged=True),
                Variant(64, elems=64, packed=True, staged=True),
                Variant(128, elems=64, packed=True, staged=True),
                Variant(512, elems=64, packed=True, staged=True), Variant(256, elems=0)],
}
PROPOSED["bfloat16"] = PROPOSED["float16"]

WHY = {
    "softmax": "y = exp(x - max) / sum(exp(x - max)) over each row of A (n, m), fp32 accumulation.",
    "layernorm": "y = (x - mean) * rsqrt(var + 1e-5) * W + Bias over each row (F.layer_norm).",
    "rmsnorm": "y = x * rsqrt(mean(x^2) + 1e-6) * W over each row (F.rms_norm).",
}

PACKED_NOTE = (" float16/bfloat16 rows stay packed in registers (bfloat16 as uint32 pairs), "
               "converted to float32 by each pass, so a thread holds twice the elements of a "
               "float32 kernel in the same registers.")
SHARED_NOTE = (" The longest float32 rows keep part of each thread's elements in shared memory, so "
               "that two blocks fit on a multiprocessor.")
STAGED_NOTE = {op: ("\n\"Output staged\": every output chunk is computed into the registers "
                    f"(reading W{what}) before any is stored: the kernel's pointers are not "
                    "__restrict__, so nvcc issues no load after a store to B ahead of it, and one "
                    "loop that loads, computes and stores would wait an L2 round trip for each "
                    "chunk.") for op, what in [("layernorm", " and Bias"), ("rmsnorm", "")]}
LAYOUT = ("Each row is read from global memory once, in 16-byte accesses (T.vectorized over 4 "
          "float32 or 8 float16/bfloat16 elements: float4/uint4 in the CUDA source), and kept on "
          "chip while the row's statistics are reduced (accumulation in float32): warp shuffles "
          "(T.shfl_xor), then, with more than one warp per row, one value per warp through shared "
          "memory. Statistics that need two passes (max then exp-sum; mean then variance) take "
          "them over the held row, and the output is written from it: the tensor's bytes move "
          "once each way.")


def comment(text: str) -> str:
    """text as # comment lines of at most 100 columns, a paragraph per line of text."""
    import textwrap

    return "".join(textwrap.fill(par, 100, initial_indent="# ", subsequent_indent="# ") + "\n"
                   for par in text.split("\n"))


def describe(v: Variant, op: str, dtype: str) -> str:
    """What kernel v is, for the examples' header."""
    if not v.elems:
        return f"{v.threads} threads a row, scalar, rereading the row"
    who = (f"a warp a row, {v.rows} rows a block" if v.threads == 32
           else f"{v.threads} threads a row")
    held = "packed 16-bit" if v.holds(dtype) != "float32" else "float32"
    more = f" (+ {v.shared} in shared)" if v.shared else ""
    staged = ", output staged" if v.staged and op != "softmax" else ""
    return f"{who}; {v.elems} {held} in registers a thread{more}{staged}"


def dispatch_lines(op: str, vs: list[Variant], dtype: str) -> list[str]:
    lines = [f"m <= {v.capacity()}:" for v in vs[:-1]] + ["otherwise:"]
    width = max(len(c) for c in lines)
    return [f"#   {c:<{width}} {describe(v, op, dtype)}" for c, v in zip(lines, vs)]


def example_text(op: str, dispatch=None) -> str:
    """The text of examples/<file>.py for `op` (`dispatch`: DISPATCH unless given): a header
    saying why it is shaped as it is, then an IRModule of one dispatching function per dtype."""
    dispatch = dispatch or DISPATCH
    file, name = EXAMPLES[op]
    kernels = [(v, dt) for dt in DTYPES for v in dispatch[dt]]
    notes = (PACKED_NOTE if any(v.holds(dt) != "float32" for v, dt in kernels) else "") + (
        SHARED_NOTE if any(v.shared for v, _ in kernels) else "")
    if op != "softmax" and any(v.staged for v, _ in kernels):
        notes += STAGED_NOTE[op]
    head = f"""# Row {op} on the GPU at memory bandwidth (issue 15):
# {WHY[op]}
# Generated by `python bench/cuda_reductions.py --emit {op}` (TVMScript has no macros, and the
# variants below differ only in sizes); edit the generator, not this file.
#
""" + comment(LAYOUT + notes) + """\
# The host part of each function picks the kernel at launch from the symbolic row length m:
"""
    for dt in DTYPES:
        if dt == "bfloat16" and dispatch[dt] == dispatch["float16"]:
            continue
        label = dt
        if dt == "float32" and dispatch[dt] == dispatch["float16"] == dispatch["bfloat16"]:
            label = "every dtype"
        elif dt == "float32" and dispatch[dt] == dispatch["float16"]:
            continue
        elif dt == "float16" and dispatch[dt] == dispatch["bfloat16"]:
            label = "float16 and bfloat16"
        if label == "every dtype":
            head += "# (vec = 4 for float32, 8 for 16-bit; if m % vec == 0)\n"
            head += "\n".join(dispatch_lines(op, dispatch[dt], dt)) + "\n"
            break
        head += (f"# {label} (if m % {VEC[dt]} == 0):\n"
                 + "\n".join(dispatch_lines(op, dispatch[dt], dt)) + "\n")
    head += ("# Rows are addressed through flat views with the row stride written as mv * vec "
             "(mv = m // vec),\n# so the code generator can prove the 16-byte alignment of each "
             "vector access.\n")
    if dispatch is not PROPOSED:
        head += (f"# Another dispatch (staged output, float32 rows half in shared memory), slower on "
                 f"the H200:\n# `--emit {op} --proposed`.\n")
    return head + module(op, name, DTYPES, dispatch)


# Single-variant functions compared by --candidates at each row length (packed variants are
# timed for float16 and bfloat16 only: for float32 they are the unpacked ones).
P = dict(packed=True)
S = dict(staged=True)
CANDIDATES = {
    1024: [Variant(32, rows=4), Variant(32, rows=4, **S), Variant(32, rows=2, **P),
           Variant(32, rows=4, **P), Variant(32, rows=4, **P, **S), Variant(32, rows=8, **P),
           Variant(128, elems=8)],
    4096: [Variant(128), Variant(128, **S), Variant(256), Variant(64, shared=32),
           Variant(128, **P), Variant(64, elems=64, **P), Variant(64, elems=64, **P, **S),
           Variant(256, elems=16, **P)],
    8192: [Variant(256), Variant(256, **S), Variant(512), Variant(128, shared=32),
           Variant(256, **P), Variant(128, elems=64, **P), Variant(128, elems=64, **P, **S),
           Variant(512, elems=16, **P)],
    32768: [Variant(1024), Variant(1024, **S), Variant(512, shared=32),
            Variant(512, shared=32, **S), Variant(256, elems=64, shared=64), Variant(1024, **P),
            Variant(512, elems=64, **P), Variant(512, elems=64, **P, **S),
            Variant(256, elems=128, **P)],
}
SHAPES = [(65536, 1024), (16384, 4096), (8192, 8192), (2048, 32768)]


def timed(v, op, dtype):
    """Whether --candidates times variant v for op and dtype (not where it is another variant)."""
    return not (v.elems % VEC[dtype] or (v.packed and dtype == "float32")
                or (v.shared and dtype != "float32") or (v.staged and op == "softmax"))


def candidate_module(op, dtype):
    parts = [HEADER, "@I.ir_module", "class Module:"]
    seen = set()
    for m, vs in CANDIDATES.items():
        for v in vs:
            if v.tag() in seen or not timed(v, op, dtype):
                continue
            seen.add(v.tag())
            parts.append(function(op, dtype, f"{op}_{SHORT[dtype]}_{v.tag()}", [v], depth=1))
    return "\n".join(parts)


# ---- Triton peers ----

def triton_kernels():
    import triton
    import triton.language as tl

    @triton.jit
    def softmax_k(x_ptr, y_ptr, m, BLOCK: tl.constexpr):
        row = tl.program_id(0).to(tl.int64)
        cols = tl.arange(0, BLOCK)
        mask = cols < m
        x = tl.load(x_ptr + row * m + cols, mask=mask, other=-float("inf")).to(tl.float32)
        x = x - tl.max(x, axis=0)
        e = tl.exp(x)
        y = e / tl.sum(e, axis=0)
        tl.store(y_ptr + row * m + cols, y.to(y_ptr.dtype.element_ty), mask=mask)

    @triton.jit
    def layernorm_k(x_ptr, w_ptr, b_ptr, y_ptr, m, eps, BLOCK: tl.constexpr):
        row = tl.program_id(0).to(tl.int64)
        cols = tl.arange(0, BLOCK)
        mask = cols < m
        x = tl.load(x_ptr + row * m + cols, mask=mask, other=0.0).to(tl.float32)
        mean = tl.sum(x, axis=0) / m
        d = tl.where(mask, x - mean, 0.0)
        rstd = 1.0 / tl.sqrt(tl.sum(d * d, axis=0) / m + eps)
        w = tl.load(w_ptr + cols, mask=mask).to(tl.float32)
        b = tl.load(b_ptr + cols, mask=mask).to(tl.float32)
        tl.store(y_ptr + row * m + cols, (d * rstd * w + b).to(y_ptr.dtype.element_ty), mask=mask)

    @triton.jit
    def rmsnorm_k(x_ptr, w_ptr, y_ptr, m, eps, BLOCK: tl.constexpr):
        row = tl.program_id(0).to(tl.int64)
        cols = tl.arange(0, BLOCK)
        mask = cols < m
        x = tl.load(x_ptr + row * m + cols, mask=mask, other=0.0).to(tl.float32)
        rstd = 1.0 / tl.sqrt(tl.sum(x * x, axis=0) / m + eps)
        w = tl.load(w_ptr + cols, mask=mask).to(tl.float32)
        tl.store(y_ptr + row * m + cols, (x * rstd * w).to(y_ptr.dtype.element_ty), mask=mask)

    def launch(kern, n, m, *args):
        block = triton.next_power_of_2(m)
        warps = 4 if block < 2048 else 8 if block < 4096 else 16 if block < 16384 else 32
        return lambda: kern[(n,)](*args, BLOCK=block, num_warps=warps)

    return {
        "softmax": lambda x, y: launch(softmax_k, x.shape[0], x.shape[1], x, y, x.shape[1]),
        "layernorm": lambda x, w, b, y: launch(layernorm_k, x.shape[0], x.shape[1], x, w, b, y,
                                               x.shape[1], 1e-5),
        "rmsnorm": lambda x, w, y: launch(rmsnorm_k, x.shape[0], x.shape[1], x, w, y,
                                          x.shape[1], 1e-6),
    }


# ---- measurement ----

def torch_reference(op):
    import torch
    import torch.nn.functional as F

    if op == "softmax":
        return lambda x: torch.softmax(x, dim=-1)
    if op == "layernorm":
        return lambda x, w, b: F.layer_norm(x, (x.shape[-1],), w, b, eps=1e-5)
    return lambda x, w: F.rms_norm(x, (x.shape[-1],), w, eps=1e-6)


def make_args(op, n, m, dtype):
    """Inputs (float32 reference copies for the error), the output, and the torch call's inputs."""
    import torch

    g = torch.Generator(device="cuda").manual_seed(n * 7 + m)
    x = (torch.randn(n, m, device="cuda", generator=g) * 3).to(dtype)
    ins = [x]
    if op != "softmax":
        ins.append((1 + 0.5 * torch.randn(m, device="cuda", generator=g)).to(dtype))
    if op == "layernorm":
        ins.append((0.5 * torch.randn(m, device="cuda", generator=g)).to(dtype))
    return ins, torch.empty_like(x)


TOL = {"float32": (1e-5, 1e-4), "float16": (1e-2, 4e-3), "bfloat16": (2e-2, 3e-2)}  # rtol, atol


def close(y, want, dtype):
    import torch

    rtol, atol = TOL[dtype]
    err = (y.float() - want.float()).abs().max().item()
    ok = torch.allclose(y.float(), want.float(), rtol=rtol, atol=atol)
    return ok, err


def _prebuild(job):
    """One build in a worker process, for its cache: ("tessel", text, target) fills tessel's build
    cache; ("triton", op, dtype, m) compiles the Triton peer's kernel for rows of length m."""
    sys.path.insert(0, str(ROOT / "python"))
    start = time.perf_counter()
    try:
        if job[0] == "tessel":
            import tessel
            tessel.build(job[1], target=job[2])
        else:
            import torch
            _, op, dtype, m = job
            ins, y = make_args(op, 1, m, getattr(torch, dtype))
            triton_kernels()[op](*ins, y)()
            torch.cuda.synchronize()
    except Exception as e:  # the timing loop builds it again and reports the error there
        print(f"prebuild {job[0]} {job[1:] if job[0] == 'triton' else ''} failed: {e}", flush=True)
    return time.perf_counter() - start


def prebuild(jobs, workers):
    """Runs the builds of `jobs` in `workers` processes, so that the timing loop finds every kernel
    compiled (tessel's build cache, Triton's cache)."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    start = time.perf_counter()
    with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn")) as pool:
        spent = sum(pool.map(_prebuild, jobs))
    print(f"prebuilt {len(jobs)} kernels/modules in {time.perf_counter() - start:.1f} s "
          f"({spent:.0f} s of work, {workers} processes)", flush=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--arch", default="sm_90")
    ap.add_argument("--emit", choices=sorted(EXAMPLES), help="print examples/<file>.py for OP")
    ap.add_argument("--proposed", action="store_true", help="--emit with PROPOSED as DISPATCH")
    ap.add_argument("--candidates", action="store_true", help="also time every CANDIDATES variant")
    ap.add_argument("--ops", default="softmax,layernorm,rmsnorm")
    ap.add_argument("--dtypes", default=",".join(DTYPES))
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--jobs", type=int, default=0, help="build processes first (0: none)")
    ap.add_argument("--json", help="write every timing (seconds) here")
    args = ap.parse_args()
    if args.emit:
        sys.stdout.write(example_text(args.emit, PROPOSED if args.proposed else None))
        return 0

    import torch

    sys.path.insert(0, str(ROOT / "python"))
    sys.path.insert(0, str(ROOT / "bench"))
    import tessel
    from cuda_bench import cuda_time

    target = f"cuda -arch={args.arch}"
    ops, dtypes = args.ops.split(","), args.dtypes.split(",")
    print(f"device: {torch.cuda.get_device_name()}; torch {torch.__version__}; "
          f"date {time.strftime('%Y-%m-%d %H:%M')}; target {target}")
    try:
        peers = triton_kernels()
        import triton
        print(f"triton {triton.__version__}")
    except ImportError as e:
        peers = {}
        print(f"no Triton peer: {e}")
    if args.jobs:
        jobs = [("tessel", example_text(op, d), target) for op in ops for d in (None, PROPOSED)]
        if args.candidates:
            jobs += [("tessel", candidate_module(op, dt), target) for op in ops for dt in dtypes]
        if peers:
            jobs += [("triton", op, dt, m) for op in ops for dt in dtypes for _, m in SHAPES]
        prebuild(jobs, args.jobs)
    reps = args.reps
    rows, prop_rows, records = [], [], []
    failures = 0
    for op in ops:
        file, name = EXAMPLES[op]
        start = time.perf_counter()
        mod = tessel.build((ROOT / "examples" / f"{file}.py").read_text(), target=target)
        proposed = tessel.build(example_text(op, PROPOSED), target=target)
        print(f"built examples/{file}.py and PROPOSED in {time.perf_counter() - start:.1f} s")
        ref = torch_reference(op)
        for dtype in dtypes:
            tdt = getattr(torch, dtype)
            fn = mod[f"{name}_{SHORT[dtype]}"]
            fp = proposed[f"{name}_{SHORT[dtype]}"]
            cand = tessel.build(candidate_module(op, dtype), target=target) if args.candidates \
                else None
            for n, m in SHAPES:
                ins, y = make_args(op, n, m, tdt)
                want = ref(*ins)
                y.fill_(float("nan"))
                fn(*ins, y)
                torch.cuda.synchronize()
                ok, err = close(y, want, dtype)
                failures += not ok
                nbytes = 2 * y.numel() * y.element_size()
                src = torch.empty_like(y)
                t_copy = cuda_time(lambda: src.copy_(y), reps)
                t_ours = cuda_time(lambda: fn(*ins, y), reps)
                yp = torch.empty_like(y).fill_(float("nan"))
                fp(*ins, yp)
                torch.cuda.synchronize()
                p_ok, p_err = close(yp, want, dtype)
                failures += not p_ok
                t_prop = cuda_time(lambda: fp(*ins, yp), reps)
                t_torch = cuda_time(lambda: ref(*ins), reps)
                t_triton = float("nan")
                if op in peers:
                    yt = torch.empty_like(y)
                    call = peers[op](*ins, yt)
                    call()
                    torch.cuda.synchronize()
                    if close(yt, want, dtype)[0]:
                        t_triton = cuda_time(call, reps)
                rows.append((op, dtype, n, m, t_ours, nbytes / t_ours, t_copy, t_torch, t_triton,
                             ok, err))
                prop_rows.append((op, dtype, n, m, t_prop, nbytes / t_prop, t_copy, t_torch,
                                  t_triton, p_ok, p_err))
                times = {}
                if cand is not None:
                    for v in CANDIDATES[m]:
                        if not timed(v, op, dtype):
                            continue
                        f = cand[f"{op}_{SHORT[dtype]}_{v.tag()}"]
                        yc = torch.empty_like(y).fill_(float("nan"))
                        f(*ins, yc)
                        torch.cuda.synchronize()
                        c_ok = close(yc, want, dtype)[0]
                        failures += not c_ok
                        times[v.tag() + ("" if c_ok else "!WRONG")] = cuda_time(
                            lambda: f(*ins, yc), reps)
                records.append(dict(op=op, dtype=dtype, n=n, m=m, dispatch=t_ours,
                                    proposed=t_prop, copy=t_copy, torch=t_torch, triton=t_triton,
                                    err=err, ok=ok, proposed_err=p_err, proposed_ok=p_ok,
                                    candidates=times))
                cands = " ".join(f"{k} {t * 1e6:.0f}" for k, t in times.items())
                print(f"{op[:4]} {SHORT[dtype]} {m}: us dispatch {t_ours * 1e6:.0f} "
                      f"({t_copy / t_ours:.0%}) proposed {t_prop * 1e6:.0f} "
                      f"({t_copy / t_prop:.0%}) torch {t_torch * 1e6:.0f} triton "
                      f"{t_triton * 1e6:.0f} copy {t_copy * 1e6:.0f}"
                      f"{'' if ok and p_ok else ' WRONG'} | " + cands, flush=True)
                del ins, y, yp, want, src
    if args.json:
        import json
        Path(args.json).write_text(json.dumps(records, indent=1))
    for title, table in [("DISPATCH (the examples)", rows), ("PROPOSED", prop_rows)]:
        print(f"\n{title}\n")
        print("| op | dtype | shape | tessel us | GB/s | of copy | torch us | tessel/torch speed "
              "| Triton us | max abs err |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        for op, dtype, n, m, t, bw, t_copy, t_torch, t_triton, ok, err in table:
            print(f"| {op} | {SHORT[dtype]} | {n}x{m} | {t * 1e6:.1f} | {bw / 1e9:.0f} | "
                  f"{t_copy / t:.0%} | {t_torch * 1e6:.1f} | {t_torch / t:.2f}x | "
                  f"{t_triton * 1e6:.1f} | {err:.1e}{'' if ok else ' WRONG'} |")
    if records and records[0]["candidates"]:
        print("\nfastest candidate: op dtype m: tag us (of copy, torch/it)")
        for r in records:
            tag, t = min(r["candidates"].items(), key=lambda kv: kv[1])
            print(f"{r['op'][:4]} {SHORT[r['dtype']]} {r['m']}: {tag} {t * 1e6:.1f} "
                  f"({r['copy'] / t:.0%}, {r['torch'] / t:.2f}x)")
    print(f"\n{failures} wrong results")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
