"""The tessel IR from Python: node classes (registered with tvm-ffi under "tessel.ir.<Name>"),
expression helpers, structural equality."""

from ._base import Node, PrimExpr, const
from .expr import (
    EQ, GE, GT, LE, LT, NE, Add, And, Broadcast, Call, Cast, Div, FloatImm, FloorDiv, FloorMod,
    IntImm, Let, Max, Min, Mod, Mul, Not, Op, Or, Ramp, Range, Select, Shuffle, SizeVar,
    StringImm, Sub, Var, BufferLoad,
)
from .stmt import (
    Allocate, AssertStmt, AttrStmt, Block, BlockRealize, Buffer, BufferRegion, BufferStore,
    DeclBuffer, Evaluate, For, ForKind, IfThenElse, IterVar, IterVarType, LetStmt,
    MatchBufferRegion, SeqStmt, Stmt, While, decl_buffer,
)
from .function import GlobalVar, IRModule, PrimFunc
from .span import Span
from .ops import (
    add, bitwise_and, bitwise_not, bitwise_or, bitwise_xor, cast, div, eq, floordiv, floormod, ge,
    gt, if_then_else, le, logical_and, logical_not, logical_or, lt, max, min, mul, ne, neg,
    select, shift_left, shift_right, sub, truncdiv, truncmod,
)
from .structural import (
    assert_structural_equal, first_mismatch, structural_equal, structural_hash,
)
