"""Wrong arguments raise TypeError or ValueError with a message naming what was wrong."""

import pytest

from tessel import ir


def test_unknown_dtype():
    with pytest.raises(ValueError, match="not a data type"):
        ir.Var("x", "int33x")


def test_dtype_must_be_a_string():
    with pytest.raises(TypeError, match="dtype"):
        ir.Var("x", 32)


def test_non_expression_operand():
    x = ir.Var("x")
    with pytest.raises(TypeError, match="Select condition"):
        ir.Select(object(), x, x)
    with pytest.raises(TypeError):
        x + "a"
    with pytest.raises(TypeError, match="Buffer 'A' shape"):
        ir.decl_buffer("A", 16)


def test_wrong_node_kind():
    x = ir.Var("x")
    with pytest.raises(TypeError, match="For body"):
        ir.For(x, 0, 4, "serial", x + 1)
    with pytest.raises(TypeError, match="LetStmt var"):
        ir.LetStmt(ir.const(1), 1, ir.Evaluate(0))
    with pytest.raises(TypeError, match=r"SeqStmt seq\[1\]"):
        ir.SeqStmt([ir.Evaluate(0), 3])


def test_enum_names():
    with pytest.raises(ValueError, match="unknown name 'sideways'"):
        ir.For(ir.Var("i"), 0, 4, "sideways", ir.Evaluate(0))
    with pytest.raises(ValueError, match="IterVarType"):
        ir.IterVar(ir.Var("v"), ir.Range(0, 4), 1)


def test_cpp_checks_surface_as_python_errors():
    with pytest.raises(ValueError):
        ir.IntImm("int8", 1000)  # does not fit
    with pytest.raises(TypeError, match="operand types differ"):
        ir.Add(ir.Var("x"), ir.Var("y", "int64"))  # node constructors do not promote
    A = ir.decl_buffer("A", [4, 4])
    with pytest.raises(ValueError):
        ir.BufferStore(A, 1.0, [0])  # wrong number of indices


def test_op_cannot_be_constructed():
    with pytest.raises(TypeError, match="Op.get"):
        ir.Op("x")
    with pytest.raises(Exception, match="no_such_op"):
        ir.Op.get("no_such_op")
