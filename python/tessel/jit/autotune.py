"""``@tessel.autotune`` stacked on ``@tessel.jit``: on a call whose key values (named symbolic
dims or scalar args) are new, every config is compiled in parallel and benchmarked as soon as it
is compiled; the fastest is kept for that key and called.

- Compiles go through an executor (default: a thread pool, since tvm-ffi releases the GIL
  while libtessel works; any ``concurrent.futures.Executor`` may be given, e.g. a process pool
  or dask's ``client.get_executor()``). Each job fills the shared disk cache; the parent loads
  the library from there.
- Benchmarks run in the calling thread: ``warmup`` calls, then ``rep`` timed calls (wall clock
  ``perf_counter`` on the CPU, CUDA events for torch CUDA tensors), the median kept. A GPU
  benchmark overlaps the compiles still running; a CPU one waits until no compile is pending,
  since compiles on the same cores would slow whichever config happened to be timed beside them.
  A config whose compile or whose benchmark runs past ``timeout`` seconds fails; so does one
  whose outputs differ from ``reference``'s.
- Times are recorded on disk per config (records.py), so a new process measures only configs
  it has not seen; the closing table lists failed configs with the first line of their error.
"""

from __future__ import annotations

import concurrent.futures as cf
import functools
import os
import statistics
import time
from typing import Any, Callable, Optional, Sequence

import numpy as np

from . import cache as _cache
from . import records as _records
from .args import copy_array, empty, to_numpy
from .jobs import compile_job, make_job
from .kernel import (CompiledKernel, JitFunction, _freeze, build_entry, definer_locals,
                     load_entry)
from .progress import Progress

__all__ = ["Autotuner", "autotune"]


class _Cand:
    __slots__ = ("config", "cvals", "dkey", "pf", "ir_text", "key", "rkey", "state", "stage",
                 "error", "time", "kernel", "submitted")

    def __init__(self, config: dict) -> None:
        self.config = config
        self.state = "new"  # new | compiling | ready | timed | failed
        self.stage = self.error = ""
        self.time: Optional[float] = None
        self.kernel: Optional[CompiledKernel] = None
        self.cvals = self.dkey = self.pf = self.ir_text = self.key = self.rkey = None
        self.submitted = 0.0

    def fail(self, stage: str, error: str) -> None:
        self.state, self.stage, self.error = "failed", stage, error


def _tuple(x: Any) -> tuple:
    return x if isinstance(x, tuple) else (x,)


def _is_cuda(args: Sequence[Any]) -> bool:
    return any(type(a).__module__.startswith("torch") and getattr(a, "is_cuda", False)
               for a in args)


def measure(fn: Callable, args: Sequence[Any], warmup: int, rep: int, timeout: float,
            cuda: bool = False) -> float:
    """Median seconds of ``rep`` calls after ``warmup`` calls; stops early (keeping at least one
    timed call) when ``timeout`` seconds have passed; TimeoutError when the first call alone
    takes longer than that."""
    start = time.perf_counter()
    if cuda:
        import torch  # noqa: PLC0415

        sync = torch.cuda.synchronize
    else:
        sync = None
    t0 = time.perf_counter()
    fn(*args)
    if sync:
        sync()
    first = time.perf_counter() - t0
    if first > timeout:
        raise TimeoutError(f"one call took {first:.2f} s, past the timeout of {timeout} s")
    for _ in range(max(0, warmup - 1)):
        fn(*args)
    times = []
    if cuda:
        import torch  # noqa: PLC0415

        sync()
        for _ in range(max(1, rep)):
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            fn(*args)
            b.record()
            b.synchronize()
            times.append(a.elapsed_time(b) * 1e-3)
            if time.perf_counter() - start > timeout:
                break
    else:
        clock = time.perf_counter_ns
        for _ in range(max(1, rep)):
            t0 = clock()
            fn(*args)
            times.append((clock() - t0) * 1e-9)
            if time.perf_counter() - start > timeout:
                break
    return statistics.median(times)


class Autotuner:
    """What ``@tessel.autotune(...)`` returns. Call it like the jit function."""

    def __init__(self, fn: Any, configs: Sequence[dict], key: Sequence[str] = (),
                 warmup: int = 3, rep: int = 10, timeout: float = 30.0,
                 reference: Optional[Callable] = None, executor: Optional[cf.Executor] = None,
                 workers: Optional[int] = None, rtol: float = 1e-5, atol: float = 1e-6,
                 progress: bool = True, definer: Optional[dict] = None) -> None:
        self.jit = fn if isinstance(fn, JitFunction) else JitFunction(fn, definer=definer)
        self.configs = [dict(c) for c in configs]
        if not self.configs:
            raise ValueError("autotune: configs is empty")
        self.key = [key] if isinstance(key, str) else list(key)
        self.warmup, self.rep, self.timeout = int(warmup), int(rep), float(timeout)
        self.reference, self.executor = reference, executor
        self.workers = workers
        self.rtol, self.atol, self.progress = rtol, atol, progress
        self._best: dict = {}
        #: The last tuning: one dict per config (config, time or stage/error, source).
        self.last_results: list = []
        if hasattr(self.jit, "__wrapped__"):
            functools.update_wrapper(self, self.jit.__wrapped__)

    @property
    def recompile_reasons(self) -> list:
        return self.jit.recompile_reasons

    def best_config(self, *args: Any, **kwargs: Any) -> Optional[dict]:
        """The chosen config for a call with these arguments (None before it was tuned)."""
        hit = self._best.get(self._key_of(args, kwargs))
        return None if hit is None else dict(hit[0])

    def _key_of(self, args: tuple, kwargs: dict) -> tuple:
        if not self.key:
            return ((), _freeze(kwargs))
        sig = self._signature(kwargs)
        for n in self.key:
            if n not in sig.dims:
                raise ValueError(f"autotune key names {n!r}, which is not a dim or scalar "
                                 f"argument of {self.jit.name} (those are {sorted(sig.dims)})")
        return (sig.dim_values(args, self.key), _freeze(kwargs))

    def _signature(self, kwargs: dict) -> Any:
        """The call signature (where the dims are read from), from the first config that
        specializes; a config that does not is left to the tuning's failure table."""
        first_error = None
        for config in self.configs:
            try:
                return self.jit.generic(self.jit.constexpr_values({**kwargs, **config}))[1]
            except Exception as err:  # noqa: BLE001
                first_error = first_error or err
        raise first_error

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        kv = self._key_of(args, kwargs)
        hit = self._best.get(kv)
        if hit is None:
            hit = self._tune(args, kwargs, kv)
            self._best[kv] = hit
        return hit[1](*args)

    # -- tuning
    def _tune(self, args: tuple, kwargs: dict, kv: tuple) -> tuple:
        from ..text import as_text  # noqa: PLC0415

        jit = self.jit
        target = jit.target_str
        device = _records.device_name(args)
        key_text = ", ".join(f"{n}={v}" for n, v in zip(self.key, kv[0]))
        title = f"autotune {jit.name}" + (f"[{key_text}]" if key_text else "")
        cands = [_Cand(c) for c in self.configs]
        prog = Progress(title, len(cands), self.progress)
        for c in cands:
            try:
                c.cvals = jit.constexpr_values({**kwargs, **c.config})
                c.dkey = jit.dims_key(jit.generic(c.cvals)[1], args)
                c.pf = jit.specialized_ir(c.cvals, c.dkey)
                c.ir_text = as_text(c.pf)
            except Exception as err:  # noqa: BLE001
                c.fail("specialize", f"{type(err).__name__}: {err}")
                prog.failed += 1
                prog.event(f"{c.config} failed to specialize", advance=True)
                continue
            c.key = _cache.cache_key(c.ir_text, target, jit.extra_flags)
            c.rkey = _records.record_key(_cache.ir_hash(c.ir_text), target, c.config,
                                         list(kv[0]) + [repr(kv[1])], device)
            rec = _records.load(c.rkey)
            if rec is not None and rec.get("time") is not None:
                c.state, c.time = "timed", float(rec["time"])
                prog.from_records += 1
                self._better(prog, c)
                prog.event(f"{c.config} from records", advance=True)
            elif rec is not None and rec.get("stamp") == c.key:
                c.fail(rec.get("stage", "compile"), rec.get("error", ""))
                prog.failed += 1
                prog.event(f"{c.config} failed before (records)", advance=True)

        todo = [c for c in cands if c.state == "new"]
        self._compile_and_bench(todo, args, prog, device)

        failures = [(c.config, c.stage, c.error) for c in cands if c.state == "failed"]
        self.last_results = [
            {"config": c.config, "time": c.time, "stage": c.stage or None,
             "error": c.error or None,
             "source": ("failed" if c.state == "failed" else
                        "measured" if c in todo else "records")} for c in cands]
        prog.close(failures)
        timed = [c for c in cands if c.state == "timed"]
        measured = sum(1 for c in todo if c.state == "timed")
        if not timed:
            from .progress import failure_table  # noqa: PLC0415

            raise RuntimeError("autotune: no config worked\n" +
                               failure_table(title, failures, len(cands)))
        best = min(timed, key=lambda c: c.time)
        kernel = best.kernel
        how = "measured" if best in todo else "from records"
        if kernel is None:
            params = dict(best.cvals, **dict(best.dkey))
            kernel = load_entry(best.key, best.pf, jit.name, target, jit.out, params)
            if kernel is None:
                kernel = build_entry(best.pf, jit.name, target, jit.out, jit.extra_flags,
                                     params, best.key)
        jit.register(best.cvals, best.dkey, kernel,
                     f"autotune {key_text or 'first call'}: best of {len(cands)} configs "
                     f"{best.config} ({how}; {measured} measured, {len(failures)} failed)")
        return best.config, kernel

    def _better(self, prog: Progress, c: _Cand) -> None:
        if prog.best is None or c.time < prog.best[0]:
            prog.best = (c.time, c.config)

    def _compile_and_bench(self, todo: list, args: tuple, prog: Progress, device: str) -> None:
        jit = self.jit
        target = jit.target_str
        ready = []
        waiting = []
        for c in todo:
            if _cache.read_entry(c.key) is not None:
                c.state = "ready"
                prog.compiled += 1
                ready.append(c)
            else:
                waiting.append(c)
        own = None
        executor = self.executor
        if waiting and executor is None:
            n = self.workers or os.cpu_count() or 1
            own = executor = cf.ThreadPoolExecutor(max_workers=n,
                                                   thread_name_prefix="tessel-autotune")
        limit = self.workers or getattr(executor, "_max_workers", None) or os.cpu_count() or 1
        pending: dict = {}
        expected = None  # lazily computed reference outputs
        overlap = _is_cuda(args)
        try:
            while waiting or pending or ready:
                while waiting and len(pending) < limit:
                    c = waiting.pop(0)
                    params = dict(c.cvals, **dict(c.dkey))
                    job = make_job(c.ir_text, jit.name, target, jit.extra_flags, c.key,
                                   jit.out, _jsonable(params))
                    c.state, c.submitted = "compiling", time.perf_counter()
                    pending[executor.submit(compile_job, job)] = c
                if ready and (overlap or not pending):
                    c = ready.pop(0)
                    expected = self._bench(c, args, prog, device, expected)
                    continue
                done, _ = cf.wait(list(pending), timeout=0.05, return_when=cf.FIRST_COMPLETED)
                for f in done:
                    c = pending.pop(f)
                    try:
                        res = f.result()
                    except Exception as err:  # noqa: BLE001  (the executor failed the job)
                        res = {"ok": False, "error": f"{type(err).__name__}: {err}",
                               "executor": True}
                    if res.get("ok"):
                        c.state = "ready"
                        prog.compiled += 1
                        prog.event(f"{c.config} compiled in {res.get('seconds', 0):.2f} s")
                        ready.append(c)
                    else:
                        c.fail("compile", res.get("error", "unknown error"))
                        prog.failed += 1
                        if not res.get("executor"):  # the compiler's verdict, not the pool's
                            self._record_failure(c, device)
                        prog.event(f"{c.config} failed to compile", advance=True)
                now = time.perf_counter()
                for f, c in list(pending.items()):
                    if now - c.submitted > self.timeout:
                        f.cancel()
                        del pending[f]
                        c.fail("compile", f"TimeoutError: compile took more than {self.timeout} s")
                        prog.failed += 1
                        prog.event(f"{c.config} compile timed out", advance=True)
        finally:
            if own is not None:
                own.shutdown(wait=False, cancel_futures=True)

    def _record_failure(self, c: _Cand, device: str) -> None:
        if c.rkey is not None and c.key is not None:
            _records.store(c.rkey, {"kernel": self.jit.name, "config": c.config,
                                    "device": device, "stage": c.stage, "error": c.error,
                                    "stamp": c.key, "time": None})

    def _bench(self, c: _Cand, args: tuple, prog: Progress, device: str, expected: Any) -> Any:
        jit = self.jit
        params = dict(c.cvals, **dict(c.dkey))
        kernel = load_entry(c.key, c.pf, jit.name, jit.target_str, jit.out, params)
        if kernel is None:
            c.fail("load", f"the disk cache has no entry {c.key[:12]} after compiling")
            prog.failed += 1
            prog.event(f"{c.config} failed to load", advance=True)
            return expected
        c.kernel = kernel
        sig = kernel.signature
        try:
            if self.reference is not None:
                expected = self._check(kernel, args, expected)
            outs = [empty(s, sig.params[i].dtype, _first_array(args))
                    for s, i in zip(sig.output_shapes(args) if sig.outputs else [], sig.outputs)]
            full = []
            it_in, it_out = iter(args), iter(outs)
            for i in range(len(sig.params)):
                full.append(next(it_out) if i in sig.outputs else next(it_in))
            c.time = measure(kernel.function, full, self.warmup, self.rep, self.timeout,
                             _is_cuda(args))
        except Exception as err:  # noqa: BLE001
            stage = "check" if isinstance(err, _Mismatch) else "benchmark"
            c.fail(stage, f"{type(err).__name__}: {err}")
            prog.failed += 1
            if not isinstance(err, TimeoutError):  # a load may make the next run faster
                self._record_failure(c, device)
            prog.event(f"{c.config} failed ({stage})", advance=True)
            return expected
        c.state = "timed"
        prog.benchmarked += 1
        self._better(prog, c)
        _records.store(c.rkey, {"kernel": jit.name, "config": c.config, "device": device,
                                "time": c.time, "rep": self.rep, "target": jit.target_str,
                                "stamp": c.key})
        prog.event(f"{c.config} benchmarked", advance=True)
        return expected

    def _check(self, kernel: CompiledKernel, args: tuple, expected: Any) -> Any:
        sig = kernel.signature
        if sig.outputs:
            if expected is None:
                expected = [to_numpy(x) for x in _tuple(self.reference(*args))]
            got = [to_numpy(x) for x in _tuple(kernel(*args))]
            names = [sig.params[i].name for i in sig.outputs]
        else:
            if expected is None:
                copies = [copy_array(a) for a in args]
                self.reference(*copies)
                expected = [to_numpy(x) for x in copies]
            copies = [copy_array(a) for a in args]
            kernel(*copies)
            got = [to_numpy(x) for x in copies]
            names = [sig.params[i].name for i in sig.inputs]
        for name, e, g in zip(names, expected, got):
            if e is None or g is None:
                continue
            if e.shape != g.shape or not np.allclose(g, e, rtol=self.rtol, atol=self.atol):
                diff = (np.max(np.abs(g.astype(np.float64) - e.astype(np.float64)))
                        if e.shape == g.shape else f"shape {g.shape} vs {e.shape}")
                raise _Mismatch(f"{name} differs from the reference (max abs diff {diff})")
        return expected

    # -- records
    def export_records(self, path: Any) -> int:
        """Writes this kernel's timing records to the JSON file ``path``."""
        return _records.export_records(path, self.jit.name)

    def __repr__(self) -> str:
        return f"<tessel.autotune {self.jit.name}: {len(self.configs)} configs, key={self.key}>"


class _Mismatch(Exception):
    pass


def _first_array(args: tuple) -> Any:
    return next((a for a in args if hasattr(a, "__dlpack__") or hasattr(a, "shape")), None)


def _jsonable(d: dict) -> dict:
    return {k: v if isinstance(v, (int, float, str, bool)) or v is None else repr(v)
            for k, v in d.items()}


def autotune(configs: Sequence[dict], key: Sequence[str] = (), warmup: int = 3, rep: int = 10,
             timeout: float = 30.0, reference: Optional[Callable] = None,
             executor: Optional[cf.Executor] = None, workers: Optional[int] = None,
             rtol: float = 1e-5, atol: float = 1e-6, progress: bool = True) -> Callable:
    """``@tessel.autotune(configs=[{...}, ...], key=["n"], ...)`` above ``@tessel.jit``."""

    definer = definer_locals(1)

    def wrap(fn: Any) -> Autotuner:
        return Autotuner(fn, configs, key, warmup, rep, timeout, reference, executor, workers,
                         rtol, atol, progress, definer)

    return wrap


autotune.export_records = _records.export_records
autotune.import_records = _records.import_records
