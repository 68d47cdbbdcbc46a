"""The arithmetic analyzer from Python (docs/arith.md), shaped like ``tvm.arith`` so that TVM users
feel at home::

    from tessel import arith, ir
    x = ir.Var("x")
    ana = arith.Analyzer()
    ana.bind(x, ir.Range(0, 64))
    ana.simplify((x // 8) * 8 + x % 8)          # x (once the canonical simplifier is in the build)
    ana.can_prove(x * 4 + 3 < 256)             # True
    with ana.constraint_scope(x < 16):
        ana.const_int_bound(x).max_value       # 15

Python ints (and bools) are accepted wherever an expression is expected; they become int32 (bool)
constants, or take the variable's dtype in ``bind``.
"""

from __future__ import annotations

from typing import Any, Mapping, Optional, Sequence

import tvm_ffi

from .ir._base import Node, PrimExpr, const, ffi_func
from .ir.expr import Range, Var

__all__ = [
    "Analyzer",
    "IterMapResult",
    "IterMark",
    "IterSplitExpr",
    "IterSumExpr",
    "detect_iter_map",
    "iter_map_simplify",
    "normalize_iter_map_to_expr",
    "ConstIntBound",
    "ConstraintScope",
    "IntSet",
    "ModularSet",
    "ProofStrength",
    "Range",
    "eval_set",
    "z3_available",
]


class ProofStrength:
    """The ``strength`` argument of ``Analyzer.can_prove`` (TVM spells it as an enum)."""

    DEFAULT = "default"
    SYMBOLIC_BOUND = "symbolic_bound"


@tvm_ffi.register_object("tessel.arith.ConstIntBound")
class ConstIntBound(Node):
    """``[min_value, max_value]`` as int64; ``NEG_INF`` / ``POS_INF`` mean unbounded."""

    POS_INF = (1 << 63) - 1
    NEG_INF = -(1 << 63)

    def __init__(self, min_value: int, max_value: int) -> None:
        for name, v in (("min_value", min_value), ("max_value", max_value)):
            if isinstance(v, bool) or not isinstance(v, int):
                raise TypeError(f"ConstIntBound: {name} must be an int, got {type(v).__name__}")
            if not self.NEG_INF <= v <= self.POS_INF:
                raise ValueError(f"ConstIntBound: {name} {v} does not fit in int64")
        self.__init_handle_by_constructor__(
            ffi_func("tessel.arith.ConstIntBound"), min_value, max_value
        )

    def __repr__(self) -> str:
        def end(v: int) -> str:
            return "+inf" if v == self.POS_INF else "-inf" if v == self.NEG_INF else str(v)

        return f"ConstIntBound[{end(self.min_value)}, {end(self.max_value)}]"

    __str__ = __repr__


@tvm_ffi.register_object("tessel.arith.ModularSet")
class ModularSet(Node):
    """Every value is ``coeff * k + base``; ``coeff == 0`` is the constant ``base``."""

    def __init__(self, coeff: int, base: int) -> None:
        for name, v in (("coeff", coeff), ("base", base)):
            if isinstance(v, bool) or not isinstance(v, int):
                raise TypeError(f"ModularSet: {name} must be an int, got {type(v).__name__}")
        self.__init_handle_by_constructor__(ffi_func("tessel.arith.ModularSet"), coeff, base)

    def __repr__(self) -> str:
        return f"ModularSet(coeff={self.coeff}, base={self.base})"

    __str__ = __repr__


@tvm_ffi.register_object("tessel.arith.IntSet")
class IntSet(Node):
    """The interval ``[min_value, max_value]`` with symbolic ends; an end that is None is
    unbounded. Build one with ``IntSet.interval``, ``IntSet.single_point``, ``IntSet.from_range``
    or ``IntSet.everything``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError(
            "IntSet cannot be constructed directly; use IntSet.interval(lo, hi), "
            "IntSet.single_point(v), IntSet.from_range(r) or IntSet.everything()"
        )

    @staticmethod
    def interval(min_value: Any, max_value: Any) -> "IntSet":
        """``[min_value, max_value]`` (both inclusive); None for an unbounded end."""
        lo = None if min_value is None else _expr(min_value, "IntSet.interval min_value")
        hi = None if max_value is None else _expr(max_value, "IntSet.interval max_value")
        return ffi_func("tessel.arith.IntSetInterval")(lo, hi)

    @staticmethod
    def single_point(value: Any) -> "IntSet":
        v = _expr(value, "IntSet.single_point")
        return ffi_func("tessel.arith.IntSetInterval")(v, v)

    @staticmethod
    def from_range(r: Range) -> "IntSet":
        """``[r.min, r.min + r.extent - 1]``."""
        if not isinstance(r, Range):
            raise TypeError(f"IntSet.from_range: expected a Range, got {type(r).__name__}")
        return ffi_func("tessel.arith.IntSetFromRange")(r)

    @staticmethod
    def everything() -> "IntSet":
        return ffi_func("tessel.arith.IntSetInterval")(None, None)

    def is_everything(self) -> bool:
        return self.min_value is None and self.max_value is None

    def is_single_point(self) -> bool:
        return bool(ffi_func("tessel.arith.IntSetIsSinglePoint")(self))

    def __repr__(self) -> str:
        lo = "-inf" if self.min_value is None else str(self.min_value)
        hi = "+inf" if self.max_value is None else str(self.max_value)
        return f"IntSet[{lo}, {hi}]"

    __str__ = __repr__


def _expr(value: Any, what: str, dtype: Any = None) -> PrimExpr:
    """``value`` as an expression: PrimExprs pass, Python ints/bools become constants (of
    ``dtype`` when given). Floats and strings are not integer expressions: TypeError."""
    if isinstance(value, PrimExpr):
        return value
    if isinstance(value, bool):
        return const(value)
    if isinstance(value, int):
        try:
            return const(value, dtype)
        except Exception as err:  # the C++ IntImm rejects values outside the dtype
            raise ValueError(f"{what}: {value} does not fit in {dtype or 'int32'}: {err}") from None
    raise TypeError(f"{what}: expected a PrimExpr or a Python int, got {type(value).__name__}")


def _var(var: Any, what: str) -> Var:
    if not isinstance(var, Var):
        raise TypeError(f"{what}: expected a tessel.ir.Var, got {type(var).__name__}")
    return var


def _dom(dom_map: Optional[Mapping[Any, Any]], what: str) -> dict:
    """dom_map checked: Var keys, Range or IntSet values (a (min, extent) pair is not accepted, as
    it would be ambiguous with TVM's (min, max))."""
    if dom_map is None:
        return {}
    if not isinstance(dom_map, Mapping):
        raise TypeError(f"{what}: dom_map must be a dict of Var -> Range/IntSet, "
                        f"got {type(dom_map).__name__}")
    out = {}
    for k, v in dom_map.items():
        _var(k, f"{what} dom_map key")
        if not isinstance(v, (Range, IntSet)):
            raise TypeError(f"{what}: the domain of {k.name_hint} must be a Range or an IntSet, "
                            f"got {type(v).__name__}")
        out[k] = v
    return out


def eval_set(expr: Any, dom_map: Mapping[Var, Any]) -> IntSet:
    """The IntSet of ``expr`` while each variable of ``dom_map`` ranges over its Range/IntSet,
    with a fresh analyzer."""
    return ffi_func("tessel.arith.EvalSet")(_expr(expr, "eval_set"), _dom(dom_map, "eval_set"))


class ConstraintScope:
    """``with analyzer.constraint_scope(cond):`` -- ``cond`` is a fact inside the block. The
    scope is entered at ``__enter__`` and left at ``__exit__`` (also when the block raises)."""

    def __init__(self, analyzer: "Analyzer", cond: PrimExpr) -> None:
        self._analyzer = analyzer
        self._cond = cond
        self._exit = None
        self._used = False

    def __enter__(self) -> "ConstraintScope":
        if self._used:
            raise RuntimeError("a ConstraintScope can be entered only once; "
                               "call analyzer.constraint_scope(cond) again")
        self._used = True
        self._exit = self._analyzer._handle.enter_constraint_scope(self._cond)
        return self

    def __exit__(self, *exc: Any) -> None:
        # Leaving twice does nothing; leaving an outer scope before an inner one is a ValueError
        # (and the scope stays open, so it can still be left in the right order).
        if self._exit is not None:
            self._exit()
            self._exit = None


# The analyzer's walks raise this (kind "RecursionError") for an expression nested deeper than
# their limit (docs/arith.md, "Limits").
tvm_ffi.register_error("RecursionError", RecursionError)

# Looked up once: these two are the per-query calls of a compiler's analyzer.
_SIMPLIFY = ffi_func("tessel.arith.AnalyzerSimplify")
_CAN_PROVE = ffi_func("tessel.arith.AnalyzerCanProve")


class Analyzer:
    """Bindings, constraint facts and every integer question about expressions (mirrors
    ``tvm.arith.Analyzer``). Each Analyzer has its own state; ``clone()`` copies it deeply.

    ``assume_no_overflow``: the overflow semantics of every answer (docs/arith.md, "Two overflow
    semantics"). False (the default): integer ``+ - *`` wrap modulo 2^bits, as the IR defines
    them. True: ``+ - * // %`` of signed integers of 32 bits and wider are the mathematical
    operations (no wrap-around), as TVM treats them; narrower and unsigned integers and casts
    still wrap. Answers in that mode hold wherever the input does not overflow, and can be wrong
    for a program that does."""

    def __init__(self, _handle: Any = None, *, assume_no_overflow: bool = False) -> None:
        if not isinstance(assume_no_overflow, bool):
            raise TypeError(
                "Analyzer: assume_no_overflow must be a bool, got "
                f"{type(assume_no_overflow).__name__}"
            )
        self._handle = _handle if _handle is not None else ffi_func("tessel.arith.CreateAnalyzer")()
        if assume_no_overflow:
            self._handle.set_assume_no_overflow(True)

    @property
    def assume_no_overflow(self) -> bool:
        """Whether this analyzer treats signed 32/64-bit arithmetic as mathematical (no wrap)."""
        return bool(self._handle.assume_no_overflow())

    # ---- simplification ----
    def simplify(self, expr: Any, steps: int = 2) -> PrimExpr:
        """Folds constants and known values, then runs the rewrite and canonical simplifiers
        (those in this build) for up to ``steps`` rounds. ``expr``: a PrimExpr or a Python int
        (an int32 constant); ``steps`` an int >= 0 (the C++ side checks both: a check here cost
        more than simplifying a small expression)."""
        return _SIMPLIFY(self._handle, expr, steps)

    def rewrite_simplify(self, expr: Any) -> PrimExpr:
        """Only the rewrite-rule simplifier (the expression unchanged if the build has none)."""
        return self._handle.rewrite_simplify(_expr(expr, "rewrite_simplify"))

    def canonical_simplify(self, expr: Any) -> PrimExpr:
        """Only the canonical (sum-of-products) simplifier (unchanged if the build has none)."""
        return self._handle.canonical_simplify(_expr(expr, "canonical_simplify"))

    # ---- proofs ----
    def can_prove(self, cond: Any, strength: str = "default") -> bool:
        """Whether the bool expression ``cond`` holds for every value the bindings and facts
        allow. ``strength`` is "default" or "symbolic_bound". False means "not proved"."""
        return _CAN_PROVE(self._handle, cond, strength)

    def can_prove_equal(self, lhs: Any, rhs: Any) -> bool:
        a, b = _expr(lhs, "can_prove_equal lhs"), _expr(rhs, "can_prove_equal rhs")
        if isinstance(lhs, int) and not isinstance(rhs, int):
            a = _expr(lhs, "can_prove_equal lhs", rhs.dtype)
        elif isinstance(rhs, int) and not isinstance(lhs, int):
            b = _expr(rhs, "can_prove_equal rhs", lhs.dtype)
        return bool(self._handle.can_prove_equal(a, b))

    def can_prove_greater_equal(self, expr: Any, lower_bound: int) -> bool:
        return bool(self._handle.can_prove_greater_equal(
            _expr(expr, "can_prove_greater_equal"), _int64(lower_bound, "can_prove_greater_equal")))

    def can_prove_less(self, expr: Any, upper_bound: int) -> bool:
        return bool(self._handle.can_prove_less(
            _expr(expr, "can_prove_less"), _int64(upper_bound, "can_prove_less")))

    # ---- analyses ----
    def const_int_bound(self, expr: Any) -> ConstIntBound:
        return self._handle.const_int_bound(_expr(expr, "const_int_bound"))

    def modular_set(self, expr: Any) -> ModularSet:
        return self._handle.modular_set(_expr(expr, "modular_set"))

    def int_set(self, expr: Any, dom_map: Optional[Mapping[Var, Any]] = None) -> IntSet:
        """The IntSet of ``expr`` while each variable of ``dom_map`` ranges over its Range or
        IntSet (other variables keep their bindings and facts)."""
        return self._handle.int_set(_expr(expr, "int_set"), _dom(dom_map, "int_set"))

    # ---- state ----
    def bind(self, var: Var, expr: Any, allow_override: bool = False) -> None:
        """``var`` ranges over a Range, or equals an expression (a Python int takes var's dtype).
        Re-binding to something different is a ValueError unless ``allow_override``."""
        _var(var, "bind")
        if isinstance(expr, Range):
            value: Any = expr
        else:
            dtype = var.dtype if isinstance(expr, int) else None
            value = _expr(expr, f"bind {var.name_hint}", dtype)
        self._handle.bind(var, value, bool(allow_override))

    def update(self, var: Var, info: Any, override: bool = False) -> None:
        """Tells one sub-analyzer a fact about ``var``: a ConstIntBound or a ModularSet."""
        _var(var, "update")
        if not isinstance(info, (ConstIntBound, ModularSet)):
            raise TypeError(f"update: info must be a ConstIntBound or a ModularSet, "
                            f"got {type(info).__name__}")
        self._handle.update(var, info, bool(override))

    def constraint_scope(self, cond: Any) -> ConstraintScope:
        """A context manager that makes the bool expression ``cond`` a fact inside its block."""
        c = _expr(cond, "constraint_scope")
        if not (c.dtype.type_code == 1 and c.dtype.bits == 1 and c.dtype.lanes == 1):
            raise TypeError(f"constraint_scope: the condition must be a bool expression, "
                            f"got {c.dtype}: {c}")
        return ConstraintScope(self, c)

    def clone(self) -> "Analyzer":
        """A deep copy: bindings, facts (a clone made inside a scope keeps that scope's facts for
        good) and every extension's state. The two analyzers are independent afterwards."""
        return Analyzer(self._handle.clone())

    # ---- the Z3 prover (docs/arith.md, "The Z3 prover") ----
    def get_smtlib2(self, cond: Any) -> str:
        """A self-contained SMT-LIB2 script for ``cond`` under this analyzer's bindings and facts
        (the negated condition is asserted last: ``unsat`` means it holds). ValueError in a build
        without Z3."""
        return str(ffi_func("tessel.arith.Z3GetSMTLIB2")(self._handle, _expr(cond, "get_smtlib2")))

    def z3_stats(self) -> dict:
        """``queries``, ``cache_hits``, ``proved``, ``refuted``, ``unknown`` (of which
        ``resource_limit``: Z3 spent the rlimit) and ``seconds`` of
        this analyzer's Z3 prover, and the proof attempts answered before Z3: ``skipped`` (out of
        its reach: unknown) and ``refuted_cheaply`` (a candidate point, evaluated exactly,
        falsifies the condition); neither counts in ``queries``."""
        return dict(ffi_func("tessel.arith.Z3Stats")(self._handle))

    def set_z3_rlimit(self, rlimit: int) -> None:
        """The deterministic Z3 resource limit of each later query (a positive int)."""
        if isinstance(rlimit, bool) or not isinstance(rlimit, int):
            raise TypeError(f"set_z3_rlimit: expected an int, got {type(rlimit).__name__}")
        ffi_func("tessel.arith.Z3SetRLimit")(self._handle, _int64(rlimit, "set_z3_rlimit"))

    def z3_rlimit(self) -> int:
        return int(ffi_func("tessel.arith.Z3RLimit")(self._handle))

    def z3_counterexample(self, cond: Any) -> Optional[dict]:
        """``{Var: int}`` that makes ``cond`` false while the bindings and facts hold, when Z3
        refutes ``cond``; else None (proved, unknown, or a build without Z3)."""
        cx = ffi_func("tessel.arith.Z3Counterexample")(self._handle,
                                                       _expr(cond, "z3_counterexample"))
        if cx is None:
            return None
        return {pair[0]: int(str(pair[1])) for pair in cx}


def z3_available() -> bool:
    """Whether this build of tessel has the Z3 prover."""
    return bool(ffi_func("tessel.arith.Z3Available")())


def _int64(v: Any, what: str) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        raise TypeError(f"{what}: the bound must be an int, got {type(v).__name__}")
    if not ConstIntBound.NEG_INF <= v <= ConstIntBound.POS_INF:
        raise ValueError(f"{what}: {v} does not fit in int64")
    return v


# ---- the iterator-map detector (include/tessel/arith/iter_map.h) ----

def _iter_dtype(source: Any) -> str:
    return str(source.dtype)


@tvm_ffi.register_object("tessel.arith.IterMark")
class IterMark(Node):
    """An iterator over ``[0, extent)``; ``source`` is a Var (or ``var - min``) or an
    IterSumExpr of splits of other marks (a fused iterator). Marks compare by identity."""

    def __repr__(self) -> str:
        return f"IterMark({normalize_iter_map_to_expr(self)}, extent={self.extent})"

    __str__ = __repr__

    def __init__(self, source: Any, extent: Any) -> None:
        self.__init_handle_by_constructor__(
            ffi_func("tessel.arith.IterMark"), source,
            _expr(extent, "IterMark extent", _iter_dtype(source)))


@tvm_ffi.register_object("tessel.arith.IterSplitExpr")
class IterSplitExpr(Node):
    """``floormod(floordiv(source, lower_factor), extent) * scale`` of an IterMark."""

    def __repr__(self) -> str:
        return f"IterSplitExpr({normalize_iter_map_to_expr(self)})"

    __str__ = __repr__

    def __init__(self, source: IterMark, lower_factor: Any = 1, extent: Any = None,
                 scale: Any = 1) -> None:
        t = _iter_dtype(source.source)
        extent = source.extent if extent is None else extent
        self.__init_handle_by_constructor__(
            ffi_func("tessel.arith.IterSplitExpr"), source,
            _expr(lower_factor, "IterSplitExpr lower_factor", t),
            _expr(extent, "IterSplitExpr extent", t), _expr(scale, "IterSplitExpr scale", t))


@tvm_ffi.register_object("tessel.arith.IterSumExpr")
class IterSumExpr(Node):
    """``sum(args) + base``."""

    def __repr__(self) -> str:
        return f"IterSumExpr({normalize_iter_map_to_expr(self)})"

    __str__ = __repr__

    def __init__(self, args: Sequence[IterSplitExpr], base: Any = 0) -> None:
        t = str(args[0].dtype) if args and not isinstance(base, PrimExpr) else None
        self.__init_handle_by_constructor__(
            ffi_func("tessel.arith.IterSumExpr"), list(args), _expr(base, "IterSumExpr base", t))


@tvm_ffi.register_object("tessel.arith.IterMapResult")
class IterMapResult(Node):
    """``indices`` (one IterSumExpr per index; empty when detection failed), ``errors`` (why
    it failed) and ``padding_predicate`` (true at the padded points, ``False`` when none)."""


_CHECK_LEVELS = ("bijective", "surjective", "no_check")


def _iter_map_args(indices: Sequence[Any], input_iters: Mapping[Var, Range], predicate: Any,
                   check_level: str, analyzer: Optional["Analyzer"], what: str) -> tuple:
    if check_level not in _CHECK_LEVELS:
        raise ValueError(f"{what}: check_level must be one of {_CHECK_LEVELS}, got {check_level!r}")
    idx = [_expr(e, f"{what} index") for e in indices]
    iters = {}
    for k, v in input_iters.items():
        _var(k, f"{what} input_iters key")
        if not isinstance(v, Range):
            raise TypeError(f"{what}: the range of {k.name_hint} must be a Range, "
                            f"got {type(v).__name__}")
        iters[k] = v
    pred = _expr(predicate, f"{what} predicate")
    handle = analyzer._handle if analyzer is not None else None
    return idx, iters, pred, check_level, handle


def detect_iter_map(indices: Sequence[Any], input_iters: Mapping[Var, Range],
                    predicate: Any = True, check_level: str = "surjective",
                    simplify_trivial_iterators: bool = True,
                    analyzer: Optional["Analyzer"] = None) -> IterMapResult:
    """Whether ``indices`` are a quasi-affine map of the iterators ``input_iters`` (Var ->
    Range), each written as one split of a (fused) iterator plus a base; ``check_level``
    "bijective", "surjective" or "no_check". ``analyzer`` supplies facts about symbolic values
    (one made with ``assume_no_overflow=True`` reasons as TVM does; the default refuses what may
    overflow its dtype)."""
    idx, iters, pred, level, handle = _iter_map_args(indices, input_iters, predicate,
                                                     check_level, analyzer, "detect_iter_map")
    return ffi_func("tessel.arith.DetectIterMap")(idx, iters, pred, level,
                                                  bool(simplify_trivial_iterators), handle)


def iter_map_simplify(indices: Sequence[Any], input_iters: Mapping[Var, Range],
                      predicate: Any = True, check_level: str = "surjective",
                      simplify_trivial_iterators: bool = True,
                      analyzer: Optional["Analyzer"] = None) -> list:
    """``indices`` rewritten from their detected iterator map (unchanged where detection
    fails), as schedules re-simplify block bindings after split and fuse."""
    idx, iters, pred, level, handle = _iter_map_args(indices, input_iters, predicate,
                                                     check_level, analyzer, "iter_map_simplify")
    return list(ffi_func("tessel.arith.IterMapSimplify")(idx, iters, pred, level,
                                                         bool(simplify_trivial_iterators), handle))


def normalize_iter_map_to_expr(expr: Any) -> PrimExpr:
    """An IterSumExpr / IterSplitExpr / IterMark as an ordinary expression."""
    return ffi_func("tessel.arith.NormalizeIterMapToExpr")(expr)
