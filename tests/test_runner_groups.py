"""Task groups and their updates, and built models, in the generated tier: the case language
(JSON round trip, old cases unchanged, :func:`validation.check` keeps cases inside TG-*/BLD-*
defined behaviour), the oracle against the simulator, and planted bugs caught as divergences
(a runtime that ignores a task-group update, one that replaces the group's tasks in the wrong
order, one that runs a built model's tasks when they are issued)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from mdlri_conformance.backends.contract import Err
from mdlri_conformance.conformance.engine import (divergence, graphs, oracle, oracle_state,
                                                  runner, validation)
from mdlri_conformance.conformance.engine.graphs import (Case, GraphError, GroupBegin, GroupEnd,
                                                         Launch, Memset)
from mdlri_conformance.conformance.engine.observe import first_difference
from mdlri_conformance.conformance.engine.steps import (Disable, Execute, ExecuteBuilt,
                                                        GroupUpdate, SetKernel, Sync, Update)
from mdlri_conformance.conformance.engine.strategies_groups import built_cases, group_cases

from .runner_helpers import Wrapped, conforms_on_a_fresh_sim

X = list(range(1, 9))
S = [-1] * 8


def affine(x: int, y: int, a: int, b: int) -> Launch:
    return Launch(0, "affine", {"x": x, "y": y, "n": 8, "a": a, "b": b})


def fill(out: int, value: int) -> Launch:
    return Launch(0, "fill", {"out": out, "n": 8, "value": value})


def group_case() -> Case:
    """One ungrouped fill, then a group of two affines; executed, group-updated (the first
    task becomes a fill: another operator, TG-10), executed again."""
    return Case(streams=1, buffers=[X, S, S], words=[], events=0,
                ops=[fill(1, 5), GroupBegin(0), affine(0, 1, 2, 1), affine(1, 2, 1, 1),
                     GroupEnd(0)],
                plan=[Execute(), Sync(),
                      GroupUpdate(0, ["fill", "affine"],
                                  [{"out": 1, "n": 8, "value": 7},
                                   {"x": 1, "y": 2, "n": 8, "a": -1, "b": 0}]),
                      Execute(), Sync()])


def built_case() -> Case:
    """A captured fill and a built affine over the same buffers, executed in turn."""
    return Case(streams=1, buffers=[X, S, S], words=[], events=0,
                ops=[fill(1, 5)], builds=[[affine(1, 2, 3, 1)]],
                plan=[Sync(), Execute(), ExecuteBuilt(0), Sync()])


class IgnoresGroupUpdate(Wrapped):
    """UpdateBegin/UpdateEnd and the launches between them answer 0 but change nothing
    (TG-10 broken)."""

    def __init__(self, inner: Any) -> None:
        super().__init__(inner)
        self.updating: list[Any] = []

    def capture_task_update_begin(self, stream: Any, handle: Any) -> int:
        self.updating.append(stream)
        return int(Err.SUCCESS)

    def capture_task_update_end(self, stream: Any) -> int:
        if stream in self.updating:
            self.updating.remove(stream)
        return int(Err.SUCCESS)

    def launch_kernel_with_host_args(self, func: Any, blocks: int, stream: Any, *rest: Any) -> int:
        if stream in self.updating:
            return int(Err.SUCCESS)
        return self._inner.launch_kernel_with_host_args(func, blocks, stream, *rest)


class ReversesGroupUpdate(Wrapped):
    """The launches of a task-group update replace the group's tasks last first (TG-10's
    "in order" broken)."""

    def __init__(self, inner: Any) -> None:
        super().__init__(inner)
        self.held: dict[Any, list[tuple[Any, ...]]] = {}

    def capture_task_update_begin(self, stream: Any, handle: Any) -> int:
        rc = self._inner.capture_task_update_begin(stream, handle)
        if rc == Err.SUCCESS:
            self.held[stream] = []
        return rc

    def launch_kernel_with_host_args(self, func: Any, blocks: int, stream: Any, *rest: Any) -> int:
        if stream in self.held:
            self.held[stream].append((func, blocks, stream, *rest))
            return int(Err.SUCCESS)
        return self._inner.launch_kernel_with_host_args(func, blocks, stream, *rest)

    def capture_task_update_end(self, stream: Any) -> int:
        for call in reversed(self.held.pop(stream, [])):
            self._inner.launch_kernel_with_host_args(*call)
        return self._inner.capture_task_update_end(stream)


class FailsEmptyUpdate(Wrapped):
    """UpdateEnd with no launch since UpdateBegin answers 507000 even on an empty group
    (TG-14 broken: 0 launches match a group of 0 tasks)."""

    def __init__(self, inner: Any) -> None:
        super().__init__(inner)
        self.launched: dict[Any, int] = {}

    def capture_task_update_begin(self, stream: Any, handle: Any) -> int:
        rc = self._inner.capture_task_update_begin(stream, handle)
        if rc == Err.SUCCESS:
            self.launched[stream] = 0
        return rc

    def launch_kernel_with_host_args(self, func: Any, blocks: int, stream: Any, *rest: Any) -> int:
        if stream in self.launched:
            self.launched[stream] += 1
        return self._inner.launch_kernel_with_host_args(func, blocks, stream, *rest)

    def capture_task_update_end(self, stream: Any) -> int:
        rc = self._inner.capture_task_update_end(stream)
        if self.launched.pop(stream, None) == 0:
            return int(Err.RT_INTERNAL_ERROR)
        return rc


def empty_group_case() -> Case:
    """The group case with an empty group after the first, updated (no launch) between two
    executions, the first group's update after it."""
    case = group_case()
    case.ops += [GroupBegin(0), GroupEnd(0)]
    case.plan = [Execute(), Sync(), GroupUpdate(1, [], []), Execute(), Sync(),
                 *case.plan[2:]]
    return case


class RunsBuildEagerly(Wrapped):
    """A kernel issued on a bound stream also runs at once (BLD-03 broken: tasks on a bound
    stream are stored, not executed)."""

    def __init__(self, inner: Any) -> None:
        super().__init__(inner)
        self.bound: list[Any] = []

    def bind_stream(self, model: Any, stream: Any, flag: int) -> int:
        rc = self._inner.bind_stream(model, stream, flag)
        if rc == Err.SUCCESS:
            self.bound.append(stream)
        return rc

    def launch_kernel_with_host_args(self, func: Any, blocks: int, stream: Any, *rest: Any) -> int:
        if stream in self.bound:
            rc, s = self._inner.create_stream()
            assert rc == Err.SUCCESS
            self._inner.launch_kernel_with_host_args(func, blocks, s, *rest)
            self._inner.synchronize_stream(s)
            self._inner.destroy_stream(s)
        return self._inner.launch_kernel_with_host_args(func, blocks, stream, *rest)


# ---------------------------------------------------------------------------------------------
# the case language


def test_group_and_build_cases_round_trip() -> None:
    for case in (group_case(), built_case()):
        validation.check(case)
        again = graphs.from_json(case.to_json())
        assert again.to_dict() == case.to_dict()
        assert again.ops == case.ops and again.plan == case.plan and again.builds == case.builds


def test_a_case_without_groups_or_builds_reads_as_before() -> None:
    d = Case(streams=1, buffers=[X], words=[], events=0, ops=[fill(0, 1)], plan=[]).to_dict()
    assert "builds" not in d
    assert graphs.from_dict(d).builds == []


def test_groups_are_numbered_by_their_end() -> None:
    case = group_case()
    case.ops += [GroupBegin(0), fill(2, 1), GroupEnd(0)]
    validation.check(case)
    assert graphs.groups(case) == [[2, 3], [6]]
    assert graphs.grouped_ops(case) == {2: 0, 3: 0, 6: 1}


@pytest.mark.parametrize("ops, message", [
    ([GroupBegin(0), fill(1, 1), Memset(0, 2, 0), GroupEnd(0)], "memset on stream 0"),
    ([fill(1, 1), GroupEnd(0)], "without an open group"),
    ([GroupBegin(0), fill(1, 1), GroupBegin(0), fill(2, 1), GroupEnd(0), GroupEnd(0)],
     "while the group"),
    ([GroupBegin(0), fill(1, 1)], "never ended"),
])
def test_check_keeps_groups_defined(ops: list[Any], message: str) -> None:
    case = Case(streams=1, buffers=[X, S, S], words=[], events=0, ops=ops, plan=[])
    with pytest.raises(GraphError, match=message):
        validation.check(case)


@pytest.mark.parametrize("step, message", [
    (GroupUpdate(0, ["fill"], [{"out": 1, "n": 8, "value": 7}]), "for a group of 2 tasks"),
    (GroupUpdate(1, [], []), "group 1 out of range"),
    (GroupUpdate(0, ["fill", "fill"], [{"out": 1, "n": 8, "value": 7}, {"out": 9, "n": 8,
                                                                        "value": 1}]),
     "buffer 9 out of range"),
    (Disable(2), "disable of grouped"),
    (SetKernel(2, {"x": 0, "y": 1, "n": 8, "a": 1, "b": 1}), "which a group_update also"),
])
def test_check_keeps_group_plans_defined(step: Any, message: str) -> None:
    case = group_case()
    case.plan.append(step)
    with pytest.raises(GraphError, match=message):
        validation.check(case)


def test_an_empty_group_is_a_group() -> None:
    case = empty_group_case()
    validation.check(case)
    assert graphs.groups(case) == [[2, 3], []]
    assert graphs.group_ends(case) == [4, 6]
    bad = empty_group_case()
    bad.plan.append(GroupUpdate(1, ["fill"], [{"out": 1, "n": 8, "value": 7}]))
    with pytest.raises(GraphError, match="for a group of 0 tasks"):
        validation.check(bad)


def test_check_keeps_builds_defined() -> None:
    case = built_case()
    case.builds = [[Launch(1, "fill", {"out": 1, "n": 8, "value": 1})]]
    with pytest.raises(GraphError, match="a build binds one stream"):
        validation.check(case)
    case.builds = [[]]
    with pytest.raises(GraphError, match="launches is not in 1..8"):
        validation.check(case)
    case = built_case()
    case.plan.append(ExecuteBuilt(1))
    with pytest.raises(GraphError, match="built model 1 out of range"):
        validation.check(case)


# ---------------------------------------------------------------------------------------------
# oracle and simulator


def test_group_update_replaces_the_tasks_in_order(sim_backend: Any) -> None:
    case = group_case()
    exp = oracle.expected(case)
    got = {o.key: o.value for o in exp}
    assert got[("step", 2, "rc")] == [0, 0, 0, 0, 0]
    assert got[("sync", 1, "buffer 2")] == [2 * x + 2 for x in X]
    assert got[("sync", 4, "buffer 1")] == [7] * 8
    assert got[("sync", 4, "buffer 2")] == [-7] * 8
    assert first_difference(exp, runner.replay(sim_backend, case)) is None


def test_a_group_set_by_setparams_changes_at_update(sim_backend: Any) -> None:
    case = group_case()
    case.plan = [SetKernel(3, {"x": 0, "y": 2, "n": 8, "a": 0, "b": 4}), Update(), Execute(),
                 Sync()]
    exp = oracle.expected(case)
    assert {o.key: o.value for o in exp}[("sync", 3, "buffer 2")] == [4] * 8
    assert first_difference(exp, runner.replay(sim_backend, case)) is None


def test_a_built_model_runs_only_when_executed(sim_backend: Any) -> None:
    case = built_case()
    exp = oracle.expected(case)
    got = {o.key: o.value for o in exp}
    assert got[("sync", 0, "buffer 2")] == S
    assert got[("sync", 3, "buffer 2")] == [16] * 8
    assert first_difference(exp, runner.replay(sim_backend, case)) is None


def test_an_empty_group_update_answers_zero(sim_backend: Any) -> None:
    case = empty_group_case()
    exp = oracle.expected(case)
    got = {o.key: o.value for o in exp}
    assert got[("step", 2, "rc")] == [0, 0, 0]  # UpdateBegin, UpdateEnd, the sync (TG-14)
    assert got[("sync", 4, "buffer 2")] == [2 * x + 2 for x in X]  # nothing replaced
    assert first_difference(exp, runner.replay(sim_backend, case)) is None


def test_an_update_racing_an_execution_is_not_defined() -> None:
    case = group_case()
    case.plan = [Execute(), GroupUpdate(0, ["fill", "fill"], [
        {"out": 1, "n": 8, "value": 7}, {"out": 2, "n": 8, "value": 7}]), Sync()]
    with pytest.raises(oracle_state.UndefinedCase, match="Q-21"):
        oracle.expected(case)


@pytest.mark.parametrize("wrapper, case, key", [
    (IgnoresGroupUpdate, group_case, ("sync", 4, "buffer 1")),
    (ReversesGroupUpdate, group_case, ("sync", 4, "buffer 2")),
    (RunsBuildEagerly, built_case, ("sync", 0, "buffer 2")),
    (FailsEmptyUpdate, empty_group_case, ("step", 2, "rc")),
])
def test_planted_bugs_are_caught(sim_backend: Any, wrapper: Any, case: Any, key: Any) -> None:
    c = case()
    div = divergence.compare(c, "sim", oracle.expected(c), runner.replay(wrapper(sim_backend), c))
    assert div is not None and not div.unsupported
    assert div.difference.expected.key == key


_SETTINGS = settings(max_examples=20, deadline=None,
                     suppress_health_check=[HealthCheck.too_slow])


@_SETTINGS
@given(group_cases())
def test_drawn_group_cases_conform_on_the_simulator(case: Case) -> None:
    assert conforms_on_a_fresh_sim(case)


@_SETTINGS
@given(built_cases())
def test_drawn_built_cases_conform_on_the_simulator(case: Case) -> None:
    assert conforms_on_a_fresh_sim(case)


def test_the_group_strategies_reach_both_kinds_of_round() -> None:
    seen: set[str] = set()

    @settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
    @given(group_cases())
    def draw(case: Case) -> None:
        validation.check(case)
        grouped = graphs.grouped_ops(case)
        if any(isinstance(s, GroupUpdate) for s in case.plan):
            seen.add("group_update")
        if any(isinstance(s, SetKernel) and s.op in grouped for s in case.plan):
            seen.add("set_grouped")
        if len(graphs.groups(case)) == 2:
            seen.add("two groups")
        if any(not members for members in graphs.groups(case)):
            seen.add("empty group")

    draw()
    assert seen == {"group_update", "set_grouped", "two groups", "empty group"}
