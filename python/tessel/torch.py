"""``tessel.torch.register``: a ``@tessel.jit`` kernel as a ``torch.library`` custom operator,
with a fake (meta) implementation, so that ``torch.compile(fullgraph=True)``, dynamic shapes,
``torch.library.opcheck`` and CUDA graphs can use it (docs/torch.md).

```python
import tessel.torch

@tessel.jit(out=["C"])
def add(A: T.Buffer((n,), "float32"), B: T.Buffer((n,), "float32"),
        C: T.Buffer((n,), "float32"), *, SCALE: T.constexpr = 1): ...

op = tessel.torch.register(add, "mylib::add", constexprs={"SCALE": 2})
c = op(a, b)                 # torch.ops.mylib.add; schema add(Tensor A, Tensor B) -> Tensor
```

This module needs PyTorch; ``import tessel`` never imports it.
"""

from __future__ import annotations

import re
import threading
import warnings
from typing import Any, Iterable, Optional

try:
    import torch as _torch
    import torch.library as _tlib
except ImportError as _err:  # pragma: no cover - exercised only without torch
    raise ImportError(
        "tessel.torch needs PyTorch, which is not installed (or failed to import: "
        f"{_err}). Install torch (pip install torch) to register tessel kernels as torch "
        "custom operators; the rest of tessel works without it."
    ) from _err

from .jit.args import _SAFE, Signature, free_names
from .jit.kernel import JitFunction

__all__ = ["register", "deregister", "registered", "schema_of", "library"]

# dtype prefix -> schema scalar type. Int scalars are SymInt so that a size passed as a scalar
# stays symbolic under torch.compile(dynamic=True) (eager callers pass plain ints).
_SCALAR_TYPES = (
    (re.compile(r"^u?int(8|16|32|64)$"), "SymInt"),
    (re.compile(r"^(float(16|32|64)|bfloat16)$"), "float"),
    (re.compile(r"^(bool|uint1)$"), "bool"),
)
_DISPATCH_KEYS = {"cpu": "CPU", "cuda": "CUDA"}
_IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
_QUALNAME = re.compile(rf"^({_IDENT})::({_IDENT})$")
_RESERVED_NAMESPACES = {"aten", "prim", "prims", "_ops", "torch"}

_lock = threading.Lock()
_registry: dict = {}  # qualname -> _Registration


class _Registration:
    __slots__ = ("qualname", "kernel", "constexprs", "schema", "lib", "device_types")

    def __init__(self, qualname: str, kernel: Any, constexprs: dict, schema: str, lib: Any,
                 device_types: tuple) -> None:
        self.qualname, self.kernel, self.constexprs = qualname, kernel, constexprs
        self.schema, self.lib, self.device_types = schema, lib, device_types


# ---- dtypes ------------------------------------------------------------------------------------


def _torch_dtype(dtype: str) -> Optional[Any]:
    if dtype in ("bool", "uint1"):
        return _torch.bool
    t = getattr(_torch, dtype, None)
    return t if isinstance(t, _torch.dtype) else None


def _scalar_schema_type(dtype: str) -> Optional[str]:
    for pattern, typ in _SCALAR_TYPES:
        if pattern.match(dtype):
            return typ
    return None


def _alias_name(k: int) -> str:
    letters = "abcdefghijklmnopqrstuvwxyz"
    name = ""
    k += 1
    while k:
        k, r = divmod(k - 1, 26)
        name = letters[r] + name
    return name


# ---- shape expressions on (Sym)Ints ------------------------------------------------------------


def _sym_tdiv(a: Any, b: Any) -> Any:
    """Truncated division. On plain ints it is exact; on SymInts it is floor division, which
    agrees for the non-negative values that sizes have (and adds no guard)."""
    if isinstance(a, int) and isinstance(b, int):
        q = abs(a) // abs(b)
        return q if (a >= 0) == (b >= 0) else -q
    return a // b


def _sym_tmod(a: Any, b: Any) -> Any:
    return a - _sym_tdiv(a, b) * b


_SYM_GLOBALS = {"__builtins__": {}, "min": _torch.sym_min, "max": _torch.sym_max,
                "_tdiv": _sym_tdiv, "_tmod": _sym_tmod}


def _shape_fn(exprs: list, what: str) -> Any:
    """A function of a dims dict that returns the shape (a tuple of ints or SymInts)."""
    for e in exprs:
        if not _SAFE.match(e):
            raise ValueError(f"{what}: bad shape expression {e!r}")
    names = sorted({n for e in exprs for n in free_names(e)})
    src = (f"def _f(_d):\n"
           + "".join(f"    {n} = _d[{n!r}]\n" for n in names)
           + f"    return ({''.join(e + ', ' for e in exprs)})\n")
    env = dict(_SYM_GLOBALS)
    exec(compile(src, f"<{what} shape>", "exec"), env)  # noqa: S102
    return env["_f"]


# ---- checks at registration --------------------------------------------------------------------


def _check_kernel(kernel: Any) -> JitFunction:
    if isinstance(kernel, JitFunction):
        return kernel
    inner = getattr(kernel, "jit", None)
    if isinstance(inner, JitFunction):  # a @tessel.autotune object
        raise ValueError(
            f"tessel.torch.register: {kernel!r} is a @tessel.autotune kernel; register its jit "
            "function with fixed constexprs instead, e.g. register(tuned.jit, 'ns::name', "
            "constexprs=tuned.best_config(*example_args)) (autotuning inside an operator would "
            "benchmark during torch.compile tracing and CUDA graph capture)")
    raise ValueError(f"tessel.torch.register: expected a @tessel.jit function, got "
                     f"{type(kernel).__name__} {kernel!r}")


def _check_qualname(qualname: Any) -> tuple:
    if not isinstance(qualname, str) or not _QUALNAME.match(qualname):
        raise ValueError(f"tessel.torch.register: bad operator name {qualname!r}: expected "
                         "'namespace::name' (two identifiers, no overload name)")
    ns, name = _QUALNAME.match(qualname).groups()
    if ns in _RESERVED_NAMESPACES:
        raise ValueError(f"tessel.torch.register: {qualname!r}: the namespace {ns!r} is "
                         "reserved by PyTorch; use a namespace of your own")
    return ns, name


def _check_device_types(device_types: Any) -> tuple:
    if isinstance(device_types, str):
        device_types = (device_types,)
    out = []
    for d in device_types:
        if d not in _DISPATCH_KEYS:
            raise ValueError(f"tessel.torch.register: unknown device type {d!r}; expected some "
                             f"of {sorted(_DISPATCH_KEYS)}")
        if d not in out:
            out.append(d)
    if not out:
        raise ValueError("tessel.torch.register: device_types is empty")
    return tuple(out)


_STORE = r"^\s*{}\[[^\n]*?\]\s*=(?!=)"


def _written_inputs(pf: Any, names: Iterable[str]) -> list:
    """The input buffers the kernel's text stores to (a textual check, for a warning)."""
    from .text import as_text  # noqa: PLC0415

    try:
        text = as_text(pf)
    except Exception:  # noqa: BLE001
        return []
    return [n for n in names if re.search(_STORE.format(re.escape(n)), text, re.MULTILINE)]


# ---- the schema --------------------------------------------------------------------------------


def _build_schema(name: str, sig: Signature, mutates: list, what: str) -> str:
    args = []
    k = 0
    for i in sig.inputs:
        p = sig.params[i]
        if p.kind == "buffer":
            if _torch_dtype(p.dtype) is None:
                raise ValueError(f"{what}: parameter {p.name!r} has dtype {p.dtype!r}, which "
                                 "torch has no dtype for")
            if p.name in mutates:
                args.append(f"Tensor({_alias_name(k)}!) {p.name}")
                k += 1
            else:
                args.append(f"Tensor {p.name}")
        else:
            typ = _scalar_schema_type(p.dtype)
            if typ is None:
                raise ValueError(f"{what}: the scalar parameter {p.name!r} has dtype {p.dtype!r}, "
                                 "which an operator schema cannot express (int, float and bool "
                                 "dtypes can)")
            args.append(f"{typ} {p.name}")
    for i in sig.outputs:
        p = sig.params[i]
        if _torch_dtype(p.dtype) is None:
            raise ValueError(f"{what}: output {p.name!r} has dtype {p.dtype!r}, which torch has "
                             "no dtype for")
    n_out = len(sig.outputs)
    ret = "()" if n_out == 0 else "Tensor" if n_out == 1 else \
        "(" + ", ".join(["Tensor"] * n_out) + ")"
    return f"{name}({', '.join(args)}) -> {ret}"


def schema_of(kernel: Any, *, constexprs: Optional[dict] = None,
              mutates: Optional[Iterable[str]] = None, name: Optional[str] = None) -> str:
    """The schema ``register`` would define (without the namespace)."""
    kernel = _check_kernel(kernel)
    return _prepare(kernel, name or kernel.name, constexprs, mutates)[0]


def _prepare(kernel: JitFunction, name: str, constexprs: Optional[dict],
             mutates: Optional[Iterable[str]]) -> tuple:
    what = f"tessel.torch.register({kernel.name})"
    try:
        cvals = kernel.constexpr_values(dict(constexprs or {}))
    except TypeError as err:
        raise ValueError(f"{what}: constexprs: {err}") from None
    pf, sig = kernel.generic(cvals)
    if isinstance(mutates, str):
        mutates = [mutates]
    mutates = list(mutates or ())
    names = [p.name for p in sig.params]
    for m in mutates:
        if m not in names:
            raise ValueError(f"{what}: mutates names {m!r}, which is not a parameter (the "
                             f"parameters are {names})")
        p = sig.params[names.index(m)]
        if names.index(m) in sig.outputs:
            raise ValueError(f"{what}: mutates names {m!r}, which is an out= output (allocated "
                             "and returned by the operator)")
        if p.kind != "buffer":
            raise ValueError(f"{what}: mutates names the scalar parameter {m!r}")
    if sig.outputs and not any(sig.params[i].kind == "buffer" for i in sig.inputs):
        raise ValueError(f"{what}: the kernel allocates outputs but has no tensor input to "
                         "take their device from")
    schema = _build_schema(name, sig, mutates, what)
    return schema, cvals, pf, sig, mutates


# ---- the implementations -----------------------------------------------------------------------


def _make_real(kernel: JitFunction, cvals: dict, sig: Signature, mutates: list) -> Any:
    """Calls the jit kernel's specialization for ``cvals``; non-mutated tensor inputs are made
    contiguous (the compiled function wants compact buffers)."""
    positions = [pos for pos, i in enumerate(sig.inputs)
                 if sig.params[i].kind == "buffer" and sig.params[i].name not in mutates]
    has_outputs = bool(sig.outputs)
    dispatch = bool(kernel.static or kernel.divisible)
    state: dict = {}

    def call(args: tuple) -> Any:
        fn = state.get("fn")
        if fn is None:
            if dispatch:  # static/divisible dims: the jit picks the specialization per call
                def fn(*a: Any) -> Any:
                    return kernel(*a, **cvals)
            else:
                fn = kernel.compile(**cvals)
            state["fn"] = fn
        return fn(*args)

    def impl(*args: Any) -> Any:
        args = list(args)
        for p in positions:
            a = args[p]
            if not a.is_contiguous():
                args[p] = a.contiguous()
        result = call(tuple(args))
        return result if has_outputs else None

    return impl


def _make_fake(sig: Signature, mutates: list, what: str) -> Any:
    """Allocates the outputs with the shapes the jit would give them, on SymInts too."""
    inputs = [sig.params[i] for i in sig.inputs]
    buffers = [(pos, p, _torch_dtype(p.dtype)) for pos, p in enumerate(inputs)
               if p.kind == "buffer"]
    binding = {}  # dim name -> (pos, axis)
    for n, (pos, axis) in sig.dims.items():
        binding[n] = (pos, axis)
    # Consistency checks: each input axis whose size is not where its dim is bound.
    checks = []
    for pos, p, _ in buffers:
        for axis, e in enumerate(p.shape):
            if binding.get(e) == (pos, axis):
                continue
            names = free_names(e)
            if all(n in binding for n in names):
                checks.append((pos, axis, e, _shape_fn([e], f"{what} {p.name}")))
    outs = [(sig.params[i], _torch_dtype(sig.params[i].dtype)) for i in sig.outputs]
    out_shapes = [_shape_fn(p.shape, f"{what} {p.name}") for p, _ in outs]
    like = buffers[0][0] if buffers else None
    single = len(outs) == 1

    def fake(*args: Any) -> Any:
        for pos, p, dt in buffers:
            a = args[pos]
            if a.dtype != dt:
                raise TypeError(f"{what}: {p.name}.dtype: expected {p.dtype}, got "
                                f"{str(a.dtype).replace('torch.', '')}")
            if a.dim() != len(p.shape):
                raise ValueError(f"{what}: {p.name}.ndim: expected {len(p.shape)}, got {a.dim()}")
        dims = {}
        for n, (pos, axis) in binding.items():
            dims[n] = args[pos] if axis is None else args[pos].shape[axis]
        for pos, axis, e, f in checks:
            size, want = args[pos].shape[axis], f(dims)[0]
            _torch._check(size == want, lambda p=inputs[pos], axis=axis, e=e, size=size:
                          f"{what}: {p.name}.shape[{axis}]: expected {e}, got {size}")
        if not outs:
            return None
        device = args[like].device
        result = [_torch.empty(f(dims), dtype=dt, device=device)
                  for (p, dt), f in zip(outs, out_shapes)]
        return result[0] if single else tuple(result)

    return fake


# ---- registration ------------------------------------------------------------------------------


def register(kernel: Any, qualname: str, *, constexprs: Optional[dict] = None,
             mutates: Optional[Iterable[str]] = None,
             device_types: Iterable[str] = ("cpu", "cuda"), replace: bool = False) -> Any:
    """Defines the custom operator ``qualname`` ("ns::name") for the ``@tessel.jit`` function
    ``kernel`` and returns it (``torch.ops.ns.name``).

    - ``constexprs``: the constexpr values of this operator's specialization (the kernel's
      defaults for the others).
    - ``mutates``: names of input buffers the kernel writes in place (``Tensor(a!)``); the
      ``out=`` buffers are allocated and returned instead.
    - ``device_types``: where the real implementation is registered ("cpu", "cuda"); the
      kernel's target decides where it can actually run.
    - ``replace``: an operator already registered through this function under ``qualname`` is
      deregistered first; without it, registering a name twice is a ValueError.

    The schema is built from the kernel's signature (``schema_of`` shows it): buffers are
    ``Tensor``, scalars ``SymInt`` / ``float`` / ``bool`` by dtype, outputs are returned.
    """
    jf = _check_kernel(kernel)
    ns, name = _check_qualname(qualname)
    devices = _check_device_types(device_types)
    schema, cvals, pf, sig, mutated = _prepare(jf, name, constexprs, mutates)
    what = f"{qualname} ({jf.name})"
    undeclared = [n for n in _written_inputs(pf, [sig.params[i].name for i in sig.inputs
                                                  if sig.params[i].kind == "buffer"])
                  if n not in mutated]
    if undeclared:
        warnings.warn(f"tessel.torch.register({qualname!r}): the kernel {jf.name} writes the "
                      f"input(s) {undeclared} but mutates= does not name them; torch.compile "
                      "and CUDA graphs assume inputs are only read", stacklevel=2)
    real = _make_real(jf, cvals, sig, mutated)
    fake = _make_fake(sig, mutated, what)
    real.__name__ = fake.__name__ = name

    with _lock:
        old = _registry.get(qualname)
        if old is not None:
            if not replace:
                raise ValueError(
                    f"tessel.torch.register: {qualname!r} is already registered (kernel "
                    f"{old.kernel.name}); pass replace=True, or call "
                    f"tessel.torch.deregister({qualname!r}) first")
            _deregister_locked(qualname)
        lib = _tlib.Library(ns, "FRAGMENT")
        try:
            try:
                lib.define(schema)
            except RuntimeError as err:
                first = str(err).strip().splitlines()[0] if str(err).strip() else repr(err)
                raise ValueError(f"tessel.torch.register: cannot define {qualname!r} with "
                                 f"schema {schema!r}: {first}") from None
            for d in devices:
                lib.impl(name, real, _DISPATCH_KEYS[d])
            _tlib.register_fake(qualname, fake, lib=lib)
            op = getattr(getattr(_torch.ops, ns), name)
        except BaseException:
            lib._destroy()  # no half-registered operator is left behind
            raise
        _registry[qualname] = _Registration(qualname, jf, cvals, schema, lib, devices)
    return op


def _deregister_locked(qualname: str) -> bool:
    reg = _registry.pop(qualname, None)
    if reg is None:
        return False
    reg.lib._destroy()
    return True


def deregister(qualname: str) -> bool:
    """Removes an operator registered by ``register`` (its definition, implementations and
    fake); True if there was one. Graphs compiled before are not re-traced: call
    ``torch._dynamo.reset()`` after deregistering or replacing an operator they use."""
    with _lock:
        return _deregister_locked(qualname)


def registered() -> dict:
    """qualname -> schema of the operators registered through ``register`` in this process."""
    with _lock:
        return {q: f"{q.split('::')[0]}::{r.schema}" for q, r in _registry.items()}


def library(qualname: str) -> Any:
    """The ``torch.library.Library`` that holds the operator ``qualname`` registered by
    ``register``: pass it as ``lib=`` to ``torch.library.register_autograd`` (or other
    registrations) so that ``deregister`` / ``replace=True`` remove them too."""
    with _lock:
        reg = _registry.get(qualname)
    if reg is None:
        raise KeyError(f"tessel.torch: {qualname!r} is not registered through "
                       "tessel.torch.register")
    return reg.lib
