"""Every node's constructor, with fields read back under their C++ names."""

import pytest

from tessel import ir


def same(a, b):
    return a.same_as(b)


def test_constants():
    i = ir.IntImm("int64", 5)
    assert (i.dtype, i.value) == ("int64", 5)
    assert int(i) == 5 and bool(i)
    b = ir.IntImm("bool", 1)
    assert str(b.dtype) == "uint1"  # "bool" is uint1, as in the C++ DataType
    f = ir.FloatImm("float16", 0.5)
    assert (f.dtype, f.value) == ("float16", 0.5)
    s = ir.StringImm("hello")
    assert s.value == "hello" and s.dtype == "handle"
    assert ir.const(3).dtype == "int32" and ir.const(3.0).dtype == "float32"
    assert ir.const(True).dtype == "uint1"
    assert type(ir.const(2, "float32")) is ir.FloatImm


def test_vars():
    v = ir.Var("n")
    assert v.name_hint == "n" and v.dtype == "int32"
    assert ir.Var("m", "int64").dtype == "int64"
    s = ir.SizeVar("k")
    assert isinstance(s, ir.Var) and s.name_hint == "k"
    p = ir.Var.pointer("A", "float16", "shared")
    assert type(p) is ir.Var
    assert (p.dtype, p.pointee, p.storage_scope) == ("handle", "float16", "shared")


@pytest.mark.parametrize("name", ir.expr.BINARY_NODES + ir.expr.CMP_NODES)
def test_binary_nodes_do_not_fold(name):
    x = ir.Var("x")
    node = getattr(ir, name)(x, 3)
    assert type(node) is getattr(ir, name)
    assert same(node.a, x) and node.b.value == 3
    expected = "uint1" if name in ir.expr.CMP_NODES else "int32"
    assert str(node.dtype) == expected
    both_const = getattr(ir, name)(1, 2)  # the node constructor never folds
    assert type(both_const) is getattr(ir, name)


def test_logical_nodes():
    p, q = ir.Var("p", "bool"), ir.Var("q", "bool")
    for cls in (ir.And, ir.Or):
        node = cls(p, q)
        assert same(node.a, p) and same(node.b, q)
    n = ir.Not(p)
    assert same(n.a, p)


def test_cast_select_ramp_broadcast_shuffle():
    x = ir.Var("x")
    c = ir.Cast("int64", x)
    assert c.dtype == "int64" and same(c.value, x)
    s = ir.Select(x < 3, x, 0)
    assert same(s.true_value, x) and s.false_value.value == 0 and s.condition.a.same_as(x)
    r = ir.Ramp(x, 2, 4)
    assert (str(r.dtype), r.lanes, r.stride.value) == ("int32x4", 4, 2)
    b = ir.Broadcast(x, 8)
    assert str(b.dtype) == "int32x8" and b.lanes == 8
    sh = ir.Shuffle([r], [0, 1])
    assert len(sh.vectors) == 1 and [i.value for i in sh.indices] == [0, 1]


def test_let_and_call():
    x, y = ir.Var("x"), ir.Var("y")
    let = ir.Let(x, 1, x + y)
    assert same(let.var, x) and let.value.value == 1 and type(let.body) is ir.Add
    names = ir.Op.list_names()
    assert len(names) > 0
    op = ir.Op.get(names[0])
    assert op.name == names[0]
    call = ir.Call("int32", ir.GlobalVar("helper"), [x, 1])
    assert call.op.name_hint == "helper" and len(call.args) == 2


def test_range_buffer_load_store():
    n = ir.Var("n")
    r = ir.Range(0, n)
    assert r.min.value == 0 and same(r.extent, n)
    r2 = ir.Range.from_min_end(2, 10)
    assert r2.extent.value == 8
    A = ir.decl_buffer("A", [16, n], "float16")
    assert A.name == "A" and A.dtype == "float16" and len(A.shape) == 2
    assert (A.scope, A.data_alignment, A.offset_factor, A.elem_offset.value) == ("global", 64, 1, 0)
    assert A.data.pointee == "float16"
    B = ir.Buffer("B", ir.Var.pointer("B", "int8"), "int8", [n], strides=[1], scope="shared",
                  data_alignment=16, offset_factor=4)
    assert (B.scope, B.data_alignment, B.offset_factor, len(B.strides)) == ("shared", 16, 4, 1)
    load = A[1, n - 1]
    assert type(load) is ir.BufferLoad and same(load.buffer, A) and load.dtype == "float16"
    store = ir.BufferStore(A, load, [0, 0])
    assert same(store.buffer, A) and same(store.value, load) and len(store.indices) == 2


def test_statements():
    x = ir.Var("x")
    ev = ir.Evaluate(0)
    assert ev.value.value == 0
    let = ir.LetStmt(x, 4, ev)
    assert same(let.var, x) and same(let.body, ev)
    attr = ir.AttrStmt(x, "pragma_unroll", 1, ev)
    assert attr.attr_key == "pragma_unroll" and same(attr.node, x)
    assert_ = ir.AssertStmt(x > 0, "x must be positive", ev)
    assert assert_.message.value == "x must be positive"
    p = ir.Var.pointer("buf", "float32")
    alloc = ir.Allocate(p, "float32", [128], True, ev, {"k": 1})
    assert alloc.dtype == "float32" and alloc.extents[0].value == 128 and alloc.annotations["k"] == 1
    A = ir.decl_buffer("A", [4])
    decl = ir.DeclBuffer(A, ev)
    assert same(decl.buffer, A)
    i = ir.Var("i")
    loop = ir.For(i, 0, 16, "unroll", ev)
    assert loop.kind == ir.ForKind.UNROLLED and loop.extent.value == 16 and loop.thread_tag == ""
    tx = ir.For(ir.Var("tx"), 0, 32, ir.ForKind.THREAD_BINDING, ev, thread_tag="threadIdx.x",
                annotations={"a": "b"})
    assert tx.thread_tag == "threadIdx.x" and tx.annotations["a"] == "b"
    wh = ir.While(x < 3, ev)
    assert same(wh.body, ev)
    ite = ir.IfThenElse(x < 3, ev)
    assert ite.else_case is None
    ite2 = ir.IfThenElse(x < 3, ev, let)
    assert same(ite2.else_case, let)
    seq = ir.SeqStmt([ev, let])
    assert len(seq.seq) == 2


def test_blocks():
    A = ir.decl_buffer("A", [16, 16])
    i, vi = ir.Var("i"), ir.Var("vi")
    iv = ir.IterVar(vi, ir.Range(0, 16), "spatial")
    assert iv.iter_type == ir.IterVarType.DATA_PAR and iv.dom.extent.value == 16
    reduce_iv = ir.IterVar(ir.Var("vk"), ir.Range(0, 4), ir.IterVarType.COMM_REDUCE)
    assert reduce_iv.iter_type == 2
    full = ir.BufferRegion.full(A)
    assert [r.extent.value for r in full.region] == [16, 16]
    row = ir.BufferRegion(A, [ir.Range(vi, 1), ir.Range(0, 16)])
    sub = ir.decl_buffer("A_row", [1, 16])
    match = ir.MatchBufferRegion(sub, row)
    assert same(match.buffer, sub) and same(match.source, row)
    body = ir.BufferStore(A, 0.0, [vi, 0])
    blk = ir.Block([iv], [], [row], "init_row", body, alloc_buffers=[], match_buffers=[match],
                   annotations={"x": 1})
    assert blk.name_hint == "init_row" and blk.init is None and len(blk.match_buffers) == 1
    assert len(blk.writes) == 1 and len(blk.reads) == 0
    realize = ir.BlockRealize([i], True, blk)
    assert same(realize.block, blk) and same(realize.iter_values[0], i)
    assert realize.predicate.value == 1


def test_function_and_module():
    n = ir.Var("n")
    a = ir.Var("a", "handle")
    A = ir.decl_buffer("A", [n])
    i = ir.Var("i")
    body = ir.For(i, 0, n, "serial", ir.BufferStore(A, 1.0, [i]))
    f = ir.PrimFunc([a, n], body, {a: A}, {"global_symbol": "fill"})
    assert len(f.params) == 2 and same(f.buffer_map[a], A) and f.attrs["global_symbol"] == "fill"
    assert (f.ret_type.type_code, f.ret_type.bits) == (3, 0)  # void
    mod = ir.IRModule({"fill": f})
    assert same(mod["fill"], f) and mod.function_names() == ["fill"]
    gv = ir.GlobalVar("fill")
    assert gv.name_hint == "fill"


def test_str_falls_back_or_prints_text():
    x = ir.Var("x")
    text = str(x + 1)
    assert "x" in text
