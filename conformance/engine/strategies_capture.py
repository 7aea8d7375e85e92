"""Hypothesis strategies for the capture-end negatives and emptied streams.

* :func:`end_on_side`: a CaptureEnd on a joined side stream mid-capture (107036, the
  capture stays ACTIVE and ends normally on the origin, CAP-11);
* :func:`outside_wait`: a capturing stream waits on an event recorded before the capture
  began: 107024, no task, and the capture goes on (XS-05);
* :func:`stray_wait`: a capturing stream waits on an event never recorded so far (a fresh
  one, or one the capture records later: a record after the wait): 0, no task, and the
  capture goes on (XS-14);
* :func:`unjoined`: a side stream whose last task is not an event record, so CaptureEnd
  fails with 107025 and the model is NULL (XS-02, XS-03, CAP-13);
* :func:`record_again`: a side stream whose last task records its fork or join event again
  after the origin's wait on it, a record no wait takes (XS-13), so CaptureEnd fails with
  107025 just the same (XS-15);
* :func:`emptied_stream`: a one-stream capture whose every task is disabled over one or
  two Updates; the stream then lists one NOP (DIS-07). Only a stream of kernels and value
  tasks can be emptied: event tasks cannot be disabled and the origin of a multi-stream
  capture carries the event resets (XS-08).
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from . import graphs
from .graphs import Case, Launch, Memset, Op, Record, Wait
from .steps import Disable, Execute, Step, Sync, Update
from .strategies import KERNELS, N, SYNC_MS, _Builder, _pick, _scalars, cases, plans_for

# ---------------------------------------------------------------------------------------------
# capture-end negatives


def _add_side_stream(case: Case) -> int:
    """Fork and join one more side stream that only waits and records (XS-01, XS-02)."""
    s, e = case.streams, case.events
    case.ops += [Record(0, e), Wait(s, e), Record(s, e + 1), Wait(0, e + 1)]
    case.streams += 1
    case.events += 2
    return s


@st.composite
def end_on_side(draw: st.DrawFn, **kw: Any) -> Case:
    """A CaptureEnd on a joined side stream in the middle of the capture: 107036, every
    stream stays ACTIVE, and the capture goes on to end normally on the origin; the plan
    then runs as usual (CAP-11)."""
    case = draw(cases(**kw))
    if case.streams == 1:
        _add_side_stream(case)
    s = draw(st.integers(1, case.streams - 1))
    first = min(i for i, op in enumerate(case.ops) if op.stream == s)
    at = draw(st.integers(first + 1, len(case.ops)))
    case.ops.insert(at, graphs.EndOnSide(s))
    case.plan = draw(plans_for(case, max_rounds=1))
    case.name = "end-on-side"
    return case


def _joined_slot(draw: st.DrawFn, case: Case) -> tuple[int, int]:
    """A stream and an op index at which it is capturing: the origin anywhere, a side stream
    after its first op (the wait that joined it)."""
    s = draw(st.integers(0, case.streams - 1))
    first = min((i for i, op in enumerate(case.ops) if op.stream == s), default=-1) if s else -1
    return s, draw(st.integers(first + 1, len(case.ops)))


@st.composite
def outside_wait(draw: st.DrawFn, **kw: Any) -> Case:
    """A wait, on the origin or on a side stream that has joined, for an event recorded
    before the capture began: 107024 and no task; the capture goes on, ends normally and
    the plan runs as usual, every other task in place (XS-05)."""
    case = draw(cases(**kw))
    s, at = _joined_slot(draw, case)
    case.ops.insert(at, graphs.OutsideWait(s))
    case.plan = draw(plans_for(case, max_rounds=1))
    case.name = "outside-wait"
    return case


@st.composite
def stray_wait(draw: st.DrawFn, **kw: Any) -> Case:
    """A wait, on the origin or on a side stream that has joined, for an event that has not
    been recorded yet: a fresh event, or one of the case's events whose first record comes
    later in the capture (that record is then captured as usual). 0 and no task; the
    capture goes on, ends normally and the plan runs as usual, every other task in place
    (XS-14)."""
    case = draw(cases(**kw))
    s, at = _joined_slot(draw, case)
    first_record = {}
    for i, op in enumerate(case.ops):
        if isinstance(op, Record):
            first_record.setdefault(op.event, i)
    later = sorted(e for e, i in first_record.items() if i >= at)
    event = draw(st.sampled_from([-1, *later]))
    if event < 0:
        event = case.events
        case.events += 1
    case.ops.insert(at, graphs.StrayWait(s, event))
    case.plan = draw(plans_for(case, max_rounds=1))
    case.name = "stray-wait"
    return case


@st.composite
def unjoined(draw: st.DrawFn, **kw: Any) -> Case:
    """A side stream whose last task is not an event record: a fresh side stream that
    never joins back, or (XS-03) a task issued on a side stream after it rejoined.
    CaptureEnd fails with 107025, the model comes back NULL and every stream leaves the
    capture (XS-02, XS-03, CAP-13). No plan: there is no model."""
    case = draw(cases(**kw))
    b = len(case.buffers)
    case.buffers.append([graphs.SENTINEL] * N)
    fresh = case.streams < graphs.MAX_STREAMS and (case.streams == 1 or draw(st.booleans()))
    if fresh:
        s, e = case.streams, case.events
        case.ops += [Record(0, e), Wait(s, e)]
        case.streams += 1
        case.events += 1
    else:
        s = draw(st.integers(1, case.streams - 1))
    tail: Op = (Launch(s, "fill", {"out": b, "n": N, "value": draw(st.integers(-9, 9))})
                if draw(st.booleans()) else Memset(s, b, 0))
    case.ops.append(tail)
    case.plan = []
    case.name = "unjoined"
    return case


#: how :func:`record_again` joins a side stream and which event it then records again
RECORD_AGAIN = ("join_with_fork_event", "record_the_join_event", "record_the_fork_event")


@st.composite
def record_again(draw: st.DrawFn, **kw: Any) -> Case:
    """A side stream joined back to the origin (through its fork event, the XS-13 pattern,
    or a fresh one), whose last task then records its fork or join event once more, after
    the origin's wait: that record is a new internal event no wait takes (XS-13), so
    CaptureEnd fails with 107025 and the model is NULL (XS-15, CAP-13). The fork event may
    be one that other side streams waited on too (forks from one record). No plan."""
    case = draw(cases(**kw))
    if case.streams == 1:
        _add_side_stream(case)
    s = draw(st.integers(1, case.streams - 1))
    fork = next(op.event for op in case.ops if isinstance(op, Wait) and op.stream == s)
    how = draw(st.sampled_from(RECORD_AGAIN))
    join = fork if how == "join_with_fork_event" else case.events
    case.events = max(case.events, join + 1)
    case.ops += [Record(s, join), Wait(case.origins[0], join),
                 Record(s, join if how == "record_the_join_event" else fork)]
    case.plan = []
    case.name = "record-again"
    return case


# ---------------------------------------------------------------------------------------------
# emptied streams


_origin_launch = st.tuples(st.just("launch"), st.sampled_from(list(KERNELS)), st.just(0),
                           st.just(0), st.tuples(_pick, _pick, _pick), _scalars)
_origin_write = st.tuples(st.just("value_write"), st.just(0), st.just(0), _pick,
                          st.integers(0, 50))


@st.composite
def emptied_stream(draw: st.DrawFn) -> Case:
    """A one-stream capture of kernels and value writes whose tasks are disabled over one or
    two rounds; the Update that removes the last one leaves the stream with a single NOP
    (DIS-07), and executions still succeed (they run nothing)."""
    items = draw(st.lists(st.one_of(_origin_launch, _origin_write), min_size=1, max_size=4))
    b = _Builder()
    for item in items:
        getattr(b, item[0])(item)
    case = b.finish()
    order = draw(st.permutations(list(range(len(case.ops)))))
    cut = draw(st.integers(0, len(order) - 1))
    plan: list[Step] = []
    for part in (order[:cut], order[cut:]):
        if part:
            plan += [*(Disable(i) for i in part), Update(), Execute(1), Sync(SYNC_MS)]
    case.plan = plan
    case.name = "emptied-stream"
    return case
