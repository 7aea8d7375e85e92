"""Scenario S5, ``4_model_sync_external``: external event record/wait across the graph boundary.

Reproduces the CANN example (scenarios.md S5) through the contract. Common data: int32,
8 elements (``hostSrc = 1..8``), an ``aclrtCreateEventExWithFlag(ACL_EVENT_SYNC)`` event per
sub-scenario, RELAXED captures, HUGE_FIRST buffers; each sub-scenario checks ``hostDst ==
hostSrc`` and prints ``Check result success.`` (or ``Check result failed at index <i>:
actual=<a>, expected=<e>`` and stops):

1. **Stream record + graph wait external**: capture ``aclrtStreamWaitEventWithFlag(graphStream,
   event, 0, ACL_EVENT_WAIT_EXTERNAL)`` then an async D2D ``dst <- src``; outside the graph a
   synchronous H2D of ``hostSrc`` and ``aclrtRecordEvent(event, externalStream)``; execute on
   ``graphStream``, sync it, D2H, check.
2. **Graph record external + stream wait**: H2D first; capture D2D ``dst <- src`` then
   ``aclrtRecordEventWithFlag(event, graphStream, ACL_EVENT_RECORD_EXTERNAL)``; execute,
   **no** sync of ``graphStream``; ``aclrtStreamWaitEvent(externalStream, event)``, an async
   D2H on ``externalStream`` into pageable memory, sync ``externalStream``, check.
3. **Graph 1 record external + graph 2 wait external**: H2D; graph 1 = D2D ``mid <- src`` +
   external record; graph 2 = external wait (timeout 0) + D2D ``dst <- mid``; run both, sync
   only ``graphStream2``, D2H ``dst``, check.

Each sub-scenario destroys its models, event, buffers and streams; the first failure ends
the run (``main`` wraps each in ``CHECK_ERROR``). There is no final line.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from mdlri_conformance.backends.contract import (Backend, CaptureMode, EventFlag, EventRecordFlag, EventWaitFlag,
                               MemcpyKind)

from ._common import Example, Runner, ScenarioReported, reports_unsupported, run_steps

NAME = "4_model_sync_external"
ELEMENTS = 8
BYTES = ELEMENTS * 4
HOST_SRC = np.arange(1, 9, dtype=np.int32)
TITLES = (
    "=== Scenario 1: Stream Record + Graph Wait External ===",
    "=== Scenario 2: Graph Record External + Stream Wait ===",
    "=== Scenario 3: Graph1 Record External + Graph2 Wait External ===",
)
EXPECTED_LINES = [line for t in TITLES for line in (f"[INFO]  {t}",
                                                    "[INFO]  Check result success.")]


class _CheckFailed(ScenarioReported):
    """The result check failed (its line is already printed; ``main`` stops with -1)."""


@dataclass
class SyncExternalResult:
    """Everything the scenario observed."""

    lines: list[str] = field(default_factory=list)
    outputs: list[np.ndarray] = field(default_factory=list)  # hostDst of each sub-scenario
    ok: bool = False


@reports_unsupported
def run_model_sync_external(b: Backend, emit: Callable[[str], None] = print
                            ) -> SyncExternalResult:
    """Run the three sub-scenarios on ``b``; ``emit`` receives each printed line."""
    res = SyncExternalResult()
    for i, step in enumerate((_scenario1, _scenario2, _scenario3)):
        r = Runner(b, emit, res.lines)
        r.info(TITLES[i])
        if not run_steps(r, functools.partial(step, r, res)):
            return res
    res.ok = True
    return res


EXAMPLE = Example(run_model_sync_external, ("model_sync_external", NAME))


def _event(r: Runner) -> Any:
    return r.event(EventFlag.SYNC)


def _d2d(r: Runner, dst: int, src: int, stream: Any) -> None:
    r.check(r.b.memcpy_async(dst, BYTES, src, BYTES, MemcpyKind.DEVICE_TO_DEVICE, stream),
            "aclrtMemcpyAsync")


def _capture(r: Runner, stream: Any, body: Callable[[], None]) -> Any:
    """CaptureBegin(RELAXED), ``body``, CaptureEnd -> model (destroyed at cleanup)."""
    b: Any = r.b
    r.check(b.capture_begin(stream, CaptureMode.RELAXED), "aclmdlRICaptureBegin")
    capturing = r.opened(lambda: b.capture_end(stream))
    body()
    rc, model = b.capture_end(stream)
    r.closed(capturing)
    r.check(rc, "aclmdlRICaptureEnd")
    r.defer("aclmdlRIDestroy", lambda: b.destroy(model))
    return model


def _wait_external(r: Runner, stream: Any, event: Any) -> None:
    r.check(r.b.stream_wait_event_with_flag(stream, event, 0, EventWaitFlag.EXTERNAL),
            "aclrtStreamWaitEventWithFlag")


def _record_external(r: Runner, event: Any, stream: Any) -> None:
    r.check(r.b.record_event_with_flag(event, stream, EventRecordFlag.EXTERNAL),
            "aclrtRecordEventWithFlag")


def _check(r: Runner, res: SyncExternalResult, dst: np.ndarray) -> None:
    res.outputs.append(dst)
    for i, (a, e) in enumerate(zip(dst.tolist(), HOST_SRC.tolist())):
        if a != e:
            r.error(f"Check result failed at index {i}: actual={a}, expected={e}")
            raise _CheckFailed()
    r.info("Check result success.")


def _scenario1(r: Runner, res: SyncExternalResult) -> None:
    b: Any = r.b
    graph_stream, external_stream = r.stream(), r.stream()
    event = _event(r)
    src, dst = r.malloc(BYTES), r.malloc(BYTES)

    def body() -> None:
        _wait_external(r, graph_stream, event)
        _d2d(r, dst, src, graph_stream)

    model = _capture(r, graph_stream, body)
    r.h2d(src, HOST_SRC)
    r.check(b.record_event(event, external_stream), "aclrtRecordEvent")
    r.check(b.execute_async(model, graph_stream), "aclmdlRIExecuteAsync")
    r.check(b.synchronize_stream(graph_stream), "aclrtSynchronizeStream")
    _check(r, res, r.d2h(dst, HOST_SRC))


def _scenario2(r: Runner, res: SyncExternalResult) -> None:
    b: Any = r.b
    graph_stream, external_stream = r.stream(), r.stream()
    event = _event(r)
    src, dst = r.malloc(BYTES), r.malloc(BYTES)
    r.h2d(src, HOST_SRC)

    def body() -> None:
        _d2d(r, dst, src, graph_stream)
        _record_external(r, event, graph_stream)

    model = _capture(r, graph_stream, body)
    r.check(b.execute_async(model, graph_stream), "aclmdlRIExecuteAsync")
    r.check(b.stream_wait_event(external_stream, event), "aclrtStreamWaitEvent")
    host_dst = np.zeros(ELEMENTS, dtype=np.int32)  # ordinary pageable memory
    r.check(b.memcpy_async(host_dst, BYTES, dst, BYTES, MemcpyKind.DEVICE_TO_HOST,
                           external_stream), "aclrtMemcpyAsync")
    r.check(b.synchronize_stream(external_stream), "aclrtSynchronizeStream")
    _check(r, res, host_dst)


def _scenario3(r: Runner, res: SyncExternalResult) -> None:
    b: Any = r.b
    graph_stream1, graph_stream2 = r.stream(), r.stream()
    event = _event(r)
    src, mid, dst = r.malloc(BYTES), r.malloc(BYTES), r.malloc(BYTES)
    r.h2d(src, HOST_SRC)

    def body1() -> None:
        _d2d(r, mid, src, graph_stream1)
        _record_external(r, event, graph_stream1)

    def body2() -> None:
        _wait_external(r, graph_stream2, event)
        _d2d(r, dst, mid, graph_stream2)

    model1 = _capture(r, graph_stream1, body1)
    model2 = _capture(r, graph_stream2, body2)
    r.check(b.execute_async(model1, graph_stream1), "aclmdlRIExecuteAsync")
    r.check(b.execute_async(model2, graph_stream2), "aclmdlRIExecuteAsync")
    r.check(b.synchronize_stream(graph_stream2), "aclrtSynchronizeStream")
    _check(r, res, r.d2h(dst, HOST_SRC))
