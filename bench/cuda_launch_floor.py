"""The driver's share of a launch: an empty kernel with three pointer parameters launched with
cuLaunchKernel straight through ctypes (no tvm-ffi, no tessel), next to a ctypes call of a libc
function (the ctypes floor). Run on the GPU machine:

    python3 bench/cuda_launch_floor.py

The kernel is compiled with NVRTC (opened through ctypes) for sm_90.
"""

from __future__ import annotations

import ctypes
import statistics
import time

import torch

CALLS = 20000


def per_call(fn) -> float:
    for _ in range(200):
        fn()
    torch.cuda.synchronize()
    runs = []
    for _ in range(7):
        start = time.perf_counter()
        for _ in range(CALLS):
            fn()
        torch.cuda.synchronize()
        runs.append((time.perf_counter() - start) / CALLS)
    return statistics.median(runs)


def main() -> None:
    torch.zeros(1, device="cuda")  # make the primary context current
    cuda = ctypes.CDLL("libcuda.so.1")
    src = b'extern "C" __global__ void empty_kernel(float* a, float* b, float* c) {}'
    nvrtc = None
    for name in ("libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"):
        try:
            nvrtc = ctypes.CDLL(name)
            break
        except OSError:
            pass
    prog = ctypes.c_void_p()
    assert nvrtc.nvrtcCreateProgram(ctypes.byref(prog), src, b"k.cu", 0, None, None) == 0
    opts = (ctypes.c_char_p * 1)(b"-arch=sm_90")
    assert nvrtc.nvrtcCompileProgram(prog, 1, opts) == 0
    size = ctypes.c_size_t()
    nvrtc.nvrtcGetCUBINSize(prog, ctypes.byref(size))
    cubin = ctypes.create_string_buffer(size.value)
    nvrtc.nvrtcGetCUBIN(prog, cubin)
    module, func = ctypes.c_void_p(), ctypes.c_void_p()
    assert cuda.cuModuleLoadData(ctypes.byref(module), cubin) == 0
    assert cuda.cuModuleGetFunction(ctypes.byref(func), module, b"empty_kernel") == 0

    t = [torch.zeros(128, device="cuda") for _ in range(3)]
    ptrs = [ctypes.c_void_p(x.data_ptr()) for x in t]
    args = (ctypes.c_void_p * 3)(*[ctypes.addressof(p) for p in ptrs])
    launch = cuda.cuLaunchKernel
    launch.argtypes = [ctypes.c_void_p] + [ctypes.c_uint] * 7 + [ctypes.c_void_p] * 3

    def raw():
        launch(func, 1, 1, 1, 32, 1, 1, 0, None, args, None)

    libc = ctypes.CDLL(None)
    getpid = libc.getpid
    print(f"ctypes call of getpid (the ctypes floor)  {per_call(getpid) * 1e6:6.2f} us")
    print(f"cuLaunchKernel through ctypes             {per_call(raw) * 1e6:6.2f} us")


if __name__ == "__main__":
    main()
