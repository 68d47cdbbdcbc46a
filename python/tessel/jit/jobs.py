"""The autotuner's compile job: plain data in (the specialized IR as text, the target, the disk
key), plain data out, so any ``concurrent.futures.Executor`` can run it: threads (tvm-ffi
releases the GIL during calls into libtessel, so parsing, lowering, code generation and the C
compiler run in parallel), processes, or a dask cluster. The job fills the shared disk cache;
the parent then loads the library from there."""

from __future__ import annotations

import os
import time
from typing import Any


def make_job(ir_text: str, name: str, target: str, extra_flags: list, key: str,
             outputs: list, params: dict) -> dict:
    return {"ir_text": ir_text, "name": name, "target": target, "extra_flags": list(extra_flags),
            "key": key, "outputs": list(outputs), "params": params,
            "cache_env": os.environ.get("TESSEL_CACHE_DIR"),
            "xdg_env": os.environ.get("XDG_CACHE_HOME")}


def compile_job(job: dict) -> dict:
    """Builds ``job`` into the disk cache (nothing when its entry is there already). Returns
    {"ok", "seconds", "error" (type and message, when not ok), "pid"}."""
    start = time.perf_counter()
    # A worker process started elsewhere uses the parent's cache folder.
    for var, value in (("TESSEL_CACHE_DIR", job.get("cache_env")),
                       ("XDG_CACHE_HOME", job.get("xdg_env"))):
        if value is not None and os.environ.get(var) != value:
            os.environ[var] = value
    try:
        from tessel.jit import cache as _cache  # noqa: PLC0415
        from tessel.jit.kernel import build_entry  # noqa: PLC0415
        from tessel.text import parse  # noqa: PLC0415

        if _cache.read_entry(job["key"]) is None:
            pf = parse(job["ir_text"], f"<{job['name']} specialized>")
            build_entry(pf, job["name"], job["target"], job["outputs"], job["extra_flags"],
                        job["params"], job["key"])
        return {"ok": True, "seconds": time.perf_counter() - start, "pid": os.getpid()}
    except Exception as err:  # noqa: BLE001  (reported in the failure table)
        return {"ok": False, "seconds": time.perf_counter() - start, "pid": os.getpid(),
                "error": f"{type(err).__name__}: {err}"}


def _noop(_: Any = None) -> int:
    return os.getpid()
