"""Conditional tasks in the generated tier: the case language (JSON round trip, check keeps
COND-05 branch counts out), the oracle's branch choice (COND-02, COND-11, COND-13: a SWITCH
value at or past its branch count runs none) against the simulator, and planted bugs caught
as divergences (a runtime that hands out the sub-models in the wrong order, one that ignores
the host's writes of the condition value, one that runs the last branch for an out-of-range
SWITCH value)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

import mdlri_conformance.backends.sim as sim
from mdlri_conformance.backends.contract import Err
from mdlri_conformance.conformance.engine import (divergence, graphs, oracle, oracle_state,
                                                  runner, validation)
from mdlri_conformance.conformance.engine.graphs import Case, Cond, GraphError, Launch
from mdlri_conformance.conformance.engine.observe import first_difference
from mdlri_conformance.conformance.engine.steps import Disable, Execute, SetCond, SetKernel, Sync
from mdlri_conformance.conformance.engine.strategies_cond import cond_cases

from .runner_helpers import Wrapped, conforms_on_a_fresh_sim

X = list(range(1, 9))
S = [-1] * 8


def fill(out: int, value: int) -> Launch:
    return Launch(0, "fill", {"out": out, "n": 8, "value": value})


def cond_case(ctype: str = "if", values: tuple[int, ...] = (1, 0)) -> Case:
    """A fill, then a cond task whose sub-model k fills buffer 1 with 10 * (k + 1)."""
    n = 2 if ctype == "if" else 3
    plan: list[Any] = [Execute(), Sync()]
    for v in values:
        plan += [SetCond(1, v), Execute(), Sync()]
    return Case(streams=1, buffers=[X, S], words=[], events=0,
                ops=[fill(0, 4), Cond(0, ctype, [[fill(1, 10 * (k + 1))] for k in range(n)])],
                plan=plan)


class ReversedSubModels(Wrapped):
    """AddCondTask hands out its sub-models last first (COND-06/COND-11 broken: branch k is
    captured into the sub-model the runtime runs for another value)."""

    def add_cond_task(self, params: Any, stream: Any, flags: int) -> Any:
        rc, slots = self._inner.add_cond_task(params, stream, flags)
        if rc == Err.SUCCESS and slots:
            n = params.size
            slots = list(reversed(slots[:n])) + list(slots[n:])
        return rc, slots


class IgnoresCondWrites(Wrapped):
    """Host writes into a condition value are dropped (the value stays 0: COND-03's flag 0
    broken, as if the runtime re-initialised it)."""

    def __init__(self, inner: Any) -> None:
        super().__init__(inner)
        self.ptrs: set[int] = set()

    def cond_handle_get_cond_ptr(self, handle: Any, **kw: Any) -> Any:
        rc, ptr = self._inner.cond_handle_get_cond_ptr(handle, **kw)
        if rc == Err.SUCCESS:
            self.ptrs.add(int(ptr))
        return rc, ptr

    def memcpy(self, dst: Any, *rest: Any) -> int:
        if isinstance(dst, int) and dst in self.ptrs:
            return int(Err.SUCCESS)
        return self._inner.memcpy(dst, *rest)


def test_cond_cases_round_trip() -> None:
    case = cond_case()
    validation.check(case)
    again = graphs.from_json(case.to_json())
    assert again.ops == case.ops and again.plan == case.plan
    assert again.to_dict() == case.to_dict()


@pytest.mark.parametrize("op, message", [
    (Cond(0, "while", [[fill(1, 1)]]), "cond type 'while'"),
    (Cond(0, "if", [[fill(1, 1)]] * 3), "if with 3 branches"),
    (Cond(0, "switch", []), "switch with 0 branches"),
    (Cond(0, "if", [[]]), "branch 0 holds 0 launches"),
    (Cond(0, "if", [[fill(9, 1)]]), "buffer 9 out of range"),
])
def test_check_keeps_cond_tasks_defined(op: Cond, message: str) -> None:
    case = Case(streams=1, buffers=[X, S], words=[], events=0, ops=[fill(0, 1), op], plan=[])
    with pytest.raises(GraphError, match=message):
        validation.check(case)


@pytest.mark.parametrize("step, message", [
    (SetCond(0, 1), "set_cond on a launch op"),
    (Disable(1), "disable on a cond op"),
    (SetKernel(1, {"out": 1, "n": 8, "value": 2}), "set_kernel on a cond op"),
])
def test_check_keeps_cond_plans_defined(step: Any, message: str) -> None:
    case = cond_case("switch", ())
    case.plan.append(step)
    with pytest.raises(GraphError, match=message):
        validation.check(case)


def test_a_condition_write_racing_an_execution_is_not_defined() -> None:
    case = cond_case()
    case.plan = [Execute(), SetCond(1, 1), Sync()]
    with pytest.raises(oracle_state.UndefinedCase, match="may still run"):
        oracle.expected(case)


@pytest.mark.parametrize("ctype, values, outputs", [
    ("if", (1, 0, 7), [20, 10, 20, 10]),              # COND-02: 0 first, so sub-model 1
    ("switch", (2, 1, 0), [10, 30, 20, 10]),
    ("switch", (2, 3, 0, 1000), [10, 30, 30, 10, 10]),  # COND-13: 3 and 1000 run none
])
def test_the_branch_follows_the_condition(sim_backend: Any, ctype: str,
                                          values: tuple[int, ...], outputs: list[int]) -> None:
    case = cond_case(ctype, values)
    exp = oracle.expected(case)
    got = [o.value for o in exp if o.phase == "sync" and o.what == "buffer 1"]
    assert got == [[v] * 8 for v in outputs]
    assert first_difference(exp, runner.replay(sim_backend, case)) is None


@pytest.mark.parametrize("wrapper, key", [
    (ReversedSubModels, ("sync", 1, "buffer 1")),
    (IgnoresCondWrites, ("sync", 4, "buffer 1")),
])
def test_planted_bugs_are_caught(sim_backend: Any, wrapper: Any, key: Any) -> None:
    case = cond_case()
    div = divergence.compare(case, "sim", oracle.expected(case),
                         runner.replay(wrapper(sim_backend), case))
    assert div is not None and not div.unsupported
    assert div.difference.expected.key == key


def test_an_out_of_range_switch_running_its_last_branch_is_caught() -> None:
    """COND-13: the planted fault switch-out-of-range-runs-last diverges at the execution
    with value 3 of a 3-branch SWITCH (the oracle keeps buffer 1 at 10)."""
    case = cond_case("switch", (3,))
    b = sim.create(faults=["switch-out-of-range-runs-last"])
    try:
        div = divergence.compare(case, "sim", oracle.expected(case), runner.replay(b, case))
    finally:
        b.close()
    assert div is not None and div.difference.expected.key == ("sync", 4, "buffer 1")
    assert div.difference.expected.value == [10] * 8


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cond_cases())
def test_drawn_cond_cases_conform_on_the_simulator(case: Case) -> None:
    assert conforms_on_a_fresh_sim(case)
