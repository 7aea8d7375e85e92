"""Setup helpers shared by several spec modules (each one a setup step, not an observable)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

from mdlri_conformance.backends.contract import (
    Cap, CaptureMode, CondHandleFlag, CondTaskParams, CondTaskType, Err, ModelStreamFlag,
    StreamFlag, TaskType,
)
from mdlri_conformance.conformance import expect
from mdlri_conformance.conformance.harness import Buf, Dev

N = 8

#: an error-table cell: sets up the state, makes the call, returns its rc
Case = Callable[[Dev], int]


def case(fn: Case, expected: int | tuple[int, ...], *caps: Cap) -> Any:
    """An error-table cell as a pytest param: its id is the cell function's name without the
    leading underscore (so node ids name the cell), marked with the capabilities it needs."""
    return pytest.param(fn, expected, id=fn.__name__.removeprefix("_"),
                        marks=[pytest.mark.requires(*caps)] if caps else [])


@dataclass
class Parent:
    """A parent capture in progress: origin stream, model (GetInfo handle), cond handle."""

    stream: Any
    model: Any
    handle: Any


def parent(dev: Dev, default: int = 0, flag: int = CondHandleFlag.NONE) -> Parent:
    """Begin a capture and create a cond handle on its model (both required to succeed)."""
    s = dev.stream()
    dev.begin(s)
    _, m = dev.capture_status(s, "(setup)")
    rc, h = dev.b.cond_handle_create(m, default, flag)
    expect.ok(rc, "aclmdlRICondHandleCreate (setup)")
    return Parent(s, m, h)


def add(dev: Dev, p: Parent, ctype: int, size: int) -> list[Any]:
    """AddCondTask on the parent's stream; the ``size`` sub-model handles."""
    rc, slots = dev.b.add_cond_task(CondTaskParams(p.handle, ctype, size, size), p.stream, 0)
    expect.ok(rc, "aclmdlRIAddCondTask (setup)")
    return list(slots[:size])


def capture_sub(dev: Dev, sub: Any, body: Callable[[Any], None]) -> None:
    """Capture ``body(stream)`` into sub-model ``sub`` on a fresh stream."""
    u = dev.stream()
    expect.ok(dev.b.capture_to_model_ri_begin(u, sub, CaptureMode.RELAXED),
              "aclmdlRICaptureToModelRIBegin (setup)")
    body(u)
    rc, _ = dev.b.capture_end(u, null_model=True)
    expect.ok(rc, "aclmdlRICaptureEnd of the sub-model (setup)")


def sub_model(dev: Dev) -> Any:
    """A captured IF sub-model (one ``fill`` kernel) of a parent capture left open (COND-06)."""
    s = dev.stream()
    dev.begin(s)
    m = dev.b.capture_get_info(s)[2]
    rc, h = dev.b.cond_handle_create(m, 0, CondHandleFlag.NONE)
    expect.ok(rc, "aclmdlRICondHandleCreate (setup)")
    rc, slots = dev.b.add_cond_task(CondTaskParams(h, CondTaskType.IF, 1, 1), s, 0)
    expect.ok(rc, "aclmdlRIAddCondTask (setup)")
    u = dev.stream()
    expect.ok(dev.b.capture_to_model_ri_begin(u, slots[0], CaptureMode.RELAXED),
              "aclmdlRICaptureToModelRIBegin (setup)")
    dev.launch("fill", u, out=dev.buffer(n=8), n=8, value=1)
    expect.ok(dev.b.capture_end(u, null_model=True)[0], "sub CaptureEnd (setup)")
    return slots[0]


def persistent_stream(dev: Dev) -> Any:
    """A new ACL_STREAM_PERSISTENT stream (for BindStream), destroyed at the end of the spec."""
    return dev.stream(StreamFlag.PERSISTENT)


def begin_build(dev: Dev) -> Any:
    """BuildBegin(flag 0), tracked for destruction."""
    rc, m = dev.b.build_begin(0)
    expect.ok(rc, "aclmdlRIBuildBegin (setup)")
    return dev.model(m)


def bound_stream(dev: Dev) -> Any:
    """A PERSISTENT stream bound (HEAD) to a new building model: a model stream."""
    s = persistent_stream(dev)
    expect.ok(dev.b.bind_stream(begin_build(dev), s, ModelStreamFlag.HEAD),
              "aclmdlRIBindStream (setup)")
    return s


def capture_chain(dev: Dev, kernels: list[int]) -> tuple[Any, list[Any], list[Buf]]:
    """Multi-stream capture: stream 0 is the origin, stream i joins by waiting on stream i-1.

    ``kernels[i]`` fills are issued on stream i (so each internal stream can be told apart by
    its KERNEL count), then every joined stream records an event its parent waits on.
    Attachment order is stream 0, 1, 2, ...
    """
    streams = [dev.stream() for _ in kernels]
    bufs = [dev.buffer(n=N) for _ in kernels]
    forks = [dev.event() for _ in kernels[1:]]
    joins = [dev.event() for _ in kernels[1:]]
    dev.begin(streams[0])
    for i in range(1, len(streams)):
        dev.fork(streams[i - 1], streams[i], forks[i - 1])
    for i in reversed(range(len(streams))):
        for k in range(kernels[i]):
            dev.fill(streams[i], bufs[i], 100 * i + k)
        if i > 0:
            dev.join(streams[i - 1], streams[i], joins[i - 1])
    return dev.end(streams[0]), streams, bufs


@dataclass
class Updating:
    """A stream in task-update mode (TG-10) on the one-``fill`` group of a captured model;
    ``finish()`` re-issues the fill and ends the update (both required to succeed)."""

    stream: Any
    finish: Callable[[], None]


def update_mode_stream(dev: Dev) -> Updating:
    """Capture a task group of one ``fill`` kernel, then UpdateBegin on a fresh stream."""
    s, u, out = dev.stream(), dev.stream(), dev.buffer(n=N)
    dev.begin(s)
    expect.ok(dev.b.capture_task_grp_begin(s), "aclmdlRICaptureTaskGrpBegin (setup)")
    dev.fill(s, out, 1)
    rc, h = dev.b.capture_task_grp_end(s)
    expect.ok(rc, "aclmdlRICaptureTaskGrpEnd (setup)")
    dev.end(s)
    expect.ok(dev.b.capture_task_update_begin(u, h), "aclmdlRICaptureTaskUpdateBegin (setup)")

    def finish() -> None:
        dev.fill(u, out, 2)
        expect.ok(dev.b.capture_task_update_end(u), "aclmdlRICaptureTaskUpdateEnd (cleanup)")

    return Updating(u, finish)


def gated_main(dev: Dev, s: Any) -> tuple[Any, int, Buf]:
    """:meth:`Dev.gated` fallback_main(X -> out) with a new gate word and buffers; returns
    (model, gate word, out)."""
    word = dev.buffer64(0)
    x, out = dev.buffer(np.arange(1, 9, dtype=np.int32)), dev.buffer(n=8)
    return dev.gated(s, word, "fallback_main", input=x, output=out), word, out


def faulted_model(dev: Dev, s: Any) -> Any:
    """A model driven into FAULT by disabling its captured memset (DIS-06)."""
    scratch, x, y = dev.buffer(n=8), dev.buffer(np.arange(1, 9, dtype=np.int32)), dev.buffer(n=8)
    dev.begin(s)
    dev.launch("fallback_main", s, input=x, output=y)
    expect.ok(dev.b.memset_async(scratch.addr, scratch.nbytes, 0, scratch.nbytes, s),
              "aclrtMemsetAsync in capture (setup)")
    model = dev.end(s)
    default = dev.tasks_of_type(model, TaskType.DEFAULT)
    expect.true(len(default) >= 1, "a DEFAULT task listed (setup)", ">= 1", 0)
    expect.rc(dev.b.task_disable(default[0]), Err.RT_PARAM_INVALID,
              "aclmdlRITaskDisable(DEFAULT) to fault the model (setup)")
    return model
