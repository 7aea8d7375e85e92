"""Scenario S2, ``1_model_update``: task group capture and update, gated by an external event.

Reproduces the CANN example (scenarios.md S2) through the contract. The model computes
``out = (self + other * alpha) + other * alpha`` on 8 float32 values (``self = 1..8``,
``other = 2``, ``alpha = 1.1``); the second add is a task group that the host replaces,
before the second run, by an add with ``updateAlpha = 2.2``:

1. ``aclrtCreateEventWithFlag(ACL_EVENT_EXTERNAL)``; ``aclmdlRICaptureBegin(RELAXED)``;
   two synchronous ``aclrtMemcpy`` H2D (RELAXED: they run at once, not captured);
2. first add (captured), then a captured ``aclrtStreamWaitEvent`` + ``aclrtResetEvent``,
   so every run blocks there until the host records the event;
3. ``aclmdlRICaptureTaskGrpBegin``, the second add, ``aclmdlRICaptureTaskGrpEnd`` -> handle;
   ``aclmdlRICaptureEnd``;
4. two runs on ``stream``; before the second, on a separate non-capturing ``updateStream``:
   ``aclmdlRICaptureTaskUpdateBegin(handle)``, the update add, ``Update alpha value of
   aclnnAdd``, ``aclmdlRICaptureTaskUpdateEnd``; then (every run) ``aclrtRecordEvent`` on
   ``updateStream``, sync both streams, read ``out`` back and ``PrintArray``.

Run 1 prints ``5.4000 ... 12.4000``, run 2 ``7.6000 ... 14.6000``. The example's aclnn adds
are the catalog's float32 ``axpy_f32`` kernel (the contract has no aclnn). The event is
destroyed at the end (the example leaks it).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from mdlri_conformance.backends.contract import Backend, CaptureMode, EventFlag
from mdlri_conformance.kernel import catalog

from ._common import Example, Runner, print_array, reports_unsupported, run_scenario

NAME = "1_model_update"
ELEMENTS = 8
BYTES = ELEMENTS * 4
ALPHA = 1.1
UPDATE_ALPHA = 2.2
LOOP_COUNT = 2
SELF = np.arange(1, 9, dtype=np.float32)
OTHER = np.full(ELEMENTS, 2, dtype=np.float32)


def expected_out(second_alpha: float) -> np.ndarray:
    """``(self + other * alpha) + other * second_alpha`` in float32."""
    tmp = (SELF + OTHER * np.float32(ALPHA)).astype(np.float32)
    return (tmp + OTHER * np.float32(second_alpha)).astype(np.float32)


@dataclass
class ModelUpdateResult:
    """Everything the scenario observed."""

    lines: list[str] = field(default_factory=list)
    group_handle: Any = None
    outputs: list[np.ndarray] = field(default_factory=list)
    ok: bool = False


@reports_unsupported
def run_model_update(b: Backend, emit: Callable[[str], None] = print) -> ModelUpdateResult:
    """Run the scenario on ``b``; ``emit`` receives each printed line."""
    res = ModelUpdateResult()
    return run_scenario(res, b, emit, lambda r: _steps(r, res))


EXAMPLE = Example(run_model_update, ("model_update", NAME))


def _steps(r: Runner, res: ModelUpdateResult) -> None:
    b: Any = r.b
    self_dev, other_dev, out_dev, tmp_dev = (r.malloc(BYTES) for _ in range(4))
    fn = r.load_functions("axpy_f32")["axpy_f32"]
    stream = r.stream()
    rc, event = b.create_event_with_flag(EventFlag.EXTERNAL)
    r.check(rc, "aclrtCreateEventWithFlag")
    r.defer("aclrtDestroyEvent", lambda: b.destroy_event(event))

    def add(x: int, out: int, alpha: float, s: Any) -> None:
        args = catalog.get("axpy_f32").pack(x=x, y=other_dev, out=out, n=ELEMENTS,
                                            alpha=catalog.f32_bits(alpha))
        r.check(b.launch_kernel_with_host_args(fn, 1, s, None, args, len(args)), "aclnnAdd")

    r.check(b.capture_begin(stream, CaptureMode.RELAXED), "aclmdlRICaptureBegin")
    capturing = r.opened(lambda: b.capture_end(stream))
    r.h2d(self_dev, SELF)
    r.h2d(other_dev, OTHER)
    add(self_dev, tmp_dev, ALPHA, stream)
    r.check(b.stream_wait_event(stream, event), "aclrtStreamWaitEvent")
    r.check(b.reset_event(event, stream), "aclrtResetEvent")
    r.check(b.capture_task_grp_begin(stream), "aclmdlRICaptureTaskGrpBegin")
    add(tmp_dev, out_dev, ALPHA, stream)
    rc, handle = b.capture_task_grp_end(stream)
    r.check(rc, "aclmdlRICaptureTaskGrpEnd")
    res.group_handle = handle
    rc, model = b.capture_end(stream)
    r.closed(capturing)
    r.check(rc, "aclmdlRICaptureEnd")
    r.defer("aclmdlRIDestroy", lambda: b.destroy(model))
    update_stream = r.stream()

    for i in range(LOOP_COUNT):
        r.info(f"Execute model, loop count: {i + 1}.")
        r.check(b.execute_async(model, stream), "aclmdlRIExecuteAsync")
        # a step that fails below leaves this run blocked on the event: record it before the
        # cleanup, or destroying the stream waits for the run forever
        blocked = r.opened(lambda: (b.record_event(event, update_stream),
                                    b.synchronize_stream(stream)))
        if i == 1:
            r.check(b.capture_task_update_begin(update_stream, handle),
                    "aclmdlRICaptureTaskUpdateBegin")
            updating = r.opened(lambda: b.capture_task_update_end(update_stream))
            add(tmp_dev, out_dev, UPDATE_ALPHA, update_stream)
            r.info("Update alpha value of aclnnAdd")
            r.check(b.capture_task_update_end(update_stream), "aclmdlRICaptureTaskUpdateEnd")
            r.closed(updating)
        r.check(b.record_event(event, update_stream), "aclrtRecordEvent")
        r.closed(blocked)
        r.check(b.synchronize_stream(update_stream), "aclrtSynchronizeStream")
        r.check(b.synchronize_stream(stream), "aclrtSynchronizeStream")
        out = r.d2h(out_dev, SELF)
        res.outputs.append(out)
        r.info(print_array(out))
