"""Timeouts and synchronization: aclrtSynchronizeStreamWithTimeout (TMO-01..TMO-06, STAT-06).

A model "in flight" is one that waits on a device word (captured value_wait, word == 1); the
host releases it by writing 1. Elapsed times are only ever checked as lower bounds.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import numpy as np
import pytest

from backends.contract import (
    WAIT_FOREVER, Cap, CaptureStatus, Err, KernelTaskParams, MemcpyKind, StreamFlag, StreamStatus,
    TaskParams, TaskType, ValueWaitFlag,
)
from conformance import expect
from conformance.harness import SENTINEL, Buf, Dev

pytestmark = pytest.mark.requires(Cap.SYNC_TIMEOUT)

X = np.arange(1, 9, dtype=np.int32)
TIMEOUT_MS = 100
#: clock granularity allowance for the lower bound on elapsed time
SLACK_MS = 2


def gated_model(dev: Dev, s: Any) -> tuple[Any, int, Buf]:
    """Capture value_wait(flag == 1) + fallback_main(x -> out); returns (model, flag, out)."""
    flag = dev.buffer64(0)
    x, out = dev.buffer(X), dev.buffer(n=8)
    dev.begin(s)
    expect.ok(dev.b.value_wait(flag, 1, ValueWaitFlag.EQ, s), "aclrtValueWait in capture")
    dev.launch("fallback_main", s, input=x, output=out)
    return dev.end(s), flag, out


def timed_sync(dev: Dev, s: Any, timeout_ms: int) -> tuple[int, float]:
    """(rc, elapsed ms) of one aclrtSynchronizeStreamWithTimeout."""
    t0 = time.monotonic()
    rc = dev.b.synchronize_stream_with_timeout(s, timeout_ms)
    return rc, (time.monotonic() - t0) * 1000.0


# ---------------------------------------------------------------------------------------------
# TMO-01 .. TMO-03


@pytest.mark.clause("TMO-01")
@pytest.mark.requires(Cap.CAPTURE, Cap.KERNELS, Cap.VALUE_TASKS, Cap.THREADS)
def test_minus_one_waits_until_done(dev: Dev) -> None:
    """TMO-01: timeout -1 waits until the work completes, however long that takes."""
    s = dev.stream()
    model, flag, out = gated_model(dev, s)
    delay_s = 0.3
    released: dict[str, float] = {}

    def release() -> None:
        dev.b.set_device(0)
        one = np.array([1], dtype=np.uint64)
        released["at"] = time.monotonic()  # before the write: the wait cannot end earlier
        released["rc"] = dev.b.memcpy(flag, 8, one, 8, MemcpyKind.HOST_TO_DEVICE)

    expect.ok(dev.b.execute_async(model, s), "aclmdlRIExecuteAsync")
    timer = threading.Timer(delay_s, release)
    timer.start()
    try:
        rc, _ = timed_sync(dev, s, WAIT_FOREVER)
        returned_at = time.monotonic()
    finally:
        timer.join()
    expect.ok(int(released.get("rc", -1)), "host release of the flag from the timer thread (setup)")
    expect.ok(rc, "aclrtSynchronizeStreamWithTimeout(-1)")
    expect.true(returned_at >= released["at"], "sync(-1) returned only after the release",
                "after the host released the wait",
                f"{(released['at'] - returned_at) * 1000:.1f} ms before it")
    expect.eq(dev.read(out), X + 10, "output after sync(-1)")


@pytest.mark.clause("TMO-01")
@pytest.mark.requires(Cap.CAPTURE, Cap.KERNELS)
def test_positive_timeout_returns_when_done(dev: Dev) -> None:
    """TMO-01: a positive timeout returns 0 once the work has completed within it."""
    s = dev.stream()
    x, out = dev.buffer(X), dev.buffer(n=8)
    dev.begin(s)
    dev.launch("fallback_main", s, input=x, output=out)
    model = dev.end(s)
    expect.ok(dev.b.execute_async(model, s), "aclmdlRIExecuteAsync")
    expect.ok(dev.b.synchronize_stream_with_timeout(s, 5000),
              "aclrtSynchronizeStreamWithTimeout(5000)")
    expect.eq(dev.read(out), X + 10, "output after the timed sync")


@pytest.mark.clause("TMO-01")
@pytest.mark.requires(Cap.CAPTURE, Cap.KERNELS, Cap.VALUE_TASKS)
def test_positive_timeout_limits_wait(dev: Dev) -> None:
    """TMO-01: a positive timeout gives up (non-zero rc) after at least that many ms on blocked work."""
    s = dev.stream()
    model, flag, out = gated_model(dev, s)
    expect.ok(dev.b.execute_async(model, s), "aclmdlRIExecuteAsync")
    try:
        rc, elapsed = timed_sync(dev, s, TIMEOUT_MS)
        expect.ne(rc, Err.SUCCESS, f"aclrtSynchronizeStreamWithTimeout({TIMEOUT_MS}) on blocked work")
        expect.true(elapsed >= TIMEOUT_MS - SLACK_MS, "elapsed time of the expired sync",
                    f">= {TIMEOUT_MS} ms", f"{elapsed:.1f} ms")
    finally:
        dev.write64(flag, 1)
    dev.sync(s)


@pytest.mark.clause("TMO-02")
@pytest.mark.parametrize("timeout_ms", [0, -2])
def test_invalid_timeouts(dev: Dev, timeout_ms: int) -> None:
    """TMO-02: timeout 0 or below -1 returns 107000."""
    s = dev.stream()
    expect.rc(dev.b.synchronize_stream_with_timeout(s, timeout_ms), Err.RT_PARAM_INVALID,
              f"aclrtSynchronizeStreamWithTimeout({timeout_ms})")


@pytest.mark.clause("TMO-03")
@pytest.mark.requires(Cap.CAPTURE, Cap.KERNELS, Cap.VALUE_TASKS)
def test_expiry_returns_507046_and_work_continues(dev: Dev) -> None:
    """TMO-03: an expired sync returns 507046; the work completes once released and a later sync returns 0."""
    s = dev.stream()
    model, flag, out = gated_model(dev, s)
    expect.ok(dev.b.execute_async(model, s), "aclmdlRIExecuteAsync")
    try:
        rc, elapsed = timed_sync(dev, s, TIMEOUT_MS)
        expect.rc(rc, Err.RT_STREAM_SYNC_TIMEOUT, f"aclrtSynchronizeStreamWithTimeout({TIMEOUT_MS})")
        expect.true(elapsed >= TIMEOUT_MS - SLACK_MS, "elapsed time of the expired sync",
                    f">= {TIMEOUT_MS} ms", f"{elapsed:.1f} ms")
        expect.eq(dev.read(out), np.full(8, SENTINEL), "output while blocked")
    finally:
        dev.write64(flag, 1)
    expect.ok(dev.b.synchronize_stream_with_timeout(s, 5000), "sync after the release")
    expect.eq(dev.read(out), X + 10, "output after the release")


# ---------------------------------------------------------------------------------------------
# TMO-04 .. TMO-06


@pytest.mark.clause("TMO-04")
@pytest.mark.parametrize("flag", [StreamFlag.PERSISTENT, StreamFlag.DEVICE_USE_ONLY,
                                  StreamFlag.CPU_SCHEDULE], ids=lambda f: f.name)
def test_special_streams_sync_as_noop(dev: Dev, flag: StreamFlag) -> None:
    """TMO-04: sync on a PERSISTENT, DEVICE_USE_ONLY or CPU_SCHEDULE stream returns 0."""
    rc, s = dev.b.create_stream_with_config(0, flag)
    expect.ok(rc, f"aclrtCreateStreamWithConfig({flag.name}) (setup)")
    try:
        expect.ok(dev.b.synchronize_stream_with_timeout(s, TIMEOUT_MS),
                  f"aclrtSynchronizeStreamWithTimeout on a {flag.name} stream")
        expect.ok(dev.b.synchronize_stream(s), f"aclrtSynchronizeStream on a {flag.name} stream")
    finally:
        dev.b.destroy_stream(s)


@pytest.mark.clause("TMO-05", "STAT-06")
@pytest.mark.requires(Cap.CAPTURE, Cap.KERNELS)
def test_sync_of_capturing_stream(dev: Dev) -> None:
    """TMO-05: sync or query of a capturing stream returns 107027 and the capture still ends with 0."""
    s = dev.stream()
    x, out = dev.buffer(X), dev.buffer(n=8)
    dev.begin(s)
    dev.launch("fallback_main", s, input=x, output=out)
    expect.rc(dev.b.synchronize_stream_with_timeout(s, TIMEOUT_MS), Err.RT_STREAM_CAPTURED,
              "aclrtSynchronizeStreamWithTimeout on a capturing stream")
    expect.rc(dev.b.synchronize_stream(s), Err.RT_STREAM_CAPTURED,
              "aclrtSynchronizeStream on a capturing stream")
    rc, _ = dev.b.stream_query(s)
    expect.rc(rc, Err.RT_STREAM_CAPTURED, "aclrtStreamQuery on a capturing stream")
    rc, status, _ = dev.b.capture_get_info(s)
    expect.ok(rc, "aclmdlRICaptureGetInfo")
    expect.eq(status, CaptureStatus.ACTIVE, "capture status after the refused syncs")
    rc, model = dev.b.capture_end(s)
    expect.ok(rc, "aclmdlRICaptureEnd after the refused syncs")
    dev.model(model)
    dev.execute(model, s)
    expect.eq(dev.read(out), X + 10, "output of the captured model")


@pytest.mark.clause("TMO-06")
@pytest.mark.requires(Cap.CAPTURE, Cap.KERNELS, Cap.VALUE_TASKS, Cap.LISTING, Cap.TASK_TYPE,
                      Cap.SET_PARAMS)
def test_model_still_running_after_expired_sync(dev: Dev) -> None:
    """TMO-06: after an expired sync the model still counts as running: SetParams returns 107040."""
    s = dev.stream()
    model, flag, out = gated_model(dev, s)
    (k,) = dev.kernel_tasks(model)
    x2 = dev.buffer(X * 4)
    data = dev.args("fallback_main", input=x2, output=out)
    params = TaskParams(type=TaskType.KERNEL, kernel=KernelTaskParams(
        func_handle=dev.func("fallback_main"), args=data, is_host_args=1,
        args_size=len(data), num_blocks=1))
    expect.ok(dev.b.execute_async(model, s), "aclmdlRIExecuteAsync")
    try:
        expect.rc(dev.b.synchronize_stream_with_timeout(s, TIMEOUT_MS),
                  Err.RT_STREAM_SYNC_TIMEOUT, "expired sync (setup)")
        expect.rc(dev.b.task_set_params(k, params), Err.RT_MODEL_UPDATE_FAILED,
                  "aclmdlRITaskSetParams after the expired sync")
    finally:
        dev.write64(flag, 1)
    dev.sync(s)
    expect.eq(dev.read(out), X + 10, "output of the execution (old params)")
    expect.ok(dev.b.task_set_params(k, params), "aclmdlRITaskSetParams after the execution ended")


@pytest.mark.clause("TMO-06", "TMO-03")
@pytest.mark.requires(Cap.CAPTURE, Cap.KERNELS, Cap.VALUE_TASKS)
def test_query_after_expired_sync_reports_not_ready(dev: Dev) -> None:
    """TMO-06, TMO-03: after an expired sync the execution is still in flight, and
    aclrtStreamQuery says so at once (NOT_READY) instead of waiting for it; once released the
    stream completes (kills the fault 'hang-query-sync')."""
    s = dev.stream()
    model, flag, out = gated_model(dev, s)
    expect.ok(dev.b.execute_async(model, s), "aclmdlRIExecuteAsync")
    try:
        expect.rc(dev.b.synchronize_stream_with_timeout(s, TIMEOUT_MS),
                  Err.RT_STREAM_SYNC_TIMEOUT, "expired sync (setup)")
        rc, status = dev.b.stream_query(s)
        expect.ok(rc, "aclrtStreamQuery of the blocked stream")
        expect.eq(status, StreamStatus.NOT_READY, "aclrtStreamQuery status while blocked")
    finally:
        dev.write64(flag, 1)
    dev.sync(s)
    rc, status = dev.b.stream_query(s)
    expect.ok(rc, "aclrtStreamQuery after the sync")
    expect.eq(status, StreamStatus.COMPLETE, "aclrtStreamQuery status after the sync")
