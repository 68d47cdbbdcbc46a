"""Schedules: transform a block program step by step, each step checked, every step recorded in a
trace that prints as Python, saves as JSON and replays (the C++ core is include/tessel/schedule/).

    sch = tessel.Schedule(matmul)             # a PrimFunc, an IRModule, or text
    b = sch.get_block("C")
    i, j, k = sch.get_loops(b)
    i0, i1 = sch.split(i, [None, 32])
    sch.reorder(i0, j, i1)
    sch.parallel(i0)
    print(sch.trace.as_python())
    tessel.build(sch.mod)

Names follow TVM's ``s_tir.Schedule`` (``get_sblock`` is accepted for ``get_block``). A failed
precondition raises :class:`ScheduleError` with the function printed and the offending line
marked.
"""

from __future__ import annotations

from typing import Any, List, Optional, Sequence

import tvm_ffi

from . import _lib  # noqa: F401  (registers the globals)
from .ir.function import IRModule, PrimFunc


@tvm_ffi.error.register_error("ScheduleError")
class ScheduleError(ValueError):
    """A schedule primitive's precondition failed (or could not be proved)."""


def _f(name: str):
    return tvm_ffi.get_global_func("tessel.schedule." + name)


class BlockRV:
    """A block of the schedule's module."""

    def __init__(self, rv: Any) -> None:
        self._rv = rv

    def __repr__(self) -> str:
        return f"BlockRV({_f('RVName')(self._rv)})"


class LoopRV:
    """A loop of the schedule's module."""

    def __init__(self, rv: Any) -> None:
        self._rv = rv

    def __repr__(self) -> str:
        return f"LoopRV({_f('RVName')(self._rv)})"


class ExprRV:
    """A sampled integer (``sch.get(v)`` reads it); usable as a split factor."""

    def __init__(self, rv: Any) -> None:
        self._rv = rv

    def __repr__(self) -> str:
        return f"ExprRV({_f('RVName')(self._rv)})"


def _raw(x: Any) -> Any:
    if isinstance(x, (BlockRV, LoopRV, ExprRV)):
        return x._rv
    raise TypeError(f"expected a BlockRV, LoopRV or ExprRV, got {type(x).__name__}")


def _as_expr(x: Any) -> Any:
    """A Python int or float as an IR constant (int32 / float32); an expression as it is."""
    from .ir.expr import FloatImm, IntImm

    if isinstance(x, bool):
        raise TypeError("transform_layout: a bool is not an index or a pad value")
    if isinstance(x, int):
        return IntImm("int32", x)
    if isinstance(x, float):
        return FloatImm("float32", x)
    return x


def _as_module(mod: Any) -> IRModule:
    if isinstance(mod, IRModule):
        return mod
    if isinstance(mod, PrimFunc):
        return IRModule({"main": mod})
    if isinstance(mod, str):
        from .text import parse

        parsed = parse(mod)
        return parsed if isinstance(parsed, IRModule) else IRModule({"main": parsed})
    raise TypeError(f"Schedule: expected an IRModule, a PrimFunc or text, got {type(mod).__name__}")


class Trace:
    """The primitives applied so far."""

    def __init__(self, sch: "Schedule") -> None:
        self._sch = sch

    def as_python(self) -> str:
        """Python that replays the trace on ``sch``, a Schedule of the original module."""
        return str(_f("TraceAsPython")(self._sch._sch))

    def as_json(self) -> str:
        """The trace as versioned JSON (``Schedule.from_json`` replays it)."""
        return str(_f("TraceAsJSON")(self._sch._sch))

    def __str__(self) -> str:
        return self.as_python()


class Schedule:
    """A schedule of a module (see the module docstring)."""

    def __init__(self, mod: Any, seed: int = 1) -> None:
        self._sch = _f("Schedule")(_as_module(mod), int(seed))

    @classmethod
    def from_json(cls, mod: Any, trace_json: str) -> "Schedule":
        """A fresh schedule of ``mod`` with the JSON trace applied."""
        sch = cls.__new__(cls)
        sch._sch = _f("FromJSON")(_as_module(mod), trace_json)
        return sch

    @property
    def mod(self) -> IRModule:
        """The module as scheduled so far."""
        return _f("Mod")(self._sch)

    @property
    def trace(self) -> Trace:
        return Trace(self)

    # ---- lookups ----
    def get_block(self, name: str, func_name: Optional[str] = None) -> BlockRV:
        return BlockRV(_f("GetBlock")(self._sch, name, func_name))

    get_sblock = get_block

    def get_loops(self, block: BlockRV) -> List[LoopRV]:
        return [LoopRV(r) for r in _f("GetLoops")(self._sch, _raw(block))]

    def get_child_blocks(self, block_or_loop: Any) -> List[BlockRV]:
        return [BlockRV(r) for r in _f("GetChildBlocks")(self._sch, _raw(block_or_loop))]

    def get_producers(self, block: BlockRV) -> List[BlockRV]:
        """The blocks of the same scope before ``block`` that write a buffer it reads."""
        return [BlockRV(r) for r in _f("GetProducers")(self._sch, _raw(block))]

    def get_consumers(self, block: BlockRV) -> List[BlockRV]:
        """The blocks of the same scope after ``block`` that read a buffer it writes."""
        return [BlockRV(r) for r in _f("GetConsumers")(self._sch, _raw(block))]

    def block_facts(self, block: BlockRV) -> dict:
        """What the analyzer establishes about ``block``: ``affine_binding``, ``region_cover``
        and ``stage_pipeline``, each "yes", "no" (refuted) or "unknown" (could not be proved
        either way), and ``why_not``. Cached per version of the function; not traced."""
        return {str(k): str(v) for k, v in _f("BlockFacts")(self._sch, _raw(block)).items()}

    @property
    def block_facts_computed(self) -> int:
        """How many times block facts were computed rather than taken from the cache."""
        return int(_f("BlockFactsComputed")(self._sch))

    # ---- loops ----
    def split(self, loop: LoopRV, factors: Sequence[Any]) -> List[LoopRV]:
        fs = [None if f is None or (isinstance(f, int) and f == -1)
              else f._rv if isinstance(f, ExprRV) else f for f in factors]
        return [LoopRV(r) for r in _f("Split")(self._sch, _raw(loop), fs)]

    def fuse(self, *loops: LoopRV) -> LoopRV:
        return LoopRV(_f("Fuse")(self._sch, [_raw(l) for l in loops]))

    def reorder(self, *loops: LoopRV) -> None:
        _f("Reorder")(self._sch, [_raw(l) for l in loops])

    def parallel(self, loop: LoopRV) -> None:
        _f("Parallel")(self._sch, _raw(loop))

    def vectorize(self, loop: LoopRV) -> None:
        _f("Vectorize")(self._sch, _raw(loop))

    def unroll(self, loop: LoopRV) -> None:
        _f("Unroll")(self._sch, _raw(loop))

    def bind(self, loop: LoopRV, thread_axis: str) -> None:
        _f("Bind")(self._sch, _raw(loop), thread_axis)

    # ---- compute location ----
    def compute_inline(self, block: BlockRV) -> None:
        """Inlines a block that computes an intermediate buffer into the blocks that read it."""
        _f("ComputeInline")(self._sch, _raw(block))

    def reverse_compute_inline(self, block: BlockRV) -> None:
        """Inlines a block that only consumes one buffer into that buffer's producer."""
        _f("ReverseComputeInline")(self._sch, _raw(block))

    def compute_at(self, block: BlockRV, loop: LoopRV, preserve_unit_loops: bool = False,
                   index: int = -1) -> None:
        """Moves ``block`` under ``loop``, computing only what the consumers there need."""
        _f("ComputeAt")(self._sch, _raw(block), _raw(loop), bool(preserve_unit_loops), int(index))

    def reverse_compute_at(self, block: BlockRV, loop: LoopRV, preserve_unit_loops: bool = False,
                           index: int = -1) -> None:
        """Moves ``block`` under ``loop`` of its producers, consuming what they wrote there."""
        _f("ReverseComputeAt")(self._sch, _raw(block), _raw(loop), bool(preserve_unit_loops),
                               int(index))

    # ---- caches and buffers ----
    def cache_read(self, block: BlockRV, read_buffer_index: int, storage_scope: str,
                   consumer_blocks: Optional[Sequence[BlockRV]] = None) -> BlockRV:
        """A block copying read buffer ``read_buffer_index`` of ``block`` into ``storage_scope``;
        the readers read the copy. Returns the copy block."""
        consumers = [_raw(b) for b in consumer_blocks] if consumer_blocks else []
        return BlockRV(_f("CacheRead")(self._sch, _raw(block), int(read_buffer_index),
                                       storage_scope, consumers))

    def cache_write(self, block: BlockRV, write_buffer_index: int, storage_scope: str,
                    consumer_blocks: Optional[Sequence[BlockRV]] = None) -> BlockRV:
        """``block`` writes into a buffer of ``storage_scope``; a block after it copies that
        into the original buffer. Returns the copy block."""
        consumers = [_raw(b) for b in consumer_blocks] if consumer_blocks else []
        return BlockRV(_f("CacheWrite")(self._sch, _raw(block), int(write_buffer_index),
                                        storage_scope, consumers))

    def set_scope(self, block: BlockRV, buffer_index: int, storage_scope: str) -> None:
        _f("SetScope")(self._sch, _raw(block), int(buffer_index), storage_scope)

    def storage_align(self, block: BlockRV, buffer_index: int, axis: int, factor: int,
                      offset: int) -> None:
        _f("StorageAlign")(self._sch, _raw(block), int(buffer_index), int(axis), int(factor),
                           int(offset))

    def reindex(self, block: BlockRV, buffer: Any, skip_simplify: bool = False) -> BlockRV:
        """A block copying ``buffer`` (``("read"|"write", index)``) of ``block`` into a buffer
        indexed by the block's iterators. Returns the new block."""
        kind, index = buffer
        return BlockRV(_f("Reindex")(self._sch, _raw(block), str(kind), int(index),
                                     bool(skip_simplify)))

    def transform_layout(self, block: BlockRV, buffer: Any, index_map: Any,
                         pad_value: Any = None) -> None:
        """Relays a buffer of ``block``'s function out by ``index_map`` (old indices -> new
        indices): every access ``buf[idx]`` becomes ``buf[index_map(*idx)]``. ``buffer`` is
        ``("read"|"write", index)`` or the buffer's name; ``index_map`` a callable (called with
        int32 Vars) or its text ``"lambda i, j: (j, i)"``. The map must be one-to-one over the
        buffer's shape; where its image leaves part of the new shape empty, ``pad_value`` (an
        expression, its text, or a number) fills it. A parameter buffer may be relaid (the
        function then takes the new layout) but not padded."""
        kind, index = self._buffer_arg(block, buffer)
        if isinstance(index_map, str):
            index_vars, indices = _f("ParseIndexMap")(index_map)
        elif callable(index_map):
            import inspect

            from .ir.expr import Var

            names = list(inspect.signature(index_map).parameters)
            index_vars = [Var(n, "int32") for n in names]
            out = index_map(*index_vars)
            indices = list(out) if isinstance(out, (tuple, list)) else [out]
        else:
            raise TypeError("transform_layout: index_map must be a callable or its lambda text, "
                            f"got {type(index_map).__name__}")
        indices = [_as_expr(x) for x in indices]
        pad = None
        if pad_value is not None:
            if isinstance(pad_value, str):
                from .text import parse_expr

                pad = parse_expr(pad_value)
            else:
                pad = _as_expr(pad_value)
        _f("TransformLayout")(self._sch, _raw(block), str(kind), int(index), list(index_vars),
                              indices, pad)

    def _buffer_arg(self, block: BlockRV, buffer: Any) -> Any:
        """``("read"|"write", index)``, or a buffer's name looked up among the block's reads,
        then its writes."""
        if isinstance(buffer, str):
            found = _f("BufferIndexOf")(self._sch, _raw(block), buffer)
            return str(found[0]), int(found[1])
        kind, index = buffer
        return str(kind), int(index)

    def blockize(self, target: LoopRV, preserve_unit_iters: bool = True) -> BlockRV:
        """Makes the subtree under ``target`` one block; returns it."""
        return BlockRV(_f("Blockize")(self._sch, _raw(target), bool(preserve_unit_iters)))

    # ---- reductions ----
    def rfactor(self, loop: LoopRV, factor_axis: int) -> BlockRV:
        """Factors the reduction over ``loop`` into a block ``<name>_rf``; returns it."""
        return BlockRV(_f("RFactor")(self._sch, _raw(loop), int(factor_axis)))

    def decompose_reduction(self, block: BlockRV, loop: LoopRV) -> BlockRV:
        """Moves the block's init into a new block ``<name>_init`` right before ``loop``."""
        return BlockRV(_f("DecomposeReduction")(self._sch, _raw(block), _raw(loop)))

    # ---- sampling ----
    def sample_perfect_tile(self, loop: LoopRV, n: int, max_innermost_factor: int = 16,
                            decision: Optional[Sequence[int]] = None) -> List[ExprRV]:
        """``n`` factors of the loop's constant extent, drawn from the schedule's seeded generator
        (or ``decision``); recorded in the trace with the values drawn."""
        d = None if decision is None else [int(x) for x in decision]
        return [ExprRV(r) for r in _f("SamplePerfectTile")(self._sch, _raw(loop), int(n),
                                                           int(max_innermost_factor), d)]

    def sample_categorical(self, candidates: Sequence[int], probs: Sequence[float],
                           decision: Optional[int] = None) -> ExprRV:
        return ExprRV(_f("SampleCategorical")(self._sch, [int(c) for c in candidates],
                                              [float(p) for p in probs], decision))

    def get(self, value: ExprRV) -> int:
        """The integer a sampling primitive drew."""
        return int(_f("Get")(self._sch, _raw(value)))

    # ---- annotations ----
    def annotate(self, block_or_loop: Any, ann_key: str, ann_val: Any) -> None:
        _f("Annotate")(self._sch, _raw(block_or_loop), ann_key, ann_val)

    def unannotate(self, block_or_loop: Any, ann_key: str) -> None:
        _f("Unannotate")(self._sch, _raw(block_or_loop), ann_key)
