"""Hypothesis strategies for conditional tasks (semantics.md COND-*).

What the catalog defines and is drawn: a cond handle created on the capturing model with
default value 0 and flag 0 (the runtime never writes the value, COND-03; its value starts at
0, COND-02), an IF task with 1-2 sub-models or a SWITCH task with 1-3 (COND-05, COND-06),
each sub-model captured on its own stream with aclmdlRICaptureToModelRIBegin and ended
with a NULL model before the parent capture ends (COND-07, COND-08), and the condition
value written on the host between executions (COND-04): IF runs sub-model 0 for a non-zero
value and sub-model 1 (if any) for 0, SWITCH runs sub-model ``value`` (COND-11). Not drawn:
WHILE (a body must clear the value, or the execution never ends), ASSIGN_DEFAULT (it is
written at ExecuteAsync time on the host, COND-03, and disputed, COND-12), SWITCH values out
of range (open, Q-19).

:func:`cond_cases` appends the conditional task to the origin stream of a positive case
after every other op (so its branches race with nothing) and follows the drawn plan with
1-3 rounds of a condition write, an execution and a sync.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from . import graphs
from .graphs import Case, Cond, Execute, SetCond, Sync
from .strategies import SYNC_MS, cases, plans_for
from .strategies_groups import any_launch

#: IF values: zero, one, and a wide non-zero value (any non-zero selects sub-model 0)
IF_VALUES = (0, 1, 7, (1 << 63) + 5)


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
    values = IF_VALUES if ctype == "if" else tuple(range(len(branches)))
    for _ in range(draw(st.integers(1, 3))):
        case.plan += [SetCond(at, draw(st.sampled_from(values))), Execute(1), Sync(SYNC_MS)]
    case.name = "cond"
    return case
