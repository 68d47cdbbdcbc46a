"""Generate the benchmark corpus of bench/tvm_unscheduled.py: TVM 0.27's own operators at sizes where
the kernel, not the call, takes the time, printed by TVM exactly as tests/python/tvm_corpus/generate.py
prints the test corpus (same manifest format), unscheduled.

TVM is never a dependency of tessel: run this with a separate environment,

    /tmp/tvm027/bin/python bench/tvm_unscheduled/generate.py
"""

from __future__ import annotations

import json
from pathlib import Path

import tvm
from tvm import te, topi

OUT = Path(__file__).resolve().parent
CASES = []


def case(name, ref, ranges=None, ref_args=None):
    def wrap(build):
        CASES.append(dict(name=name, build=build, ref=ref, ranges=ranges or {},
                          ref_args=ref_args or {}))
        return build
    return wrap


def ph(shape, name, dtype="float32"):
    return te.placeholder(shape, name=name, dtype=dtype)


def prim(*tensors):
    return te.create_prim_func(list(tensors))


@case("matmul_128x96x64", "matmul")
def _():
    a, b = ph((128, 64), "A"), ph((64, 96), "B")
    return prim(a, b, topi.matmul(a, b))


@case("batch_matmul_8x64x64x64", "batch_matmul")
def _():
    x, y = ph((8, 64, 64), "x"), ph((8, 64, 64), "y")
    return prim(x, y, topi.nn.batch_matmul(x, y))


@case("int8_matmul_128x96x64", "matmul", ranges={"A": [-100, 100], "B": [-100, 100]})
def _():
    a, b = ph((128, 64), "A", "int8"), ph((64, 96), "B", "int8")
    k = te.reduce_axis((0, 64), name="k")
    c = te.compute((128, 96), lambda i, j: te.sum(a[i, k].astype("int32") * b[k, j].astype("int32"),
                                                  axis=k), name="C")
    return prim(a, b, c)


@case("max_pool2d_2x2", "max_pool2d", ref_args={"k": 2, "s": 2, "pad": 0})
def _():
    x = ph((1, 32, 64, 64), "data")
    return prim(x, topi.nn.pool2d(x, (2, 2), (2, 2), (1, 1), (0, 0, 0, 0), "max"))


@case("sum_rows_512x512", "sum", ref_args={"axis": 1})
def _():
    a = ph((512, 512), "A")
    return prim(a, topi.sum(a, axis=1))


@case("max_axis0_512x512", "max", ref_args={"axis": 0, "keepdims": False})
def _():
    a = ph((512, 512), "A")
    return prim(a, topi.max(a, axis=0))


@case("cast_f16_f32_65536", "cast", ref_args={"dtype": "float32"})
def _():
    a = ph((256, 256), "A", "float16")
    return prim(a, topi.cast(a, "float32"))


@case("transpose_64x128x32", "transpose", ref_args={"axes": [2, 0, 1]})
def _():
    a = ph((64, 128, 32), "A")
    return prim(a, topi.transpose(a, (2, 0, 1)))


@case("exp_256x256", "exp")
def _():
    a = ph((256, 256), "A")
    return prim(a, topi.exp(a))


@case("add_broadcast_256x256", "add")
def _():
    a, b = ph((256, 256), "A"), ph((256,), "B")
    return prim(a, b, topi.add(a, b))


@case("relu_256x256", "relu")
def _():
    a = ph((256, 256), "A")
    return prim(a, topi.nn.relu(a))


@case("softmax_128x256", "softmax", ref_args={"axis": -1})
def _():
    a = ph((128, 256), "A")
    return prim(a, topi.nn.softmax(a, axis=-1))


@case("conv2d_nchw_1x16x32x32_k3", "conv2d_nchw", ref_args={"stride": 1, "pad": 1, "dilation": 1})
def _():
    x, w = ph((1, 16, 32, 32), "data"), ph((16, 16, 3, 3), "kernel")
    return prim(x, w, topi.nn.conv2d_nchw(x, w, 1, 1, 1))


def main():
    manifest = []
    for c in CASES:
        name = c["name"]
        func = c["build"]().with_attr("global_symbol", name)
        tvm.compile(tvm.IRModule({name: func}), target="llvm")
        text = func.script()
        (OUT / f"{name}.py").write_text(text + "\n")
        params = []
        for buf in func.params:
            entry = {"name": buf.name, "dtype": str(buf.dtype),
                     "shape": [int(d) for d in buf.shape]}
            if buf.name in c["ranges"]:
                entry["range"] = c["ranges"][buf.name]
            params.append(entry)
        manifest.append({"file": f"{name}.py", "function": name, "form": "prim_func",
                         "kind": "bench", "target": "c", "params": params,
                         "outputs": [params[-1]["name"]], "sym": {}, "ref": c["ref"],
                         "ref_args": c["ref_args"]})
    (OUT / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    print(f"wrote {len(manifest)} functions to {OUT} with TVM {tvm.__version__}")


if __name__ == "__main__":
    main()
