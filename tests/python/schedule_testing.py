"""What the schedule tests share: trace replay, comparison with an expected program, running a
scheduled module through the C backend, and refusals that leave the module unchanged."""

from __future__ import annotations

import pytest
import tvm_ffi

import tessel
from tessel import ir


def replays(sch, src):
    """The trace, printed as Python and as JSON, replays onto a fresh schedule to an equal module;
    the scheduled module also survives printing and parsing."""
    fresh = tessel.Schedule(src)
    exec(sch.trace.as_python(), {"sch": fresh})  # noqa: S102
    ir.assert_structural_equal(fresh.mod, sch.mod)
    again = tessel.Schedule.from_json(src, sch.trace.as_json())
    ir.assert_structural_equal(again.mod, sch.mod)
    ir.assert_structural_equal(tessel.parse(tessel.as_text(sch.mod)), sch.mod)


def same_as(sch, expected):
    ir.assert_structural_equal(sch.mod, tessel.Schedule(expected).mod)


def run(mod, name, *arrays):
    tessel.build(mod)[name](*(tvm_ffi.from_dlpack(x) for x in arrays))


def refused(sch, call, message):
    """`call` raises ScheduleError matching `message` and leaves the module as it was."""
    before = sch.mod
    with pytest.raises(tessel.ScheduleError, match=message):
        call()
    ir.assert_structural_equal(sch.mod, before)
