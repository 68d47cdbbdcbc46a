"""tessel.transform: passes, pipelines, the pass context's instruments, and the verifier."""

import os

import pytest
from conftest import needs_text

import tessel
from tessel import ir, transform

pytestmark = [
    needs_text,
    pytest.mark.skipif(
        tessel._lib.get_global_func("tessel.transform.RunPass") is None,
        reason="libtessel has no pass infrastructure yet",
    ),
]

KERNEL = '''
@T.prim_func
def add(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    for i in range(16):
        B[i] = A[i] + T.float32(1)
'''

BROKEN = '''
@T.prim_func
def add(A: T.Buffer((16,), "float32")):
    k = T.int32()
    for i in range(16):
        A[i] = T.Cast("float32", i + k)
'''


def module(text=KERNEL):
    return ir.IRModule({"add": tessel.parse(text)})


def quiet(**kw):
    opts = dict(dump_dir="", dump_changed_only=False, print_timing=False, verify_each=False)
    opts.update(kw)
    return transform.PassContext(**opts)


def test_registry_lists_and_builds_passes():
    assert "VerifyWellFormed" in transform.list_passes()
    p = transform.get_pass("VerifyWellFormed")
    assert isinstance(p, transform.Pass)
    assert p.name == "VerifyWellFormed"
    with pytest.raises(KeyError, match="no pass named Nope; registered:.*VerifyWellFormed"):
        transform.get_pass("Nope")


def test_register_a_python_pass():
    def factory():
        return transform.module_pass(lambda m: m, "py.Identity")

    transform.register_pass("py.Identity", factory)
    assert "py.Identity" in transform.list_passes()
    mod = module()
    assert transform.get_pass("py.Identity")(mod).same_as(mod)
    with pytest.raises(ValueError, match="already registered"):
        transform.register_pass("py.Identity", lambda: None)


def test_sequential_order_and_filtering():
    log = []

    def recorder(name, opt_level=0):
        def run(m):
            log.append(name)
            return m

        return transform.module_pass(run, name, opt_level)

    seq = transform.Sequential([recorder("a"), recorder("hi", 3), recorder("b"), recorder("off")])
    assert [p.name for p in seq.passes] == ["a", "hi", "b", "off"]
    mod = module()
    with quiet(disabled_passes=["off"]):
        assert seq(mod).same_as(mod)
    assert log == ["a", "b"]
    log.clear()
    with quiet(opt_level=3):
        seq(mod)
    assert log == ["a", "hi", "b", "off"]


def tag(key):
    """A pass that sets attrs[key] = 1 on every function (a change visible in the text)."""

    def run(f):
        attrs = dict(f.attrs)
        attrs[key] = 1
        return ir.PrimFunc(list(f.params), f.body, dict(f.buffer_map), attrs, f.ret_type)

    return transform.prim_func_pass(run, "Tag_" + key)


def test_dump_files(tmp_path):
    mod = module()
    with quiet(dump_dir=str(tmp_path)):
        out = transform.Sequential([tag("x"), transform.module_pass(lambda m: m, "Same")])(mod)
    names = sorted(os.listdir(tmp_path))
    assert names == [
        "000_Tag_x_after.py", "000_Tag_x_before.py", "001_Same_after.py", "001_Same_before.py"
    ]
    assert (tmp_path / "000_Tag_x_before.py").read_text() == tessel.as_text(mod)
    assert (tmp_path / "000_Tag_x_after.py").read_text() == tessel.as_text(out)
    assert '"x": 1' in (tmp_path / "000_Tag_x_after.py").read_text()


def test_dump_changed_only(tmp_path):
    with quiet(dump_dir=str(tmp_path), dump_changed_only=True):
        transform.Sequential([transform.module_pass(lambda m: m, "Same"), tag("x")])(module())
    assert sorted(os.listdir(tmp_path)) == ["001_Tag_x_after.py", "001_Tag_x_before.py"]


def test_timing_records_and_report():
    with quiet() as ctx:
        transform.Sequential([tag("x"), tag("y")], "Pipeline")(module())
    rows = ctx.timings()
    assert [(name, depth) for name, depth, _ in rows] == [
        ("Pipeline", 0), ("Tag_x", 1), ("Tag_y", 1)
    ]
    assert all(seconds >= 0 for _, _, seconds in rows)
    report = ctx.timing_report()
    assert report.startswith("pass timing:")
    assert "  Tag_y" in report
    ctx.clear_timings()
    assert ctx.timings() == []


def test_verify_each_names_the_breaking_pass():
    def breaker(f):
        return tessel.parse(BROKEN)

    seq = transform.Sequential([tag("x"), transform.prim_func_pass(breaker, "Breaker")])
    with quiet(verify_each=True):
        with pytest.raises(RuntimeError, match="pass Breaker produced IR that is not") as err:
            seq(module())
    assert "[free_var]" in str(err.value)


def test_context_options_come_from_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("TESSEL_DUMP_IR", str(tmp_path))
    monkeypatch.setenv("TESSEL_PASS_TIMING", "1")
    ctx = transform.PassContext(print_timing=False)
    assert ctx.dump_dir == str(tmp_path)
    assert ctx.print_timing is False
    assert transform.PassContext.current().dump_dir == str(tmp_path)


def test_verify_well_formed():
    assert transform.verify_well_formed(module()) == []
    errors = transform.verify_well_formed(tessel.parse(BROKEN))
    assert [e.check for e in errors] == ["free_var"]
    assert "'k' (int32) is used where nothing binds it" in errors[0].message
    assert "A[i] = T.Cast" in str(errors[0])
    with pytest.raises(ValueError, match=r"\[free_var\] in function 'add'"):
        transform.get_pass("VerifyWellFormed")(module(BROKEN))
    with pytest.raises(TypeError, match="expected an IRModule or a PrimFunc"):
        transform.verify_well_formed(3)


def test_examples_are_well_formed(repo):
    for path in sorted((repo / "examples").glob("*.py")):
        errors = transform.verify_well_formed(tessel.parse(path.read_text(), str(path)))
        assert errors == [], f"{path.name}: " + "\n".join(str(e) for e in errors)


def test_env_vars_are_listed_with_docs():
    table = {v["name"]: v for v in transform.env_vars()}
    for name in ("TESSEL_DUMP_IR", "TESSEL_DUMP_IR_CHANGED_ONLY", "TESSEL_PASS_TIMING",
                 "TESSEL_VERIFY_EACH_PASS"):
        assert name in table
        assert table[name]["doc"]
    assert table["TESSEL_PASS_TIMING"]["default"] == "0"
