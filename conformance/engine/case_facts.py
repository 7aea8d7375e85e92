"""Facts about a case that both the oracle and the runner read from its description alone
(no behaviour of a runtime): which user streams a listing cannot tell apart, whether an
execution can block, which streams the committed Disables emptied."""

from __future__ import annotations

from .graphs import (DEFAULT_OPS, TASK_OPS, Case, GroupBegin, Launch, PageableCopy, ValueWait,
                     ValueWrite, host_words, kinds, model_events, stream_models)


def stream_classes(case: Case) -> list[int]:
    """Per user stream, the lowest user stream of the same model that a listing cannot tell
    apart from it: the same sequence of task kinds (DEFAULT ones left out) and the same
    number of DEFAULT tasks (memsets and copies). A stream's class is what an observation
    of stream order (one model's GetStreams) can name without guessing."""
    models = stream_models(case)
    keys: list[tuple[int, tuple[str, ...], int]] = []
    for s in range(case.streams):
        ops = [op for op in case.ops if op.stream == s and isinstance(op, TASK_OPS)]
        keys.append((models[s], tuple(kinds(op for op in ops if not isinstance(op, DEFAULT_OPS))),
                     sum(isinstance(op, DEFAULT_OPS) for op in ops)))
    return [keys.index(k) for k in keys]


def may_block(case: Case) -> bool:
    """Whether an execution of the case can block on a value wait until a host step."""
    hosts = host_words(case)
    return any(isinstance(op, ValueWait) and op.word in hosts for op in case.ops)


def uses_pageable(case: Case) -> bool:
    """Whether the case issues an async copy of pageable host memory (refused in capture,
    MODE-14: only a runtime that tells pageable memory apart can refuse it)."""
    return any(isinstance(op, PageableCopy) for op in case.ops)


def emptied_streams(case: Case, removed: set[int]) -> list[int]:
    """The user streams whose every task op is in ``removed`` (op indices an Update took
    out), among those that can be emptied: all their tasks kernels or value tasks (event
    tasks cannot be disabled), and a model's origin only when that model has no events (it
    carries their EVENT_RESET tasks, XS-08). Update gives such a stream one NOP (DIS-07).
    A stream that opened a task group is never emptied: the NOP tasks GrpBegin issued on it
    (TG-03) stay through every Update, so its task list is never empty."""
    out = []
    models = stream_models(case)
    grouped = {op.stream for op in case.ops if isinstance(op, GroupBegin)}
    for s in range(case.streams):
        mine = [i for i, op in enumerate(case.ops)
                if op.stream == s and isinstance(op, TASK_OPS)]
        if not mine or s in grouped or (s in case.origins and model_events(case, models[s])):
            continue
        if all(isinstance(case.ops[i], (Launch, ValueWrite, ValueWait)) and i in removed
               for i in mine):
            out.append(s)
    return out
