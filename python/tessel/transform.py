"""Passes from Python (docs/transform.md): run registered passes, build pipelines, write passes in
Python, and turn on the debugging instruments (IR dumps, timing, verification)::

    from tessel import transform
    mod = transform.get_pass("VerifyWellFormed")(mod)
    seq = transform.Sequential([transform.get_pass("VerifyWellFormed"), my_pass])
    with transform.PassContext(dump_dir="/tmp/ir", print_timing=True) as ctx:
        mod = seq(mod)
    print(ctx.timing_report())

Options not given to ``PassContext`` come from the environment switches (``env_vars()`` lists
them: TESSEL_DUMP_IR, TESSEL_DUMP_IR_CHANGED_ONLY, TESSEL_PASS_TIMING, TESSEL_VERIFY_EACH_PASS).
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Optional

import tvm_ffi

from .ir._base import Node, ffi_func
from .ir.function import IRModule, PrimFunc

__all__ = [
    "ModulePass",
    "Pass",
    "PassContext",
    "Sequential",
    "VerifyError",
    "env_vars",
    "get_pass",
    "list_passes",
    "module_pass",
    "prim_func_pass",
    "register_pass",
    "verify_well_formed",
]


@tvm_ffi.register_object("tessel.transform.Pass")
class Pass(Node):
    """A named ``IRModule -> IRModule`` function with an opt level. Call it on a module."""

    def __call__(self, mod: IRModule) -> IRModule:
        if not isinstance(mod, IRModule):
            raise TypeError(f"pass {self.name}: expected an IRModule, got {type(mod).__name__}")
        return ffi_func("tessel.transform.RunPass")(self, mod)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r}, opt_level={self.opt_level})"

    __str__ = __repr__


@tvm_ffi.register_object("tessel.transform.ModulePass")
class ModulePass(Pass):
    """A leaf pass (made by ``module_pass``, ``prim_func_pass`` or a registered factory)."""


@tvm_ffi.register_object("tessel.transform.Sequential")
class Sequential(Pass):
    """Runs ``passes`` in order, skipping those above the context's opt level or disabled by it."""

    def __init__(self, passes: Iterable[Pass], name: str = "Sequential") -> None:
        items = list(passes)
        for i, p in enumerate(items):
            if not isinstance(p, Pass):
                raise TypeError(f"Sequential: passes[{i}] is a {type(p).__name__}, not a Pass")
        self.__init_handle_by_constructor__(ffi_func("tessel.transform.Sequential"), items, name)


def _check_name(name: Any, what: str) -> str:
    if not isinstance(name, str) or not name:
        raise TypeError(f"{what}: name must be a non-empty str")
    return name


def module_pass(func: Callable[[IRModule], IRModule], name: str, opt_level: int = 0) -> Pass:
    """A pass from a Python function over modules; it should return its input when it changes
    nothing."""
    _check_name(name, "module_pass")
    return ffi_func("tessel.transform.CreateModulePass")(func, opt_level, name)


def prim_func_pass(func: Callable[[PrimFunc], PrimFunc], name: str, opt_level: int = 0) -> Pass:
    """A pass that applies ``func`` to every function of a module."""
    _check_name(name, "prim_func_pass")
    return ffi_func("tessel.transform.CreatePrimFuncPass")(func, opt_level, name)


def get_pass(name: str) -> Pass:
    """A fresh instance of the registered pass ``name``; KeyError lists the registered names."""
    return ffi_func("tessel.transform.GetPass")(_check_name(name, "get_pass"))


def list_passes() -> list:
    """The registered pass names, sorted."""
    return [str(n) for n in ffi_func("tessel.transform.ListPasses")()]


def register_pass(name: str, factory: Callable[[], Pass]) -> None:
    """Registers ``factory`` (no arguments, returns a Pass) under ``name``; ValueError when the
    name is taken."""
    ffi_func("tessel.transform.RegisterPass")(_check_name(name, "register_pass"), factory)


@tvm_ffi.register_object("tessel.transform.PassContext")
class PassContext(Node):
    """Options of the passes run inside ``with PassContext(...)``, and the timing records of those
    runs. An option left as None keeps the environment's value."""

    def __init__(
        self,
        opt_level: Optional[int] = None,
        disabled_passes: Optional[Iterable[str]] = None,
        dump_dir: Optional[str] = None,
        dump_changed_only: Optional[bool] = None,
        print_timing: Optional[bool] = None,
        verify_each: Optional[bool] = None,
    ) -> None:
        disabled = None if disabled_passes is None else [str(p) for p in disabled_passes]
        self.__init_handle_by_constructor__(
            ffi_func("tessel.transform.PassContext"),
            opt_level,
            disabled,
            None if dump_dir is None else str(dump_dir),
            dump_changed_only,
            print_timing,
            verify_each,
        )

    @staticmethod
    def current() -> "PassContext":
        return ffi_func("tessel.transform.CurrentPassContext")()

    def __enter__(self) -> "PassContext":
        ffi_func("tessel.transform.EnterPassContext")(self)
        return self

    def __exit__(self, *exc) -> None:
        ffi_func("tessel.transform.ExitPassContext")(self)

    def timings(self) -> list:
        """``(name, depth, seconds)`` for every pass run under this context, in run order."""
        return [
            (str(t["name"]), int(t["depth"]), float(t["seconds"]))
            for t in ffi_func("tessel.transform.PassContextTimings")(self)
        ]

    def timing_report(self) -> str:
        """The timing table that TESSEL_PASS_TIMING=1 prints."""
        return str(ffi_func("tessel.transform.PassContextFormatTimings")(self))

    def clear_timings(self) -> None:
        ffi_func("tessel.transform.PassContextClearTimings")(self)

    def __repr__(self) -> str:
        return (
            f"PassContext(opt_level={self.opt_level}, dump_dir={str(self.dump_dir)!r}, "
            f"dump_changed_only={self.dump_changed_only}, print_timing={self.print_timing}, "
            f"verify_each={self.verify_each})"
        )

    __str__ = __repr__


class VerifyError:
    """One verifier finding: ``check`` (e.g. "free_var"), ``function``, ``message``, the offending
    ``node``, its statement ``stmt`` (or None), and ``text``, the full printed report."""

    def __init__(self, raw: Any) -> None:
        self.check = str(raw["check"])
        self.function = str(raw["function"])
        self.message = str(raw["message"])
        self.node = raw["node"]
        self.stmt = raw["stmt"]
        self.text = str(raw["text"])

    def __repr__(self) -> str:
        return f"VerifyError({self.check!r}, {self.message!r})"

    def __str__(self) -> str:
        return self.text


def verify_well_formed(node: Any) -> list:
    """Every VerifyError of an IRModule or PrimFunc (an empty list when it is well-formed)."""
    if not isinstance(node, (IRModule, PrimFunc)):
        raise TypeError(
            f"verify_well_formed: expected an IRModule or a PrimFunc, got {type(node).__name__}"
        )
    return [VerifyError(e) for e in ffi_func("tessel.transform.VerifyWellFormed")(node)]


def env_vars() -> list:
    """Every environment switch tessel reads: dicts with name, default, value and doc."""
    return [
        {k: str(v) for k, v in entry.items()} for entry in ffi_func("tessel.support.ListEnvVars")()
    ]
