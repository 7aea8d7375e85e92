"""The ordering analysis of a task-graph case: which op happens before which.

Edges are program order on a stream and record(e) -> every later wait(e) (XS-01, XS-13: a
wait takes the event's latest record); ops of different models are never ordered here, their
executions queue on one stream (EXE-01). On that relation rest the joins (a side stream
whose last task is not a record that a later wait takes is unjoined: CaptureEnd fails with
107025, XS-02, XS-03, CAP-13) and the race rule (no two unordered ops of one model touch a
buffer, word or host buffer with a write), which :mod:`conformance.engine.validation` and the
strategies apply and the oracle relies on.
"""

from __future__ import annotations

from .graphs import (NO_TASK_OPS, TASK_OPS, Case, GraphError, Op, Record, Wait, clash,
                     op_footprint, op_models)


def happens_before_ops(ops: list[Op | None]) -> list[set[int]]:
    """For each op index, the op indices that happen before it (transitively); ``None``
    entries (ops a plan removed) take part in nothing.

    Edges: program order on a stream, and record(e) -> every later wait(e). The host calls
    of :data:`NO_TASK_OPS` issue no task and take part in nothing either. Ops of different
    models are never ordered here: what orders them is the execution order (EXE-01).
    """
    before: list[set[int]] = []
    last_on: dict[int, int] = {}
    record_of: dict[int, int] = {}
    for i, op in enumerate(ops):
        preds: set[int] = set()
        if op is not None and not isinstance(op, NO_TASK_OPS):
            j = last_on.get(op.stream)
            if j is not None:
                preds.update(before[j])
                preds.add(j)
            if isinstance(op, Wait):
                j = record_of.get(op.event)
                if j is not None:
                    preds.update(before[j])
                    preds.add(j)
            elif isinstance(op, Record):
                record_of[op.event] = i
            last_on[op.stream] = i
        before.append(preds)
    return before


def happens_before(case: Case) -> list[set[int]]:
    """:func:`happens_before_ops` of a case's ops."""
    return happens_before_ops(list(case.ops))


def last_task_ops(case: Case) -> dict[int, int]:
    """Per stream, the index of its last task-issuing op."""
    last: dict[int, int] = {}
    for i, op in enumerate(case.ops):
        if isinstance(op, TASK_OPS):
            last[op.stream] = i
    return last


def unjoined_streams(case: Case) -> list[int]:
    """The side streams whose last task is not an event record, or is a record that no
    wait issued after it takes: CaptureEnd fails with 107025 and destroys the model (XS-02,
    XS-03, CAP-13). A wait issued before that record, on the same event, took an earlier
    record's internal event (XS-13), so a side stream that records its fork or join event
    again after the origin's wait is unjoined (XS-15)."""
    last = last_task_ops(case)
    return [s for s in range(case.streams)
            if s not in case.origins and s in last and not waited_after(case, last[s])]


def waited_after(case: Case, i: int) -> bool:
    """Whether op ``i`` is a record that a wait on another stream, issued after it, takes."""
    op = case.ops[i]
    return isinstance(op, Record) and any(
        isinstance(w, Wait) and w.event == op.event and w.stream != op.stream
        for w in case.ops[i + 1:])


def check_races(case: Case, before: list[set[int]] | None = None) -> None:
    """No two unordered ops of one model touch a buffer, word or host buffer with a write
    (ops of different models never run together: executions queue on one stream).
    ``before``: :func:`happens_before` of the case, where the caller has it already."""
    if before is None:
        before = happens_before(case)
    models = op_models(case)
    foot = [op_footprint(op) for op in case.ops]
    for i in range(len(case.ops)):
        for j in range(i):
            if j in before[i] or models[i] != models[j]:
                continue
            touched = clash(foot[i], foot[j])
            if touched:
                kind, idx = sorted(touched)[0]
                raise GraphError(f"ops[{j}] and ops[{i}] touch {kind} {idx} unordered")
