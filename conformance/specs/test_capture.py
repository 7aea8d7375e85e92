"""Capture begin/end, what gets captured, GetInfo and invalidation.

Clause groups: CAP (capture begin/end and what gets captured), STAT (capture status,
GetInfo, invalidation), ERR-01 / ERR-02 / ERR-04 (error tables of CaptureBegin,
CaptureGetInfo and CaptureEnd).

Not covered here: CAP-09 (needs aclmdlRIBindStream, not in the contract), CAP-20
(profiling / dump / overflow configuration APIs are not in the contract; Q-12).
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest

from mdlri_conformance.backends.contract import (
    UNWRITTEN, Cap, CaptureMode, CaptureStatus, Err, MemcpyKind, ModelStreamFlag, StreamFlag,
)
from mdlri_conformance.conformance import expect
from mdlri_conformance.conformance.harness import SENTINEL, Dev, in_thread
from mdlri_conformance.conformance.specs._setups import begin_build, persistent_stream
from mdlri_conformance.kernel import catalog

pytestmark = pytest.mark.requires(Cap.CAPTURE)

N = catalog.SEED_ELEMENTS


# ---------------------------------------------------------------------------------------------
# helpers


def _inputs(seed: int = 3) -> np.ndarray:
    """Distinct, non-trivial int32 inputs for the seed kernels."""
    return (np.arange(N, dtype=np.int32) * seed + 7).astype(np.int32)


def _sentinel(n: int = N) -> np.ndarray:
    return np.full(n, SENTINEL, dtype=np.int32)


def _invalidate_two(dev: Dev) -> tuple[Any, Any, int]:
    """Two captures, A on s1 and B on s2; B waits on an event recorded in A (XS-07).

    Returns (s1, s2, rc of the cross-model wait).
    """
    s1, s2 = dev.stream(), dev.stream()
    e = dev.event()
    dev.begin(s1)
    dev.begin(s2)
    expect.ok(dev.b.record_event(e, s1), "aclrtRecordEvent in capture A")
    rc = dev.b.stream_wait_event(s2, e)
    return s1, s2, rc


# ---------------------------------------------------------------------------------------------
# CAP: what gets captured


@pytest.mark.clause("CAP-01")
@pytest.mark.requires(Cap.KERNELS)
def test_cap01_captured_kernel_runs_only_on_execute(dev: Dev) -> None:
    """CAP-01 A captured kernel launch does not run until the model is executed."""
    s = dev.stream()
    x = _inputs()
    inp, out = dev.buffer(x), dev.buffer(n=N)
    dev.func("fallback_main")
    dev.begin(s)
    dev.launch("fallback_main", s, input=inp, output=out)
    m = dev.end(s)
    dev.sync(s)
    expect.eq(dev.read(out), _sentinel(), "output after CaptureEnd + sync (before execute)")
    dev.execute(m, s)
    expect.eq(dev.read(out), x + catalog.SEED_MAIN_BIAS, "output after ExecuteAsync + sync")


@pytest.mark.clause("CAP-01")
def test_cap01_captured_memcpy_async_runs_only_on_execute(dev: Dev) -> None:
    """CAP-01 A captured device-to-device memcpyAsync does not run until execution."""
    s = dev.stream()
    x = _inputs(5)
    src, dst = dev.buffer(x), dev.buffer(n=N)
    dev.begin(s)
    expect.ok(dev.b.memcpy_async(dst.addr, dst.nbytes, src.addr, src.nbytes,
                                 MemcpyKind.DEVICE_TO_DEVICE, s), "aclrtMemcpyAsync D2D in capture")
    m = dev.end(s)
    dev.sync(s)
    expect.eq(dev.read(dst), _sentinel(), "destination after CaptureEnd + sync (before execute)")
    dev.execute(m, s)
    expect.eq(dev.read(dst), x, "destination after ExecuteAsync + sync")


@pytest.mark.clause("CAP-01")
def test_cap01_captured_pinned_h2d_memcpy_async_runs_only_on_execute(dev: Dev) -> None:
    """CAP-01 A captured pinned host-to-device memcpyAsync does not run until execution."""
    s = dev.stream()
    x = _inputs(11)
    dst = dev.buffer(n=N)
    rc, host = dev.b.malloc_host(x.nbytes)
    expect.ok(rc, "aclrtMallocHost (setup)")
    try:
        host[:] = x.view(np.uint8)
        dev.begin(s)
        expect.ok(dev.b.memcpy_async(dst.addr, dst.nbytes, host, x.nbytes,
                                     MemcpyKind.HOST_TO_DEVICE, s),
                  "aclrtMemcpyAsync H2D (pinned) in capture")
        m = dev.end(s)
        dev.sync(s)
        expect.eq(dev.read(dst), _sentinel(), "destination after CaptureEnd + sync")
        dev.execute(m, s)
        expect.eq(dev.read(dst), x, "destination after ExecuteAsync + sync")
    finally:
        dev.b.free_host(host)


@pytest.mark.clause("CAP-01")
def test_cap01_captured_memset_async_runs_only_on_execute(dev: Dev) -> None:
    """CAP-01 A captured memsetAsync does not run until the model is executed."""
    s = dev.stream()
    dst = dev.buffer(n=N)
    byte = 0x5A
    dev.begin(s)
    expect.ok(dev.b.memset_async(dst.addr, dst.nbytes, byte, dst.nbytes, s),
              "aclrtMemsetAsync in capture")
    m = dev.end(s)
    dev.sync(s)
    expect.eq(dev.read(dst), _sentinel(), "buffer after CaptureEnd + sync (before execute)")
    dev.execute(m, s)
    expected = np.frombuffer(bytes([byte]) * dst.nbytes, dtype=np.int32)
    expect.eq(dev.read(dst), expected, "buffer after ExecuteAsync + sync")


@pytest.mark.clause("CAP-01")
@pytest.mark.requires(Cap.VALUE_TASKS)
def test_cap01_captured_value_write_runs_only_on_execute(dev: Dev) -> None:
    """CAP-01 A captured aclrtValueWrite does not store until the model is executed."""
    s = dev.stream()
    initial, value = 0x1111, 0x0123_4567_89AB_CDEF
    word = dev.buffer64(initial)
    dev.begin(s)
    expect.ok(dev.b.value_write(word, value, 0, s), "aclrtValueWrite in capture")
    m = dev.end(s)
    dev.sync(s)
    expect.eq(dev.read64(word), initial, "device word after CaptureEnd + sync (before execute)")
    dev.execute(m, s)
    expect.eq(dev.read64(word), value, "device word after ExecuteAsync + sync")


@pytest.mark.clause("CAP-02")
@pytest.mark.requires(Cap.KERNELS)
def test_cap02_work_before_begin_executes(dev: Dev) -> None:
    """CAP-02 Work queued on the stream before CaptureBegin runs normally (not captured)."""
    s = dev.stream()
    x = _inputs()
    inp, before, during = dev.buffer(x), dev.buffer(n=N), dev.buffer(n=N)
    dev.launch("fallback_main", s, input=inp, output=before)
    dev.begin(s)
    dev.launch("fallback_postprocess", s, input=inp, output=during)
    dev.end(s)
    dev.sync(s)
    expect.eq(dev.read(before), x + catalog.SEED_MAIN_BIAS, "pre-capture kernel output")
    expect.eq(dev.read(during), _sentinel(), "captured kernel output (model never executed)")


@pytest.mark.clause("CAP-03")
def test_cap03_end_on_another_stream_does_not_end_capture(dev: Dev) -> None:
    """CAP-03 CaptureEnd on a stream other than the origin fails and leaves the capture open."""
    s1, s2 = dev.stream(), dev.stream()
    dev.begin(s1)
    rc, m = dev.end_rc(s2)
    expect.rc(rc, Err.RT_STREAM_NOT_CAPTURED, "aclmdlRICaptureEnd on an unrelated stream")
    expect.eq(m, UNWRITTEN, "modelRI out-param of the failed CaptureEnd")
    st, _ = dev.capture_status(s1, "(origin)")
    expect.eq(st, CaptureStatus.ACTIVE, "origin stream status")
    rc, m = dev.end_rc(s1)
    expect.ok(rc, "aclmdlRICaptureEnd on the origin stream")


@pytest.mark.clause("CAP-04")
def test_cap04_end_returns_model_and_stream_returns_to_none(dev: Dev) -> None:
    """CAP-04 CaptureEnd returns a non-NULL modelRI and the origin stream reports NONE."""
    s = dev.stream()
    dev.begin(s)
    rc, m = dev.end_rc(s)
    expect.ok(rc, "aclmdlRICaptureEnd")
    expect.true(m not in (None, UNWRITTEN), "modelRI out-param", "non-NULL handle", m)
    st, _ = dev.capture_status(s, "after CaptureEnd")
    expect.eq(st, CaptureStatus.NONE, "origin stream status after CaptureEnd")


@pytest.mark.clause("CAP-05")
def test_cap05_getinfo_model_is_the_one_end_returns(dev: Dev) -> None:
    """CAP-05 During capture GetInfo reports ACTIVE and the handle CaptureEnd later returns."""
    s = dev.stream()
    dev.begin(s)
    st, during = dev.capture_status(s, "during capture")
    expect.eq(st, CaptureStatus.ACTIVE, "status during capture")
    expect.true(during not in (None, UNWRITTEN), "modelRI during capture", "non-NULL", during)
    m = dev.end(s)
    expect.eq(m, during, "CaptureEnd modelRI vs GetInfo modelRI")


@pytest.mark.clause("CAP-06")
def test_cap06_begin_on_capturing_stream_fails(dev: Dev) -> None:
    """CAP-06 CaptureBegin on a stream that is already capturing returns 107027, capture intact."""
    s = dev.stream()
    dev.begin(s)
    _, before = dev.capture_status(s, "before second begin")
    for mode in CaptureMode:
        expect.rc(dev.b.capture_begin(s, mode), Err.RT_STREAM_CAPTURED,
                  f"second aclmdlRICaptureBegin ({mode.name})")
    st, after = dev.capture_status(s, "after second begin")
    expect.eq(st, CaptureStatus.ACTIVE, "status after the rejected begin")
    expect.eq(after, before, "model after the rejected begin")
    m = dev.end(s)
    expect.eq(m, before, "CaptureEnd modelRI")


@pytest.mark.clause("CAP-06")
@pytest.mark.requires(Cap.CROSS_STREAM)
def test_cap06_begin_on_joined_stream_fails(dev: Dev) -> None:
    """CAP-06 CaptureBegin on a stream that joined another capture returns 107027."""
    s1, s2 = dev.stream(), dev.stream()
    dev.begin(s1)
    dev.fork(s1, s2)
    _, model = dev.capture_status(s1, "(origin)")
    expect.rc(dev.b.capture_begin(s2, CaptureMode.RELAXED), Err.RT_STREAM_CAPTURED,
              "aclmdlRICaptureBegin on the joined stream")
    st, joined = dev.capture_status(s2, "(joined stream)")
    expect.eq(st, CaptureStatus.ACTIVE, "joined stream status after the rejected begin")
    expect.eq(joined, model, "joined stream model after the rejected begin")
    dev.join(s1, s2)
    dev.end(s1)


@pytest.mark.clause("CAP-07")
@pytest.mark.requires(Cap.KERNELS)
def test_cap07_independent_captures_in_all_modes(dev: Dev) -> None:
    """CAP-07 Three streams capture at once (GLOBAL, THREAD_LOCAL, RELAXED) into three models."""
    x = _inputs()
    inp = dev.buffer(x)
    outs = [dev.buffer(n=N) for _ in CaptureMode]
    streams = [dev.stream() for _ in CaptureMode]
    dev.func("affine")
    # every buffer exists before the GLOBAL capture blocks synchronous copies
    for i, (s, mode) in enumerate(zip(streams, CaptureMode)):
        expect.ok(dev.b.capture_begin(s, mode), f"aclmdlRICaptureBegin ({mode.name})")
        dev.launch("affine", s, x=inp, y=outs[i], n=N, a=i + 2, b=i)
    models = []
    for s, mode in zip(streams, CaptureMode):
        rc, m = dev.end_rc(s)
        expect.ok(rc, f"aclmdlRICaptureEnd ({mode.name})")
        models.append(m)
    for i, mi in enumerate(models):
        for j in range(i):
            expect.ne(mi, models[j], f"modelRI {i} vs modelRI {j}")
    for i, (s, m) in enumerate(zip(streams, models)):
        dev.execute(m, s)
        expect.eq(dev.read(outs[i]), x * (i + 2) + i, f"output of model {i}")


@pytest.mark.clause("CAP-08")
def test_cap08_begin_on_null_stream(dev: Dev) -> None:
    """CAP-08 CaptureBegin on the NULL (default) stream returns 100000."""
    for mode in CaptureMode:
        expect.rc(dev.b.capture_begin(None, mode), Err.INVALID_PARAM,
                  f"aclmdlRICaptureBegin(NULL, {mode.name})")


@pytest.mark.clause("CAP-08")
@pytest.mark.requires(Cap.CROSS_STREAM, Cap.VALUE_TASKS)
def test_cap08_default_stream_and_a_capturing_event(dev: Dev) -> None:
    """CAP-08 An aclrtStreamWaitEvent on the default (NULL) stream of an event recorded in an
    open capture returns 107031 (ApiImpl::StreamWaitEvent, `api/impl/api_impl.cc:1591-1633`:
    the NULL stream is the context's default stream, then evt->IsCapturing() and the default
    stream); the capture goes on and ends. (aclrtResetEvent is not asserted: ApiImpl::EventReset
    answers 207000 for a new-mode event before its capture check, `:2209-2214`.) An
    aclrtRecordEvent on the default stream is a normal record, 0, for the event of the open
    capture too, and the capture goes on; an event no capture holds is recorded on the default
    stream as usual: 0, and its sync returns 0 (ToBeCaptured needs a capturing stream,
    `feature/aclgraph/event_capture.cc:183-196`, `api/impl/api_impl.cc:2168-2193`)."""
    s = dev.stream()
    held, free = dev.event(), dev.event()
    dev.begin(s)
    expect.ok(dev.b.record_event(held, s), "aclrtRecordEvent in the capture (setup)")
    expect.rc(dev.b.stream_wait_event(None, held), Err.RT_STREAM_CAPTURE_IMPLICIT,
              "aclrtStreamWaitEvent(default stream, event of the open capture)")
    st, _ = dev.capture_status(s, "after the refused default-stream wait")
    expect.eq(st, CaptureStatus.ACTIVE, "capture status after the refused default-stream wait")
    # the default stream never captures, so ToBeCaptured is false and the record is a normal
    # one (`api/impl/api_impl.cc:2168-2193`): 0, the capture goes on
    expect.rc(dev.b.record_event(held, None), Err.SUCCESS,
              "aclrtRecordEvent(event of the open capture, default stream)")
    st, _ = dev.capture_status(s, "after the default-stream record")
    expect.eq(st, CaptureStatus.ACTIVE, "capture status after the default-stream record")
    dev.end(s)
    word = dev.buffer64(0)
    expect.ok(dev.b.value_write(word, 0x33, 0, None), "aclrtValueWrite on the default stream (setup)")
    expect.rc(dev.b.record_event(free, None), Err.SUCCESS,
              "aclrtRecordEvent(event of no capture, default stream)")
    sync_event = getattr(dev.b, "synchronize_event_with_timeout", None)
    if sync_event is not None:
        expect.rc(sync_event(free, 5000), Err.SUCCESS, "event sync of the default-stream record")
    dev.sync(None)
    expect.eq(dev.read64(word), 0x33, "word written on the default stream before the record")


@pytest.mark.clause("CAP-09")
def test_cap09_begin_on_a_model_stream(dev: Dev) -> None:
    """CAP-09 CaptureBegin on a stream of a captured model (aclmdlRIGetStreams) returns 107005
    in every mode, the stream being bound to that model (ApiImpl::StreamBeginCapture,
    `feature/aclgraph/v100/api_impl_aclgraph.cc:26-38`); a mode outside GLOBAL..RELAXED is
    refused first with 107000 (ApiErrorDecorator::StreamBeginCapture,
    `feature/aclgraph/api_error_aclgraph.cc:37-44`)."""
    s = dev.stream()
    dev.begin(s)
    m = dev.end(s)
    streams = dev.streams_of(m)
    expect.true(len(streams) >= 1, "streams of the captured model (setup)", ">= 1", len(streams))
    ms = streams[0]
    for mode in CaptureMode:
        expect.rc(dev.b.capture_begin(ms, mode), Err.RT_STREAM_MODEL,
                  f"aclmdlRICaptureBegin(model stream, {mode.name})")
    expect.rc(dev.b.capture_begin(ms, 3), Err.RT_PARAM_INVALID,
              "aclmdlRICaptureBegin(model stream, mode 3)")


@pytest.mark.clause("ERR-04", "CAP-09")
@pytest.mark.requires(Cap.BUILD)
def test_err04_end_on_a_model_stream(dev: Dev) -> None:
    """ERR-04 CaptureEnd on a stream of a model returns 107005, not 107029, modelRI untouched:
    ApiImpl::StreamEndCapture refuses stm->Model_() != nullptr with RT_ERROR_STREAM_MODEL
    before the capture state is looked at (`feature/aclgraph/v100/api_impl_aclgraph.cc:
    56-58`). Both kinds of model stream: an internal stream of a captured model
    (aclmdlRIGetStreams) and a persistent stream bound to a building model (aclmdlRIBindStream)."""
    s = dev.stream()
    dev.begin(s)
    m = dev.end(s)
    streams = dev.streams_of(m)
    expect.true(len(streams) >= 1, "streams of the captured model (setup)", ">= 1", len(streams))
    rc, out = dev.end_rc(streams[0])
    expect.rc(rc, Err.RT_STREAM_MODEL, "aclmdlRICaptureEnd(internal stream of a captured model)")
    expect.eq(out, UNWRITTEN, "modelRI out-param (internal model stream)")
    built = begin_build(dev)
    ps = persistent_stream(dev)
    expect.ok(dev.b.bind_stream(built, ps, ModelStreamFlag.HEAD), "aclmdlRIBindStream (setup)")
    try:
        rc, out = dev.end_rc(ps)
        expect.rc(rc, Err.RT_STREAM_MODEL, "aclmdlRICaptureEnd(stream bound to a model)")
        expect.eq(out, UNWRITTEN, "modelRI out-param (bound stream)")
    finally:
        dev.b.unbind_stream(built, ps)


@pytest.mark.clause("CAP-10")
def test_cap10_end_on_idle_stream(dev: Dev) -> None:
    """CAP-10 CaptureEnd on a stream that is not capturing returns 107029, modelRI untouched."""
    s = dev.stream()
    rc, m = dev.end_rc(s)
    expect.rc(rc, Err.RT_STREAM_NOT_CAPTURED, "aclmdlRICaptureEnd on an idle stream")
    expect.eq(m, UNWRITTEN, "modelRI out-param")


@pytest.mark.clause("CAP-10")
def test_cap10_end_twice(dev: Dev) -> None:
    """CAP-10 A second CaptureEnd after a successful one returns 107029, modelRI untouched."""
    s = dev.stream()
    dev.begin(s)
    dev.end(s)
    rc, m = dev.end_rc(s)
    expect.rc(rc, Err.RT_STREAM_NOT_CAPTURED, "second aclmdlRICaptureEnd")
    expect.eq(m, UNWRITTEN, "modelRI out-param of the second CaptureEnd")


@pytest.mark.clause("CAP-11")
@pytest.mark.requires(Cap.CROSS_STREAM)
def test_cap11_end_on_joined_stream(dev: Dev) -> None:
    """CAP-11 CaptureEnd on a joined (non-origin) stream returns 107036; capture stays ACTIVE."""
    s1, s2 = dev.stream(), dev.stream()
    dev.begin(s1)
    dev.fork(s1, s2)
    _, model = dev.capture_status(s1, "(origin)")
    rc, m = dev.end_rc(s2)
    expect.rc(rc, Err.RT_STREAM_CAPTURE_UNMATCHED, "aclmdlRICaptureEnd on the joined stream")
    for name, s in (("origin", s1), ("joined", s2)):
        st, got = dev.capture_status(s, f"({name})")
        expect.eq(st, CaptureStatus.ACTIVE, f"{name} stream status after the rejected end")
        expect.eq(got, model, f"{name} stream model after the rejected end")
    dev.join(s1, s2)
    rc, m = dev.end_rc(s1)
    expect.ok(rc, "aclmdlRICaptureEnd on the origin")
    expect.eq(m, model, "modelRI from the origin's CaptureEnd")


@pytest.mark.clause("CAP-12")
def test_cap12_end_with_null_model_keeps_capture(dev: Dev) -> None:
    """CAP-12 CaptureEnd(s, NULL) on a root capture returns 107000 and does not end the capture."""
    s = dev.stream()
    dev.begin(s)
    _, model = dev.capture_status(s, "before")
    rc, _ = dev.b.capture_end(s, null_model=True)
    expect.rc(rc, Err.RT_PARAM_INVALID, "aclmdlRICaptureEnd(s, NULL)")
    st, after = dev.capture_status(s, "after the NULL-model end")
    expect.eq(st, CaptureStatus.ACTIVE, "status after the NULL-model end")
    expect.eq(after, model, "model after the NULL-model end")
    m = dev.end(s)
    expect.eq(m, model, "modelRI from the following CaptureEnd")


@pytest.mark.clause("CAP-13")
@pytest.mark.requires(Cap.CROSS_STREAM, Cap.KERNELS)
def test_cap13_failed_end_clears_model_and_streams(dev: Dev) -> None:
    """CAP-13 A CaptureEnd failing after its checks sets modelRI NULL and every stream to NONE."""
    s1, s2 = dev.stream(), dev.stream()
    inp, out = dev.buffer(_inputs()), dev.buffer(n=N)
    dev.func("fallback_main")
    dev.begin(s1)
    dev.fork(s1, s2)
    dev.launch("fallback_main", s2, input=inp, output=out)  # s2 never rejoins: 107025
    rc, m = dev.end_rc(s1)
    expect.rc(rc, Err.RT_STREAM_UNJOINED, "aclmdlRICaptureEnd with an unjoined stream")
    expect.eq(m, None, "modelRI out-param of the failed CaptureEnd")
    for name, s in (("origin", s1), ("joined", s2)):
        st, _ = dev.capture_status(s, f"({name}) after the failed end")
        expect.eq(st, CaptureStatus.NONE, f"{name} stream status after the failed end")
    expect.ok(dev.b.capture_begin(s1, CaptureMode.RELAXED),
              "new aclmdlRICaptureBegin on the origin")
    dev.end(s1)
    dev.sync(s2)
    expect.eq(dev.read(out), _sentinel(), "output of the discarded capture")


@pytest.mark.own_process  # a wrong-thread end can leak the capture mode (MODE-03)
@pytest.mark.clause("CAP-14")
@pytest.mark.requires(Cap.THREADS)
@pytest.mark.parametrize("mode", [CaptureMode.GLOBAL, CaptureMode.THREAD_LOCAL],
                         ids=lambda m: m.name)
def test_cap14_end_from_wrong_thread(dev: Dev, fingerprint: Any, mode: CaptureMode) -> None:
    """CAP-14 CaptureEnd from another thread of a GLOBAL/THREAD_LOCAL capture returns 107038."""
    s = dev.stream()
    dev.begin(s, mode)
    _, model = dev.capture_status(s, "during capture")
    rc, m = in_thread(dev.b, lambda: dev.b.capture_end(s))
    if rc == Err.SUCCESS and m not in (None, UNWRITTEN):
        dev.model(m)
    # the state after the rejected end is undocumented: record, do not assert
    rc_info, st, _ = dev.b.capture_get_info(s)
    fingerprint.record("Q-05:status_after_wrong_thread_end",
                       st if rc_info == 0 else f"rc {rc_info}")
    if rc != Err.SUCCESS and rc_info == Err.SUCCESS and st == CaptureStatus.NONE:
        # the stream left capture without returning the model: release it through the
        # GetInfo handle so the spec does not leak it (what that does is Q-05's question)
        fingerprint.record("Q-05:destroy_after_wrong_thread_end", dev.b.destroy(model))
    expect.rc(rc, Err.RT_STREAM_CAPTURE_WRONG_THREAD, "aclmdlRICaptureEnd from another thread")


@pytest.mark.own_process  # a wrong-thread end can leak the capture mode (MODE-03)
@pytest.mark.clause("Q-05")
@pytest.mark.requires(Cap.THREADS)
def test_q05_state_after_wrong_thread_end(dev: Dev, fingerprint: Any) -> None:
    """Q-05 Stream status, retry CaptureEnd and Destroy of the model after a wrong-thread end."""
    s = dev.stream()
    dev.begin(s, CaptureMode.THREAD_LOCAL)
    _, model = dev.capture_status(s, "during capture")
    rc, m = in_thread(dev.b, lambda: dev.b.capture_end(s))
    fingerprint.record("Q-05:wrong_thread_end_rc", rc)
    if rc == Err.SUCCESS:
        if m not in (None, UNWRITTEN):
            dev.model(m)
        return
    rc_info, st, _ = dev.b.capture_get_info(s)
    fingerprint.record("Q-05:status_after", st if rc_info == 0 else f"rc {rc_info}")
    rc_retry, m_retry = dev.b.capture_end(s)
    fingerprint.record("Q-05:retry_end_rc", rc_retry)
    if rc_retry == Err.SUCCESS and m_retry not in (None, UNWRITTEN):
        dev.model(m_retry)
        return
    fingerprint.record("Q-05:destroy_rc", dev.b.destroy(model))


@pytest.mark.clause("CAP-15")
@pytest.mark.requires(Cap.THREADS)
def test_cap15_relaxed_end_from_other_thread(dev: Dev) -> None:
    """CAP-15 A RELAXED capture may be ended from another thread."""
    s = dev.stream()
    dev.begin(s, CaptureMode.RELAXED)
    _, model = dev.capture_status(s, "during capture")
    rc, m = in_thread(dev.b, lambda: dev.b.capture_end(s))
    if m not in (None, UNWRITTEN):
        dev.model(m)
    expect.ok(rc, "aclmdlRICaptureEnd from another thread")
    expect.eq(m, model, "modelRI returned to the other thread")
    st, _ = dev.capture_status(s, "after CaptureEnd")
    expect.eq(st, CaptureStatus.NONE, "origin status after CaptureEnd")


@pytest.mark.clause("CAP-16")
@pytest.mark.requires(Cap.LISTING)
def test_cap16_empty_capture(dev: Dev) -> None:
    """CAP-16 CaptureBegin immediately followed by CaptureEnd yields a model with one stream."""
    s = dev.stream()
    dev.begin(s)
    rc, m = dev.end_rc(s)
    expect.ok(rc, "aclmdlRICaptureEnd of an empty capture")
    expect.true(m not in (None, UNWRITTEN), "modelRI", "non-NULL", m)
    rc, _, n = dev.b.get_streams(m, None)
    expect.ok(rc, "aclmdlRIGetStreams (count)")
    expect.eq(n, 1, "stream count of the empty model")


@pytest.mark.clause("CAP-17")
def test_cap17_invalid_mode(dev: Dev) -> None:
    """CAP-17 CaptureBegin with a mode outside {0,1,2} returns 107000 and starts nothing."""
    s = dev.stream()
    for mode in (3, 4, 0x7FFF_FFFF):
        expect.rc(dev.b.capture_begin(s, mode), Err.RT_PARAM_INVALID,
                  f"aclmdlRICaptureBegin(mode={mode})")
        st, _ = dev.capture_status(s, f"after mode={mode}")
        expect.eq(st, CaptureStatus.NONE, f"status after the rejected begin (mode={mode})")


def _with_config_stream(dev: Dev, flag: int, body: Callable[[Any], None]) -> None:
    """Run ``body`` on a stream created with ``flag``; the stream is released afterwards."""
    rc, s = dev.b.create_stream_with_config(0, flag)
    expect.ok(rc, f"aclrtCreateStreamWithConfig(flag={flag:#x}) (setup)")
    try:
        body(s)
    finally:
        rc_info, st, _ = dev.b.capture_get_info(s)
        if rc_info == Err.SUCCESS and st != CaptureStatus.NONE:
            rc_end, m = dev.b.capture_end(s)
            if rc_end == Err.SUCCESS and m not in (None, UNWRITTEN):
                dev.b.destroy(m)
        dev.b.destroy_stream(s)


#: the ACL stream flags whose runtime flag cannot be captured (CAP-18): DEVICE_USE_ONLY is
#: CP_PROCESS_USE, CPU_SCHEDULE is the AICPU bit
_UNCAPTURABLE = [StreamFlag.DEVICE_USE_ONLY, StreamFlag.CPU_SCHEDULE]


@pytest.mark.clause("CAP-18")
@pytest.mark.parametrize("flag", _UNCAPTURABLE, ids=lambda f: f.name)
def test_cap18_stream_flag_cannot_capture(dev: Dev, flag: StreamFlag) -> None:
    """CAP-18 CaptureBegin on a DEVICE_USE_ONLY or CPU_SCHEDULE stream returns 507000 and
    leaves the stream not capturing."""
    def body(s: Any) -> None:
        expect.rc(dev.b.capture_begin(s, CaptureMode.RELAXED), Err.RT_INTERNAL_ERROR,
                  f"aclmdlRICaptureBegin on a {flag.name} stream", clause="CAP-18")
        rc, status, _ = dev.b.capture_get_info(s)
        expect.ok(rc, "aclmdlRICaptureGetInfo after the refused CaptureBegin")
        expect.eq(status, CaptureStatus.NONE, "capture status after the refused CaptureBegin",
                  clause="CAP-18")
    _with_config_stream(dev, flag, body)


@pytest.mark.clause("CAP-18")
@pytest.mark.parametrize("flag", _UNCAPTURABLE, ids=lambda f: f.name)
def test_cap18_capture_end_checks_the_flag_first(dev: Dev, flag: StreamFlag) -> None:
    """CAP-18 CaptureEnd on a DEVICE_USE_ONLY or CPU_SCHEDULE stream returns 507000, not
    CAP-10's 107029 for a stream that is not capturing: the error decorator's flag check
    (`feature/aclgraph/api_error_aclgraph.cc:59-63`) comes before the impl's capture-state
    checks and leaves the model out-parameter unwritten."""
    def body(s: Any) -> None:
        rc, model = dev.b.capture_end(s)
        expect.rc(rc, Err.RT_INTERNAL_ERROR, f"aclmdlRICaptureEnd on a {flag.name} stream",
                  clause="CAP-18")
        expect.eq(model, UNWRITTEN, "aclmdlRICaptureEnd model out-parameter", clause="CAP-18")
    _with_config_stream(dev, flag, body)


@pytest.mark.clause("CAP-18")
@pytest.mark.parametrize("flag", _UNCAPTURABLE, ids=lambda f: f.name)
def test_cap18_stream_flag_cannot_join(dev: Dev, flag: StreamFlag) -> None:
    """CAP-18 aclrtStreamWaitEvent from a DEVICE_USE_ONLY or CPU_SCHEDULE stream on an event
    recorded in an open capture returns 507000 (`api/impl/api_impl.cc:1625-1628`, the same
    flag check as CaptureBegin's): the stream does not join (its status stays NONE) and the
    capture goes on with its one stream."""
    origin, side, e = dev.stream(), dev.stream(flag), dev.event()
    dev.begin(origin)
    expect.ok(dev.b.record_event(e, origin), "aclrtRecordEvent in the capture (setup)")
    expect.rc(dev.b.stream_wait_event(side, e), Err.RT_INTERNAL_ERROR,
              f"aclrtStreamWaitEvent from a {flag.name} stream on a captured event",
              clause="CAP-18")
    status, _ = dev.capture_status(side, f"({flag.name} stream) after the refused wait")
    expect.eq(status, CaptureStatus.NONE, f"{flag.name} stream status after the refused wait",
              clause="CAP-18")
    m = dev.end(origin)
    expect.eq(len(dev.streams_of(m)), 1, "streams of the model after the refused join",
              clause="CAP-18")


@pytest.mark.clause("CAP-19")
@pytest.mark.requires(Cap.KERNELS)
def test_cap19_model_reads_buffers_at_execution(dev: Dev) -> None:
    """CAP-19 Captured tasks keep device addresses: input written after capture is what runs."""
    s = dev.stream()
    first, second = _inputs(2), _inputs(9)
    inp, out = dev.buffer(first), dev.buffer(n=N)
    dev.func("fallback_main")
    dev.begin(s)
    dev.launch("fallback_main", s, input=inp, output=out)
    m = dev.end(s)
    dev.write(inp, second)
    dev.execute(m, s)
    expect.eq(dev.read(out), second + catalog.SEED_MAIN_BIAS,
              "output computed from the input present at execution")


@pytest.mark.clause("CAP-21")
def test_cap21_destroy_capturing_stream(dev: Dev) -> None:
    """CAP-21 aclrtDestroyStream on a capturing stream returns 107027."""
    rc, s = dev.b.create_stream()
    expect.ok(rc, "aclrtCreateStream (setup)")
    destroyed = False
    try:
        dev.begin(s)
        rc = dev.b.destroy_stream(s)
        destroyed = rc == Err.SUCCESS
        expect.rc(rc, Err.RT_STREAM_CAPTURED, "aclrtDestroyStream on a capturing stream")
        st, _ = dev.capture_status(s, "after the rejected destroy")
        expect.eq(st, CaptureStatus.ACTIVE, "status after the rejected destroy")
        dev.end(s)
    finally:
        if not destroyed:
            rc_info, st, _ = dev.b.capture_get_info(s)
            if rc_info == Err.SUCCESS and st != CaptureStatus.NONE:
                rc_end, m = dev.end_rc(s)
            dev.b.synchronize_stream_with_timeout(s, 2000)
            dev.b.destroy_stream(s)


@pytest.mark.clause("CAP-22")
def test_cap22_new_model_per_capture(dev: Dev) -> None:
    """CAP-22 Capturing the same stream twice gives two distinct modelRI handles."""
    s = dev.stream()
    dev.begin(s)
    m1 = dev.end(s)
    dev.begin(s)
    m2 = dev.end(s)
    expect.ne(m2, m1, "second modelRI (first one still alive)")


# ---------------------------------------------------------------------------------------------
# STAT: GetInfo and invalidation


@pytest.mark.clause("STAT-01")
def test_stat01_getinfo_idle_stream(dev: Dev) -> None:
    """STAT-01 GetInfo on a stream that is not capturing returns NONE and a NULL modelRI."""
    s = dev.stream()
    rc, st, m = dev.b.capture_get_info(s)
    expect.ok(rc, "aclmdlRICaptureGetInfo on an idle stream")
    expect.eq(st, CaptureStatus.NONE, "status")
    expect.eq(m, None, "modelRI")


@pytest.mark.clause("STAT-01")
def test_stat01_getinfo_after_end(dev: Dev) -> None:
    """STAT-01 After CaptureEnd GetInfo returns NONE and a NULL modelRI again."""
    s = dev.stream()
    dev.begin(s)
    dev.end(s)
    rc, st, m = dev.b.capture_get_info(s)
    expect.ok(rc, "aclmdlRICaptureGetInfo after CaptureEnd")
    expect.eq(st, CaptureStatus.NONE, "status")
    expect.eq(m, None, "modelRI")


@pytest.mark.clause("STAT-02")
def test_stat02_getinfo_one_null_output(dev: Dev) -> None:
    """STAT-02 GetInfo accepts one NULL output and fills the other; both NULL returns 100000."""
    s = dev.stream()
    dev.begin(s)
    _, model = dev.capture_status(s, "(both outputs)")
    rc, st, m = dev.b.capture_get_info(s, null_status=True)
    expect.ok(rc, "aclmdlRICaptureGetInfo(s, NULL, &m)")
    expect.eq(m, model, "modelRI with status NULL")
    rc, st, m = dev.b.capture_get_info(s, null_model=True)
    expect.ok(rc, "aclmdlRICaptureGetInfo(s, &st, NULL)")
    expect.eq(st, CaptureStatus.ACTIVE, "status with modelRI NULL")
    rc, _, _ = dev.b.capture_get_info(s, null_status=True, null_model=True)
    expect.rc(rc, Err.INVALID_PARAM, "aclmdlRICaptureGetInfo(s, NULL, NULL)")
    dev.end(s)


@pytest.mark.clause("STAT-03")
@pytest.mark.requires(Cap.CROSS_STREAM)
def test_stat03_joined_stream_reports_origin_model(dev: Dev) -> None:
    """STAT-03 A stream that joined through an event wait reports ACTIVE and the origin's model."""
    s1, s2 = dev.stream(), dev.stream()
    dev.begin(s1)
    _, model = dev.capture_status(s1, "(origin)")
    dev.fork(s1, s2)
    st, joined = dev.capture_status(s2, "(joined)")
    expect.eq(st, CaptureStatus.ACTIVE, "joined stream status")
    expect.eq(joined, model, "joined stream modelRI")
    dev.join(s1, s2)
    dev.end(s1)


@pytest.mark.clause("STAT-04")
@pytest.mark.requires(Cap.CROSS_STREAM)
def test_stat04_joined_streams_none_after_end(dev: Dev) -> None:
    """STAT-04 After CaptureEnd every joined stream reports NONE."""
    s1, s2, s3 = dev.stream(), dev.stream(), dev.stream()
    dev.begin(s1)
    dev.fork(s1, s2)
    dev.fork(s2, s3)  # transitive join
    dev.join(s2, s3)
    dev.join(s1, s2)
    dev.end(s1)
    for name, s in (("sub", s2), ("sub-sub", s3)):
        rc, st, m = dev.b.capture_get_info(s)
        expect.ok(rc, f"aclmdlRICaptureGetInfo ({name})")
        expect.eq(st, CaptureStatus.NONE, f"{name} stream status after CaptureEnd")


@pytest.mark.clause("STAT-05")
@pytest.mark.requires(Cap.CROSS_STREAM)
def test_stat05_model_level_invalidation_reports_active(dev: Dev, fingerprint: Any) -> None:
    """STAT-05 After model-level invalidation GetInfo reports ACTIVE; CaptureEnd gives 507903."""
    s1, s2, rc_wait = _invalidate_two(dev)
    expect.rc(rc_wait, Err.STREAM_CAPTURE_CONFLICT, "cross-model aclrtStreamWaitEvent (setup)")
    for name, s in (("A", s1), ("B", s2)):
        rc, st, _ = dev.b.capture_get_info(s)
        expect.ok(rc, f"aclmdlRICaptureGetInfo (capture {name})")
        fingerprint.record(f"Q-06:status_{name}", int(st))
        expect.eq(st, CaptureStatus.ACTIVE, f"capture {name} status after invalidation")
    for name, s in (("A", s1), ("B", s2)):
        rc, _ = dev.end_rc(s)
        expect.rc(rc, Err.RT_STREAM_CAPTURE_INVALIDATED, f"aclmdlRICaptureEnd (capture {name})")


@pytest.mark.clause("STAT-06")
@pytest.mark.requires(Cap.KERNELS, Cap.SYNC_TIMEOUT)
def test_stat06_sync_and_query_capturing_stream(dev: Dev) -> None:
    """STAT-06 Sync/query of a capturing stream returns 107027 and the capture still ends fine."""
    s = dev.stream()
    x = _inputs()
    inp, out = dev.buffer(x), dev.buffer(n=N)
    dev.func("fallback_main")
    dev.begin(s)
    dev.launch("fallback_main", s, input=inp, output=out)
    expect.rc(dev.b.synchronize_stream(s), Err.RT_STREAM_CAPTURED,
              "aclrtSynchronizeStream on a capturing stream")
    expect.rc(dev.b.synchronize_stream_with_timeout(s, 100), Err.RT_STREAM_CAPTURED,
              "aclrtSynchronizeStreamWithTimeout on a capturing stream")
    rc, _ = dev.b.stream_query(s)
    expect.rc(rc, Err.RT_STREAM_CAPTURED, "aclrtStreamQuery on a capturing stream")
    st, _ = dev.capture_status(s, "after the rejected sync")
    expect.eq(st, CaptureStatus.ACTIVE, "status after the rejected sync/query")
    rc, m = dev.end_rc(s)
    expect.ok(rc, "aclmdlRICaptureEnd after the rejected sync/query")
    dev.execute(m, s)
    expect.eq(dev.read(out), x + catalog.SEED_MAIN_BIAS, "model output")


@pytest.mark.clause("STAT-07")
@pytest.mark.requires(Cap.CROSS_STREAM, Cap.KERNELS)
def test_stat07_launches_succeed_after_invalidation(dev: Dev, fingerprint: Any) -> None:
    """STAT-07 After invalidation launches still return 0; only CaptureEnd reports 507903."""
    inp, out = dev.buffer(_inputs()), dev.buffer(n=N)
    dev.func("fallback_main")
    s1, s2, rc_wait = _invalidate_two(dev)
    expect.rc(rc_wait, Err.STREAM_CAPTURE_CONFLICT, "cross-model aclrtStreamWaitEvent (setup)")
    rc_launch = dev.launch_rc("fallback_main", s1, input=inp, output=out)
    fingerprint.record("Q-06:launch_after_invalidation", rc_launch)
    expect.ok(rc_launch, "launch on the invalidated capture")
    for name, s in (("A", s1), ("B", s2)):
        rc, _ = dev.end_rc(s)
        expect.rc(rc, Err.RT_STREAM_CAPTURE_INVALIDATED, f"aclmdlRICaptureEnd (capture {name})")


@pytest.mark.clause("STAT-08")
@pytest.mark.requires(Cap.CROSS_STREAM)
def test_stat08_failed_end_of_invalidated_capture(dev: Dev) -> None:
    """STAT-08 CaptureEnd of an invalidated capture: 507903, modelRI NULL, stream NONE."""
    s1, s2, rc_wait = _invalidate_two(dev)
    expect.rc(rc_wait, Err.STREAM_CAPTURE_CONFLICT, "cross-model aclrtStreamWaitEvent (setup)")
    for name, s in (("A", s1), ("B", s2)):
        rc, m = dev.end_rc(s)
        expect.rc(rc, Err.RT_STREAM_CAPTURE_INVALIDATED, f"aclmdlRICaptureEnd (capture {name})")
        expect.eq(m, None, f"modelRI out-param (capture {name})")
        st, _ = dev.capture_status(s, f"(capture {name}) after the failed end")
        expect.eq(st, CaptureStatus.NONE, f"status (capture {name}) after the failed end")
    expect.ok(dev.b.capture_begin(s1, CaptureMode.RELAXED), "new aclmdlRICaptureBegin")
    dev.end(s1)


# ---------------------------------------------------------------------------------------------
# ERR: error tables


@pytest.mark.clause("ERR-01")
def test_err01_capture_begin_errors(dev: Dev) -> None:
    """ERR-01 CaptureBegin: NULL 100000, bad mode 107000, capturing 107027, DEVICE_USE_ONLY 507000"""
    s = dev.stream()
    expect.rc(dev.b.capture_begin(None, CaptureMode.GLOBAL), Err.INVALID_PARAM,
              "aclmdlRICaptureBegin(NULL)")
    expect.rc(dev.b.capture_begin(s, 3), Err.RT_PARAM_INVALID, "aclmdlRICaptureBegin(mode=3)")
    dev.begin(s)
    expect.rc(dev.b.capture_begin(s, CaptureMode.RELAXED), Err.RT_STREAM_CAPTURED,
              "aclmdlRICaptureBegin on a capturing stream")
    dev.end(s)

    def body(cs: Any) -> None:
        expect.rc(dev.b.capture_begin(cs, CaptureMode.RELAXED), Err.RT_INTERNAL_ERROR,
                  "aclmdlRICaptureBegin on a DEVICE_USE_ONLY stream")
    _with_config_stream(dev, StreamFlag.DEVICE_USE_ONLY, body)


@pytest.mark.clause("ERR-01")
@pytest.mark.requires(Cap.HANDLE_VALIDATION)
def test_err01_capture_begin_stale_stream(dev: Dev) -> None:
    """ERR-01 CaptureBegin on a destroyed stream handle returns 107017."""
    rc, s = dev.b.create_stream()
    expect.ok(rc, "aclrtCreateStream (setup)")
    expect.ok(dev.b.destroy_stream(s), "aclrtDestroyStream (setup)")
    expect.rc(dev.b.capture_begin(s, CaptureMode.RELAXED), Err.RT_INVALID_HANDLE,
              "aclmdlRICaptureBegin on a destroyed stream")


@pytest.mark.clause("ERR-02")
def test_err02_capture_get_info_errors(dev: Dev) -> None:
    """ERR-02 CaptureGetInfo: NULL stream 100000, both outputs NULL 100000, NONE -> NULL model."""
    s = dev.stream()
    rc, _, _ = dev.b.capture_get_info(None)
    expect.rc(rc, Err.INVALID_PARAM, "aclmdlRICaptureGetInfo(NULL stream)")
    rc, _, _ = dev.b.capture_get_info(s, null_status=True, null_model=True)
    expect.rc(rc, Err.INVALID_PARAM, "aclmdlRICaptureGetInfo(s, NULL, NULL)")
    rc, st, m = dev.b.capture_get_info(s)
    expect.ok(rc, "aclmdlRICaptureGetInfo on an idle stream")
    expect.eq(st, CaptureStatus.NONE, "status on an idle stream")
    expect.eq(m, None, "modelRI on an idle stream")


@pytest.mark.clause("ERR-04")
def test_err04_capture_end_errors(dev: Dev) -> None:
    """ERR-04 CaptureEnd: NULL stream 100000, idle 107029, NULL modelRI 107000 with capture kept."""
    s = dev.stream()
    rc, m = dev.b.capture_end(None)
    expect.rc(rc, Err.INVALID_PARAM, "aclmdlRICaptureEnd(NULL stream)")
    expect.eq(m, UNWRITTEN, "modelRI out-param with a NULL stream")
    rc, m = dev.end_rc(s)
    expect.rc(rc, Err.RT_STREAM_NOT_CAPTURED, "aclmdlRICaptureEnd on an idle stream")
    dev.begin(s)
    rc, _ = dev.b.capture_end(s, null_model=True)
    expect.rc(rc, Err.RT_PARAM_INVALID, "aclmdlRICaptureEnd(s, NULL)")
    st, _ = dev.capture_status(s, "after the NULL-model end")
    expect.eq(st, CaptureStatus.ACTIVE, "status after the NULL-model end")
    dev.end(s)


@pytest.mark.clause("ERR-04")
@pytest.mark.requires(Cap.CROSS_STREAM, Cap.KERNELS)
def test_err04_capture_end_stream_state_errors(dev: Dev) -> None:
    """ERR-04 CaptureEnd: joined stream 107036, unjoined 107025, invalidated 507903."""
    s1, s2 = dev.stream(), dev.stream()
    inp, out = dev.buffer(_inputs()), dev.buffer(n=N)
    dev.func("fallback_main")
    dev.begin(s1)
    dev.fork(s1, s2)
    rc, _ = dev.end_rc(s2)
    expect.rc(rc, Err.RT_STREAM_CAPTURE_UNMATCHED, "aclmdlRICaptureEnd on the joined stream")
    dev.launch("fallback_main", s2, input=inp, output=out)
    rc, _ = dev.end_rc(s1)
    expect.rc(rc, Err.RT_STREAM_UNJOINED, "aclmdlRICaptureEnd with an unjoined stream")
    a, b, rc_wait = _invalidate_two(dev)
    expect.rc(rc_wait, Err.STREAM_CAPTURE_CONFLICT, "cross-model aclrtStreamWaitEvent (setup)")
    for name, s in (("A", a), ("B", b)):
        rc, _ = dev.end_rc(s)
        expect.rc(rc, Err.RT_STREAM_CAPTURE_INVALIDATED, f"aclmdlRICaptureEnd (invalidated {name})")
