"""Hypothesis strategies for blocked executions and value-wait conditions.

A blocked case (:func:`blocked_cases`) waits, on its origin stream, on a *host word*
(graphs.host_words) with any ``aclrtValueWait`` flag (GEQ, EQ, AND, NOR) and values drawn
across the 64-bit range (edges 0, 1, 2^63-1, 2^63, 2^64-1 and near-equal pairs, where
GEQ's signed difference wraps, abi.md §3.5). The first execution finds the word blocking;
while it is in flight the plan probes it (an expired timed sync, TMO-03; StreamQuery,
TMO-06; SetParams or Disable, refused with 107040, SETP-12; Update, the no-op of a READY
model, UPD-09), then a HostWrite releases it and a sync sees every result. A destroyed
blocked case (:func:`destroyed_while_blocked`) ends instead with Destroy while the execution
is blocked, released from another host thread while Destroy waits (LIFE-03). Draws depend only on earlier draws; the builder items of
:mod:`conformance.engine.strategies` keep shrinking to few tasks.
"""

from __future__ import annotations

from typing import Any, Sequence, cast

from hypothesis import strategies as st

from . import graphs
from .graphs import Case, Launch, ValueWait
from .steps import Destroy, Disable, Execute, HostWrite, Query, SetKernel, Step, Sync, Update
from .strategies import EDGE_VALUES, SYNC_MS, WAIT_FLAGS, _round, build_plan, cases, distances

# ---------------------------------------------------------------------------------------------
# value-wait conditions across the 64-bit range

M64 = graphs.WORD_MASK
_word_value = st.one_of(st.sampled_from(EDGE_VALUES), st.integers(0, M64))


def blocking_values(flag: int, want: int, near: int, far: int) -> tuple[int, int, int]:
    """(wait value, a word value that blocks it, a word value that releases it) for
    ``aclrtValueWait(addr, value, flag)`` (graphs.wait_holds): GEQ compares the signed
    difference, so a word below the value blocks and one at or above it releases, each less
    than 2^63 away on the value's side of the signed range, where the runtime's signed
    comparison agrees; EQ blocks on any other value; AND needs a non-zero value and blocks on its
    complement; NOR needs a value other than all-ones, blocks on its complement and
    releases on 0."""
    want &= M64
    if flag == 0:
        # within 2^63 of the value on its own side, so the documented signed difference and
        # the runtime's signed comparison agree (graphs.geq_readings_agree, abi.md §3.5)
        w = max(graphs.signed64(want), -(1 << 63) + 1)
        below = min(far, (1 << 63) - 2, w + (1 << 63) - 1)
        above = min(near, (1 << 63) - 1, (1 << 63) - 1 - w)
        return w & M64, (w - 1 - below) & M64, (w + above) & M64
    if flag == 1:
        return want, (want + 1 + far) & M64, want
    if flag == 2:
        want = want or 1
        return want, ~want & M64, want & -want
    want = want if want != M64 else M64 - 1
    return want, ~want & M64, 0


_blocking_wait = st.tuples(st.sampled_from(WAIT_FLAGS), _word_value, distances, distances)

# ---------------------------------------------------------------------------------------------
# blocked executions

#: short sync timeouts (ms) drawn while an execution is blocked: each costs its time, and a
#: spec must stay well inside the kill matrix's 10 s spec timeout on a loaded machine
SHORT_SYNC_MS: tuple[int, ...] = (10, 30)
_probe = st.one_of(st.tuples(st.just("sync"), st.sampled_from(SHORT_SYNC_MS)),
                   st.tuples(st.just("query"), st.just(0)),
                   st.tuples(st.just("set_kernel"), st.integers(0, 7)),
                   st.tuples(st.just("disable"), st.integers(0, 7)),
                   st.tuples(st.just("update"), st.just(0)))
#: how long after Destroy was called the host store releases the blocked execution (ms)
RELEASE_AFTER_MS: tuple[int, ...] = (60, 120)


def _probe_steps(case: Case, probes: Sequence[tuple[str, int]],
                 never_disabled: list[int]) -> list[Step]:
    """The steps made while an execution is blocked: an expired timed sync (TMO-03), a
    stream query (TMO-06), SetParams or Disable of a live kernel task (107040, SETP-12),
    Update (0, nothing pending: UPD-09, UPD-01)."""
    steps: list[Step] = []
    for kind, arg in probes:
        if kind == "sync":
            steps.append(Sync(arg))
        elif kind == "query":
            steps.append(Query())
        elif kind == "update":
            steps.append(Update())
        elif never_disabled:
            i = never_disabled[arg % len(never_disabled)]
            op = cast(Launch, case.ops[i])
            steps.append(SetKernel(i, dict(op.args)) if kind == "set_kernel" else Disable(i))
    return steps


def _blocking_case(draw: st.DrawFn, **kw: Any) -> tuple[Case, int, int, int]:
    """A drawn case with a value wait on a new host word inserted on its origin stream:
    (case, the word, a value that blocks the wait, a value that releases it)."""
    case = draw(cases(**kw))
    flag, want, near, far = draw(_blocking_wait)
    value, blocking, releasing = blocking_values(flag, want, near, far)
    w = len(case.words)
    case.words.append(blocking)
    origin_slots = [i for i, op in enumerate(case.ops) if op.stream == 0] + [len(case.ops)]
    at = origin_slots[draw(st.integers(0, len(origin_slots) - 1))]
    case.ops.insert(at, ValueWait(0, w, value, flag))
    return case, w, blocking, releasing


@st.composite
def destroyed_while_blocked(draw: st.DrawFn, **kw: Any) -> Case:
    """A case whose first execution blocks on a host word; after optional probes, Destroy is
    called while it is blocked and a host thread stores the releasing value 60 or 120 ms
    later: Destroy waits for the execution (LIFE-03), returns 0 only after that store began,
    and a sync then sees every result. A Destroy that does not wait for the execution
    returns before the store began."""
    case, w, _, releasing = _blocking_case(draw, **kw)
    launches = [i for i, op in enumerate(case.ops) if isinstance(op, Launch)]
    probes = _probe_steps(case, draw(st.lists(_probe, max_size=1)), launches)
    after = draw(st.sampled_from(RELEASE_AFTER_MS))
    case.plan = [Execute(1), *probes, Destroy(w, releasing, after), Sync(SYNC_MS)]
    case.name = "destroyed-while-blocked"
    return case


@st.composite
def blocked_cases(draw: st.DrawFn, **kw: Any) -> Case:
    """A case whose origin stream waits on a host word (any flag, 64-bit edge values) that
    the first execution finds blocking: while it is in flight the plan probes it (expired
    timed syncs, StreamQuery, refused SetParams/Disable), then a host store releases it and a
    sync sees every result (TMO-01, TMO-03, TMO-06, SETP-12). The drawn rounds follow; a
    second blocked round (the word re-armed first) may close the plan."""
    case, w, blocking, releasing = _blocking_case(draw, **kw)
    rounds = draw(st.lists(_round, min_size=0, max_size=2))
    later = build_plan(case, rounds)
    disabled = {s.op for s in later if isinstance(s, Disable)}
    launches = [i for i, op in enumerate(case.ops) if isinstance(op, Launch)]
    first = _probe_steps(case, draw(st.lists(_probe, min_size=1, max_size=2)), launches)
    plan: list[Step] = [Execute(1), *first, HostWrite(w, releasing), Sync(SYNC_MS), *later]
    if draw(st.booleans()):
        live = [i for i in launches if i not in disabled]
        again = _probe_steps(case, draw(st.lists(_probe, min_size=1, max_size=1)), live)
        plan += [HostWrite(w, blocking), Execute(1), *again, HostWrite(w, releasing),
                 Sync(SYNC_MS)]
    case.plan = plan
    case.name = "blocked"
    return case
