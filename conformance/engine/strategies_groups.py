"""Hypothesis strategies for task groups and their updates, and for built models.

What the catalog defines (semantics.md TG-*, BLD-*; abi.md):

* a task group is a run of kernel launches on one capturing stream between
  aclmdlRICaptureTaskGrpBegin and aclmdlRICaptureTaskGrpEnd, which returns a handle (TG-01);
  nothing else may be issued on any stream of the capture while it is open (TG-04, TG-05);
* aclmdlRICaptureTaskUpdateBegin(u, handle) on a non-capturing stream that belongs to no
  model (TG-11), one kernel launch per grouped task (the operator may differ), then
  aclmdlRICaptureTaskUpdateEnd: each launch replaces the next task of the group, and the
  update runs in ``u``'s stream order (TG-10), so after a sync of ``u`` the next executions
  run the replacements; another number of launches fails (TG-13) and is not drawn; an empty
  group (no launch between GrpBegin and GrpEnd) is legal and its update has no launch
  (TG-14);
* a grouped kernel also takes SetParams with fresh parameters (taskGrp NULL, SETP-06) that
  the next Update commits (SETP-01, UPD-05); a group is changed one way or the other in a
  case, never both (their interplay is not defined);
* a built model (aclmdlRIBuildBegin, BindStream of an ACL_STREAM_PERSISTENT stream with
  HEAD, launches, EndTask, BuildEnd) stores its launches and runs them only when executed
  (BLD-01, BLD-02, BLD-03, BLD-05); executed with ExecuteAsync on the captured models'
  stream, it queues with their executions (EXE-01).

:func:`group_cases` appends one or two groups (possibly empty) to the origin stream of a
positive case (after every other op, so all of the program happens before them and their
buffers race with nothing) and follows the drawn plan with rounds of task-group updates or
of SetParams + Update on the grouped kernels, each round executed and synced.
:func:`built_cases` adds one or two built models over the case's buffers and executes them
at drawn points of the plan, which begins with a Sync (nothing the builds stored has run
yet).
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from mdlri_conformance.kernel import catalog

from . import graphs
from .graphs import Case, GroupBegin, GroupEnd, Launch
from .steps import Execute, ExecuteBuilt, GroupUpdate, SetKernel, Step, Sync, Update
from .strategies import KERNELS, N, SYNC_MS, cases, plans_for

_scalar = st.integers(-9, 9)


@st.composite
def launch_args(draw: st.DrawFn, case: Case, kernel: str) -> dict[str, int]:
    """Arguments for ``kernel`` over ``case``'s buffers: each pointer a distinct buffer of at
    least N elements (an existing one, or a fresh sentinel buffer when the pick runs past
    them), ``n`` = N, other scalars small. Appends fresh buffers to ``case``."""
    usable = [b for b, vals in enumerate(case.buffers) if len(vals) >= N]
    args: dict[str, int] = {}
    for f in catalog.get(kernel).fields:
        if f.kind == "ptr":
            cands = [b for b in usable if b not in args.values()]
            pick = draw(st.integers(0, len(cands)))
            if pick < len(cands):
                args[f.name] = cands[pick]
            else:
                case.buffers.append([graphs.SENTINEL] * N)
                args[f.name] = len(case.buffers) - 1
        else:
            args[f.name] = N if f.name == "n" else draw(_scalar)
    return args


@st.composite
def any_launch(draw: st.DrawFn, case: Case, stream: int) -> Launch:
    """A launch of any generated kernel on ``stream`` (:func:`launch_args`)."""
    kernel = draw(st.sampled_from(KERNELS))
    return Launch(stream, kernel, draw(launch_args(case, kernel)))


@st.composite
def _group_update(draw: st.DrawFn, case: Case, g: int) -> GroupUpdate:
    """One launch per task of group ``g``, any catalog kernel (TG-10)."""
    members = graphs.groups(case)[g]
    kernels = [draw(st.sampled_from(KERNELS)) for _ in members]
    return GroupUpdate(g, kernels, [draw(launch_args(case, k)) for k in kernels])


@st.composite
def _set_round(draw: st.DrawFn, case: Case, g: int) -> list[Step]:
    """SetParams (same kernel, fresh arguments) on 1..all tasks of group ``g``, then Update
    (SETP-01, UPD-05)."""
    members = graphs.groups(case)[g]
    chosen = draw(st.lists(st.sampled_from(members), min_size=1, max_size=len(members),
                           unique=True))
    steps: list[Step] = []
    for i in sorted(chosen):
        op = case.ops[i]
        assert isinstance(op, Launch)
        steps.append(SetKernel(i, draw(launch_args(case, op.kernel))))
    return steps + [Update(0)]


@st.composite
def group_cases(draw: st.DrawFn, **kw: Any) -> Case:
    """A positive case with 1-2 task groups of 0-3 launches each at the end of its origin
    stream (TG-01; an empty group is legal, TG-14), whose plan goes on with 1-3 rounds of
    either task-group updates (TG-10; none launched for an empty group, TG-14) or SetParams +
    Update on grouped kernels (SETP-01, UPD-05), each executed and synced. An empty group has
    no kernel to set, so its rounds are updates."""
    case = draw(cases(**kw))
    case.plan = draw(plans_for(case, max_rounds=2))
    count = draw(st.integers(1, 2))
    sizes = [draw(st.integers(0, 3)) for _ in range(count)]
    for size in sizes:
        case.ops.append(GroupBegin(0))
        for _ in range(size):
            case.ops.append(draw(any_launch(case, 0)))
        case.ops.append(GroupEnd(0))
    updated = {g for g in range(count) if draw(st.booleans())} if count > 1 else \
        ({0} if draw(st.booleans()) else set())
    updated |= {g for g, size in enumerate(sizes) if size == 0}
    case.plan += [Execute(1), Sync(SYNC_MS)]
    for _ in range(draw(st.integers(1, 3))):
        g = draw(st.integers(0, count - 1))
        if g in updated:
            case.plan.append(draw(_group_update(case, g)))
        else:
            case.plan += draw(_set_round(case, g))
        case.plan += [Execute(1), Sync(SYNC_MS)]
    case.name = "task-groups"
    return case


@st.composite
def built_cases(draw: st.DrawFn, **kw: Any) -> Case:
    """A positive case plus 1-2 built models of 1-3 launches over its buffers (BLD-03),
    executed 1-2 times each at drawn points of the plan; the plan begins with a Sync (the
    builds ran nothing) and ends with one after the last execution."""
    case = draw(cases(**kw))
    case.plan = draw(plans_for(case, max_rounds=2))
    count = draw(st.integers(1, 2))
    for _ in range(count):
        size = draw(st.integers(1, 3))
        case.builds.append([draw(any_launch(case, 0)) for _ in range(size)])
    for b in range(count):
        at = draw(st.integers(0, len(case.plan)))
        case.plan.insert(at, ExecuteBuilt(b, draw(st.integers(1, 2))))
    case.plan.insert(0, Sync(SYNC_MS))
    if not isinstance(case.plan[-1], Sync):
        case.plan.append(Sync(SYNC_MS))
    case.name = "built-models"
    return case
