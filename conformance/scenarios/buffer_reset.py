"""Scenario S7, ``5_reusable_buffer_reset``: memset capture and the model manifest.

Reproduces the CANN example (scenarios.md S7) through the contract: fill a 4096-byte
device buffer with 0xA5 outside any capture (async memset, sync, read back, check every
byte), capture ``aclrtMemsetAsync(buf, 0)`` in GLOBAL mode (an async memset is "safe",
MODE-01), list the model's streams and each stream's tasks with the two-call protocol and
the example's consistency checks, execute only when the manifest holds at least one task,
and check that every byte is zero afterwards.

Differences from the example: ``aclrtGetDeviceCount`` and ``aclrtCreateContext`` are not
in the contract (the backend owns device and context), so the "No Device is available"
branch is not reproduced. The task count is printed as observed; the example's README
shows ``tasks=2`` on CANN 9.2.0 and says only that both counts must be positive.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from mdlri_conformance.backends.contract import UNWRITTEN, Backend, CaptureMode, MemcpyKind

from ._common import (
    Example, Runner, ScenarioError, not_supported, reports_unsupported, run_scenario,
)

NAME = "5_reusable_buffer_reset"
BUFFER_SIZE = 4096
INITIAL_VALUE = 0xA5


@dataclass
class ResetResult:
    """Everything the scenario observed."""

    lines: list[str] = field(default_factory=list)
    prepared: np.ndarray | None = None
    stream_count: int | None = None
    task_count: int | None = None
    reset: np.ndarray | None = None
    ok: bool = False


@reports_unsupported
def run_buffer_reset(b: Backend, emit: Callable[[str], None] = print) -> ResetResult:
    """Run the scenario on ``b``; ``emit`` receives each printed line."""
    res = ResetResult()
    return run_scenario(res, b, emit, lambda r: _steps(r, res), sample=NAME)


EXAMPLE = Example(run_buffer_reset, ("buffer_reset", NAME))


def _read(r: Runner, buf: int) -> np.ndarray:
    host = np.zeros(BUFFER_SIZE, dtype=np.uint8)
    r.check(r.b.memcpy(host, BUFFER_SIZE, buf, BUFFER_SIZE, MemcpyKind.DEVICE_TO_HOST),
            "aclrtMemcpy")
    return host


def _steps(r: Runner, res: ResetResult) -> None:
    b = r.b
    stream = r.stream()
    # drained before the cleanup steps, whatever happened (the example's final sync)
    r.opened(lambda: b.synchronize_stream(stream))
    buf = r.malloc(BUFFER_SIZE)

    # Prepare, outside any capture.
    r.check(b.memset_async(buf, BUFFER_SIZE, INITIAL_VALUE, BUFFER_SIZE, stream),
            "aclrtMemsetAsync")
    r.check(b.synchronize_stream(stream), "aclrtSynchronizeStream")
    res.prepared = _read(r, buf)
    if not np.all(res.prepared == INITIAL_VALUE):
        raise ScenarioError("Failed to prepare the reusable buffer with non-zero data.")
    r.info(f"Prepared {BUFFER_SIZE}-byte reusable buffer with pattern 0x{INITIAL_VALUE:02X}.")

    # Capture the reset.
    rc = b.capture_begin(stream, CaptureMode.GLOBAL)
    if rc:
        not_supported(rc, "aclmdlRICaptureBegin")
        raise ScenarioError(f"Capture failed: aclmdlRICaptureBegin returned error code {rc}")

    def abort() -> None:
        _rc, model = b.capture_end(stream)
        if model not in (None, UNWRITTEN):
            b.destroy(model)

    capturing = r.opened(abort)
    rc = b.memset_async(buf, BUFFER_SIZE, 0, BUFFER_SIZE, stream)
    if rc:
        not_supported(rc, "aclrtMemsetAsync")
        raise ScenarioError(f"Capture failed: aclrtMemsetAsync returned error code {rc}")
    rc, model = b.capture_end(stream)
    r.closed(capturing)
    if rc:
        not_supported(rc, "aclmdlRICaptureEnd")
        raise ScenarioError(f"Capture failed: aclmdlRICaptureEnd returned error code {rc}")
    r.defer("aclmdlRIDestroy", lambda: b.destroy(model))

    # Inspect the manifest (two-call protocol, consistency checks of the example).
    rc, _, n = b.get_streams(model, None)
    r.check(rc, "aclmdlRIGetStreams")
    if not n:
        raise ScenarioError("The captured Model RI contains no Stream.")
    rc, streams, n2 = b.get_streams(model, n)
    r.check(rc, "aclmdlRIGetStreams")
    if n2 != n or any(s in (None, UNWRITTEN) for s in streams[:n]):
        raise ScenarioError("The Model RI Stream manifest is inconsistent.")
    total = 0
    for s in streams[:n]:
        rc, _, t = b.get_tasks_by_stream(s, None)
        r.check(rc, "aclmdlRIGetTasksByStream")
        if t:
            rc, tasks, t2 = b.get_tasks_by_stream(s, t)
            r.check(rc, "aclmdlRIGetTasksByStream")
            if t2 != t or any(x in (None, UNWRITTEN) for x in tasks[:t]):
                raise ScenarioError("A Model RI Task manifest is inconsistent.")
        total += t
    if total <= 0:
        raise ScenarioError("The captured Model RI contains no Task, so execution is blocked.")
    res.stream_count, res.task_count = n, total
    r.info(f"Model RI manifest: streams={n}, tasks={total}.")

    # Execute and verify.
    r.check(b.execute_async(model, stream), "aclmdlRIExecuteAsync")
    r.check(b.synchronize_stream(stream), "aclrtSynchronizeStream")
    res.reset = _read(r, buf)
    if not np.all(res.reset == 0):
        raise ScenarioError("The reusable buffer was not completely reset to zero.")
    r.info(f"Verified {BUFFER_SIZE}-byte reusable buffer reset to zero.")
