"""Capture modes: which calls are "unsafe", how each mode blocks them per thread, and
aclmdlRICaptureThreadExchangeMode.

Clause groups: MODE (unsafe calls per capture mode and per thread exchange mode),
ERR-03 (error table of CaptureThreadExchangeMode).

The "unsafe" probes are aclrtMemcpy (host to device) and aclrtMemset on a buffer that was
allocated before the capture began: a GLOBAL capture also blocks the harness's own
synchronous copies, so no spec reads device memory while one is active. Thread-dependent
specs run the other thread's calls in a fresh threading.Thread and assert in the spec's
thread.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from mdlri_conformance.backends.contract import UNWRITTEN, Cap, CaptureMode, CaptureStatus, Err, MemcpyKind
from mdlri_conformance.conformance import expect
from mdlri_conformance.conformance.harness import SENTINEL, Buf, Dev, Worker, in_thread
from mdlri_conformance.kernel import catalog

pytestmark = pytest.mark.requires(Cap.CAPTURE, Cap.CAPTURE_MODES)

N = catalog.SEED_ELEMENTS
BLOCKED = Err.RT_CAPTURE_MODE_NOT_SUPPORT
STRICT_MODES = [CaptureMode.GLOBAL, CaptureMode.THREAD_LOCAL]


# ---------------------------------------------------------------------------------------------
# helpers


def _payload() -> np.ndarray:
    return (np.arange(N, dtype=np.int32) * 5 + 1).astype(np.int32)


def _memcpy(b: Any, buf: Buf) -> int:
    """aclrtMemcpy host-to-device into ``buf`` (an unsafe call)."""
    data = _payload()
    return b.memcpy(buf.addr, buf.nbytes, data, data.nbytes, MemcpyKind.HOST_TO_DEVICE)


def _memset(b: Any, buf: Buf) -> int:
    """aclrtMemset of ``buf`` (an unsafe call)."""
    return b.memset(buf.addr, buf.nbytes, 0x11, buf.nbytes)


def _unsafe_rcs(b: Any, buf: Buf) -> dict[str, int]:
    return {"aclrtMemcpy": _memcpy(b, buf), "aclrtMemset": _memset(b, buf)}


def _expect_rcs(rcs: dict[str, int], expected: int, where: str) -> None:
    for name, rc in rcs.items():
        expect.rc(rc, expected, f"{name} {where}")


def _exchange(b: Any, mode: int, what: str) -> Any:
    """ThreadExchangeMode required to succeed; returns the previous mode."""
    rc, prev = b.capture_thread_exchange_mode(mode)
    expect.ok(rc, f"aclmdlRICaptureThreadExchangeMode({what})")
    return prev


def _exchange_then_unsafe(b: Any, mode: int, buf: Buf) -> tuple[int, Any, dict[str, int]]:
    """(thread body) exchange to ``mode`` then probe the unsafe calls."""
    rc, prev = b.capture_thread_exchange_mode(mode)
    return rc, prev, _unsafe_rcs(b, buf)


def _end_ok(dev: Dev, stream: Any, what: str = "") -> Any:
    rc, m = dev.end_rc(stream)
    expect.ok(rc, f"aclmdlRICaptureEnd {what}".rstrip())
    return m


# ---------------------------------------------------------------------------------------------
# MODE-01: which calls are unsafe


@pytest.mark.clause("MODE-01")
def test_mode01_sync_copies_are_unsafe(dev: Dev) -> None:
    """MODE-01 aclrtMemcpy (every kind) and aclrtMemset are blocked by a GLOBAL capture."""
    s = dev.stream()
    buf, other = dev.buffer(n=N), dev.buffer(n=N)
    host = np.zeros(N, dtype=np.int32)
    dev.begin(s, CaptureMode.GLOBAL)
    data = _payload()
    calls = {
        "aclrtMemcpy H2D": dev.b.memcpy(buf.addr, buf.nbytes, data, data.nbytes,
                                        MemcpyKind.HOST_TO_DEVICE),
        "aclrtMemcpy D2H": dev.b.memcpy(host, host.nbytes, buf.addr, buf.nbytes,
                                        MemcpyKind.DEVICE_TO_HOST),
        "aclrtMemcpy D2D": dev.b.memcpy(other.addr, other.nbytes, buf.addr, buf.nbytes,
                                        MemcpyKind.DEVICE_TO_DEVICE),
        "aclrtMemset": _memset(dev.b, buf),
    }
    _end_ok(dev, s)
    for name, rc in calls.items():
        expect.rc(rc, BLOCKED, f"{name} under a GLOBAL capture")


@pytest.mark.clause("MODE-01")
def test_mode01_pinned_async_copy_is_safe(dev: Dev) -> None:
    """MODE-01 A pinned-host memcpyAsync on another stream is not unsafe under a GLOBAL capture."""
    s, other = dev.stream(), dev.stream()
    dst = dev.buffer(n=N)
    data = _payload()
    rc, host = dev.b.malloc_host(data.nbytes)
    expect.ok(rc, "aclrtMallocHost (setup)")
    try:
        host[:] = data.view(np.uint8)
        dev.begin(s, CaptureMode.GLOBAL)
        rc = dev.b.memcpy_async(dst.addr, dst.nbytes, host, data.nbytes,
                                MemcpyKind.HOST_TO_DEVICE, other)
        sync_rc = dev.b.synchronize_stream_with_timeout(other, 5000)
        _end_ok(dev, s)
        expect.ok(rc, "aclrtMemcpyAsync (pinned H2D, non-capturing stream) under a GLOBAL capture")
        expect.ok(sync_rc, "aclrtSynchronizeStreamWithTimeout (non-capturing stream)")
        expect.eq(dev.read(dst), data, "destination after the async copy")
    finally:
        dev.b.free_host(host)


# ---------------------------------------------------------------------------------------------
# MODE-02..04: what each capture mode blocks, per thread


@pytest.mark.clause("MODE-02")
@pytest.mark.requires(Cap.THREADS)
def test_mode02_global_blocks_every_thread(dev: Dev) -> None:
    """MODE-02 A GLOBAL capture blocks unsafe calls in the capturing thread and in other threads."""
    s = dev.stream()
    buf = dev.buffer(n=N)
    dev.begin(s, CaptureMode.GLOBAL)
    own = _unsafe_rcs(dev.b, buf)
    other = in_thread(dev.b, lambda: _unsafe_rcs(dev.b, buf))
    _end_ok(dev, s)
    _expect_rcs(own, BLOCKED, "in the capturing thread (GLOBAL)")
    _expect_rcs(other, BLOCKED, "in another thread (GLOBAL capture, exchange mode GLOBAL)")


@pytest.mark.clause("MODE-03")
@pytest.mark.requires(Cap.THREADS)
def test_mode03_thread_local_blocks_only_capturing_thread(dev: Dev) -> None:
    """MODE-03 A THREAD_LOCAL capture blocks unsafe calls only in the capturing thread."""
    s = dev.stream()
    buf = dev.buffer(n=N)
    dev.begin(s, CaptureMode.THREAD_LOCAL)
    own = _unsafe_rcs(dev.b, buf)
    other = in_thread(dev.b, lambda: _unsafe_rcs(dev.b, buf))
    _end_ok(dev, s)
    _expect_rcs(own, BLOCKED, "in the capturing thread (THREAD_LOCAL)")
    _expect_rcs(other, Err.SUCCESS, "in another thread (THREAD_LOCAL capture)")


@pytest.mark.clause("MODE-03")
@pytest.mark.requires(Cap.THREADS)
def test_mode03_thread_local_capture_in_other_thread(dev: Dev) -> None:
    """MODE-03 A THREAD_LOCAL capture begun in another thread does not block this thread."""
    s = dev.stream()
    buf = dev.buffer(n=N)
    worker = Worker(dev.b)
    try:
        begin_rc = worker.call(lambda: dev.b.capture_begin(s, CaptureMode.THREAD_LOCAL))
        inner = worker.call(lambda: _unsafe_rcs(dev.b, buf))
        expect.ok(begin_rc, "aclmdlRICaptureBegin(THREAD_LOCAL) in the worker thread")
        here = _unsafe_rcs(dev.b, buf)
    finally:
        # a THREAD_LOCAL capture must be ended by the thread that began it (CAP-14)
        end_rc, m = worker.call(lambda: dev.b.capture_end(s))
        if m not in (None, UNWRITTEN):
            dev.model(m)
        worker.close()
    expect.ok(end_rc, "aclmdlRICaptureEnd in the worker thread")
    _expect_rcs(inner, BLOCKED, "in the capturing worker thread")
    _expect_rcs(here, Err.SUCCESS, "in the spec's thread (capture in another thread)")


@pytest.mark.clause("MODE-03", "CAP-14")
@pytest.mark.own_process
@pytest.mark.requires(Cap.THREADS)
def test_mode03_after_wrong_thread_end(dev: Dev) -> None:
    """MODE-03 After a GLOBAL capture begun here was ended from another thread (107038, CAP-14),
    a THREAD_LOCAL capture begun here still blocks this thread's aclrtMemcpy with 107030.

    The real runtime releases the capture mode on the *ending* thread
    (`feature/aclgraph/context_aclgraph.cc:529-531` -> `:742-776`,
    `core/src/common/inner_thread_local.cpp:203-215`), so this thread keeps GLOBAL as its own
    mode and `Context::IsCaptureModeSupport` (`context_aclgraph.cc:244-248`) lets the copy through.
    Runs in a process of its own: on such a runtime the leaked mode lasts for the process.
    """
    s = dev.stream()
    buf = dev.buffer(n=N)
    dev.begin(s, CaptureMode.GLOBAL)
    rc_info, _, model = dev.b.capture_get_info(s)
    expect.ok(rc_info, "aclmdlRICaptureGetInfo (setup)")
    rc, m = in_thread(dev.b, lambda: dev.b.capture_end(s))
    if rc == Err.SUCCESS and m not in (None, UNWRITTEN):
        dev.model(m)
    elif dev.b.capture_get_info(s)[1] == CaptureStatus.NONE:
        dev.b.destroy(model)  # the stream left capture without returning the model
    expect.rc(rc, Err.RT_STREAM_CAPTURE_WRONG_THREAD, "aclmdlRICaptureEnd from another thread (setup)")
    s2 = dev.stream()
    dev.begin(s2, CaptureMode.THREAD_LOCAL)
    copy_rc = _memcpy(dev.b, buf)
    _end_ok(dev, s2, "of the THREAD_LOCAL capture")
    expect.rc(copy_rc, BLOCKED,
              "aclrtMemcpy in the beginning thread under a THREAD_LOCAL capture after a wrong-thread end")


@pytest.mark.clause("MODE-04")
@pytest.mark.requires(Cap.THREADS)
def test_mode04_relaxed_blocks_nothing(dev: Dev) -> None:
    """MODE-04 With only a RELAXED capture active, unsafe calls succeed in every thread."""
    s = dev.stream()
    buf = dev.buffer(n=N)
    dev.begin(s, CaptureMode.RELAXED)
    own = _unsafe_rcs(dev.b, buf)
    other = in_thread(dev.b, lambda: _unsafe_rcs(dev.b, buf))
    _end_ok(dev, s)
    _expect_rcs(own, Err.SUCCESS, "in the capturing thread (RELAXED)")
    _expect_rcs(other, Err.SUCCESS, "in another thread (RELAXED)")


@pytest.mark.clause("MODE-04")
def test_mode04_relaxed_unsafe_call_takes_effect(dev: Dev) -> None:
    """MODE-04 An aclrtMemcpy during a RELAXED capture runs immediately (it is not captured)."""
    s = dev.stream()
    buf = dev.buffer(n=N)
    dev.begin(s, CaptureMode.RELAXED)
    expect.ok(_memcpy(dev.b, buf), "aclrtMemcpy during a RELAXED capture")
    expect.eq(dev.read(buf), _payload(), "buffer right after the copy, capture still open")
    _end_ok(dev, s)


# ---------------------------------------------------------------------------------------------
# MODE-05..10: ThreadExchangeMode


@pytest.mark.clause("MODE-05")
@pytest.mark.requires(Cap.THREADS)
def test_mode05_exchange_returns_previous(dev: Dev) -> None:
    """MODE-05 ThreadExchangeMode returns the previous mode; a thread starts in GLOBAL."""
    sequence = [CaptureMode.GLOBAL, CaptureMode.THREAD_LOCAL, CaptureMode.RELAXED,
                CaptureMode.GLOBAL]

    def body() -> list[tuple[int, Any]]:
        return [dev.b.capture_thread_exchange_mode(m) for m in sequence]

    results = in_thread(dev.b, body)
    previous = [CaptureMode.GLOBAL, *sequence[:-1]]
    for (rc, prev), set_to, want in zip(results, sequence, previous):
        expect.ok(rc, f"aclmdlRICaptureThreadExchangeMode({set_to.name})")
        expect.eq(prev, want, f"previous mode returned when setting {set_to.name}")


@pytest.mark.clause("MODE-06")
@pytest.mark.parametrize("mode", STRICT_MODES, ids=lambda m: m.name)
def test_mode06_relaxed_exchange_unblocks_capturing_thread(dev: Dev, mode: CaptureMode) -> None:
    """MODE-06 Exchange mode RELAXED lets the capturing thread make unsafe calls."""
    s = dev.stream()
    buf = dev.buffer(n=N)
    dev.begin(s, mode)
    prev = _exchange(dev.b, CaptureMode.RELAXED, "RELAXED")
    try:
        rcs = _unsafe_rcs(dev.b, buf)
    finally:
        dev.b.capture_thread_exchange_mode(prev)
    _end_ok(dev, s)
    _expect_rcs(rcs, Err.SUCCESS, f"after exchanging to RELAXED ({mode.name} capture)")


@pytest.mark.clause("MODE-07")
@pytest.mark.parametrize("mode", STRICT_MODES, ids=lambda m: m.name)
def test_mode07_thread_local_exchange_not_enough_when_capturing(dev: Dev,
                                                               mode: CaptureMode) -> None:
    """MODE-07 In the capturing thread, exchange mode THREAD_LOCAL leaves unsafe calls blocked."""
    s = dev.stream()
    buf = dev.buffer(n=N)
    dev.begin(s, mode)
    prev = _exchange(dev.b, CaptureMode.THREAD_LOCAL, "THREAD_LOCAL")
    try:
        rcs = _unsafe_rcs(dev.b, buf)
    finally:
        dev.b.capture_thread_exchange_mode(prev)
    _end_ok(dev, s)
    _expect_rcs(rcs, BLOCKED, f"after exchanging to THREAD_LOCAL ({mode.name} capture)")


@pytest.mark.clause("MODE-08")
@pytest.mark.requires(Cap.THREADS)
@pytest.mark.parametrize("exchange", [CaptureMode.THREAD_LOCAL, CaptureMode.RELAXED],
                         ids=lambda m: m.name)
def test_mode08_other_thread_unblocks_by_exchange(dev: Dev, exchange: CaptureMode) -> None:
    """MODE-08 Under a GLOBAL capture another thread can make unsafe calls after exchanging."""
    s = dev.stream()
    buf = dev.buffer(n=N)
    dev.begin(s, CaptureMode.GLOBAL)
    rc, prev, rcs = in_thread(dev.b, lambda: _exchange_then_unsafe(dev.b, exchange, buf))
    _end_ok(dev, s)
    expect.ok(rc, f"aclmdlRICaptureThreadExchangeMode({exchange.name}) in the other thread")
    expect.eq(prev, CaptureMode.GLOBAL, "the other thread's previous mode")
    _expect_rcs(rcs, Err.SUCCESS, f"in the other thread after exchanging to {exchange.name}")


@pytest.mark.clause("MODE-09")
def test_mode09_exchange_mode_persists_across_capture(dev: Dev) -> None:
    """MODE-09 The exchange mode set with no capture active survives a capture begin and end."""
    s = dev.stream()
    original = _exchange(dev.b, CaptureMode.RELAXED, "RELAXED, no capture active")
    try:
        dev.begin(s, CaptureMode.GLOBAL)
        _end_ok(dev, s)
        rc, after = dev.b.capture_thread_exchange_mode(CaptureMode.THREAD_LOCAL)
        rc2, after2 = dev.b.capture_thread_exchange_mode(original)
    finally:
        dev.b.capture_thread_exchange_mode(original)
    expect.ok(rc, "aclmdlRICaptureThreadExchangeMode after CaptureEnd")
    expect.eq(after, CaptureMode.RELAXED, "mode returned after the capture ended")
    expect.ok(rc2, "aclmdlRICaptureThreadExchangeMode (restore)")
    expect.eq(after2, CaptureMode.THREAD_LOCAL, "mode returned by the restoring exchange")


@pytest.mark.clause("MODE-09")
@pytest.mark.requires(Cap.THREADS)
def test_mode09_exchange_mode_is_per_thread(dev: Dev) -> None:
    """MODE-09 One thread's exchange mode does not change another thread's."""
    original = _exchange(dev.b, CaptureMode.RELAXED, "RELAXED")
    try:
        rc, other_prev = in_thread(dev.b, lambda: dev.b.capture_thread_exchange_mode(
            CaptureMode.THREAD_LOCAL))
        rc_here, here = dev.b.capture_thread_exchange_mode(original)
    finally:
        dev.b.capture_thread_exchange_mode(original)
    expect.ok(rc, "aclmdlRICaptureThreadExchangeMode in the other thread")
    expect.eq(other_prev, CaptureMode.GLOBAL, "the other thread's initial mode")
    expect.ok(rc_here, "aclmdlRICaptureThreadExchangeMode in the spec's thread")
    expect.eq(here, CaptureMode.RELAXED, "the spec thread's mode after the other thread's exchange")


@pytest.mark.clause("MODE-10")
def test_mode10_invalid_exchange_mode(dev: Dev) -> None:
    """MODE-10 *mode>=3 gives 107000, NULL gives 100000; *mode and the thread mode unchanged."""
    original = _exchange(dev.b, CaptureMode.THREAD_LOCAL, "THREAD_LOCAL")
    try:
        results = {bad: dev.b.capture_thread_exchange_mode(bad) for bad in (3, 4, 0x7FFF_FFFF)}
        rc_null, _ = dev.b.capture_thread_exchange_mode(None)
        rc_now, now = dev.b.capture_thread_exchange_mode(original)
    finally:
        dev.b.capture_thread_exchange_mode(original)
    for bad, (rc, value) in results.items():
        expect.rc(rc, Err.RT_PARAM_INVALID, f"aclmdlRICaptureThreadExchangeMode(*mode={bad})")
        expect.eq(value, bad, f"*mode after the rejected exchange ({bad})")
    expect.rc(rc_null, Err.INVALID_PARAM, "aclmdlRICaptureThreadExchangeMode(NULL)")
    expect.ok(rc_now, "aclmdlRICaptureThreadExchangeMode (restore)")
    expect.eq(now, CaptureMode.THREAD_LOCAL, "thread mode after the rejected exchanges")


# ---------------------------------------------------------------------------------------------
# MODE-11..14


@pytest.mark.clause("MODE-11")
@pytest.mark.requires(Cap.THREADS)
def test_mode11_strictest_active_capture_governs(dev: Dev) -> None:
    """MODE-11 The effective mode is the strictest active capture and relaxes as captures end."""
    s_global, s_local, s_relaxed = dev.stream(), dev.stream(), dev.stream()
    buf = dev.buffer(n=N)
    dev.begin(s_relaxed, CaptureMode.RELAXED)
    dev.begin(s_local, CaptureMode.THREAD_LOCAL)
    dev.begin(s_global, CaptureMode.GLOBAL)
    stages: list[tuple[str, dict[str, int], dict[str, int]]] = []

    def probe(label: str) -> None:
        stages.append((label, _unsafe_rcs(dev.b, buf),
                       in_thread(dev.b, lambda: _unsafe_rcs(dev.b, buf))))

    probe("GLOBAL+THREAD_LOCAL+RELAXED")
    _end_ok(dev, s_global, "(GLOBAL)")
    probe("THREAD_LOCAL+RELAXED")
    _end_ok(dev, s_local, "(THREAD_LOCAL)")
    probe("RELAXED")
    _end_ok(dev, s_relaxed, "(RELAXED)")
    want = {
        "GLOBAL+THREAD_LOCAL+RELAXED": (BLOCKED, BLOCKED),
        "THREAD_LOCAL+RELAXED": (BLOCKED, Err.SUCCESS),
        "RELAXED": (Err.SUCCESS, Err.SUCCESS),
    }
    for label, own, other in stages:
        want_own, want_other = want[label]
        _expect_rcs(own, want_own, f"in the capturing thread with {label} active")
        _expect_rcs(other, want_other, f"in another thread with {label} active")


@pytest.mark.clause("MODE-12")
@pytest.mark.requires(Cap.KERNELS)
def test_mode12_blocked_call_does_not_invalidate(dev: Dev) -> None:
    """MODE-12 After unsafe calls rejected with 107030 the capture ends and the model works."""
    s = dev.stream()
    x = _payload()
    inp, mid, out, probe = dev.buffer(x), dev.buffer(n=N), dev.buffer(n=N), dev.buffer(n=N)
    dev.func("fallback_main")
    dev.func("fallback_postprocess")
    dev.begin(s, CaptureMode.GLOBAL)
    dev.launch("fallback_main", s, input=inp, output=mid)
    rcs = _unsafe_rcs(dev.b, probe)
    dev.launch("fallback_postprocess", s, input=mid, output=out)
    rc_info, st, _ = dev.b.capture_get_info(s)
    m = _end_ok(dev, s, "after the blocked calls")
    _expect_rcs(rcs, BLOCKED, "during the GLOBAL capture (setup)")
    expect.ok(rc_info, "aclmdlRICaptureGetInfo after the blocked calls")
    expect.eq(st, CaptureStatus.ACTIVE, "status after the blocked calls")
    dev.execute(m, s)
    expect.eq(dev.read(out), (x + catalog.SEED_MAIN_BIAS) * catalog.SEED_POST_SCALE, "model output")
    expect.eq(dev.read(probe), np.full(N, SENTINEL, dtype=np.int32), "target of the blocked calls")


@pytest.mark.clause("MODE-13")
@pytest.mark.parametrize("mode", STRICT_MODES, ids=lambda m: m.name)
def test_mode13_blocked_sync_copy_code(dev: Dev, mode: CaptureMode) -> None:
    """MODE-13 A blocked aclrtMemcpy / aclrtMemset returns 107030 (not 107041)."""
    s = dev.stream()
    buf = dev.buffer(n=N)
    dev.begin(s, mode)
    rcs = _unsafe_rcs(dev.b, buf)
    _end_ok(dev, s)
    _expect_rcs(rcs, BLOCKED, f"in the capturing thread ({mode.name})")


@pytest.mark.clause("RT-37")
def test_sync_size_checks_and_the_capture_mode(dev: Dev) -> None:
    """RT-37: under a blocking (GLOBAL) capture, aclrtMemcpy with count > destMax returns
    107000, its error decorator's check before the capture mode
    (`api/impl/api_error.cc:2133-2144`, then ApiImpl::MemCopySync `api/impl/api_impl.cc:2757`),
    while aclrtMemset with count > maxCount returns 107030: its decorator has no size check
    (`api/impl/api_error.cc:3117-3126`) and the capture mode (`api/impl/api_impl.cc:3202-3212`)
    comes before the driver's."""
    s = dev.stream()
    buf = dev.buffer(n=N)
    data = np.zeros(N, dtype=np.int32)
    dev.begin(s, CaptureMode.GLOBAL)
    rc_copy = dev.b.memcpy(buf.addr, 4, data, 8, MemcpyKind.HOST_TO_DEVICE)
    rc_set = dev.b.memset(buf.addr, 4, 0, 8)
    _end_ok(dev, s)
    expect.rc(rc_copy, Err.RT_PARAM_INVALID, "aclrtMemcpy(count > destMax) under GLOBAL",
              clause="RT-37")
    expect.rc(rc_set, BLOCKED, "aclrtMemset(count > maxCount) under GLOBAL", clause="RT-37")


@pytest.mark.clause("MODE-13")
@pytest.mark.requires(Cap.PAGEABLE_DETECTION)
def test_mode13_pageable_async_on_other_stream_code(dev: Dev) -> None:
    """MODE-13 A pageable-host memcpyAsync on a non-capturing stream, blocked, returns 107041
    (a runtime that cannot tell pageable memory takes it for a plain async copy: UNSUPPORTED,
    see Cap.PAGEABLE_DETECTION)."""
    s, other = dev.stream(), dev.stream()
    dst = dev.buffer(n=N)
    data = _payload()  # ordinary numpy memory: pageable
    dev.begin(s, CaptureMode.GLOBAL)
    rc = dev.b.memcpy_async(dst.addr, dst.nbytes, data, data.nbytes,
                            MemcpyKind.HOST_TO_DEVICE, other)
    _end_ok(dev, s)
    expect.rc(rc, Err.RT_CAPTURE_MODE_BLOCK_ASYNC,
              "aclrtMemcpyAsync (pageable H2D, non-capturing stream) under a GLOBAL capture")


@pytest.mark.clause("MODE-14")
@pytest.mark.requires(Cap.PAGEABLE_DETECTION)
@pytest.mark.parametrize("mode", list(CaptureMode), ids=lambda m: m.name)
def test_mode14_pageable_async_on_capturing_stream(dev: Dev, mode: CaptureMode) -> None:
    """MODE-14 A pageable-host memcpyAsync on the capturing stream returns 107000 in every mode
    (needs Cap.PAGEABLE_DETECTION: the refusal follows the driver's memory attributes)."""
    s = dev.stream()
    dst = dev.buffer(n=N)
    data = _payload()  # ordinary numpy memory: pageable
    host = np.zeros(N, dtype=np.int32)
    dev.begin(s, mode)
    rc_h2d = dev.b.memcpy_async(dst.addr, dst.nbytes, data, data.nbytes,
                                MemcpyKind.HOST_TO_DEVICE, s)
    rc_d2h = dev.b.memcpy_async(host, host.nbytes, dst.addr, dst.nbytes,
                                MemcpyKind.DEVICE_TO_HOST, s)
    _end_ok(dev, s)
    for kind, rc in (("H2D", rc_h2d), ("D2H", rc_d2h)):
        expect.rc(rc, Err.RT_PARAM_INVALID,
                  f"pageable {kind} aclrtMemcpyAsync in capture ({mode.name})")


# ---------------------------------------------------------------------------------------------
# ERR-03


@pytest.mark.clause("ERR-03")
def test_err03_exchange_mode_errors(dev: Dev) -> None:
    """ERR-03 ThreadExchangeMode: NULL 100000; *mode>=3 107000 with *mode unchanged."""
    rc, _ = dev.b.capture_thread_exchange_mode(None)
    expect.rc(rc, Err.INVALID_PARAM, "aclmdlRICaptureThreadExchangeMode(NULL)")
    rc, value = dev.b.capture_thread_exchange_mode(3)
    expect.rc(rc, Err.RT_PARAM_INVALID, "aclmdlRICaptureThreadExchangeMode(*mode=3)")
    expect.eq(value, 3, "*mode after the rejected exchange")


@pytest.mark.clause("ERR-03")
@pytest.mark.requires(Cap.THREADS)
def test_err03_exchange_mode_without_context(dev: Dev) -> None:
    """ERR-03 ThreadExchangeMode in a thread with no current context returns 107002."""
    # deliberately no aclrtSetDevice in this thread: the missing context is the observable
    rc, value = in_thread(dev.b, lambda: dev.b.capture_thread_exchange_mode(CaptureMode.RELAXED),
                           set_device=False)
    expect.rc(rc, Err.RT_CONTEXT_NULL, "aclmdlRICaptureThreadExchangeMode without a context")
    expect.eq(value, CaptureMode.RELAXED, "*mode after the rejected exchange")
