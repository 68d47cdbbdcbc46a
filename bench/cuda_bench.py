"""CUDA backend benchmarks (issue 6), run on a GPU machine with PyTorch and Triton:

- vector add (examples/vector_add_gpu.py) against the device's copy bandwidth (torch `copy_`),
  and torch.add as a peer;
- row softmax (examples/softmax_gpu.py) against torch.softmax;
- launch overhead from Python: an empty kernel taking three tensors, against a torch elementwise
  op on tiny tensors and an empty Triton kernel taking the same three tensors;
- compile latency, text to loaded module (cold cache), against Triton's first-call compile (cold
  cache) of an equivalent vector add.

    python bench/cuda_bench.py [--arch sm_90]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import torch
import tvm_ffi

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))

import tessel  # noqa: E402

NOOP = """
@T.prim_func
def noop_gpu(A: T.Buffer((n,), "float32"), B: T.Buffer((n,), "float32"), C: T.Buffer((n,), "float32")):
    T.func_attr({"global_symbol": "noop_gpu", "target": "cuda", "tir.noalias": True})
    for tx in T.thread_binding(32, thread="threadIdx.x"):
        T.evaluate(0)
"""


def cuda_time(fn, reps: int, warmup: int = 3) -> float:
    """Median seconds per call over `reps` timed calls (CUDA events around each)."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / 1e3)
    return statistics.median(times)


def launch_rate(fn, calls: int) -> float:
    """Seconds per call for `calls` back-to-back launches from Python (median of 7 batches)."""
    for _ in range(100):
        fn()
    torch.cuda.synchronize()
    batches = []
    for _ in range(7):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        torch.cuda.synchronize()
        batches.append((time.perf_counter() - start) / calls)
    return statistics.median(batches)


FLOOR_C = """
#include <tvm/ffi/c_api.h>
TVM_FFI_DLL_EXPORT int __tvm_ffi_floor(void* self, const TVMFFIAny* args, int32_t num_args,
                                      TVMFFIAny* result) {
  (void)self; (void)args; (void)num_args; (void)result;
  return 0;
}
"""


def floor_function():
    """A plain tvm-ffi C function taking anything and doing nothing: the call floor."""
    import subprocess

    work = Path(tempfile.mkdtemp())
    (work / "floor.c").write_text(FLOOR_C)
    include = Path(tvm_ffi.__file__).parent / "include"
    subprocess.run(["cc", "-O2", "-shared", "-fPIC", f"-I{include}", str(work / "floor.c"), "-o",
                    str(work / "floor.so")], check=True)
    return tvm_ffi.load_module(str(work / "floor.so"))["floor"]


def build(text: str, target: str):
    return tessel.build(text, target=target)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--arch", default="sm_90")
    ap.add_argument("--n", type=int, default=1 << 28)
    args = ap.parse_args()
    target = f"cuda -arch={args.arch}"
    dev = torch.cuda.get_device_name()
    print(f"device: {dev}; torch {torch.__version__}; date {time.strftime('%Y-%m-%d %H:%M')}")

    # ---- vector add vs copy bandwidth ----
    n = args.n
    a, b = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
    c = torch.empty_like(a)
    vadd = build((ROOT / "examples/vector_add_gpu.py").read_text(), target)["vector_add_gpu"]
    vadd(a, b, c)
    torch.cuda.synchronize()
    assert torch.equal(c, a + b), "vector_add_gpu gives a wrong result"
    t_copy = cuda_time(lambda: c.copy_(a), 20)
    t_vadd = cuda_time(lambda: vadd(a, b, c), 20)
    t_torch = cuda_time(lambda: torch.add(a, b, out=c), 20)
    bw_copy, bw_vadd, bw_torch = 8 * n / t_copy, 12 * n / t_vadd, 12 * n / t_torch
    print(f"== vector add, n = {n} float32 ==")
    print(f"copy bandwidth (torch copy_)   {bw_copy / 1e9:8.0f} GB/s")
    print(f"tessel vector_add_gpu          {bw_vadd / 1e9:8.0f} GB/s ({bw_vadd / bw_copy:.0%} of copy)")
    print(f"torch.add                      {bw_torch / 1e9:8.0f} GB/s ({bw_torch / bw_copy:.0%} of copy)")
    del a, b, c

    # ---- softmax ----
    sm = build((ROOT / "examples/softmax_gpu.py").read_text(), target)["softmax_gpu"]
    print("== row softmax, float32 ==")
    for rows, cols in [(4096, 4096), (16384, 1024), (1024, 32768)]:
        x = torch.randn(rows, cols, device="cuda")
        y = torch.empty_like(x)
        sm(x, y)
        torch.cuda.synchronize()
        torch.testing.assert_close(y, torch.softmax(x, dim=1), rtol=1e-5, atol=1e-6)
        t_ours = cuda_time(lambda: sm(x, y), 20)
        t_torch = cuda_time(lambda: torch.softmax(x, dim=1), 20)
        print(f"{rows}x{cols}: tessel {t_ours * 1e6:8.1f} us, torch.softmax {t_torch * 1e6:8.1f} us "
              f"({t_torch / t_ours:.2f}x torch's speed)")

    # ---- launch overhead ----
    import triton
    import triton.language as tl

    @triton.jit
    def triton_noop(a_ptr, b_ptr, c_ptr):
        pass

    t3 = [torch.zeros(128, device="cuda") for _ in range(3)]
    noop = build(NOOP, target)["noop_gpu"]
    calls = 20000
    t_noop = launch_rate(lambda: noop(*t3), calls)
    t_tadd = launch_rate(lambda: torch.add(t3[0], t3[1], out=t3[2]), calls)
    t_triton = launch_rate(lambda: triton_noop[(1,)](*t3), calls)
    floor = floor_function()
    t_floor = launch_rate(lambda: floor(*t3), calls)
    f3 = [tvm_ffi.from_dlpack(t) for t in t3]
    t_noop_ffi = launch_rate(lambda: noop(*f3), calls)
    print("== launch overhead from Python, empty kernel with three float32[128] tensors ==")
    print(f"torch has __dlpack_c_exchange_api__: {hasattr(torch.Tensor, '__dlpack_c_exchange_api__')}")
    print(f"floor: plain tvm-ffi C function (no launch) {t_floor * 1e6:6.2f} us per call")
    print(f"tessel, tvm_ffi.Tensor arguments   {t_noop_ffi * 1e6:6.2f} us per call")
    print(f"tessel                         {t_noop * 1e6:6.2f} us per call")
    print(f"torch.add (elementwise)        {t_tadd * 1e6:6.2f} us per call")
    print(f"triton empty kernel            {t_triton * 1e6:6.2f} us per call")

    # ---- compile latency ----
    text = (ROOT / "examples/vector_add_gpu.py").read_text()
    ours = []
    for _ in range(3):
        with tempfile.TemporaryDirectory() as cache:
            os.environ["TESSEL_CACHE_DIR"] = cache
            start = time.perf_counter()
            build(text, target)
            ours.append(time.perf_counter() - start)
    os.environ.pop("TESSEL_CACHE_DIR", None)

    theirs = []
    for k in range(3):
        with tempfile.TemporaryDirectory() as cache:
            os.environ["TRITON_CACHE_DIR"] = cache

            # A fresh function each time, so Triton's in-process cache cannot answer.
            src = f"""
import triton, triton.language as tl
@triton.jit
def vadd_{k}(a, b, c, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    tl.store(c + i, tl.load(a + i, mask=m) + tl.load(b + i, mask=m), mask=m)
"""
            path = Path(cache) / f"vadd_{k}.py"
            path.write_text(src)
            import importlib.util

            spec = importlib.util.spec_from_file_location(f"vadd_{k}", path)
            mod = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(mod)
            kernel = getattr(mod, f"vadd_{k}")
            x = torch.randn(1000, device="cuda")
            y = torch.empty_like(x)
            start = time.perf_counter()
            kernel[(4,)](x, x, y, 1000, BLOCK=256)
            torch.cuda.synchronize()
            theirs.append(time.perf_counter() - start)
    print("== compile latency, vector add, text to loaded module (cold caches), median of 3 ==")
    print(f"tessel (lower, CUDA C++, NVRTC, host C, cc, load)  {statistics.median(ours) * 1e3:7.1f} ms")
    print(f"triton first call (JIT compile + launch)           {statistics.median(theirs) * 1e3:7.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
