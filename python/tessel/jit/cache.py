"""The jit's disk cache: where it lives, what its key is made of, and how entries are written.

Folder: ``$TESSEL_CACHE_DIR/jit`` when TESSEL_CACHE_DIR is set (the C build cache keeps its
``<hash>.so`` / ``<hash>.key`` files at that folder's top level), else
``$XDG_CACHE_HOME/tessel/jit``, else ``~/.cache/tessel/jit``. Inside it:

- ``<key>.so``   the library (``Module.export_library``), loadable by ``tvm_ffi.load_module``;
- ``<key>.src``  its generated source (C, or CUDA C++ for target cuda), for ``.source``;
- ``<key>.json`` what is needed to call it (params, outputs' shapes, target, ...). It is written
  last, so its presence says the entry is complete;
- ``meta/``      memoized identities (libtessel's content hash, the C compiler's ``--version``),
  each keyed by path, size and mtime_ns, so a warm start reads no 50 MB file and runs no compiler;
- ``tune/``      autotuning records (records.py).

The key is the sha256 of the printed IR after parsing (so a changed captured value recompiles),
the target string with its arch, the C compiler's identity (and NVRTC's / nvcc's for cuda), the
content hash of libtessel, tvm-ffi's version and the extra compiler flags. Never the arguments.

Every file is written under a temporary name in the same folder and renamed into place
(``os.replace``), so processes sharing the cache never see a partial file; two processes that
compile the same kernel at once both succeed and leave one valid entry.
"""

from __future__ import annotations

import ctypes
import hashlib
import json
import os
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Optional, Sequence

import tvm_ffi

from .. import _lib

FORMAT_VERSION = 1  # bump when the entry layout or the key's parts change

_memo: dict = {}
_memo_lock = threading.Lock()


def cache_dir() -> Path:
    """The jit cache folder (created on first use)."""
    root = os.environ.get("TESSEL_CACHE_DIR")
    if root:
        path = Path(root) / "jit"
    else:
        xdg = os.environ.get("XDG_CACHE_HOME")
        base = Path(xdg) if xdg else Path.home() / ".cache"
        path = base / "tessel" / "jit"
    return path


def _ensure(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path


def replace_atomic(path: Path, write: Any) -> None:
    """Calls ``write(tmp)`` on a temporary name in ``path``'s folder, then renames it to ``path``
    (readers see the old file or the whole new one); the temporary file is removed on failure."""
    _ensure(path.parent)
    fd, tmp = tempfile.mkstemp(prefix=".tmp-" + path.name + "-", dir=path.parent)
    os.close(fd)
    try:
        write(tmp)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def write_atomic(path: Path, data: bytes) -> None:
    """Writes ``data`` to ``path`` through a temporary file in the same folder and a rename."""
    replace_atomic(path, lambda tmp: Path(tmp).write_bytes(data))


def copy_atomic(src: Any, dst: Path) -> None:
    """Copies the file ``src`` to ``dst`` (temporary name in dst's folder, then a rename)."""

    def write(tmp: str) -> None:
        shutil.copyfile(src, tmp)
        os.chmod(tmp, 0o755)

    replace_atomic(Path(dst), write)


def _stat_key(path: str) -> str:
    st = os.stat(path)
    return f"{os.path.realpath(path)}|{st.st_size}|{st.st_mtime_ns}"


def _memoized(kind: str, stamp: str, compute) -> str:
    """``compute()``, remembered in this process and on disk under meta/ by ``stamp``."""
    folder = cache_dir() / "meta"
    mkey = (kind, stamp, str(folder))
    with _memo_lock:
        if mkey in _memo:
            return _memo[mkey]
    path = folder / (kind + "-" + hashlib.sha256(stamp.encode()).hexdigest()[:32])
    try:
        value = path.read_text()
    except OSError:
        value = compute()
        try:
            write_atomic(path, value.encode())
        except OSError:
            pass  # a read-only cache still works, it only recomputes
    with _memo_lock:
        _memo[mkey] = value
    return value


def library_hash() -> str:
    """sha256 of libtessel's content, memoized by path + size + mtime_ns."""
    path = str(_lib.LIB_PATH)

    def compute() -> str:
        h = hashlib.sha256()
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
        return h.hexdigest()

    return _memoized("libtessel", _stat_key(path), compute)


def _compiler_argv() -> list:
    cc = os.environ.get("TESSEL_CC") or os.environ.get("CC") or "cc"
    return cc.split()


def compiler_identity() -> str:
    """The C compiler command and its ``--version`` output (as the C build cache's key has),
    memoized by each word's resolved path, size and mtime_ns: a warm start runs no compiler."""
    argv = _compiler_argv()
    stamps = []
    for word in argv:
        found = shutil.which(word)
        stamps.append(_stat_key(found) if found else word)
    stamp = "\n".join(argv) + "\n" + "\n".join(stamps)

    def compute() -> str:
        try:
            r = subprocess.run(argv + ["--version"], capture_output=True, text=True, timeout=60)
            out = r.stdout + r.stderr
        except OSError as err:
            out = f"cannot run: {err}"
        return " ".join(argv) + "\n" + out

    return _memoized("cc", stamp, compute)


def cuda_compiler_identity() -> str:
    """NVRTC's version and file (or nvcc's path, size and mtime), as libtessel picks them
    (TESSEL_CUDA_COMPILER, TESSEL_NVRTC_LIBRARY, TESSEL_NVCC)."""
    choice = os.environ.get("TESSEL_CUDA_COMPILER", "")
    if choice != "nvcc":
        names = [os.environ["TESSEL_NVRTC_LIBRARY"]] if os.environ.get("TESSEL_NVRTC_LIBRARY") \
            else ["libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"]
        for name in names:
            try:
                lib = ctypes.CDLL(name)
            except OSError:
                continue
            major, minor = ctypes.c_int(), ctypes.c_int()
            lib.nvrtcVersion(ctypes.byref(major), ctypes.byref(minor))
            return f"nvrtc {major.value}.{minor.value} {name}"
        if choice == "nvrtc":
            return "nvrtc: not found"
    nvcc = os.environ.get("TESSEL_NVCC") or shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    try:
        return "nvcc " + _stat_key(nvcc)
    except OSError:
        return "nvcc: not found"


def key_parts(ir_text: str, target: str, extra_flags: Sequence[str] = ()) -> dict:
    """Everything the disk key is made of (cache_key hashes it)."""
    parts = {
        "format": FORMAT_VERSION,
        "ir": ir_text,
        "target": target,
        "cc": compiler_identity(),
        "libtessel": library_hash(),
        "tvm_ffi": tvm_ffi.__version__,
        "extra_flags": list(extra_flags),
    }
    if target.split()[0] == "cuda":
        parts["cuda_compiler"] = cuda_compiler_identity()
    return parts


def cache_key(ir_text: str, target: str, extra_flags: Sequence[str] = ()) -> str:
    blob = json.dumps(key_parts(ir_text, target, extra_flags), sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()


def ir_hash(ir_text: str) -> str:
    return hashlib.sha256(ir_text.encode()).hexdigest()


# ---- entries --------------------------------------------------------------------------------


def entry_paths(key: str, folder: Optional[Path] = None) -> tuple:
    d = Path(folder) if folder is not None else cache_dir()
    return d / (key + ".so"), d / (key + ".src"), d / (key + ".json")


def read_entry(key: str) -> Optional[dict]:
    """The entry's metadata when the entry is complete and of this format, else None."""
    lib, _, meta = entry_paths(key)
    try:
        info = json.loads(meta.read_text())
    except (OSError, ValueError):
        return None
    if info.get("format") != FORMAT_VERSION or info.get("key") != key or not lib.is_file():
        return None
    return info


def read_source(key: str) -> str:
    _, src, _ = entry_paths(key)
    try:
        return src.read_text()
    except OSError:
        return ""


def write_entry(key: str, module: Any, info: dict, folder: Optional[Path] = None) -> None:
    """Stores a built ``tessel.Module`` as an entry: library, then source, then the metadata."""
    lib, src, meta = entry_paths(key, folder)
    replace_atomic(lib, module.export_library)
    target = info["target"]
    source = module.get_source("cuda" if target.split()[0] == "cuda" else "c")
    write_atomic(src, source.encode())
    info = dict(info, format=FORMAT_VERSION, key=key, created=time.time(),
                size=lib.stat().st_size)
    write_atomic(meta, json.dumps(info, indent=1, sort_keys=True).encode())


def list_entries() -> list:
    """Metadata of every complete entry, with ``size`` (bytes) and ``age`` (seconds)."""
    out = []
    d = cache_dir()
    if not d.is_dir():
        return out
    now = time.time()
    for meta in sorted(d.glob("*.json")):
        try:
            info = json.loads(meta.read_text())
            lib = meta.with_suffix(".so")
            st = lib.stat()
        except (OSError, ValueError):
            continue
        info["size"] = st.st_size
        info["age"] = now - st.st_mtime
        info["path"] = str(lib)
        out.append(info)
    return out


def clear_cache() -> int:
    """Deletes every jit entry, the memoized identities and the autotuning records; returns the
    number of files removed. The C build cache (TESSEL_CACHE_DIR's top level) is left alone;
    ``tessel cache clear`` removes both."""
    d = cache_dir()
    count = 0
    if not d.is_dir():
        return 0
    for path in sorted(d.rglob("*"), reverse=True):  # files before their folders
        try:
            if path.is_dir() and not path.is_symlink():
                path.rmdir()
            else:
                path.unlink()
                count += 1
        except OSError:
            pass
    with _memo_lock:
        _memo.clear()
    return count
