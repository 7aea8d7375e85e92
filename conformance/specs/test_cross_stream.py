"""Multi-stream capture: fork and join through events.

Clause group: XS (fork/join, join requirement, event kinds, events recorded outside the
capture, cross-model event use, internal EVENT_RESET tasks, event release at CaptureEnd).

XS-09 uses aclrtCreateEventExWithFlag(ACL_EVENT_TIME_LINE): the runtime keeps the flag as
given, and an event without DDSYNC/DDSYNC_NS/EXTERNAL/IPC "has no wait task"
(`core/inc/event/event.hpp:133-136`). XS-10 (EXTERNAL record/wait) is in
test_external_events.py.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest

from mdlri_conformance.backends.contract import (
    Cap, CaptureMode, CaptureStatus, Err, EventFlag, TaskType,
)
from mdlri_conformance.conformance import expect
from mdlri_conformance.conformance.harness import SENTINEL, Buf, Dev
from mdlri_conformance.kernel import catalog

pytestmark = pytest.mark.requires(Cap.CAPTURE, Cap.CROSS_STREAM)

N = catalog.SEED_ELEMENTS


# ---------------------------------------------------------------------------------------------
# helpers


def _inputs(seed: int = 3) -> np.ndarray:
    return (np.arange(N, dtype=np.int32) * seed - 4).astype(np.int32)


def _sentinel() -> np.ndarray:
    return np.full(N, SENTINEL, dtype=np.int32)


def _diamond(dev: Dev, s1: Any, s2: Any, inp: Buf, mid: Buf, out: Buf,
             events: tuple[Any, Any] | None = None) -> Any:
    """Capture main(inp->mid) on s1, fork to s2 for postprocess(mid->out), join; returns model."""
    dev.begin(s1)
    dev.launch("fallback_main", s1, input=inp, output=mid)
    dev.fork(s1, s2, events[0] if events else None)
    dev.launch("fallback_postprocess", s2, input=mid, output=out)
    dev.join(s1, s2, events[1] if events else None)
    return dev.end(s1)


def _load_seed(dev: Dev) -> None:
    """Load the seed kernels before any capture begins."""
    dev.func("fallback_main")
    dev.func("fallback_postprocess")


def _expected_diamond(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    mid = x + catalog.SEED_MAIN_BIAS
    return mid, mid * catalog.SEED_POST_SCALE


# ---------------------------------------------------------------------------------------------
# XS-09: an event without a wait task


@pytest.mark.clause("XS-09")
@pytest.mark.requires(Cap.VALUE_TASKS)
def test_xs09_record_of_an_event_without_wait_task_captures_nothing(dev: Dev) -> None:
    """XS-09 aclrtRecordEvent in a capture of a new-mode event whose flags give it no wait task
    (aclrtCreateEventExWithFlag(ACL_EVENT_TIME_LINE): the runtime keeps the flag as given,
    `src/acl/aclrt_impl/event.cpp` aclrtCreateEventExWithFlagImpl, `api/impl/api_impl.cc:
    2072-2090`, and IsEventWithoutWaitTask is true, `core/inc/event/event.hpp:133-136`) returns
    0 and captures no EVENT_RECORD task (`api/impl/api_impl.cc:2180-2182`); the capture ends
    and the model runs."""
    rc, e = dev.b.create_event_ex_with_flag(EventFlag.TIME_LINE)
    expect.ok(rc, "aclrtCreateEventExWithFlag(TIME_LINE) (setup)")
    try:
        s = dev.stream()
        word = dev.buffer64(0)
        dev.begin(s)
        expect.ok(dev.b.value_write(word, 0x44, 0, s), "aclrtValueWrite in the capture (setup)")
        expect.rc(dev.b.record_event(e, s), Err.SUCCESS,
                  "aclrtRecordEvent(TIME_LINE event) in the capture")
        m = dev.end(s)
        expect.eq(len(dev.tasks_of_type(m, TaskType.EVENT_RECORD)), 0,
                  "EVENT_RECORD tasks of the model")
        dev.execute(m, s)
        expect.eq(dev.read64(word), 0x44, "word written by the model")
    finally:
        dev.b.destroy_event(e)


# ---------------------------------------------------------------------------------------------
# XS-01: fork


@pytest.mark.clause("XS-01")
@pytest.mark.requires(Cap.KERNELS)
def test_xs01_fork_join_is_captured(dev: Dev) -> None:
    """XS-01 A stream waiting on a captured event joins the capture; its work runs on execute."""
    s1, s2 = dev.stream(), dev.stream()
    x = _inputs()
    inp, mid, out = dev.buffer(x), dev.buffer(n=N), dev.buffer(n=N)
    _load_seed(dev)
    dev.begin(s1)
    _, model = dev.capture_status(s1, "(origin)")
    dev.launch("fallback_main", s1, input=inp, output=mid)
    dev.fork(s1, s2)
    st, joined = dev.capture_status(s2, "(sub) after the wait")
    expect.eq(st, CaptureStatus.ACTIVE, "sub stream status after waiting on a captured event")
    expect.eq(joined, model, "sub stream modelRI")
    dev.launch("fallback_postprocess", s2, input=mid, output=out)
    dev.join(s1, s2)
    m = dev.end(s1)
    dev.sync(s1)
    dev.sync(s2)
    expect.eq(dev.read(mid), _sentinel(), "origin output before execute")
    expect.eq(dev.read(out), _sentinel(), "sub stream output before execute")
    dev.execute(m, s1)
    want_mid, want_out = _expected_diamond(x)
    expect.eq(dev.read(mid), want_mid, "origin output after execute")
    expect.eq(dev.read(out), want_out, "sub stream output after execute (ordered after origin)")


@pytest.mark.clause("XS-01")
@pytest.mark.requires(Cap.KERNELS)
def test_xs01_fork_is_transitive(dev: Dev) -> None:
    """XS-01 A stream waiting on an event recorded by a joined stream joins the same capture."""
    s1, s2, s3 = dev.stream(), dev.stream(), dev.stream()
    x = _inputs(7)
    inp, a, b = dev.buffer(x), dev.buffer(n=N), dev.buffer(n=N)
    _load_seed(dev)
    dev.begin(s1)
    _, model = dev.capture_status(s1, "(origin)")
    dev.fork(s1, s2)
    dev.launch("fallback_main", s2, input=inp, output=a)
    dev.fork(s2, s3)
    st, joined = dev.capture_status(s3, "(sub-sub)")
    expect.eq(st, CaptureStatus.ACTIVE, "status of the stream that waited on the sub stream")
    expect.eq(joined, model, "modelRI of the stream that waited on the sub stream")
    dev.launch("fallback_postprocess", s3, input=a, output=b)
    dev.join(s2, s3)
    dev.join(s1, s2)
    m = dev.end(s1)
    dev.sync(s3)
    expect.eq(dev.read(b), _sentinel(), "sub-sub stream output before execute")
    dev.execute(m, s1)
    want_a, want_b = _expected_diamond(x)
    expect.eq(dev.read(a), want_a, "sub stream output after execute")
    expect.eq(dev.read(b), want_b, "sub-sub stream output after execute")


# ---------------------------------------------------------------------------------------------
# XS-02 / XS-03: join requirement


@pytest.mark.clause("XS-02")
@pytest.mark.requires(Cap.KERNELS)
@pytest.mark.parametrize("tail", ["last_task_kernel", "record_never_waited"])
def test_xs02_unjoined_stream_fails_end(dev: Dev, tail: str) -> None:
    """XS-02 CaptureEnd with a sub stream that did not rejoin the origin returns 107025."""
    s1, s2 = dev.stream(), dev.stream()
    inp, out = dev.buffer(_inputs()), dev.buffer(n=N)
    dev.func("fallback_main")
    dev.begin(s1)
    dev.fork(s1, s2)
    dev.launch("fallback_main", s2, input=inp, output=out)
    if tail == "record_never_waited":
        # the sub stream ends with a record, but the origin never waits on it
        expect.ok(dev.b.record_event(dev.event(), s2), "aclrtRecordEvent on the sub stream")
    rc, _ = dev.end_rc(s1)
    expect.rc(rc, Err.RT_STREAM_UNJOINED, "aclmdlRICaptureEnd with an unjoined sub stream")


@pytest.mark.clause("XS-03")
@pytest.mark.requires(Cap.KERNELS)
def test_xs03_task_after_rejoin_fails_end(dev: Dev) -> None:
    """XS-03 A task issued on a sub stream after it rejoined makes CaptureEnd return 107025."""
    s1, s2 = dev.stream(), dev.stream()
    inp, out = dev.buffer(_inputs()), dev.buffer(n=N)
    dev.func("fallback_main")
    dev.begin(s1)
    dev.fork(s1, s2)
    dev.launch("fallback_main", s2, input=inp, output=out)
    dev.join(s1, s2)
    dev.launch("fallback_main", s2, input=inp, output=out)  # after the rejoin
    rc, _ = dev.end_rc(s1)
    expect.rc(rc, Err.RT_STREAM_UNJOINED, "aclmdlRICaptureEnd after a task on the rejoined stream")


# ---------------------------------------------------------------------------------------------
# XS-04: old-mode events


def _with_old_event(dev: Dev, body: Callable[[Any], None]) -> None:
    """Run ``body`` with an "old-mode" event (aclrtCreateEvent), destroyed afterwards."""
    rc, e = dev.b.create_event()
    expect.ok(rc, "aclrtCreateEvent (setup)")
    try:
        body(e)
    finally:
        dev.b.destroy_event(e)


@pytest.mark.clause("XS-04")
def test_xs04_record_old_event_in_capture(dev: Dev) -> None:
    """XS-04 Recording an aclrtCreateEvent event on a capturing stream returns 207000."""
    s = dev.stream()

    def body(e: Any) -> None:
        dev.begin(s)
        expect.rc(dev.b.record_event(e, s), Err.RT_FEATURE_NOT_SUPPORT,
                  "aclrtRecordEvent(old-mode event) on a capturing stream")
        dev.end(s)
    _with_old_event(dev, body)


@pytest.mark.clause("XS-04")
def test_xs04_wait_old_event_in_capture(dev: Dev) -> None:
    """XS-04 A capturing stream waiting on an uncaptured old-mode event returns 207000."""
    s, other = dev.stream(), dev.stream()

    def body(e: Any) -> None:
        expect.ok(dev.b.record_event(e, other), "aclrtRecordEvent outside capture (setup)")
        dev.sync(other)
        dev.begin(s)
        expect.rc(dev.b.stream_wait_event(s, e), Err.RT_FEATURE_NOT_SUPPORT,
                  "aclrtStreamWaitEvent(old-mode event) on a capturing stream")
        dev.end(s)
    _with_old_event(dev, body)


# ---------------------------------------------------------------------------------------------
# XS-05: events not recorded in the capture (XS-06, an event captured by a reset but never
# recorded, is unreachable: untestable.toml)


@pytest.mark.clause("XS-05")
def test_xs05_wait_on_event_recorded_outside(dev: Dev) -> None:
    """XS-05 Waiting in capture on an event recorded outside it returns 107024; capture survives."""
    s, other = dev.stream(), dev.stream()
    e = dev.event()
    expect.ok(dev.b.record_event(e, other), "aclrtRecordEvent outside capture (setup)")
    dev.sync(other)
    dev.begin(s)
    expect.rc(dev.b.stream_wait_event(s, e), Err.RT_CAPTURE_DEPENDENCY,
              "aclrtStreamWaitEvent on an event recorded outside the capture")
    st, _ = dev.capture_status(s, "after the rejected wait")
    expect.eq(st, CaptureStatus.ACTIVE, "status after the rejected wait")
    rc, m = dev.end_rc(s)
    expect.ok(rc, "aclmdlRICaptureEnd after the rejected wait")


@pytest.mark.clause("XS-14")
@pytest.mark.requires(Cap.LISTING)
def test_xs14_wait_on_an_event_never_recorded(dev: Dev) -> None:
    """XS-14 A capturing stream waiting on an event that was never recorded gets 0 and captures
    no task; the capture goes on and ends. The model lists what an empty capture lists: the
    runtime may add tasks of its own at CaptureEnd (with software SQ off, the end-graph
    NOTIFY_RECORD, `feature/aclgraph/context_aclgraph.cc:610-612`)."""
    empty_stream = dev.stream()
    dev.begin(empty_stream)
    empty = len(dev.all_tasks(dev.end(empty_stream)))
    s = dev.stream()
    e = dev.event()
    dev.begin(s)
    expect.ok(dev.b.stream_wait_event(s, e), "aclrtStreamWaitEvent on an event never recorded")
    st, _ = dev.capture_status(s, "after the wait")
    expect.eq(st, CaptureStatus.ACTIVE, "status after the wait")
    m = dev.end(s)
    expect.eq(len(dev.all_tasks(m)), empty,
              "tasks listed after the wait (those an empty capture lists)")


# ---------------------------------------------------------------------------------------------
# XS-07: cross-model event use


@pytest.mark.clause("XS-07")
@pytest.mark.parametrize("op", ["wait", "reset"])
def test_xs07_cross_model_event_invalidates_both(dev: Dev, op: str) -> None:
    """XS-07 Capture A's event waited on on a stream capturing into B: 107032, then both ends
    507903 (TerminateCapture on both models, `api/impl/api_impl.cc:1641`,
    `feature/aclgraph/capture_model_utils.cc:125-139`). The reset half cannot be reached through
    the API: ApiImpl::EventReset refuses an aclrtCreateEventExWithFlag (new-mode) event with
    207000 before it looks at the capture (`api/impl/api_impl.cc:2210-2214`; the capture path
    and its TerminateCapture come after, `:2218-2237`), so [reset] asserts that answer: 207000
    and neither capture invalidated, both end with 0."""
    s_a, s_b = dev.stream(), dev.stream()
    e = dev.event()
    dev.begin(s_a)
    dev.begin(s_b)
    expect.ok(dev.b.record_event(e, s_a), "aclrtRecordEvent in capture A")
    if op == "wait":
        expect.rc(dev.b.stream_wait_event(s_b, e), Err.STREAM_CAPTURE_CONFLICT,
                  "cross-model wait on capture B")
        want = Err.RT_STREAM_CAPTURE_INVALIDATED
    else:
        expect.rc(dev.b.reset_event(e, s_b), Err.RT_FEATURE_NOT_SUPPORT,
                  "cross-model reset on capture B (refused before the capture is looked at)")
        want = Err.SUCCESS
    for name, s in (("A", s_a), ("B", s_b)):
        rc, _ = dev.end_rc(s)
        expect.rc(rc, want, f"aclmdlRICaptureEnd (capture {name})")


@pytest.mark.clause("XS-12")
def test_xs12_record_retargets_event(dev: Dev) -> None:
    """XS-12 Re-recording capture A's event on a stream capturing into B retargets it: rc 0, neither
    capture is invalidated (a fresh capture event in B, `feature/aclgraph/v100/api_impl_capture_event.cc:120-160`;
    software events, or a driver-allocated id, `feature/aclgraph/capture_model_utils.cc:53-73`)."""
    s_a, s_b = dev.stream(), dev.stream()
    e = dev.event()
    dev.begin(s_a)
    dev.begin(s_b)
    expect.ok(dev.b.record_event(e, s_a), "aclrtRecordEvent in capture A")
    expect.rc(dev.b.record_event(e, s_b), Err.SUCCESS, "aclrtRecordEvent of A's event in capture B")
    for name, s in (("A", s_a), ("B", s_b)):
        rc, m = dev.end_rc(s)
        expect.ok(rc, f"aclmdlRICaptureEnd (capture {name})")


# ---------------------------------------------------------------------------------------------
# XS-08: internal EVENT_RESET tasks


def _origin_and_others(dev: Dev) -> tuple[list[tuple[Any, int]], list[list[tuple[Any, int]]]]:
    """Capture a fork/join with two events; returns the origin's (task, type) listing and the
    other streams'.

    The origin launches two kernels and the sub stream one, which tells the model streams apart.
    """
    s1, s2 = dev.stream(), dev.stream()
    inp, a, b, c = dev.buffer(_inputs()), dev.buffer(n=N), dev.buffer(n=N), dev.buffer(n=N)
    _load_seed(dev)
    dev.begin(s1)
    dev.launch("fallback_main", s1, input=inp, output=a)
    dev.launch("fallback_postprocess", s1, input=a, output=b)
    dev.fork(s1, s2)
    dev.launch("fallback_main", s2, input=b, output=c)
    dev.join(s1, s2)
    m = dev.end(s1)
    listings = [[(t, dev.type_of(t)) for t in dev.tasks_of(s)] for s in dev.streams_of(m)]
    kernel_counts = [sum(1 for _, ty in ts if ty == TaskType.KERNEL) for ts in listings]
    expect.eq(kernel_counts.count(2), 1, "model streams holding the origin's two kernels")
    i = kernel_counts.index(2)
    return listings[i], listings[:i] + listings[i + 1:]


_USER_TYPES = (TaskType.KERNEL, TaskType.EVENT_RECORD, TaskType.EVENT_WAIT)
_CAPTURED_EVENTS = 2  # the fork event and the join event


@pytest.mark.clause("XS-08")
@pytest.mark.requires(Cap.INTERNAL_TASKS, Cap.LISTING, Cap.TASK_TYPE, Cap.KERNELS)
def test_xs08_event_reset_tasks_on_origin(dev: Dev) -> None:
    """XS-08 CaptureEnd appends an EVENT_RESET per captured event to the origin after user tasks."""
    origin, others = _origin_and_others(dev)
    types = [ty for _, ty in origin]
    resets = [i for i, ty in enumerate(types) if ty == TaskType.EVENT_RESET]
    expect.eq(len(resets), _CAPTURED_EVENTS, "EVENT_RESET tasks on the origin stream")
    user = [i for i, ty in enumerate(types) if ty in _USER_TYPES]
    expect.true(min(resets) > max(user), "EVENT_RESET position on the origin stream",
                "after every user task", [int(t) for t in types])
    elsewhere = sum(1 for ts in others for _, ty in ts if ty == TaskType.EVENT_RESET)
    expect.eq(elsewhere, 0, "EVENT_RESET tasks on the other model streams")


@pytest.mark.clause("XS-08")
@pytest.mark.requires(Cap.INTERNAL_TASKS, Cap.LISTING, Cap.TASK_TYPE, Cap.SEQ_ID, Cap.KERNELS)
def test_xs08_event_reset_tasks_consume_seq_ids(dev: Dev) -> None:
    """XS-08 The appended EVENT_RESET tasks have their own seqIds, after the origin's user tasks."""
    origin, others = _origin_and_others(dev)
    ids = [dev.seq_of(t) for ts in [origin, *others] for t, _ in ts]
    expect.eq(len(set(ids)), len(ids), "seqIds of all tasks (EVENT_RESET included) are unique")
    reset_ids = [dev.seq_of(t) for t, ty in origin if ty == TaskType.EVENT_RESET]
    user_ids = [dev.seq_of(t) for t, ty in origin if ty in _USER_TYPES]
    expect.eq(len(reset_ids), _CAPTURED_EVENTS, "EVENT_RESET tasks on the origin stream")
    expect.true(min(reset_ids) > max(user_ids), "EVENT_RESET seqIds",
                f"greater than the origin's user-task seqIds {user_ids}", reset_ids)


def _reused_fork_event(dev: Dev, x: np.ndarray) -> tuple[Any, Buf, Buf]:
    """Capture main(inp->mid) on a side stream forked with event e, joined back with the same
    e recorded again on the side stream, then postprocess(mid->out) on the origin; returns
    (model, mid, out)."""
    s1, s2 = dev.stream(), dev.stream()
    inp, mid, out = dev.buffer(x), dev.buffer(n=N), dev.buffer(n=N)
    _load_seed(dev)
    dev.begin(s1)
    e = dev.fork(s1, s2)
    dev.launch("fallback_main", s2, input=inp, output=mid)
    dev.join(s1, s2, e)  # the fork's event, recorded a second time in this capture
    dev.launch("fallback_postprocess", s1, input=mid, output=out)
    return dev.end(s1), mid, out


@pytest.mark.clause("XS-13", "XS-02")
@pytest.mark.requires(Cap.KERNELS)
def test_xs13_fork_event_reused_for_the_join_orders_the_work(dev: Dev) -> None:
    """XS-13 The fork's event recorded again on the side stream and waited on by the origin is
    a join: every call answers 0, CaptureEnd succeeds, and the origin's kernel after the join
    reads what the side stream's kernel wrote (the wait takes the second record)."""
    x = _inputs(5)
    m, mid, out = _reused_fork_event(dev, x)
    dev.execute(m, dev.stream())
    want_mid, want_out = _expected_diamond(x)
    expect.eq(dev.read(mid), want_mid, "side stream output")
    expect.eq(dev.read(out), want_out, "origin output after the join (read the side's output)")


@pytest.mark.clause("XS-13", "XS-08")
@pytest.mark.requires(Cap.INTERNAL_TASKS, Cap.LISTING, Cap.TASK_TYPE, Cap.KERNELS)
def test_xs13_each_captured_record_gets_its_reset(dev: Dev) -> None:
    """XS-13 An event recorded twice in a capture stands for two internal events: CaptureEnd
    appends two EVENT_RESET tasks to the origin, none elsewhere."""
    m, _, _ = _reused_fork_event(dev, _inputs())
    listings = [[dev.type_of(t) for t in dev.tasks_of(s)] for s in dev.streams_of(m)]
    expect.eq(len(listings), 2, "model streams")
    # the origin's user tasks: the fork's record, the join's wait, the kernel (in that order)
    origin = [ts for ts in listings if ts[:1] == [TaskType.EVENT_RECORD]]
    expect.eq(len(origin), 1, "model streams beginning with the fork's EVENT_RECORD "
              f"(listings {[[int(t) for t in ts] for ts in listings]})")
    resets = [sum(ty == TaskType.EVENT_RESET for ty in ts) for ts in listings]
    expect.eq(sum(resets), 2, "EVENT_RESET tasks in the model")
    expect.eq([int(t) for t in origin[0][3:]], [int(TaskType.EVENT_RESET)] * 2,
              "origin tasks after its kernel")


@pytest.mark.clause("XS-15", "XS-13", "XS-02")
@pytest.mark.requires(Cap.KERNELS)
@pytest.mark.parametrize("event", ["join_event", "fork_event"])
def test_xs15_record_again_after_the_join_wait_is_unjoined(dev: Dev, event: str) -> None:
    """XS-15 The origin waits on event E, then the side stream records E again as its last
    task: that record is a new internal event (XS-13) which no wait took, so the side stream
    is unjoined and CaptureEnd returns 107025. E is the join's own event, or the fork's event
    already reused for the join (the XS-13 pattern); an implementation that matches waits to
    records by the user's event handle accepts both."""
    s1, s2 = dev.stream(), dev.stream()
    inp, out = dev.buffer(_inputs()), dev.buffer(n=N)
    _load_seed(dev)
    dev.begin(s1)
    e = dev.fork(s1, s2)
    dev.launch("fallback_main", s2, input=inp, output=out)
    joined = dev.join(s1, s2, e if event == "fork_event" else None)
    expect.ok(dev.b.record_event(joined, s2), "aclrtRecordEvent of E again on the side stream, "
              "after the origin's wait on it")
    rc, _ = dev.end_rc(s1)
    expect.rc(rc, Err.RT_STREAM_UNJOINED,
              "aclmdlRICaptureEnd with the side's last record captured after the origin's wait")


# ---------------------------------------------------------------------------------------------
# XS-11: event release at CaptureEnd


@pytest.mark.clause("XS-11")
@pytest.mark.requires(Cap.KERNELS)
def test_xs11_events_reusable_after_end(dev: Dev) -> None:
    """XS-11 After CaptureEnd the fork/join events can be captured again and used normally."""
    s1, s2, s3 = dev.stream(), dev.stream(), dev.stream()
    x = _inputs()
    inp = dev.buffer(x)
    mid1, out1, mid2, out2 = (dev.buffer(n=N) for _ in range(4))
    _load_seed(dev)
    events = (dev.event(), dev.event())
    m1 = _diamond(dev, s1, s2, inp, mid1, out1, events)
    # a second capture from another origin with the same events
    m2 = _diamond(dev, s3, s2, inp, mid2, out2, events)
    # and ordinary use outside any capture
    expect.ok(dev.b.record_event(events[0], s1), "aclrtRecordEvent outside capture")
    expect.ok(dev.b.stream_wait_event(s3, events[0]), "aclrtStreamWaitEvent outside capture")
    dev.sync(s1)
    dev.sync(s3)
    want_mid, want_out = _expected_diamond(x)
    dev.execute(m1, s1)
    dev.execute(m2, s3)
    expect.eq(dev.read(out1), want_out, "first model output")
    expect.eq(dev.read(out2), want_out, "second model output (same events)")
    expect.eq(dev.read(mid2), want_mid, "second model origin output")


@pytest.mark.clause("XS-11")
def test_xs11_sub_stream_can_begin_after_end(dev: Dev) -> None:
    """XS-11 A stream that joined a capture can begin its own capture after CaptureEnd."""
    s1, s2 = dev.stream(), dev.stream()
    e_fork, e_join = dev.event(), dev.event()
    dev.begin(s1)
    dev.fork(s1, s2, e_fork)
    dev.join(s1, s2, e_join)
    dev.end(s1)
    expect.ok(dev.b.capture_begin(s2, CaptureMode.RELAXED),
              "aclmdlRICaptureBegin on the former sub stream")
    dev.fork(s2, s1, e_join)
    dev.join(s2, s1, e_fork)
    rc, m = dev.end_rc(s2)
    expect.ok(rc, "aclmdlRICaptureEnd of the second capture (roles and events swapped)")
