"""Hypothesis strategies for captured copies of every kind, and the pageable-copy negative.

What a capture takes (semantics.md MODE-01, MODE-14, CAP-19; abi.md §3.3):

* DEVICE_TO_DEVICE, pinned HOST_TO_DEVICE (aclrtMallocHost memory) and DEVICE_TO_PINNED
  HOST copies are captured as DEFAULT tasks that move the bytes at every execution; the
  pinned host memory is read and written when the task runs, not at capture;
* an async copy with ordinary (pageable) host memory on a capturing stream is rejected
  with 107000 in every mode, issues no task, and the capture goes on (MODE-14, MODE-12);
* HOST_TO_HOST and the DEFAULT kind inside a capture are not defined by the catalog (the
  direction is inferred by the runtime; HOST_TO_HOST is refused in some modes, abi.md),
  so they are never generated.

:func:`copy_cases` draws a positive case (:func:`conformance.engine.strategies.cases`) that
holds at least one pinned host-to-device and one device-to-pinned-host copy and whose plan
refills the pinned source between executions (HostFill), so an implementation that reads
host memory at capture time, or never writes it back, diverges. :func:`pageable_copies`
adds 1-2 rejected pageable copies to a positive case.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from . import graphs
from .graphs import Case, Copy, PageableCopy
from .steps import Execute, HostFill, Sync
from .strategies import N, SYNC_MS, cases, plans_for


def _ensure_host_copies(case: Case) -> tuple[int, int]:
    """Give ``case`` a pinned host-to-device and a device-to-pinned-host copy if it lacks
    them: appended on the origin stream after every other op (all of the model happens
    before them, so they race with nothing), each on a fresh host buffer (and the h2d one
    into a fresh device buffer). Returns (an h2d source host, a d2h destination host)."""
    h2d = next((op.src for op in case.ops if isinstance(op, Copy) and op.direction == "h2d"), None)
    if h2d is None:
        h2d = len(case.hosts)
        case.hosts.append([2000 + k for k in range(N)])
        b = len(case.buffers)
        case.buffers.append([graphs.SENTINEL] * N)
        case.ops.append(Copy(0, h2d, b, "h2d"))
    d2h = next((op.dst for op in case.ops if isinstance(op, Copy) and op.direction == "d2h"), None)
    if d2h is None:
        d2h = len(case.hosts)
        case.hosts.append([graphs.SENTINEL] * N)
        src = next(op.dst for op in case.ops if isinstance(op, Copy) and op.direction == "h2d")
        case.ops.append(Copy(0, src, d2h, "d2h"))
    return h2d, d2h


@st.composite
def copy_cases(draw: st.DrawFn, **kw: Any) -> Case:
    """A positive case with pinned host-to-device and device-to-pinned-host copies (and any
    other drawn ops), whose plan ends by refilling the h2d source on the host and executing
    again: the copy moves the new contents (CAP-01, CAP-19, EXE-02)."""
    case = draw(cases(**kw))
    h2d, _ = _ensure_host_copies(case)
    case.plan = draw(plans_for(case))
    case.plan += [HostFill(h2d, draw(st.integers(-9, 9))), Execute(1), Sync(SYNC_MS)]
    case.name = "copy-kinds"
    return case


@st.composite
def pageable_copies(draw: st.DrawFn, **kw: Any) -> Case:
    """A positive case with 1-2 async copies between a device buffer and pageable host
    memory issued right after a task of a stream that has joined the capture: each answers
    107000, issues no task and the capture goes on (MODE-14, MODE-12); the plan runs as
    usual."""
    case = draw(cases(**kw))
    for _ in range(draw(st.integers(1, 2))):
        tasks = [i for i, op in enumerate(case.ops) if isinstance(op, graphs.TASK_OPS)]
        after = tasks[draw(st.integers(0, len(tasks) - 1))]
        buffer = draw(st.integers(0, len(case.buffers) - 1))
        kind = draw(st.sampled_from(graphs.HOST_COPY_KINDS))
        case.ops.insert(after + 1, PageableCopy(case.ops[after].stream, buffer, kind))
    case.plan = draw(plans_for(case, max_rounds=2))
    case.name = "pageable-copy"
    return case
