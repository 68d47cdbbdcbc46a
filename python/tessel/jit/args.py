"""How a compiled kernel is called: its signature (which params the caller passes, which are
outputs the call allocates), where each symbolic dim is read from, and output allocation in the
framework of the inputs.

A ``Signature`` is made from a PrimFunc once per specialization and stored in the disk entry's
JSON (``to_json`` / ``from_json``), so a disk hit needs no IR walk. Shape expressions are kept as
Python expression strings over the dims' names (``"n * 2"``), checked against a small grammar
before they are compiled.
"""

from __future__ import annotations

import re
from typing import Any, Optional, Sequence

import numpy as np

_BINARY = {
    "Add": "({} + {})",
    "Sub": "({} - {})",
    "Mul": "({} * {})",
    "FloorDiv": "({} // {})",
    "FloorMod": "({} % {})",
    "Div": "_tdiv({}, {})",
    "Mod": "_tmod({}, {})",
    "Min": "min({}, {})",
    "Max": "max({}, {})",
}
_SAFE = re.compile(r"^[A-Za-z0-9_ +\-*/%(),]*$")


def _tdiv(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _tmod(a: int, b: int) -> int:
    return a - _tdiv(a, b) * b


_EVAL_GLOBALS = {"__builtins__": {}, "min": min, "max": max, "_tdiv": _tdiv, "_tmod": _tmod}


def expr_to_py(e: Any, what: str) -> str:
    """A Python expression for an integer shape expression (vars by name)."""
    kind = type(e).__name__
    if kind == "IntImm":
        return str(int(e.value))
    if kind in ("Var", "SizeVar"):
        return str(e.name_hint)
    if kind in _BINARY:
        return _BINARY[kind].format(expr_to_py(e.a, what), expr_to_py(e.b, what))
    if kind == "Cast":
        return expr_to_py(e.value, what)
    raise ValueError(f"{what}: cannot evaluate the shape expression {e} ({kind}) in Python")


def free_names(py: str) -> list:
    return sorted(set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", py)) - {"min", "max", "_tdiv", "_tmod"})


class Param:
    """One parameter: a buffer (dtype, shape as Python expressions) or a scalar (dtype)."""

    __slots__ = ("name", "kind", "dtype", "shape")

    def __init__(self, name: str, kind: str, dtype: str, shape: Sequence[str] = ()) -> None:
        self.name, self.kind, self.dtype, self.shape = name, kind, dtype, list(shape)

    def to_json(self) -> dict:
        return {"name": self.name, "kind": self.kind, "dtype": self.dtype, "shape": self.shape}


class Signature:
    """The kernel's params, which of them are outputs, and how to bind the dims at a call.

    ``inputs``: indices (into params) of what the caller passes, in order. ``dims``: name ->
    (input position, axis) or (input position, None) for a scalar param, the first place the dim
    is declared by a buffer shape (or a scalar param of that name)."""

    def __init__(self, name: str, params: Sequence[Param], outputs: Sequence[str]) -> None:
        self.name = name
        self.params = list(params)
        names = [p.name for p in self.params]
        for o in outputs:
            if o not in names:
                raise ValueError(f"{name}: out={list(outputs)!r} names {o!r}, which is not a "
                                 f"parameter (the parameters are {names})")
        self.outputs = [names.index(o) for o in outputs]
        for i in self.outputs:
            if self.params[i].kind != "buffer":
                raise ValueError(f"{name}: out= names the scalar parameter "
                                 f"{self.params[i].name!r}; outputs must be buffers")
        self.inputs = [i for i in range(len(self.params)) if i not in self.outputs]
        self.dims: dict = {}
        for pos, i in enumerate(self.inputs):
            p = self.params[i]
            if p.kind == "scalar":
                self.dims.setdefault(p.name, (pos, None))
                continue
            for axis, s in enumerate(p.shape):
                if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", s):
                    self.dims.setdefault(s, (pos, axis))
        self._alloc = None
        if self.outputs:
            self._alloc = self._make_allocator()

    # -- serialization
    def to_json(self) -> dict:
        return {"name": self.name, "params": [p.to_json() for p in self.params],
                "outputs": [self.params[i].name for i in self.outputs]}

    @staticmethod
    def from_json(d: dict) -> "Signature":
        params = []
        for p in d["params"]:
            for s in p["shape"]:
                if not _SAFE.match(s):
                    raise ValueError(f"jit cache entry: bad shape expression {s!r}")
            params.append(Param(p["name"], p["kind"], p["dtype"], p["shape"]))
        return Signature(d["name"], params, d["outputs"])

    @staticmethod
    def from_primfunc(pf: Any, name: str, outputs: Sequence[str]) -> "Signature":
        bmap = list(pf.buffer_map.items())
        params = []
        for var in pf.params:
            buf = next((b for v, b in bmap if v.same_as(var)), None)
            pname = str(var.name_hint)
            if buf is None:
                params.append(Param(pname, "scalar", str(var.dtype)))
            else:
                shape = [expr_to_py(e, f"{name}: buffer {pname}") for e in buf.shape]
                params.append(Param(pname, "buffer", str(buf.dtype), shape))
        return Signature(name, params, outputs)

    # -- calls
    def dim_values(self, args: Sequence[Any], names: Sequence[str]) -> tuple:
        """The values of the named dims at a call with ``args`` (the inputs)."""
        out = []
        for n in names:
            pos, axis = self.dims[n]
            if pos >= len(args):
                raise TypeError(f"{self.name}() takes {len(self.inputs)} positional arguments "
                                f"but {len(args)} were given")
            a = args[pos]
            out.append(int(a) if axis is None else int(shape_of(a)[axis]))
        return tuple(out)

    def _make_allocator(self):
        """A function of the inputs that returns the output arrays, compiled once."""
        needed = set()
        for i in self.outputs:
            for s in self.params[i].shape:
                for n in free_names(s):
                    needed.add(n)
        missing = sorted(n for n in needed if n not in self.dims)
        if missing:
            outs = [self.params[i].name for i in self.outputs]
            raise ValueError(f"{self.name}: the shape of output(s) {outs} uses {missing}, which no "
                             "input's shape declares; pass that buffer as an input instead")
        bind = "; ".join(
            f"{n} = int(_s[{pos}][{axis}])" if axis is not None else f"{n} = int(args[{pos}])"
            for n, (pos, axis) in sorted(self.dims.items()) if n in needed)
        shapes = ", ".join("(" + "".join(s + ", " for s in self.params[i].shape) + ")"
                           for i in self.outputs)
        buffers = sorted({pos for n, (pos, axis) in self.dims.items()
                          if n in needed and axis is not None})
        src = ("def _shapes(args):\n"
               f"    _s = {{{', '.join(f'{p}: _shape(args[{p}])' for p in buffers)}}}\n"
               f"    {bind or 'pass'}\n"
               f"    return ({shapes},)\n")
        env = dict(_EVAL_GLOBALS, _shape=shape_of, int=int)
        exec(compile(src, f"<{self.name} output shapes>", "exec"), env)  # noqa: S102
        return env["_shapes"]

    def output_shapes(self, args: Sequence[Any]) -> list:
        return list(self._alloc(args))

    def make_caller(self, fn: Any):
        """The function a call runs: ``fn`` itself when there are no outputs, else a wrapper
        that allocates them, calls ``fn`` with every param, and returns them."""
        if not self.outputs:
            return fn
        n_in = len(self.inputs)
        order = []  # for each param: ("in", pos) or ("out", k)
        for i in range(len(self.params)):
            order.append(("out", self.outputs.index(i)) if i in self.outputs
                         else ("in", self.inputs.index(i)))
        dtypes = [self.params[i].dtype for i in self.outputs]
        first_buffer = next((pos for pos, i in enumerate(self.inputs)
                             if self.params[i].kind == "buffer"), None)
        shapes_of = self._alloc
        single = len(self.outputs) == 1
        name = self.name

        def call(*args: Any) -> Any:
            if len(args) != n_in:
                raise TypeError(f"{name}() takes {n_in} positional arguments (the outputs are "
                                f"allocated) but {len(args)} were given")
            like = args[first_buffer] if first_buffer is not None else None
            outs = [empty(s, dt, like) for s, dt in zip(shapes_of(args), dtypes)]
            full = [args[k] if kind == "in" else outs[k] for kind, k in order]
            fn(*full)
            return outs[0] if single else tuple(outs)

        return call


# ---- arrays of the caller's framework ----------------------------------------------------------


def shape_of(x: Any) -> tuple:
    shape = getattr(x, "shape", None)
    if shape is None:
        import tvm_ffi  # noqa: PLC0415

        shape = tvm_ffi.from_dlpack(x).shape
    return tuple(shape)


def _is_torch(x: Any) -> bool:
    return type(x).__module__.startswith("torch")


def _np_dtype(dtype: str) -> Any:
    if dtype in ("bool", "uint1"):
        return np.bool_
    if dtype == "bfloat16":
        raise TypeError("outputs of dtype bfloat16 need torch inputs (numpy has no bfloat16)")
    return np.dtype(dtype)


def _torch_dtype(dtype: str) -> Any:
    import torch  # noqa: PLC0415

    if dtype in ("bool", "uint1"):
        return torch.bool
    return getattr(torch, dtype)


def empty(shape: Sequence[int], dtype: str, like: Any) -> Any:
    """An uninitialized array in ``like``'s framework and on its device: numpy for numpy and
    for other CPU DLPack objects, torch for torch (same device), a tvm_ffi.Tensor for tvm_ffi
    tensors (numpy memory)."""
    shape = tuple(int(s) for s in shape)
    if like is None or isinstance(like, np.ndarray):
        return np.empty(shape, _np_dtype(dtype))
    if _is_torch(like):
        import torch  # noqa: PLC0415

        return torch.empty(shape, dtype=_torch_dtype(dtype), device=like.device)
    import tvm_ffi  # noqa: PLC0415

    device = like.__dlpack_device__() if hasattr(like, "__dlpack_device__") else None
    if device is not None and int(device[0]) != 1:  # kDLCPU
        raise TypeError(f"cannot allocate outputs next to a {type(like).__name__} on device "
                        f"{device}: pass torch tensors, or pass the outputs and leave out= off")
    arr = np.empty(shape, _np_dtype(dtype))
    if isinstance(like, tvm_ffi.Tensor):
        return tvm_ffi.from_dlpack(arr)
    return arr


def copy_array(x: Any) -> Any:
    """A copy of an array argument (scalars are returned as they are)."""
    if isinstance(x, np.ndarray):
        return x.copy()
    if _is_torch(x):
        return x.clone()
    if hasattr(x, "__dlpack__"):
        return np.from_dlpack(x).copy()
    return x


def to_numpy(x: Any) -> Optional[np.ndarray]:
    if isinstance(x, np.ndarray):
        return x
    if _is_torch(x):
        return x.detach().cpu().numpy()
    if hasattr(x, "__dlpack__"):
        return np.from_dlpack(x)
    return None
