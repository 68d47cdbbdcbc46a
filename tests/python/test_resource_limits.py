"""Resource limits (docs/reliability.md, "Resource limits"): a request that would exhaust the
machine ends with an error that names what was asked, where, and the limit, in bounded time and
memory. Each test fails when its limit is removed: the build then succeeds, or runs past the
child's time or memory cap."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time

import pytest
from conftest import REPO, have_cuda_compiler

import tessel
from tessel import arith, ir
from tessel._lib import get_global_func

GiB = 1 << 30


def run_child(code: str, timeout: float, memory: int = 8 * GiB, env=None) -> str:
    """Runs `code` in a child with an address-space cap, so that a limit that is gone shows as a
    timeout or an allocation failure rather than an OOM kill of the test run; returns stdout."""
    script = (
        "import resource\n"
        f"resource.setrlimit(resource.RLIMIT_AS, ({memory}, {memory}))\n"
        + textwrap.dedent(code)
    )
    child_env = dict(os.environ)
    child_env["PYTHONPATH"] = os.pathsep.join(
        [str(REPO / "python")]
        + [p for p in child_env.get("PYTHONPATH", "").split(os.pathsep) if p]
    )
    child_env.update(env or {})
    proc = subprocess.run(
        [sys.executable, "-c", script], env=child_env, capture_output=True, text=True,
        timeout=timeout,
    )
    assert proc.returncode == 0, f"stdout: {proc.stdout[-2000:]}\nstderr: {proc.stderr[-4000:]}"
    return proc.stdout


# ---- 1. unrolling ----

UNROLL = """
@T.prim_func
def f(A: T.Buffer((16,), "float32")):
    for i in T.unroll({extent}):
        A[i % 16] = A[i % 16] + T.float32(1)
"""


@pytest.mark.parametrize("target", ["c", "cuda -arch=sm_90"])
def test_unroll_of_a_billion_iterations_is_refused(target):
    text = UNROLL.format(extent=1000000000)
    if target != "c":
        text = text.replace(
            "    for i in", '    for t in T.thread_binding(1, thread="threadIdx.x"):\n'
            "      for i in"
        ).replace("        A[i", "          A[i")
    start = time.time()
    with pytest.raises(ValueError) as err:
        tessel.lower(text, target=target)
    msg = str(err.value)
    assert "the unroll loop over i has 1000000000 iterations" in msg, msg
    assert "more than the limit of 65536 (kMaxUnrollRequest)" in msg, msg
    assert msg.startswith("<string>:"), msg  # the loop's line and column
    assert time.time() - start < 10


def test_unroll_at_the_limit_stays_a_loop():
    lowered = tessel.lower(UNROLL.format(extent=65536), target="c")
    assert "T.unroll(65536)" in tessel.as_text(lowered)


# ---- 2. allocations ----

C_ALLOC = """
@T.prim_func
def g(A: T.Buffer((256,), "float32")):
    S = T.alloc_buffer(({extent},), "{dtype}")
    for i in range(256):
        S[i] = T.Cast("{dtype}", A[i])
    for i in range(256):
        A[i] = T.Cast("float32", S[255 - i])
"""


def test_c_allocation_of_a_petabyte_is_refused_at_build_time():
    text = C_ALLOC.format(extent="T.int64(250000000000000)", dtype="float32")
    with pytest.raises(ValueError) as err:
        tessel.build(text, target="c")
    msg = str(err.value)
    assert "the allocation of S needs 1000000000000000 bytes (250000000000000 x float32)" in msg
    assert "more than the limit of 140737488355328 bytes (kMaxAllocationBytes" in msg, msg


def test_c_allocation_whose_byte_count_wraps_is_refused():
    # 2^61 float64s are 2^64 bytes, which wrap to 0 in int64 arithmetic (then a stack array).
    text = C_ALLOC.format(extent="T.int64(2305843009213693952)", dtype="float64")
    with pytest.raises(ValueError, match=r"S needs more than 2\^63 bytes"):
        tessel.build(text, target="c")


CUDA_ALLOC = """
@T.prim_func
def f(A: T.Buffer((256,), "float32"), k: T.int32):
    for bx in T.thread_binding(1, thread="blockIdx.x"):
        s_data = T.allocate([{extent}], "float32", "{scope}")
        S = T.decl_buffer(({extent},), "float32", data=s_data, scope="{scope}")
        for tx in T.thread_binding(256, thread="threadIdx.x"):
            S[k + tx] = A[tx]
            A[tx] = S[k + 255 - tx]
"""


@pytest.mark.parametrize(
    "scope, extent, expected",
    [
        ("shared", "100000", "the shared allocation of s_data (100000 x float32) with the kernel's "
         "other static shared memory needs 400000 bytes, more than the limit of 49152 bytes "
         "(kMaxStaticSharedBytes)"),
        ("shared.dyn", "100000", "the dynamic shared memory (shared.dyn allocations) needs 400000 "
         "bytes, more than the limit of 232448 bytes (kMaxSharedBytesByArch: the opt-in maximum "
         "per block on sm_90)"),
        ("local", "T.int64(250000000000000)", "the local allocation of s_data (250000000000000 x "
         "float32) needs 1000000000000000 bytes, more than the limit of 524288 bytes "
         "(kMaxLocalBytes, per thread)"),
    ],
)
def test_cuda_allocation_over_the_gpu_limit_is_refused(scope, extent, expected):
    # Refused while generating the kernel, before NVRTC: no CUDA toolkit needed.
    with pytest.raises(ValueError) as err:
        tessel.build(CUDA_ALLOC.format(extent=extent, scope=scope), target="cuda -arch=sm_90")
    assert expected in str(err.value), str(err.value)


# 100 KiB of shared.dyn: more than sm_75 (64 KiB) and sm_86 (99 KiB) give a block, less than
# sm_80 (163 KiB) and sm_90 (227 KiB).
DYN_100_KIB = CUDA_ALLOC.format(extent=25600, scope="shared.dyn")


@pytest.mark.parametrize("arch, limit", [("sm_75", 65536), ("sm_86", 101376)])
def test_cuda_dynamic_shared_memory_over_the_arch_limit_is_refused(arch, limit):
    with pytest.raises(ValueError) as err:
        tessel.build(DYN_100_KIB, target=f"cuda -arch={arch}")
    expected = (f"the dynamic shared memory (shared.dyn allocations) needs 102400 bytes, more "
                f"than the limit of {limit} bytes (kMaxSharedBytesByArch: the opt-in maximum per "
                f"block on {arch}) in f_kernel")
    assert expected in str(err.value), str(err.value)


@pytest.mark.skipif(not have_cuda_compiler(), reason="no NVRTC or nvcc to compile the kernel")
@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_cuda_dynamic_shared_memory_under_the_arch_limit_builds(arch):
    mod = tessel.build(DYN_100_KIB, target=f"cuda -arch={arch}")
    assert "tsl_dyn_smem" in mod.get_source("cuda")


def test_cuda_shared_memory_one_byte_over_the_arch_limit_is_refused():
    # sm_86's 99 KiB of shared.dyn and one static byte; the layout alone is a multiple of 16.
    text = CUDA_ALLOC.format(extent=99 * 256, scope="shared.dyn").replace(
        "        for tx in",
        '        t_data = T.allocate([1], "uint8", "shared")\n'
        '        T1 = T.decl_buffer((1,), "uint8", data=t_data, scope="shared")\n'
        "        T1[0] = T.uint8(1)\n"
        "        for tx in")
    with pytest.raises(ValueError) as err:
        tessel.build(text, target="cuda -arch=sm_86")
    assert ("the static and dynamic shared memory together needs 101377 bytes, more than the "
            "limit of 101376 bytes (kMaxSharedBytesByArch: the opt-in maximum per block on "
            "sm_86)") in str(err.value), str(err.value)


def test_cuda_shared_memory_at_the_static_limit_generates():
    text = CUDA_ALLOC.format(extent=12288, scope="shared")  # 48 KiB
    lowered = tessel.lower(text, target="cuda -arch=sm_90")
    assert lowered is not None


# ---- 3. the text parser ----

def lines_of_statements(n: int) -> str:
    head = '@T.prim_func\ndef f(A: T.Buffer((16,), "float32")):\n'
    return head + "    A[0] = A[0] + T.float32(1)\n" * (n - 2)


def test_ten_million_lines_are_refused_quickly():
    # ~300 MB of text; without the limit the parse takes minutes and tens of GiB.
    out = run_child(
        """
        import time
        from tessel._lib import get_global_func
        head = '@T.prim_func\\ndef f(A: T.Buffer((16,), "float32")):\\n'
        text = head + "    A[0] = A[0] + T.float32(1)\\n" * (10**7 - 2)
        start = time.time()
        try:
            get_global_func("tessel.ir.ParseModule")(text, "big.py")
        except ValueError as err:
            print("REFUSED", round(time.time() - start, 2), str(err))
        """,
        timeout=120,
    )
    assert "REFUSED" in out, out
    assert ("big.py: error: the text has more than 1000000 lines, the parser's limit "
            "(TESSEL_MAX_SOURCE_LINES, default 1000000)") in out, out
    assert float(out.split()[1]) < 10, out


def test_line_limit_from_the_environment(monkeypatch):
    monkeypatch.setenv("TESSEL_MAX_SOURCE_LINES", "1000")
    parse = get_global_func("tessel.ir.ParseModule")
    parse(lines_of_statements(1000), "ok.py")  # its last newline starts no 1001st line
    parse(lines_of_statements(1000).rstrip("\n"), "ok.py")
    with pytest.raises(ValueError, match=r"more than 1000 lines, the parser's limit"):
        parse(lines_of_statements(1001), "big.py")
    # The Python front end's texts and tessel.parse go through the same reader.
    with pytest.raises(ValueError, match=r"more than 1000 lines"):
        tessel.parse(lines_of_statements(1001))
    monkeypatch.setenv("TESSEL_MAX_SOURCE_LINES", "lots")
    with pytest.raises(ValueError, match="TESSEL_MAX_SOURCE_LINES=lots is not a positive"):
        parse(lines_of_statements(10), "x.py")


def test_line_limit_default_is_registered():
    table = {str(v["name"]): v for v in get_global_func("tessel.support.ListEnvVars")()}
    assert str(table["TESSEL_MAX_SOURCE_LINES"]["default"]) == "1000000"


# ---- 4. the Z3 prover ----

@pytest.mark.skipif(not arith.z3_available(), reason="built without Z3")
def test_hard_nonlinear_query_gives_up_at_the_resource_limit():
    # Fermat for cubes: true, and out of reach of Z3's non-linear arithmetic. With 100 times the
    # default rlimit it takes minutes (docs/reliability.md); without one, hours.
    out = run_child(
        """
        import time
        from tessel import arith, ir
        x, y, z = (ir.Var(n, "int64") for n in "xyz")
        a = arith.Analyzer()
        for v in (x, y, z):
            a.bind(v, ir.Range(1, 1 << 20))
        start = time.time()
        proved = a.can_prove(ir.ne(x * x * x + y * y * y, z * z * z))
        s = a.z3_stats()
        print(proved, s["unknown"], s["resource_limit"], round(time.time() - start, 3))
        """,
        timeout=60,
    )
    proved, unknown, resource_limit, seconds = out.split()
    assert (proved, unknown, resource_limit) == ("False", "1", "1"), out
    assert float(seconds) < 5, out


@pytest.mark.skipif(not arith.z3_available(), reason="built without Z3")
def test_rlimit_is_the_documented_default():
    assert arith.Analyzer().z3_rlimit() == 2000
