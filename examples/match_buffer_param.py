# Handle parameters bound with T.match_buffer at the top of the body (the older TVMScript spelling),
# strided and offset buffers, and a size variable.
from __future__ import annotations

from tessel.script import tir as T

@T.prim_func
def match_buffer_param(a: T.handle, b: T.handle, stride: T.int32):
    T.func_attr({"global_symbol": "match_buffer_param", "tessel.free_vars": ["k"]})
    A = T.match_buffer(a, (m, 16), "float32", strides=(stride, 1), elem_offset=a_off, align=16, offset_factor=4)
    B = T.match_buffer(b, (m, 16), "float32")
    k = T.int32(is_size_var=True)
    for i in range(m):
        for j in range(T.min(k, 16)):
            B[i, j] = A[i, j]
