"""Field behaviours (FLD-01..FLD-10): what users of torch_npu, vllm-ascend and sglang on Ascend
run into around ACL Graph capture and replay, pinned to the runtime source (clauses-field.toml).

* FLD-01, FLD-02: sync/query of a stream that joined a capture, and that stream after CaptureEnd.
* FLD-03: a synchronous copy from another thread while a capture is open, per capture mode.
* FLD-04, FLD-05: task-group update driven from a thread that did not capture.
* FLD-06..FLD-08: stream resources running out during capture, and too many captured streams
  (``Cap.RESOURCE_LIMITS``).
* FLD-09, FLD-10: a kernel that raises an AI Core exception, eagerly and during a replay
  (``Cap.DEVICE_FAULTS``).

Backend hooks (optional; the specs read the two attributes with ``getattr``):

* ``Cap.RESOURCE_LIMITS``: every stream, user-created or capture-internal (one per CaptureBegin,
  one per stream joining a capture), takes one stream resource until it is destroyed (a model's
  internal streams at model destruction). ``backend.stream_limit`` (int, optional) bounds how
  many aclrtCreateStream calls the specs try before calling the limit unreachable (UNSUPPORTED);
  ``backend.model_stream_limit`` (int, optional) is the software-SQ pool a model's streams must
  fit at ExecuteAsync (FLD-08; absent: the backend models non-software-SQ mode and FLD-08 is
  UNSUPPORTED).
* ``Cap.DEVICE_FAULTS``: the catalog kernel ``trap_if`` (argument struct ``{int32_t *flag}``)
  raises an AI Core exception when launched with ``*flag != 0`` and does nothing otherwise.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from mdlri_conformance.backends.contract import (
    UNWRITTEN, Cap, CaptureMode, CaptureStatus, Err, MemcpyKind, StreamStatus,
)
from mdlri_conformance.conformance import expect
from mdlri_conformance.conformance.framework import outcomes
from mdlri_conformance.conformance.harness import SENTINEL, SYNC_MS, Buf, Dev, in_thread
from mdlri_conformance.kernel import catalog

N = catalog.SEED_ELEMENTS
X = np.arange(1, N + 1, dtype=np.int32)
#: a refused sync returns at once; the timeout only bounds a wrong implementation
SHORT_MS = 100
#: ACL_ERROR_RT_RESOURCE_ALLOC_FAIL (rt_error_codes.h)
RT_RESOURCE_ALLOC_FAIL = int(Err.RT_RESOURCE_ALLOC_FAIL)
#: what a driver refusal of a stream id or SQ/CQ maps to (FLD-06)
STREAM_RESOURCE_CODES = (int(Err.RT_NO_STREAM_RESOURCE), RT_RESOURCE_ALLOC_FAIL)
#: aclrtCreateStream calls tried when the backend declares no stream_limit
FILL_BOUND = 4096
#: calls tried beyond a declared stream_limit (the default stream, harness streams)
FILL_MARGIN = 16
#: the fault kernel of Cap.DEVICE_FAULTS
TRAP = "trap_if"


# ---------------------------------------------------------------------------------------------
# helpers


def _full(value: int) -> np.ndarray:
    return np.full(N, value, dtype=np.int32)


# ---------------------------------------------------------------------------------------------
# FLD-01, FLD-02: a stream that joined a capture


@pytest.mark.clause("FLD-01")
@pytest.mark.requires(Cap.CAPTURE, Cap.CROSS_STREAM, Cap.KERNELS, Cap.SYNC_TIMEOUT)
def test_sync_of_joined_stream(dev: Dev) -> None:
    """FLD-01: sync (both forms) and query of a stream that joined the capture through an
    event wait return 107027; it reports ACTIVE with the origin's model; the capture then
    ends with 0 and its model runs both streams' work."""
    s0, s1 = dev.stream(), dev.stream()
    x, out0, out1 = dev.buffer(X), dev.buffer(n=N), dev.buffer(n=N)
    dev.begin(s0)
    dev.launch("fallback_main", s0, input=x, output=out0)
    dev.fork(s0, s1)
    dev.launch("fallback_postprocess", s1, input=x, output=out1)
    rc_timed = dev.b.synchronize_stream_with_timeout(s1, SHORT_MS)
    rc_sync = dev.b.synchronize_stream(s1)
    rc_query, _ = dev.b.stream_query(s1)
    st1, m1 = dev.capture_status(s1, "of the joined stream")
    _, m0 = dev.capture_status(s0, "of the origin")
    dev.join(s0, s1)
    rc_end, model = dev.end_rc(s0)
    expect.rc(rc_timed, Err.RT_STREAM_CAPTURED,
              "aclrtSynchronizeStreamWithTimeout on the joined stream")
    expect.rc(rc_sync, Err.RT_STREAM_CAPTURED, "aclrtSynchronizeStream on the joined stream")
    expect.rc(rc_query, Err.RT_STREAM_CAPTURED, "aclrtStreamQuery on the joined stream")
    expect.eq(st1, CaptureStatus.ACTIVE, "status of the joined stream after the refused syncs")
    expect.true(m1 == m0, "GetInfo model of the joined stream", "the origin's model", m1)
    expect.ok(rc_end, "aclmdlRICaptureEnd after the refused syncs")
    expect.eq(dev.read(out1), _full(SENTINEL), "joined stream's output before any replay")
    dev.execute(model, s0)
    expect.eq(dev.read(out0), X + catalog.SEED_MAIN_BIAS, "origin's output of the replay")
    expect.eq(dev.read(out1), X * catalog.SEED_POST_SCALE, "joined stream's output of the replay")


@pytest.mark.clause("FLD-02")
@pytest.mark.requires(Cap.CAPTURE, Cap.CROSS_STREAM, Cap.KERNELS, Cap.SYNC_TIMEOUT)
@pytest.mark.parametrize("end", ["joined", "unjoined"])
def test_joined_stream_is_ordinary_after_end(dev: Dev, end: str) -> None:
    """FLD-02: after CaptureEnd (0, or 107025 when the side stream never rejoined) the side
    stream reports NONE, syncs and queries with 0, runs new work eagerly and can begin a
    capture of its own."""
    s0, s1 = dev.stream(), dev.stream()
    captured, eager, own = dev.buffer(n=N), dev.buffer(n=N), dev.buffer(n=N)
    dev.func("fill")
    dev.begin(s0)
    dev.fork(s0, s1)
    dev.launch("fill", s1, out=captured, n=N, value=7)
    if end == "joined":
        dev.join(s0, s1)
    rc_end, m = dev.end_rc(s0)
    if end == "joined":
        expect.ok(rc_end, "aclmdlRICaptureEnd")
    else:
        expect.rc(rc_end, Err.RT_STREAM_UNJOINED,
                  "aclmdlRICaptureEnd with the side stream unjoined")
        expect.eq(m, None, "modelRI of the failed CaptureEnd")
    st, model = dev.capture_status(s1, f"of the side stream after the {end} end")
    expect.eq(st, CaptureStatus.NONE, "side stream status after CaptureEnd")
    expect.eq(model, None, "side stream GetInfo model after CaptureEnd")
    expect.ok(dev.b.synchronize_stream_with_timeout(s1, SYNC_MS),
              "aclrtSynchronizeStreamWithTimeout on the side stream after CaptureEnd")
    expect.ok(dev.b.synchronize_stream(s1), "aclrtSynchronizeStream on the side stream")
    rc, status = dev.b.stream_query(s1)
    expect.ok(rc, "aclrtStreamQuery on the side stream after CaptureEnd")
    expect.eq(status, StreamStatus.COMPLETE, "aclrtStreamQuery status of the side stream")
    dev.launch("fill", s1, out=eager, n=N, value=5)
    dev.sync(s1)
    expect.eq(dev.read(eager), _full(5), "work issued on the side stream after CaptureEnd")
    expect.eq(dev.read(captured), _full(SENTINEL), "captured work of the side stream (not run)")
    expect.ok(dev.b.capture_begin(s1, CaptureMode.RELAXED),
              "aclmdlRICaptureBegin on the former side stream")
    dev.launch("fill", s1, out=own, n=N, value=9)
    second = dev.end(s1)
    st0, _ = dev.capture_status(s0, "of the former origin during the side stream's capture")
    expect.eq(st0, CaptureStatus.NONE, "former origin status during the side stream's capture")
    dev.execute(second, s1)
    expect.eq(dev.read(own), _full(9), "output of the side stream's own capture")


# ---------------------------------------------------------------------------------------------
# FLD-03: another thread's synchronous copy during a capture


#: (aclrtMemcpy rc, pageable aclrtMemcpyAsync rc) in a non-capturing thread, per capture mode
COPY_RCS = {
    CaptureMode.GLOBAL: (Err.RT_CAPTURE_MODE_NOT_SUPPORT, Err.RT_CAPTURE_MODE_BLOCK_ASYNC),
    CaptureMode.THREAD_LOCAL: (Err.SUCCESS, Err.SUCCESS),
    CaptureMode.RELAXED: (Err.SUCCESS, Err.SUCCESS),
}


def _copies_in_other_thread(dev: Dev, sync_dst: Buf, async_dst: Buf,
                            other: Any) -> tuple[int, int]:
    """(thread body) aclrtMemcpy H2D, then a pageable aclrtMemcpyAsync H2D on ``other``."""
    data = (X * 3).astype(np.int32)
    rc_sync = dev.b.memcpy(sync_dst.addr, sync_dst.nbytes, data, data.nbytes,
                           MemcpyKind.HOST_TO_DEVICE)
    pageable = (X * 5).astype(np.int32)  # ordinary numpy memory: pageable
    rc_async = dev.b.memcpy_async(async_dst.addr, async_dst.nbytes, pageable, pageable.nbytes,
                                  MemcpyKind.HOST_TO_DEVICE, other)
    return rc_sync, rc_async


@pytest.mark.clause("FLD-03")
@pytest.mark.requires(Cap.CAPTURE, Cap.CAPTURE_MODES, Cap.THREADS, Cap.KERNELS, Cap.LISTING)
@pytest.mark.parametrize("mode", [
    # GLOBAL refuses the pageable copy only where the runtime can tell pageable memory
    pytest.param(m, marks=pytest.mark.requires(Cap.PAGEABLE_DETECTION))
    if m is CaptureMode.GLOBAL else m for m in CaptureMode], ids=lambda m: m.name)
def test_other_threads_sync_copy_during_capture(dev: Dev, mode: CaptureMode) -> None:
    """FLD-03: a thread that is not capturing copies synchronously (aclrtMemcpy, and a pageable
    aclrtMemcpyAsync on its own stream) while this thread captures: refused only under GLOBAL
    (107030 / 107041), done otherwise; the capture stays ACTIVE, ends with 0, holds only the
    capturing stream and replays correctly."""
    s, other = dev.stream(), dev.stream()
    x, out = dev.buffer(X), dev.buffer(n=N)
    sync_dst, async_dst = dev.buffer(n=N), dev.buffer(n=N)
    dev.func("fallback_main")
    dev.begin(s, mode)
    dev.launch("fallback_main", s, input=x, output=out)
    rc_sync, rc_async = in_thread(dev.b, lambda: _copies_in_other_thread(dev, sync_dst,
                                                                         async_dst, other))
    st, m_info = dev.capture_status(s, "of the capturing stream after the other thread's copies")
    st_other, _ = dev.capture_status(other, "of the other thread's stream")
    rc_end, model = dev.end_rc(s)
    want_sync, want_async = COPY_RCS[mode]
    expect.rc(rc_sync, want_sync, f"aclrtMemcpy in another thread ({mode.name} capture)")
    expect.rc(rc_async, want_async,
              f"pageable aclrtMemcpyAsync on another stream in another thread ({mode.name})")
    expect.eq(st, CaptureStatus.ACTIVE, "capture status after the other thread's copies")
    expect.eq(st_other, CaptureStatus.NONE, "status of the other thread's stream")
    expect.ok(rc_end, "aclmdlRICaptureEnd after the other thread's copies")
    expect.true(model == m_info, "CaptureEnd model", "the GetInfo model", model)
    expect.eq(len(dev.streams_of(model)), 1, "streams of the captured model")
    done = want_sync == Err.SUCCESS
    expect.eq(dev.read(sync_dst), X * 3 if done else _full(SENTINEL), "aclrtMemcpy target")
    expect.eq(dev.read(async_dst), X * 5 if done else _full(SENTINEL), "aclrtMemcpyAsync target")
    dev.execute(model, s)
    expect.eq(dev.read(out), X + catalog.SEED_MAIN_BIAS, "output of the replay")


# ---------------------------------------------------------------------------------------------
# FLD-04, FLD-05: task-group update from another thread


COEFFS = ((2, 1), (3, -1))
NEW_COEFFS = ((5, 7), (-1, 4))


def _affine(a: int, b: int) -> np.ndarray:
    return (a * X + b).astype(np.int32)


def _grouped(dev: Dev) -> tuple[Any, Any, Any, Buf, list[Buf]]:
    """A READY model of two grouped ``affine`` kernels: (model, stream, group, x, outputs)."""
    s = dev.stream()
    x = dev.buffer(X)
    ys = [dev.buffer(n=N) for _ in COEFFS]
    dev.begin(s)
    expect.ok(dev.b.capture_task_grp_begin(s), "aclmdlRICaptureTaskGrpBegin (setup)")
    for y, (a, b) in zip(ys, COEFFS):
        dev.launch("affine", s, x=x, y=y, n=N, a=a, b=b)
    rc, group = dev.b.capture_task_grp_end(s)
    expect.ok(rc, "aclmdlRICaptureTaskGrpEnd (setup)")
    return dev.end(s), s, group, x, ys


def _relaunch(dev: Dev, u: Any, x: Buf, ys: list[Buf]) -> list[int]:
    """The replacement launches on update stream ``u``; their rcs."""
    return [dev.launch_rc("affine", u, x=x, y=y, n=N, a=a, b=b)
            for y, (a, b) in zip(ys, NEW_COEFFS)]


def _check_update_landed(dev: Dev, model: Any, s: Any, u: Any, ys: list[Buf]) -> None:
    """Drain the update stream, replay, and compare with the new coefficients."""
    dev.sync(u)
    dev.execute(model, s)
    for i, (y, (a, b)) in enumerate(zip(ys, NEW_COEFFS)):
        expect.eq(dev.read(y), _affine(a, b), f"output {i} of the replay after the update")


@pytest.mark.clause("FLD-04")
@pytest.mark.requires(Cap.TASK_GROUPS, Cap.CAPTURE, Cap.KERNELS, Cap.THREADS)
@pytest.mark.parametrize("split", [False, True], ids=["all-in-helper", "begin-here-rest-in-helper"])
def test_task_update_from_helper_thread(dev: Dev, split: bool) -> None:
    """FLD-04: UpdateBegin, the replacement launches and UpdateEnd from a helper thread (or
    Begin here and the rest there) return 0, and the update lands at the next replay."""
    model, s, group, x, ys = _grouped(dev)
    dev.execute(model, s)
    for y, (a, b) in zip(ys, COEFFS):
        expect.eq(dev.read(y), _affine(a, b), "output before the update (setup)")
    u = dev.stream()
    dev.func("affine")
    rc_begin = dev.b.capture_task_update_begin(u, group) if split else None

    def helper() -> tuple[Any, list[int], int]:
        begin = rc_begin if split else dev.b.capture_task_update_begin(u, group)
        return begin, _relaunch(dev, u, x, ys), dev.b.capture_task_update_end(u)

    begin, launches, rc_end = in_thread(dev.b, helper)
    where = "here" if split else "in the helper thread"
    expect.ok(begin, f"aclmdlRICaptureTaskUpdateBegin {where}")
    for i, rc in enumerate(launches):
        expect.ok(rc, f"replacement launch {i} in the helper thread")
    expect.ok(rc_end, "aclmdlRICaptureTaskUpdateEnd in the helper thread")
    _check_update_landed(dev, model, s, u, ys)


@pytest.mark.clause("FLD-05")
@pytest.mark.requires(Cap.TASK_GROUPS, Cap.CAPTURE, Cap.KERNELS, Cap.THREADS)
def test_task_update_from_thread_without_context(dev: Dev) -> None:
    """FLD-05: UpdateBegin and UpdateEnd from a thread that never called aclrtSetDevice return
    107002 and change nothing: the stream can then be put in update mode here, a second
    context-less UpdateEnd leaves it there, and the update completes and lands."""
    model, s, group, x, ys = _grouped(dev)
    u = dev.stream()
    dev.func("affine")
    # deliberately no aclrtSetDevice in these threads: the missing context is the observable
    rc_begin = in_thread(dev.b, lambda: dev.b.capture_task_update_begin(u, group),
                         set_device=False)
    expect.rc(rc_begin, Err.RT_CONTEXT_NULL, "aclmdlRICaptureTaskUpdateBegin without a context")
    expect.ok(dev.b.capture_task_update_begin(u, group),
              "aclmdlRICaptureTaskUpdateBegin here after the refused one")
    for i, rc in enumerate(_relaunch(dev, u, x, ys)):
        expect.ok(rc, f"replacement launch {i}")
    rc_end = in_thread(dev.b, lambda: dev.b.capture_task_update_end(u), set_device=False)
    expect.rc(rc_end, Err.RT_CONTEXT_NULL, "aclmdlRICaptureTaskUpdateEnd without a context")
    expect.ok(dev.b.capture_task_update_end(u),
              "aclmdlRICaptureTaskUpdateEnd here (the stream stayed in update mode)")
    _check_update_landed(dev, model, s, u, ys)


# ---------------------------------------------------------------------------------------------
# FLD-06 .. FLD-08: stream resources running out


class StreamPool:
    """User streams created until the runtime refused one; released at the end of the spec
    (an open capture on one of them is ended first, its model destroyed)."""

    def __init__(self, dev: Dev) -> None:
        self.dev = dev
        self.streams: list[Any] = []
        self.refusal = 0
        dev.track("release the filled streams", self.release)

    def fill(self) -> None:
        """aclrtCreateStream until it fails; the refusal must be a stream-resource code."""
        limit = getattr(self.dev.b, "stream_limit", None)
        bound = int(limit) + FILL_MARGIN if limit else FILL_BOUND
        for _ in range(bound):
            rc, s = self.dev.b.create_stream()
            if rc != Err.SUCCESS:
                expect.rc(rc, STREAM_RESOURCE_CODES,
                          f"aclrtCreateStream after {len(self.streams)} streams")
                self.refusal = int(rc)
                return
            self.streams.append(s)
        raise outcomes.Unsupported(f"aclrtCreateStream never refused within {bound} streams")

    def free(self, count: int) -> None:
        """Destroy ``count`` of the filled streams (the oldest), making room for that many."""
        for _ in range(count):
            expect.ok(self.dev.b.destroy_stream(self.streams.pop(0)),
                      "aclrtDestroyStream of a filled stream (setup)")

    def take(self, count: int) -> list[Any]:
        """``count`` filled streams for the spec to use (they stay in the pool)."""
        if len(self.streams) < count:
            raise outcomes.Unsupported(f"only {len(self.streams)} streams before the refusal")
        return self.streams[-count:]

    def release(self) -> None:
        """End an open capture on a filled stream (destroying its model), then destroy them."""
        b = self.dev.b
        for s in self.streams:
            rc, st, _ = b.capture_get_info(s)
            if rc == Err.SUCCESS and st != CaptureStatus.NONE:
                rc, m = b.capture_end(s)
                if rc == Err.SUCCESS and m not in (None, UNWRITTEN):
                    b.destroy(m)
        for s in self.streams:
            b.destroy_stream(s)
        self.streams.clear()


@pytest.mark.clause("FLD-06")
@pytest.mark.requires(Cap.RESOURCE_LIMITS, Cap.CAPTURE)
def test_capture_begin_without_stream_resources(dev: Dev) -> None:
    """FLD-06: with every stream resource in use, CaptureBegin returns aclrtCreateStream's
    refusal code and the stream stays NONE; once one stream is destroyed the same Begin
    succeeds."""
    pool = StreamPool(dev)
    pool.fill()
    (s,) = pool.take(1)
    expect.rc(dev.b.capture_begin(s, CaptureMode.RELAXED), pool.refusal,
              "aclmdlRICaptureBegin with no stream resource left")
    st, m = dev.capture_status(s, "after the refused CaptureBegin")
    expect.eq(st, CaptureStatus.NONE, "status after the refused CaptureBegin")
    expect.eq(m, None, "GetInfo model after the refused CaptureBegin")
    pool.free(1)
    expect.ok(dev.b.capture_begin(s, CaptureMode.RELAXED),
              "aclmdlRICaptureBegin after one stream was destroyed")
    rc, _ = dev.end_rc(s)
    expect.ok(rc, "aclmdlRICaptureEnd of the empty capture")


@pytest.mark.clause("FLD-07")
@pytest.mark.requires(Cap.RESOURCE_LIMITS, Cap.CAPTURE, Cap.CROSS_STREAM, Cap.KERNELS)
def test_join_without_stream_resources(dev: Dev) -> None:
    """FLD-07: with room for exactly the origin and one side stream, a second stream's join
    returns the refusal code and does not join; the capture is invalidated at model level
    (joined streams still ACTIVE, later record/wait accepted), CaptureEnd gives 507903 with
    modelRI NULL and every stream NONE; the two internal streams it released let the origin
    capture again with a joined stream, and that model replays."""
    pool = StreamPool(dev)
    x, out1, out2 = dev.buffer(X), dev.buffer(n=N), dev.buffer(n=N)
    dev.func("fallback_main")
    dev.func("fallback_postprocess")
    pool.fill()
    pool.free(2)
    s0, s1, s2 = pool.take(3)
    dev.begin(s0)
    dev.fork(s0, s1)
    dev.launch("fallback_main", s1, input=x, output=out1)
    e = dev.event()
    expect.ok(dev.b.record_event(e, s0), "aclrtRecordEvent on the origin (setup)")
    rc_join = dev.b.stream_wait_event(s2, e)
    st2, m2 = dev.capture_status(s2, "of the stream whose join was refused")
    st0, _ = dev.capture_status(s0, "of the origin after the refused join")
    st1, _ = dev.capture_status(s1, "of the joined stream after the refused join")
    expect.rc(rc_join, pool.refusal, "aclrtStreamWaitEvent joining with no stream resource left")
    expect.eq(st2, CaptureStatus.NONE, "status of the stream whose join was refused")
    expect.eq(m2, None, "GetInfo model of the stream whose join was refused")
    expect.eq(st0, CaptureStatus.ACTIVE, "origin status after the refused join (model-level)")
    expect.eq(st1, CaptureStatus.ACTIVE, "joined stream status after the refused join")
    dev.join(s0, s1)  # record and wait are still accepted after the invalidation
    rc_end, m = dev.end_rc(s0)
    expect.rc(rc_end, Err.RT_STREAM_CAPTURE_INVALIDATED,
              "aclmdlRICaptureEnd after the refused join")
    expect.eq(m, None, "modelRI of the failed CaptureEnd")
    for name, s in (("origin", s0), ("joined", s1)):
        st, _ = dev.capture_status(s, f"of the {name} stream after the failed end")
        expect.eq(st, CaptureStatus.NONE, f"{name} stream status after the failed end")
    dev.begin(s0)  # takes one of the two internal streams the failed end released ...
    dev.fork(s0, s1)  # ... and the join the other
    dev.launch("fallback_main", s1, input=x, output=out1)
    dev.launch("fallback_postprocess", s0, input=x, output=out2)
    dev.join(s0, s1)
    model = dev.end(s0)
    dev.execute(model, s0)
    expect.eq(dev.read(out1), X + catalog.SEED_MAIN_BIAS, "replay output of the side stream")
    expect.eq(dev.read(out2), X * catalog.SEED_POST_SCALE, "replay output of the origin")


def _wide_model(dev: Dev, width: int) -> tuple[Any, list[Buf]]:
    """A captured model of ``width`` internal streams: the origin plus ``width - 1`` side
    streams, each filling its own buffer with its index."""
    streams = [dev.stream() for _ in range(width)]
    outs = [dev.buffer(n=N) for _ in range(width)]
    dev.begin(streams[0])
    for s in streams[1:]:
        dev.fork(streams[0], s)
    for i, (s, out) in enumerate(zip(streams, outs)):
        dev.launch("fill", s, out=out, n=N, value=i)
    for s in streams[1:]:
        dev.join(streams[0], s)
    return dev.end(streams[0]), outs


@pytest.mark.clause("FLD-08")
@pytest.mark.requires(Cap.RESOURCE_LIMITS, Cap.CAPTURE, Cap.CROSS_STREAM, Cap.KERNELS,
                      Cap.LISTING, Cap.UPDATE)
def test_too_many_captured_streams_at_execute(dev: Dev) -> None:
    """FLD-08: a model with one stream more than the software-SQ pool is captured with 0 but
    ExecuteAsync returns 207005, again on a retry, running nothing; Update returns 0, the
    execute stream is clean and Destroy returns 0; a model at the limit executes."""
    limit = getattr(dev.b, "model_stream_limit", None)
    if not limit:
        raise outcomes.Unsupported("the backend declares no model_stream_limit (it models "
                                   "non-software-SQ mode, where streams take SQs at capture)")
    dev.func("fill")
    exe = dev.stream()
    model, outs = _wide_model(dev, int(limit) + 1)
    expect.eq(len(dev.streams_of(model)), int(limit) + 1, "streams of the wide model (setup)")
    expect.rc(dev.b.execute_async(model, exe), RT_RESOURCE_ALLOC_FAIL,
              "aclmdlRIExecuteAsync of a model with more streams than the SQ/CQ pool")
    expect.rc(dev.b.execute_async(model, exe), RT_RESOURCE_ALLOC_FAIL,
              "aclmdlRIExecuteAsync retried")
    expect.ok(dev.b.update(model), "aclmdlRIUpdate of the refused model (still READY)")
    expect.ok(dev.b.synchronize_stream_with_timeout(exe, SYNC_MS), "sync of the execute stream")
    for i, out in enumerate(outs):
        expect.eq(dev.read(out), _full(SENTINEL), f"output {i} of the refused model")
    expect.ok(dev.destroy(model), "aclmdlRIDestroy of the refused model")
    fits, outs = _wide_model(dev, int(limit))
    dev.execute(fits, exe)
    for i, out in enumerate(outs):
        expect.eq(dev.read(out), _full(i), f"output {i} of the model at the limit")


# ---------------------------------------------------------------------------------------------
# FLD-09, FLD-10: a kernel that raises an AI Core exception


def _trap_flag(dev: Dev, armed: bool) -> Buf:
    """The ``trap_if`` flag word: 1 raises the exception, 0 lets the kernel pass."""
    return dev.buffer([1 if armed else 0])


@pytest.mark.clause("FLD-09")
@pytest.mark.requires(Cap.DEVICE_FAULTS, Cap.KERNELS, Cap.KERNEL_EXEC, Cap.SYNC_TIMEOUT)
def test_device_fault_on_ordinary_stream(dev: Dev) -> None:
    """FLD-09: an armed ``trap_if`` launched on an ordinary stream: launch 0, the sync returns
    507015, the next sync 0, and the stream runs new work."""
    s = dev.stream()
    flag, out = _trap_flag(dev, True), dev.buffer(n=N)
    expect.ok(dev.launch_rc(TRAP, s, flag=flag), "aclrtLaunchKernelWithHostArgs trap_if (armed)")
    expect.rc(dev.b.synchronize_stream_with_timeout(s, SYNC_MS), Err.RT_AICORE_EXCEPTION,
              "sync after the AI Core exception")
    expect.ok(dev.b.synchronize_stream_with_timeout(s, SYNC_MS),
              "second sync (the error is reported once)")
    dev.launch("fill", s, out=out, n=N, value=3)
    dev.sync(s)
    expect.eq(dev.read(out), _full(3), "work issued after the fault")


@pytest.mark.clause("FLD-10")
@pytest.mark.requires(Cap.DEVICE_FAULTS, Cap.CAPTURE, Cap.KERNELS, Cap.KERNEL_EXEC, Cap.SYNC_TIMEOUT,
                      Cap.UPDATE)
def test_device_fault_during_replay(dev: Dev) -> None:
    """FLD-10: a replay whose ``trap_if`` is armed: ExecuteAsync 0, the execute stream's sync
    507011 (not 507015), the next sync 0 and the query COMPLETE; the model is still READY and
    idle (Update 0), replays fully once disarmed, and Destroy returns 0."""
    s = dev.stream()
    flag, x = _trap_flag(dev, True), dev.buffer(X)
    mid, out = dev.buffer(n=N), dev.buffer(n=N)
    dev.func(TRAP)
    dev.begin(s)
    dev.launch("fallback_main", s, input=x, output=mid)
    dev.launch(TRAP, s, flag=flag)
    dev.launch("fallback_postprocess", s, input=mid, output=out)
    model = dev.end(s)
    expect.ok(dev.b.execute_async(model, s), "aclmdlRIExecuteAsync of the faulting replay")
    expect.rc(dev.b.synchronize_stream_with_timeout(s, SYNC_MS), Err.RT_MODEL_EXECUTE,
              "sync of the execute stream after the faulting replay")
    expect.ok(dev.b.synchronize_stream_with_timeout(s, SYNC_MS),
              "second sync (the error is reported once)")
    rc, status = dev.b.stream_query(s)
    expect.ok(rc, "aclrtStreamQuery after the faulting replay")
    expect.eq(status, StreamStatus.COMPLETE, "aclrtStreamQuery status after the faulting replay")
    expect.ok(dev.b.update(model), "aclmdlRIUpdate after the faulting replay (READY, not running)")
    dev.write(flag, [0])
    dev.execute(model, s)
    expect.eq(dev.read(out), (X + catalog.SEED_MAIN_BIAS) * catalog.SEED_POST_SCALE,
              "output of the replay after the fault")
    expect.ok(dev.destroy(model), "aclmdlRIDestroy after the faulting replay")

