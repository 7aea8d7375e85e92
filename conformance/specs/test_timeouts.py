"""Timeouts and synchronization: aclrtSynchronizeStreamWithTimeout, aclrtSynchronizeEventWithTimeout
and device-side task timeouts (TMO-01..TMO-11, STAT-06).

A model "in flight" is one that waits on a device word (captured value_wait, word == 1); the
host releases it by writing 1. Elapsed times are only ever checked as lower bounds.

Two kinds of timeout, two codes: a *host deadline* (the timeout argument of a sync) gives
507046 for a stream sync and aclmdlRIExecute and 507047 for an event sync
(`core/src/stream/stream.cc:1958`, `core/src/event/event.cc:1094`,
`core/src/common/errcode_manage.cc:140, 201`); a *device-side task timeout* (a kernel that runs
past its TIMEOUT / TIMEOUT_US launch attribute) gives 107020, returned once by the next sync of
its stream before that sync's own deadline (TMO-10). The waiting kernel is the catalog's
``wait_flag`` ({int32_t *flag; int32_t *out; int32_t value}: waits until flag[0] != 0, then
out[0] = value).
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import pytest

from mdlri_conformance.backends.contract import (
    WAIT_FOREVER, Cap, CaptureStatus, Err, LaunchAttr, LaunchAttrId, LaunchKernelCfg,
    StreamFlag, StreamStatus,
)
from mdlri_conformance.conformance import expect
from mdlri_conformance.conformance.framework import outcomes
from mdlri_conformance.conformance.harness import SENTINEL, Buf, Dev, release_later
from mdlri_conformance.conformance.specs._setups import gated_main
from mdlri_conformance.kernel import catalog

pytestmark = pytest.mark.requires(Cap.SYNC_TIMEOUT)

X = np.arange(1, 9, dtype=np.int32)
TIMEOUT_MS = 100
#: clock granularity allowance for the lower bound on elapsed time
SLACK_MS = 2


def timed_sync(dev: Dev, s: Any, timeout_ms: int) -> tuple[int, float]:
    """(rc, elapsed ms) of one aclrtSynchronizeStreamWithTimeout."""
    t0 = time.monotonic()
    rc = dev.b.synchronize_stream_with_timeout(s, timeout_ms)
    return rc, (time.monotonic() - t0) * 1000.0


# ---------------------------------------------------------------------------------------------
# TMO-01 .. TMO-03


@pytest.mark.clause("TMO-01")
@pytest.mark.requires(Cap.CAPTURE, Cap.KERNELS, Cap.VALUE_TASKS, Cap.THREADS)
@pytest.mark.requires(Cap.BLOCKING_WAIT)
def test_minus_one_waits_until_done(dev: Dev) -> None:
    """TMO-01: timeout -1 waits until the work completes, however long that takes."""
    s = dev.stream()
    model, flag, out = gated_main(dev, s)
    delay_s = 0.3
    timer, released = release_later(dev, flag, delay_s)
    expect.ok(dev.b.execute_async(model, s), "aclmdlRIExecuteAsync")
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
@pytest.mark.requires(Cap.BLOCKING_WAIT)
def test_positive_timeout_limits_wait(dev: Dev) -> None:
    """TMO-01: a positive timeout gives up (non-zero rc) after at least that many ms on blocked work."""
    s = dev.stream()
    model, flag, out = gated_main(dev, s)
    expect.ok(dev.b.execute_async(model, s), "aclmdlRIExecuteAsync")
    try:
        rc, elapsed = timed_sync(dev, s, TIMEOUT_MS)
        expect.rc(rc, Err.RT_STREAM_SYNC_TIMEOUT,
                  f"aclrtSynchronizeStreamWithTimeout({TIMEOUT_MS}) on blocked work")
        expect.true(elapsed >= TIMEOUT_MS - SLACK_MS, "elapsed time of the expired sync",
                    f">= {TIMEOUT_MS} ms", f"{elapsed:.1f} ms")
    finally:
        dev.write64(flag, 1)
    dev.sync(s)


@pytest.mark.clause("TMO-02")
@pytest.mark.parametrize("timeout_ms", [-2, -1000])
def test_invalid_timeouts(dev: Dev, timeout_ms: int) -> None:
    """TMO-02: a timeout below -1 returns 107000 (ACL layer, `src/acl/aclrt_impl/stream.cpp:141-149`)."""
    s = dev.stream()
    expect.rc(dev.b.synchronize_stream_with_timeout(s, timeout_ms), Err.RT_PARAM_INVALID,
              f"aclrtSynchronizeStreamWithTimeout({timeout_ms})")


@pytest.mark.clause("TMO-02")
@pytest.mark.parametrize("timeout_ms", [-2, -1000])
def test_invalid_event_timeouts(dev: Dev, timeout_ms: int) -> None:
    """TMO-02: aclrtSynchronizeEventWithTimeout with a timeout below -1 returns 107000, checked
    before the event (`src/acl/aclrt_impl/event.cpp:184-190`)."""
    sync_event = event_sync(dev)
    e = dev.event()
    expect.rc(sync_event(e, timeout_ms), Err.RT_PARAM_INVALID,
              f"aclrtSynchronizeEventWithTimeout({timeout_ms})")
    expect.rc(sync_event(None, timeout_ms), Err.RT_PARAM_INVALID,
              f"aclrtSynchronizeEventWithTimeout(NULL, {timeout_ms})")


# ---------------------------------------------------------------------------------------------
# TMO-07 / TMO-08: timeout 0


@pytest.mark.clause("TMO-07", "TMO-08")
def test_timeout_zero_checks_idle_stream(dev: Dev) -> None:
    """TMO-07: timeout 0 "checks whether synchronization is complete immediately"
    (`include/external/acl/acl_rt.h:2817`): on a stream with nothing pending it returns 0.
    (TMO-08: the real code rejects 0 with 107000, `api/impl/api_error.cc:1442-1444`.)"""
    s = dev.stream()
    expect.rc(dev.b.synchronize_stream_with_timeout(s, 0), Err.SUCCESS,
              "aclrtSynchronizeStreamWithTimeout(0) of an idle stream")


@pytest.mark.clause("TMO-07", "TMO-08")
def test_timeout_zero_checks_completed_event(dev: Dev) -> None:
    """TMO-07: aclrtSynchronizeEventWithTimeout with timeout 0 on a completed event returns 0
    (`acl_rt.h:1845`; TMO-08: the code rejects 0, `api/impl/api_error.cc:1772-1774`)."""
    sync_event = event_sync(dev)
    s = dev.stream()
    e = dev.event()
    expect.ok(dev.b.record_event(e, s), "aclrtRecordEvent (setup)")
    dev.sync(s)
    expect.rc(sync_event(e, 0), Err.SUCCESS, "aclrtSynchronizeEventWithTimeout(0) of a completed event")


@pytest.mark.clause("TMO-09")
@pytest.mark.parametrize("timeout_ms", [-1, TIMEOUT_MS])
def test_event_never_recorded_syncs_at_once(dev: Dev, timeout_ms: int) -> None:
    """TMO-09: an event that was never recorded has nothing to wait for: the event sync returns
    0 at once, never 507047 (Event::Synchronize, `core/src/event/event.cc:1084-1088`); the same
    for aclrtSynchronizeEvent."""
    sync_event = event_sync(dev)
    e = dev.event()
    expect.rc(sync_event(e, timeout_ms), Err.SUCCESS,
              f"aclrtSynchronizeEventWithTimeout({timeout_ms}) of an event never recorded")
    sync_plain = getattr(dev.b, "synchronize_event", None)
    if sync_plain is not None:
        expect.rc(sync_plain(e), Err.SUCCESS, "aclrtSynchronizeEvent of an event never recorded")


@pytest.mark.clause("TMO-07", "TMO-08")
@pytest.mark.requires(Cap.CAPTURE, Cap.KERNELS, Cap.VALUE_TASKS)
@pytest.mark.requires(Cap.BLOCKING_WAIT)
def test_timeout_zero_on_blocked_work(dev: Dev) -> None:
    """TMO-07: timeout 0 on blocked work answers at once with the expiry code (507046 for the
    stream, 507047 for an event recorded after the work) and cancels nothing."""
    s = dev.stream()
    e = dev.event()
    model, flag, out = gated_main(dev, s)
    expect.ok(dev.b.execute_async(model, s), "aclmdlRIExecuteAsync")
    expect.ok(dev.b.record_event(e, s), "aclrtRecordEvent after the blocked execution (setup)")
    sync_event = getattr(dev.b, "synchronize_event_with_timeout", None)
    try:
        expect.rc(dev.b.synchronize_stream_with_timeout(s, 0), Err.RT_STREAM_SYNC_TIMEOUT,
                  "aclrtSynchronizeStreamWithTimeout(0) on blocked work")
        if sync_event is not None:
            expect.rc(sync_event(e, 0), Err.RT_EVENT_SYNC_TIMEOUT,
                      "aclrtSynchronizeEventWithTimeout(0) of a record behind blocked work")
    finally:
        dev.write64(flag, 1)
    dev.sync(s)
    expect.eq(dev.read(out), X + 10, "output after the release")


@pytest.mark.clause("TMO-03")
@pytest.mark.requires(Cap.CAPTURE, Cap.KERNELS, Cap.VALUE_TASKS)
@pytest.mark.requires(Cap.BLOCKING_WAIT)
def test_expiry_returns_507046_and_work_continues(dev: Dev) -> None:
    """TMO-03: an expired sync returns 507046; the work completes once released and a later sync returns 0."""
    s = dev.stream()
    model, flag, out = gated_main(dev, s)
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
@pytest.mark.requires(Cap.BLOCKING_WAIT)
def test_model_still_running_after_expired_sync(dev: Dev) -> None:
    """TMO-06: after an expired sync the model still counts as running: SetParams returns 107040."""
    s = dev.stream()
    model, flag, out = gated_main(dev, s)
    (k,) = dev.kernel_tasks(model)
    x2 = dev.buffer(X * 4)
    params = dev.kernel_params("fallback_main", input=x2, output=out)
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
@pytest.mark.requires(Cap.BLOCKING_WAIT)
def test_query_after_expired_sync_reports_not_ready(dev: Dev) -> None:
    """TMO-06, TMO-03: after an expired sync the execution is still in flight, and
    aclrtStreamQuery says so at once (NOT_READY) instead of waiting for it; once released the
    stream completes (kills the fault 'hang-query-sync')."""
    s = dev.stream()
    model, flag, out = gated_main(dev, s)
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


# ---------------------------------------------------------------------------------------------
# TMO-09: host deadline of an event sync


def event_sync(dev: Dev) -> Any:
    """The backend's aclrtSynchronizeEventWithTimeout (HostStateBackend); UNSUPPORTED without it."""
    fn = getattr(dev.b, "synchronize_event_with_timeout", None)
    if fn is None:
        raise outcomes.Unsupported("the backend has no aclrtSynchronizeEventWithTimeout "
                                   "(HostStateBackend.synchronize_event_with_timeout)")
    return fn


@pytest.mark.clause("TMO-09")
@pytest.mark.requires(Cap.CAPTURE, Cap.KERNELS, Cap.VALUE_TASKS)
@pytest.mark.requires(Cap.BLOCKING_WAIT)
def test_event_sync_expiry_returns_507047(dev: Dev) -> None:
    """TMO-09: an event sync past its host deadline returns 507047 (not 507046, not 107020;
    `core/src/event/event.cc:1094`, `core/src/common/errcode_manage.cc:201`); the work goes on
    and a later sync of the event returns 0."""
    sync_event = event_sync(dev)
    s = dev.stream()
    e = dev.event()
    model, flag, out = gated_main(dev, s)
    expect.ok(dev.b.execute_async(model, s), "aclmdlRIExecuteAsync")
    expect.ok(dev.b.record_event(e, s), "aclrtRecordEvent after the blocked execution")
    try:
        t0 = time.monotonic()
        rc = sync_event(e, TIMEOUT_MS)
        elapsed = (time.monotonic() - t0) * 1000.0
        expect.rc(rc, Err.RT_EVENT_SYNC_TIMEOUT, f"aclrtSynchronizeEventWithTimeout({TIMEOUT_MS})")
        expect.true(elapsed >= TIMEOUT_MS - SLACK_MS, "elapsed time of the expired event sync",
                    f">= {TIMEOUT_MS} ms", f"{elapsed:.1f} ms")
    finally:
        dev.write64(flag, 1)
    expect.ok(sync_event(e, 5000), "aclrtSynchronizeEventWithTimeout after the release")
    dev.sync(s)
    expect.eq(dev.read(out), X + 10, "output after the release")


@pytest.mark.clause("TMO-09")
@pytest.mark.requires(Cap.CAPTURE, Cap.KERNELS, Cap.VALUE_TASKS, Cap.THREADS)
@pytest.mark.requires(Cap.BLOCKING_WAIT)
@pytest.mark.parametrize("call", ["with_timeout(-1)", "plain"])
def test_event_sync_without_deadline_waits_for_the_record(dev: Dev, call: str) -> None:
    """TMO-09: aclrtSynchronizeEventWithTimeout(-1) and aclrtSynchronizeEvent have no host
    deadline: on a record behind blocked work they return 0 only after a timer thread has
    released the work, never 507047 at once. aclrtSynchronizeEvent is the timeout -1 call
    (`api/api_c.cc:784-795` calls EventSynchronize(evt) whose timeout defaults to -1,
    `api/api.hpp:275`); Event::Synchronize waits for the record's task until the deadline,
    -1 none (`core/src/event/event.cc:1081-1170`)."""
    sync_t = event_sync(dev)
    if call == "plain":
        plain = getattr(dev.b, "synchronize_event", None)
        if plain is None:
            raise outcomes.Unsupported("the backend has no aclrtSynchronizeEvent "
                                       "(HostStateBackend.synchronize_event)")
        sync, what = plain, "aclrtSynchronizeEvent"
    else:
        sync, what = (lambda ev: sync_t(ev, WAIT_FOREVER)), "aclrtSynchronizeEventWithTimeout(-1)"
    s = dev.stream()
    e = dev.event()
    model, flag, out = gated_main(dev, s)
    timer, released = release_later(dev, flag, 0.3)
    expect.ok(dev.b.execute_async(model, s), "aclmdlRIExecuteAsync")
    expect.ok(dev.b.record_event(e, s), "aclrtRecordEvent after the blocked execution")
    timer.start()
    try:
        rc = sync(e)
        returned_at = time.monotonic()
    finally:
        timer.join()
        if "rc" not in released:
            dev.write64(flag, 1)
    expect.ok(int(released.get("rc", -1)), "host release of the flag from the timer thread (setup)")
    expect.rc(rc, Err.SUCCESS, f"{what} of a record behind blocked work")
    expect.true(returned_at >= released["at"], f"{what} returned only after the release",
                "after the host released the wait",
                f"{(released['at'] - returned_at) * 1000:.1f} ms before it")
    dev.sync(s)
    expect.eq(dev.read(out), X + 10, "output after the release")


# ---------------------------------------------------------------------------------------------
# TMO-10 / TMO-11: device-side task timeout

WAIT = "wait_flag"
#: the launch timeout of the waiting kernel (TIMEOUT_US, microseconds)
KERNEL_TIMEOUT_US = 50_000
#: the host deadline of the syncs that must see the device-side timeout first (ms)
HOST_DEADLINE_MS = 5000
#: the value the waiting kernel writes once released
RELEASED = 77


def waiting_kernel(dev: Dev) -> Any:
    """The function handle of ``wait_flag``; UNSUPPORTED where the kernel catalog or binary lacks it."""
    if WAIT not in catalog.KERNELS:
        raise outcomes.Unsupported(f"the kernel catalog has no {WAIT}")
    try:
        return dev.func(WAIT)
    except outcomes.ConformanceFailure as exc:
        raise outcomes.Unsupported(f"the kernel binary has no {WAIT}: {exc}") from None


def launch_waiting(dev: Dev, s: Any, flag: Buf, out: Buf, timeout_us: int | None) -> int:
    """Launch ``wait_flag(flag, out, RELEASED)`` on ``s`` with a TIMEOUT_US launch attribute."""
    func = waiting_kernel(dev)
    data = dev.args(WAIT, flag=flag, out=out, value=RELEASED)
    cfg = None if timeout_us is None else LaunchKernelCfg(
        [LaunchAttr(LaunchAttrId.TIMEOUT_US, (timeout_us & 0xFFFFFFFF, timeout_us >> 32))])
    return dev.b.launch_kernel_with_host_args(func, 1, s, cfg, data, len(data))


@pytest.mark.clause("TMO-10")
@pytest.mark.requires(Cap.KERNELS, Cap.ATTRIBUTES, Cap.KERNEL_EXEC)
def test_kernel_timeout_returns_107020_once(dev: Dev) -> None:
    """TMO-10: a kernel still waiting when its TIMEOUT_US has passed ends with a task timeout:
    the next sync of its stream returns 107020 before its own host deadline, the sync after that
    returns 0 (reported once, `core/src/stream/stream.cc:1790-1829`); the kernel's output is not
    written and later work on the stream runs (`core/src/task/task_info/task_manager.cc:378-392`,
    `core/src/common/error_code.cc:268`, `core/src/common/errcode_manage.cc:479`)."""
    s = dev.stream()
    flag, out, after = dev.buffer([0]), dev.buffer(n=1), dev.buffer(n=catalog.SEED_ELEMENTS)
    try:
        expect.ok(launch_waiting(dev, s, flag, out, KERNEL_TIMEOUT_US),
                  "aclrtLaunchKernelWithHostArgs wait_flag (TIMEOUT_US)")
        dev.launch("fill", s, out=after, n=after.n, value=5)
        rc, elapsed = timed_sync(dev, s, HOST_DEADLINE_MS)
        expect.rc(rc, Err.RT_TASK_TIMEOUT, "sync of the stream whose kernel timed out")
    finally:
        dev.write(flag, np.array([1], dtype=np.int32))  # never leave a kernel waiting
    expect.ok(dev.b.synchronize_stream_with_timeout(s, HOST_DEADLINE_MS),
              "the next sync (the timeout is reported once)")
    expect.eq(dev.read(out), np.full(1, SENTINEL), "output of the timed-out kernel")
    expect.eq(dev.read(after), np.full(after.n, 5), "output of the work after it")


@pytest.mark.clause("TMO-10")
@pytest.mark.requires(Cap.KERNELS, Cap.ATTRIBUTES, Cap.KERNEL_EXEC)
def test_released_kernel_does_not_time_out(dev: Dev) -> None:
    """TMO-10: a waiting kernel whose flag is set in time completes normally (sync 0, output written)."""
    s = dev.stream()
    flag, out = dev.buffer([1]), dev.buffer(n=1)
    expect.ok(launch_waiting(dev, s, flag, out, KERNEL_TIMEOUT_US),
              "aclrtLaunchKernelWithHostArgs wait_flag (flag already set)")
    expect.ok(dev.b.synchronize_stream_with_timeout(s, HOST_DEADLINE_MS), "sync")
    expect.eq(dev.read(out), np.full(1, RELEASED), "output of the released kernel")


@pytest.mark.clause("TMO-11")
@pytest.mark.requires(Cap.CAPTURE, Cap.KERNELS, Cap.ATTRIBUTES, Cap.KERNEL_EXEC)
def test_kernel_timeout_inside_replay(dev: Dev) -> None:
    """TMO-11: a captured kernel that times out during a replay ends that execution: the sync of
    the execute stream returns the model-stream failure (507011, `ModelExecuteTaskaProcError`,
    `core/src/task/task_info/model/model_execute_task.cc:227-251`; 107020 where the firmware
    reports it on the model-execute CQE, `:79-84`), once; the model stays usable: with the flag
    set the next replay writes the output."""
    s, x = dev.stream(), dev.stream()
    flag, out = dev.buffer([0]), dev.buffer(n=1)
    dev.begin(s)
    expect.ok(launch_waiting(dev, s, flag, out, KERNEL_TIMEOUT_US),
              "aclrtLaunchKernelWithHostArgs wait_flag in capture")
    model = dev.end(s)
    expect.ok(dev.b.execute_async(model, x), "aclmdlRIExecuteAsync")
    try:
        rc, _ = timed_sync(dev, x, HOST_DEADLINE_MS)
        expect.rc(rc, (Err.RT_MODEL_EXECUTE, Err.RT_TASK_TIMEOUT),
                  "sync of the execute stream after a kernel timeout in the replay")
    finally:
        dev.write(flag, np.array([1], dtype=np.int32))
    expect.ok(dev.b.synchronize_stream_with_timeout(x, HOST_DEADLINE_MS),
              "the next sync (reported once)")
    expect.eq(dev.read(out), np.full(1, SENTINEL), "output of the timed-out replay")
    dev.execute(model, x)
    expect.eq(dev.read(out), np.full(1, RELEASED), "output of the replay with the flag set")
