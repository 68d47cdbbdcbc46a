"""The autotuner's timing records: one small JSON file per (config's specialized IR, target,
config, key values, device) under ``<jit cache>/tune/``, so a new process measures only what it
has not measured before, and adding a config measures only that config.

A record holds the measured time (seconds, median of the repetitions) or the failure of a config
(stage and error). A failure is reused only while the compile key (IR + target + compiler +
libtessel) is the same, since a new compiler or library may fix it; a time is reused for the same
IR, target and device. ``export_records`` / ``import_records`` move records between machines or
ranks as one JSON file.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import time
from pathlib import Path
from typing import Any, Optional, Sequence

from . import cache as _cache

FILE_FORMAT = "tessel_autotune_records"


def _folder() -> Path:
    return _cache.cache_dir() / "tune"


def canonical_config(config: dict) -> str:
    return json.dumps({k: config[k] for k in sorted(config)}, sort_keys=True, default=repr)


def record_key(ir_hash: str, target: str, config: dict, key_values: Sequence[Any],
               device: str) -> str:
    blob = json.dumps([ir_hash, target, canonical_config(config), [repr(v) for v in key_values],
                       device])
    return hashlib.sha256(blob.encode()).hexdigest()


def load(rkey: str) -> Optional[dict]:
    try:
        rec = json.loads((_folder() / (rkey + ".json")).read_text())
    except (OSError, ValueError):
        return None
    return rec if rec.get("rkey") == rkey else None


def store(rkey: str, record: dict) -> None:
    record = dict(record, rkey=rkey, date=time.strftime("%Y-%m-%dT%H:%M:%S"))
    try:
        _cache.write_atomic(_folder() / (rkey + ".json"),
                            json.dumps(record, indent=1, sort_keys=True, default=repr).encode())
    except OSError:
        pass  # an unwritable cache only costs a re-measurement next time


def all_records(name: Optional[str] = None) -> list:
    out = []
    folder = _folder()
    if not folder.is_dir():
        return out
    for path in sorted(folder.glob("*.json")):
        try:
            rec = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if name is None or rec.get("kernel") == name:
            out.append(rec)
    return out


def export_records(path: Any, name: Optional[str] = None) -> int:
    """Writes every record (of kernel ``name`` when given) to the JSON file ``path``; returns
    how many."""
    recs = all_records(name)
    data = {FILE_FORMAT: 1, "records": recs}
    _cache.write_atomic(Path(os.fspath(path)), json.dumps(data, indent=1, default=repr).encode())
    return len(recs)


def import_records(path: Any) -> int:
    """Stores the records of a file written by ``export_records``; returns how many."""
    data = json.loads(Path(os.fspath(path)).read_text())
    if data.get(FILE_FORMAT) != 1:
        raise ValueError(f"{path}: not a tessel autotune records file")
    n = 0
    for rec in data["records"]:
        rkey = rec.get("rkey")
        if isinstance(rkey, str) and len(rkey) == 64:
            store(rkey, {k: v for k, v in rec.items() if k not in ("rkey", "date")})
            n += 1
    return n


_cpu_name: Optional[str] = None


def cpu_name() -> str:
    global _cpu_name
    if _cpu_name is None:
        model = platform.processor() or platform.machine()
        try:
            with open("/proc/cpuinfo") as f:
                for line in f:
                    if line.startswith("model name"):
                        model = line.split(":", 1)[1].strip()
                        break
        except OSError:
            pass
        _cpu_name = f"cpu: {model} x{os.cpu_count()}"
    return _cpu_name


def device_name(args: Sequence[Any]) -> str:
    """The device the arguments live on, by name: a GPU's name for torch CUDA tensors, else the
    CPU's model and thread count."""
    for a in args:
        if type(a).__module__.startswith("torch") and getattr(a, "is_cuda", False):
            import torch  # noqa: PLC0415

            return "cuda: " + torch.cuda.get_device_name(a.device)
    return cpu_name()
