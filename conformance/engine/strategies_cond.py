"""Hypothesis strategies for conditional tasks (semantics.md COND-*).

What the catalog defines and is drawn: a cond handle created on the capturing model with
default value 0 and flag 0 (the runtime never writes the value, COND-03; its value starts at
0, COND-02), an IF task with 1-2 sub-models or a SWITCH task with 1-3 (COND-05, COND-06),
each sub-model captured on its own stream with aclmdlRICaptureToModelRIBegin and ended
with a NULL model before the parent capture ends (COND-07, COND-08), and the condition
value written on the host between executions (COND-04): IF runs sub-model 0 for a non-zero
value and sub-model 1 (if any) for 0, SWITCH runs sub-model ``value`` (COND-11) and none for
a value at or past its branch count (COND-13: :func:`switch_values` draws those too, on every
branch count). Not drawn: WHILE (a body must clear the value, or the execution never ends),
ASSIGN_DEFAULT (it is written at ExecuteAsync time on the host, COND-03, and disputed,
COND-12).

:func:`cond_cases` appends the conditional task to the origin stream of a positive case
after every other op (so its branches race with nothing) and follows the drawn plan with
1-3 rounds of a condition write, an execution and a sync; :func:`shared_models_cond` does
the same at the end of 1-3 models of a shared-buffer case, each with its own value.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from hypothesis import strategies as st

from . import graphs
from .graphs import Case, Cond
from .steps import Execute, SetCond, Sync
from .strategies import SYNC_MS, cases, plans_for
from .strategies_groups import any_launch
from .strategies_models import shared_models

#: IF values: zero, one, and a wide non-zero value (any non-zero selects sub-model 0)
IF_VALUES = (0, 1, 7, (1 << 63) + 5)


def switch_values(size: int) -> tuple[int, ...]:
    """The values drawn for a SWITCH of ``size`` branches: each branch, the branch count
    itself, one past it and a large value (the last three run no branch, COND-13). Values
    with bit 63 set are not drawn: the device compares signed (BLT)."""
    return (*range(size), size, size + 1, 1000)


def cond_values(op: Cond) -> tuple[int, ...]:
    """The condition values drawn for ``op`` (COND-11, COND-13)."""
    return IF_VALUES if op.type == "if" else switch_values(len(op.branches))


@st.composite
def cond_cases(draw: st.DrawFn, **kw: Any) -> Case:
    """A positive case plus one IF or SWITCH task at the end of its origin stream, whose
    plan goes on with 1-3 rounds of SetCond + Execute + Sync (COND-02, COND-04, COND-11)."""
    case = draw(cases(**kw))
    case.plan = draw(plans_for(case, max_rounds=2))
    ctype = draw(st.sampled_from(sorted(graphs.COND_SIZES)))
    lo, hi = graphs.COND_SIZES[ctype]
    branches = [[draw(any_launch(case, 0)) for _ in range(draw(st.integers(1, 2)))]
                for _ in range(draw(st.integers(lo, hi)))]
    case.ops.append(Cond(0, ctype, branches))
    at = len(case.ops) - 1
    values = cond_values(case.ops[at])
    for _ in range(draw(st.integers(1, 3))):
        case.plan += [SetCond(at, draw(st.sampled_from(values))), Execute(1), Sync(SYNC_MS)]
    case.name = "cond"
    return case


def _shift_plan(plan: list[Any], inserted: list[int]) -> list[Any]:
    """``plan`` with every op index moved past the ops inserted at ``inserted`` (indices in
    the final op list, ascending)."""
    def moved(op: int) -> int:
        for at in inserted:
            if at <= op:
                op += 1
        return op
    return [replace(s, op=moved(s.op)) if isinstance(getattr(s, "op", None), int) else s
            for s in plan]


@st.composite
def shared_models_cond(draw: st.DrawFn, **kw: Any) -> Case:
    """A case of 2-3 models over shared buffers (:func:`strategies_models.shared_models`)
    where 1-3 of the models end with an IF or SWITCH task on their origin stream; after the
    drawn plan, 1-4 rounds write one model's condition value and execute a drawn model, so
    each model's value must stay its own (COND-02, COND-04, COND-11) and memory carries from
    one model's execution to the next (EXE-01)."""
    case = draw(shared_models(**kw))
    last = {}
    sm = graphs.stream_models(case)
    for i, op in enumerate(case.ops):
        last[sm[op.stream]] = i
    chosen = sorted(draw(st.lists(st.sampled_from(sorted(last)), min_size=1,
                                  max_size=len(last), unique=True)))
    conds: dict[int, Cond] = {}
    for m in chosen:
        ctype = draw(st.sampled_from(sorted(graphs.COND_SIZES)))
        lo, hi = graphs.COND_SIZES[ctype]
        origin = case.origins[m]
        conds[m] = Cond(origin, ctype,
                        [[draw(any_launch(case, origin)) for _ in range(draw(st.integers(1, 2)))]
                         for _ in range(draw(st.integers(lo, hi)))])
    # insert from the back so the earlier positions stay valid, then name the final ones
    for m in sorted(chosen, key=lambda m: -last[m]):
        case.ops.insert(last[m] + 1, conds[m])
    at = {m: i for i, op in enumerate(case.ops) for m in chosen if op is conds[m]}
    case.plan = _shift_plan(case.plan, sorted(at.values()))
    for _ in range(draw(st.integers(1, 4))):
        m = draw(st.sampled_from(chosen))
        op = conds[m]
        values = cond_values(op)
        run = draw(st.integers(0, case.models - 1))
        case.plan += [SetCond(at[m], draw(st.sampled_from(values))), Execute(1, run),
                      Sync(SYNC_MS)]
    case.name = "shared-models-cond"
    return case
