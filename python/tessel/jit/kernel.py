"""``@tessel.jit``: a Python kernel function compiled once per specialization and called with
numpy arrays, torch tensors or any DLPack object.

A specialization is the constexpr values (keyword arguments of the call, else their defaults)
plus, only when asked, the values of the dims named in ``static=`` and whether the dims named in
``divisible=`` are multiples of their divisor. Symbolic dims are otherwise bound by the compiled
function itself at each call (its host wrapper checks the shapes and names the parameter), so
one compile serves every shape.

Lookup order: the jit's own dict (the already-compiled, no-keyword call goes straight to the
compiled function), then the disk cache (cache.py: a hit loads the library and runs no compiler
and no lowering), then a build. ``kernel.recompile_reasons`` lists why each compile or load
happened; ``TESSEL_LOG=recompile`` also prints each line to stderr.
"""

from __future__ import annotations

import functools
import os
import sys
import time
import types
from pathlib import Path
from typing import Any, Optional, Sequence

import tvm_ffi

from . import cache as _cache
from .args import Signature

__all__ = ["JitFunction", "CompiledKernel", "TextTemplate", "jit"]


# ---- templates ---------------------------------------------------------------------------------


class TextTemplate:
    """A kernel in the text format whose constexprs are ``${NAME}`` placeholders: the same four
    attributes and ``specialize`` as ``tessel.script.template(fn)`` gives for a Python
    function. ``constexprs`` maps each name to its default (``inspect.Parameter.empty`` for
    none)."""

    def __init__(self, text: str, name: str, constexprs: Optional[dict] = None,
                 filename: str = "<string>", lineno: int = 1) -> None:
        self.text, self.name = text, name
        self.constexprs = dict(constexprs or {})
        self.filename, self.lineno = filename, lineno

    def specialize(self, **values: Any) -> Any:
        from ..text import parse  # noqa: PLC0415

        text = self.text
        for k, v in values.items():
            text = text.replace("${" + k + "}", str(v))
        return parse(text, self.filename)


def _template_of(fn: Any, definer_locals: Optional[dict]) -> Any:
    if all(hasattr(fn, a) for a in ("name", "constexprs", "specialize")):
        return fn
    from .. import script  # noqa: PLC0415

    return script.template(fn, definer_locals)


def definer_locals(depth: int) -> Optional[dict]:
    """The local names of the scope that defines a kernel, ``depth`` frames above the caller
    (None at module level, where the function's globals serve)."""
    frame = sys._getframe(depth + 1)
    return None if frame.f_code.co_name == "<module>" else dict(frame.f_locals)


# ---- logging -----------------------------------------------------------------------------------


def _log_enabled(topic: str) -> bool:
    value = os.environ.get("TESSEL_LOG", "")
    words = {w.strip().lower() for w in value.replace(";", ",").split(",")}
    return topic in words or topic + "s" in words or "all" in words


def _fmt_values(d: dict) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in d.items())


# ---- compiled kernels --------------------------------------------------------------------------


def normalize_target(target: Any) -> str:
    """The target string with its options in canonical form; for cuda without ``-arch``, the
    arch of GPU 0 (asked through torch) is added, since it is part of the cache key."""
    from ..target import Target  # noqa: PLC0415

    t = Target(str(target))
    text = str(t.str)
    if str(t.kind) == "cuda" and "arch" not in dict(t.attrs):
        try:
            import torch  # noqa: PLC0415

            major, minor = torch.cuda.get_device_capability(0)
        except Exception as err:  # noqa: BLE001
            raise ValueError(f"target {text!r}: give -arch=sm_XX (no GPU to ask: {err})") from None
        text = str(Target(f"{text} -arch=sm_{major}{minor}").str)
    return text


class CompiledKernel:
    """One specialization, compiled and loaded. Call it like the jit function (outputs named
    in ``out=`` are allocated and returned). ``source`` is the generated C (CUDA C++ for target
    cuda), ``ir`` the specialized PrimFunc, ``export(path)`` writes a library that
    ``tvm_ffi.load_module`` loads without tessel, ``function`` is the raw tvm-ffi function (all
    params, outputs included)."""

    def __init__(self, name: str, target: str, ir: Any, key: str, signature: Signature,
                 function: Any, library_path: str, from_disk: bool, seconds: float,
                 params: dict) -> None:
        self.name, self.target, self.ir, self.key = name, target, ir, key
        self.signature = signature
        self.function = function
        self.library_path = library_path
        self.from_disk = from_disk
        self.compile_seconds = seconds
        self.params = dict(params)
        self._call = signature.make_caller(function)

    def __call__(self, *args: Any) -> Any:
        return self._call(*args)

    @property
    def source(self) -> str:
        return _cache.read_source(self.key)

    def export(self, path: Any) -> None:
        """Copies the library to ``path`` (atomically)."""
        _cache.copy_atomic(self.library_path, Path(os.fspath(path)))

    def __repr__(self) -> str:
        how = "loaded from disk" if self.from_disk else "compiled"
        return (f"<tessel.jit.CompiledKernel {self.name}({_fmt_values(self.params)}) "
                f"target={self.target!r} {how}, key {self.key[:12]}>")


def load_entry(key: str, pf: Any, name: str, target: str, outputs: Sequence[str],
               params: dict, start: Optional[float] = None) -> Optional[CompiledKernel]:
    """The disk cache's entry ``key`` loaded (no compiler, no lowering), or None."""
    start = time.perf_counter() if start is None else start
    info = _cache.read_entry(key)
    if info is None:
        return None
    lib = _cache.entry_paths(key)[0]
    try:
        mod = tvm_ffi.load_module(str(lib))
        sig = Signature.from_json(dict(info["signature"], outputs=list(outputs)))
        fn = mod[info["symbol"]]
    except Exception:  # noqa: BLE001  (a damaged entry: the caller rebuilds it)
        return None
    return CompiledKernel(name, target, pf, key, sig, fn, str(lib), True,
                          time.perf_counter() - start, params)


def load_or_build(pf: Any, name: str, target: str, outputs: Sequence[str],
                  extra_flags: Sequence[str], params: dict) -> CompiledKernel:
    """The kernel for ``pf``: loaded from the disk cache when there, else built and stored."""
    from ..text import as_text  # noqa: PLC0415

    start = time.perf_counter()
    key = _cache.cache_key(as_text(pf), target, extra_flags)
    kernel = load_entry(key, pf, name, target, outputs, params, start)
    if kernel is not None:
        return kernel
    return build_entry(pf, name, target, outputs, extra_flags, params, key, start)


def _symbol(pf: Any, name: str) -> str:
    attrs = pf.attrs
    sym = attrs.get("global_symbol") if attrs is not None else None
    return str(sym) if sym is not None else name


def build_entry(pf: Any, name: str, target: str, outputs: Sequence[str],
                extra_flags: Sequence[str], params: dict, key: str,
                start: Optional[float] = None) -> CompiledKernel:
    """Builds ``pf``, stores it in the disk cache under ``key`` and returns it loaded."""
    from ..build import build  # noqa: PLC0415
    from ..ir.function import IRModule  # noqa: PLC0415

    start = time.perf_counter() if start is None else start
    symbol = _symbol(pf, name)
    sig = Signature.from_primfunc(pf, name, outputs)  # checks out= before compiling
    mod = build(IRModule({symbol: pf}), target, list(extra_flags) or None)
    info = {"name": name, "symbol": symbol, "target": target, "params": _jsonable(params),
            "signature": sig.to_json()}
    lib = str(_cache.entry_paths(key)[0])
    try:
        _cache.write_entry(key, mod, info)
    except OSError as err:  # an unwritable cache: the kernel still runs, from the build cache
        print(f"tessel.jit: cannot store {name} in {_cache.cache_dir()}: {err}", file=sys.stderr)
        lib = mod.library_path
    return CompiledKernel(name, target, pf, key, sig, mod[symbol], lib, False,
                          time.perf_counter() - start, params)


def _jsonable(d: dict) -> dict:
    return {k: v if isinstance(v, (int, float, str, bool)) or v is None else repr(v)
            for k, v in d.items()}


# ---- the decorated function --------------------------------------------------------------------


class JitFunction:
    """What ``@tessel.jit`` returns. Call it with the kernel's inputs (positional, in order,
    outputs named in ``out=`` left out) and constexpr values as keywords."""

    def __init__(self, fn: Any, target: str = "c", out: Sequence[str] = (),
                 static: Sequence[str] = (), divisible: Optional[dict] = None,
                 extra_flags: Sequence[str] = (), definer: Optional[dict] = None) -> None:
        # Each jit function gets a class of its own, so that once its only specialization is
        # compiled, that class's __call__ can be the compiled function itself (_settle).
        self.__class__ = type(JitFunction.__name__, (JitFunction,), {})
        self._fn = fn
        self._definer = definer
        self._tmpl_obj = None
        self.target = str(target)
        self._target_norm: Optional[str] = None
        self.out = [out] if isinstance(out, str) else list(out)
        self.static = [static] if isinstance(static, str) else list(static)
        self.divisible = dict(divisible or {})
        for d, v in self.divisible.items():
            if not isinstance(v, int) or isinstance(v, bool) or v < 2:
                raise ValueError(f"divisible={{{d!r}: {v!r}}}: the divisor must be an int >= 2")
        self.extra_flags = [str(f) for f in extra_flags]
        self._fast = None       # the call of the compiled default specialization
        self._generic: dict = {}  # constexpr key -> (PrimFunc, Signature), for dim lookups
        self._kernels: dict = {}  # (constexpr key, dims key) -> CompiledKernel
        #: Why each compile or disk load happened, one line each, oldest first.
        self.recompile_reasons: list = []
        if callable(fn) and hasattr(fn, "__name__"):
            functools.update_wrapper(self, fn)

    # -- the parts the autotuner uses too
    @property
    def template(self) -> Any:
        if self._tmpl_obj is None:
            self._tmpl_obj = _template_of(self._fn, self._definer)
        return self._tmpl_obj

    @property
    def name(self) -> str:
        return str(self.template.name)

    @property
    def target_str(self) -> str:
        if self._target_norm is None:
            self._target_norm = normalize_target(self.target)
        return self._target_norm

    def constexpr_values(self, given: dict) -> dict:
        """Every constexpr's value: ``given``, else its default; a TypeError names what is
        unknown or missing."""
        import inspect  # noqa: PLC0415

        decl = self.template.constexprs
        unknown = [k for k in given if k not in decl]
        if unknown:
            raise TypeError(f"{self.name}() got unexpected keyword argument(s) {unknown}; its "
                            f"constexprs are {list(decl)}")
        values = {}
        for k, default in decl.items():
            if k in given:
                values[k] = given[k]
            elif default is inspect.Parameter.empty:
                raise TypeError(f"{self.name}() needs the constexpr {k}= (it has no default)")
            else:
                values[k] = default
        return values

    def specialize(self, **values: Any) -> Any:
        """The PrimFunc for these constexpr values (before any static/divisible assumption)."""
        return self.template.specialize(**self.constexpr_values(values))

    def generic(self, cvals: dict) -> tuple:
        """(PrimFunc, Signature) for the constexpr values, parsed once."""
        ckey = _freeze(cvals)
        hit = self._generic.get(ckey)
        if hit is None:
            pf = self.template.specialize(**cvals)
            hit = (pf, Signature.from_primfunc(pf, self.name, self.out))
            self._generic[ckey] = hit
        return hit

    def dims_key(self, sig: Signature, args: Sequence[Any]) -> tuple:
        """The static/divisible part of the specialization key at a call."""
        if not self.static and not self.divisible:
            return ()
        names = self.static + [d for d in self.divisible if d not in self.static]
        for n in names:
            if n not in sig.dims:
                raise ValueError(f"{self.name}: static/divisible names {n!r}, which is not a dim "
                                 f"of an input (the dims are {sorted(sig.dims)})")
        values = dict(zip(names, sig.dim_values(args, names)))
        return self._dims_key_of(values)

    def _dims_key_of(self, values: dict) -> tuple:
        key = [(n, values[n]) for n in self.static]
        key += [(f"{n}%{d}==0", values[n] % d == 0) for n, d in self.divisible.items()]
        return tuple(key)

    def specialized_ir(self, cvals: dict, dkey: tuple) -> Any:
        """The PrimFunc of a specialization: the constexprs substituted, then each static value
        and divisibility that holds checked at entry and assumed in the body."""
        pf = self.generic(cvals)[0]
        conds = []
        for n, v in dkey:
            if "%" in n:
                if v:
                    dim, d = n.split("%")[0], int(n.split("%")[1].split("==")[0])
                    conds.append((dim, "mod", d))
            else:
                conds.append((n, "eq", v))
        return _with_assumptions(pf, conds) if conds else pf

    # -- calls
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        fast = self._fast
        if fast is not None and not kwargs:
            return fast(*args)
        return self._dispatch(args, kwargs)

    def _dispatch(self, args: tuple, kwargs: dict) -> Any:
        cvals = self.constexpr_values(kwargs)
        ckey = _freeze(cvals)
        dkey = ()
        if self.static or self.divisible:
            dkey = self.dims_key(self.generic(cvals)[1], args)
        kernel = self._kernels.get((ckey, dkey))
        if kernel is None:
            kernel = self._compile(cvals, dkey)
        if not kwargs and not dkey:
            self._fast = kernel._call
            if not self.template.constexprs and not self.static and not self.divisible:
                self._settle(kernel._call)
        return kernel._call(*args)

    def _settle(self, call: Any) -> None:
        """Makes ``call`` this object's ``__call__``: a kernel without constexprs or static /
        divisible dims has one specialization, so the call needs no dispatch at all. Python
        looks special methods up on the type, and calls a non-descriptor attribute (the tvm-ffi
        function) or a staticmethod's function without ``self``. A keyword argument then fails
        in the compiled function, as it would in the dispatch (there are no constexprs)."""
        cls = type(self)
        if cls is not JitFunction:
            cls.__call__ = staticmethod(call) if isinstance(call, types.FunctionType) else call

    def compile(self, **params: Any) -> CompiledKernel:
        """Ahead of time: the kernel for these constexpr values (and values of the static /
        divisible dims, e.g. ``n=4096``), without calling it. For target cuda only NVRTC is
        needed, not a GPU."""
        dims = {k: params.pop(k) for k in list(params)
                if k in self.static or k in self.divisible}
        cvals = self.constexpr_values(params)
        missing = [n for n in self.static + list(self.divisible) if n not in dims]
        if missing:
            raise TypeError(f"{self.name}.compile() needs values for the static/divisible dims "
                            f"{missing}")
        dkey = self._dims_key_of(dims) if dims else ()
        kernel = self._kernels.get((_freeze(cvals), dkey))
        return kernel if kernel is not None else self._compile(cvals, dkey)

    def _compile(self, cvals: dict, dkey: tuple) -> CompiledKernel:
        why = self._why(cvals, dkey)
        pf = self.specialized_ir(cvals, dkey)
        params = dict(cvals, **{n: v for n, v in dkey})
        kernel = load_or_build(pf, self.name, self.target_str, self.out, self.extra_flags, params)
        self.register(cvals, dkey, kernel, why)
        return kernel

    def register(self, cvals: dict, dkey: tuple, kernel: CompiledKernel, why: str) -> None:
        self._kernels[(_freeze(cvals), dkey)] = kernel
        how = (f"loaded from disk cache in {kernel.compile_seconds * 1e3:.1f} ms"
               if kernel.from_disk else
               f"disk cache miss, compiled in {kernel.compile_seconds:.2f} s")
        self.log(f"{self.name}: {why}: {how} [key {kernel.key[:12]}]")

    def log(self, line: str) -> None:
        self.recompile_reasons.append(line)
        if _log_enabled("recompile"):
            print("tessel.jit: " + line, file=sys.stderr, flush=True)

    def _why(self, cvals: dict, dkey: tuple) -> str:
        if not self._kernels:
            parts = ["first call"]
            if cvals:
                parts.append(_fmt_values(cvals))
            if dkey:
                parts.append(_fmt_values(dict(dkey)))
            return parts[0] if len(parts) == 1 else f"{parts[0]} ({', '.join(parts[1:])})"
        known = list(self._kernels)
        reasons = []
        if all(_freeze(cvals) != ck for ck, _ in known):
            before = dict(known[-1][0])
            changed = {k: v for k, v in cvals.items() if before.get(k) != v}
            reasons.append(f"new constexpr values {_fmt_values(changed)}")
        if dkey and all(dk != dkey for _, dk in known):
            reasons.append(f"new static/divisible dims {_fmt_values(dict(dkey))}")
        return "; ".join(reasons) or "new specialization"

    def __repr__(self) -> str:
        return f"<tessel.jit {getattr(self, '__name__', '?')} target={self.target!r}>"


def _freeze(d: dict) -> tuple:
    items = tuple(d.items())
    try:
        hash(items)
    except TypeError:
        raise TypeError(f"constexpr values must be hashable: {d!r}") from None
    return items


def _with_assumptions(pf: Any, conds: list) -> Any:
    """``pf`` with ``assert cond`` and ``T.assume(cond)`` at the top of its body for each
    (dim, "eq", value) / (dim, "mod", divisor)."""
    from ..ir.expr import EQ, Call, FloorMod, IntImm  # noqa: PLC0415
    from ..ir.function import PrimFunc  # noqa: PLC0415
    from ..ir.stmt import AssertStmt, Evaluate, SeqStmt  # noqa: PLC0415

    dims = {}
    for _, buf in pf.buffer_map.items():
        for e in buf.shape:
            if type(e).__name__ in ("Var", "SizeVar"):
                dims.setdefault(str(e.name_hint), e)
    for p in pf.params:
        dims.setdefault(str(p.name_hint), p)
    body = pf.body
    for dim, kind, value in reversed(conds):
        var = dims[dim]
        dt = str(var.dtype)
        if kind == "eq":
            cond = EQ(var, IntImm(dt, value))
            msg = f"{dim} must be {value} (static dim of this specialization)"
        else:
            cond = EQ(FloorMod(var, IntImm(dt, value)), IntImm(dt, 0))
            msg = f"{dim} must be a multiple of {value} (divisible dim of this specialization)"
        body = AssertStmt(cond, msg, SeqStmt([Evaluate(Call("bool", "assume", [cond])), body]))
    return PrimFunc(list(pf.params), body, {v: b for v, b in pf.buffer_map.items()},
                    dict(pf.attrs.items()) if pf.attrs is not None else {})


def jit(fn: Any = None, *, target: str = "c", out: Sequence[str] = (),
        static: Sequence[str] = (), divisible: Optional[dict] = None,
        extra_flags: Sequence[str] = ()) -> Any:
    """``@tessel.jit`` or ``@tessel.jit(target=..., out=[...], static=[...],
    divisible={...}, extra_flags=[...])`` on a kernel function (see docs/jit.md)."""
    definer = definer_locals(1)
    if fn is None:
        return lambda f: JitFunction(f, target, out, static, divisible, extra_flags, definer)
    return JitFunction(fn, target, out, static, divisible, extra_flags, definer)
