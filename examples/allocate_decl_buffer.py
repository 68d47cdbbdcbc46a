# Explicit storage: T.allocate (plain, conditional, annotated) with T.decl_buffer views, and a buffer
# over an externally provided shared-memory pointer.
from __future__ import annotations

from tessel.script import tir as T

@T.prim_func
def allocate_decl_buffer(A: T.Buffer((128,), "float32"), B: T.Buffer((128,), "float32"), use_tmp: T.bool):
    T.func_attr({"global_symbol": "allocate_decl_buffer", "tessel.free_vars": ["smem"]})
    smem = T.handle("float32", "shared")
    tmp_data = T.allocate([128], "float32", "global")
    tmp = T.decl_buffer((128,), "float32", data=tmp_data)
    for i in range(128):
        tmp[i] = A[i] * T.float32(3)
    cond_data = T.allocate([64], "float32", "global", use_tmp)
    cond_buf = T.decl_buffer((64,), "float32", data=cond_data)
    if use_tmp:
        for i in range(64):
            cond_buf[i] = tmp[i * 2]
    ann_data = T.allocate([16, 8], "float32", "local", annotations={"disable_lower_builtin": True})
    ann = T.decl_buffer((16, 8), "float32", data=ann_data, scope="local")
    S = T.decl_buffer((128,), "float32", data=smem, scope="shared", align=16)
    for i in range(16):
        for j in range(8):
            ann[i, j] = S[i * 8 + j]
    for i in range(128):
        B[i] = tmp[i] + ann[i // 8, i % 8]
