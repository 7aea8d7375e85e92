"""Simulator unit tests: execution details, device errors, transitive forks, leak counts."""

from __future__ import annotations

from mdlri_conformance.backends.contract import (ALL_CAPS, EXTENDED_CAPS, Backend, Cap, CaptureStatus, Err,
                               ExtendedBackend, StreamFlag)
from mdlri_conformance.backends.sim import CHOICES, SimBackend, create

from .test_sim_support import SYNC, b, func, i32, launch, ok, put_i32, streams  # noqa: F401


def test_factory_and_identity():
    be = create(destroy_wait_s=0.1)
    assert isinstance(be, SimBackend) and isinstance(be, Backend)
    assert isinstance(be, ExtendedBackend)
    # field capabilities: RESOURCE_LIMITS with a stream limit, DEVICE_FAULTS with trap_if in
    # the kernel manifest (backends.sim.limits)
    assert be.capabilities - {Cap.DEVICE_FAULTS} == ALL_CAPS | EXTENDED_CAPS | {Cap.RESOURCE_LIMITS}
    assert be.version().startswith("mdlri-sim")
    assert Cap.RESOURCE_LIMITS not in create(stream_limit=None).capabilities
    assert be.kernel_binary_path().endswith("kernel/sim_kernels.manifest")
    for q in ("Q-01", "Q-02", "Q-03", "Q-04", "Q-05", "Q-06", "Q-07", "Q-08", "Q-10", "Q-11",
              "Q-13", "Q-14", "Q-15", "Q-16", "Q-17", "Q-18", "Q-19", "Q-21", "Q-23", "Q-24"):
        assert q in CHOICES
    be.close()
    be.close()  # idempotent


def test_execute_argument_checks(b):
    s = ok(b.create_stream())
    ok(b.capture_begin(s, 0))
    m = ok(b.capture_end(s))
    origin = streams(b, m)[0]
    assert b.execute_async(None, s) == Err.INVALID_PARAM  # EXE-09
    assert b.execute_async(m, origin) == Err.RT_PARAM_INVALID  # EXE-06
    persistent = ok(b.create_stream_with_config(0, int(StreamFlag.PERSISTENT)))
    assert b.execute_async(m, persistent) == Err.RT_PARAM_INVALID
    s2 = ok(b.create_stream())
    ok(b.capture_begin(s2, 0))
    assert b.execute_async(m, s2) == Err.RT_STREAM_CAPTURED  # EXE-05
    ok(b.destroy(ok(b.capture_end(s2))))
    assert b.destroy(None) == Err.INVALID_PARAM  # LIFE-04
    ok(b.destroy(m))
    assert b.execute_async(m, s) == Err.RT_INVALID_HANDLE


def test_execution_device_fault_reports_507011(b):
    s = ok(b.create_stream())
    x = ok(b.malloc(32))
    fill = func(b, "fill")
    ok(b.capture_begin(s, 0))
    ok(launch(b, fill, s, out=x, n=8, value=1))
    m = ok(b.capture_end(s))
    ok(b.free(x))  # CAP-19 violated: the kernel now writes unmapped memory
    ok(b.execute_async(m, s))
    assert b.synchronize_stream(s) == Err.RT_MODEL_EXECUTE
    assert b.synchronize_stream(s) == 0
    assert any("outside" in f for f in b.device_faults)
    ok(b.destroy(m))  # the model is not running any more


def test_short_kernel_args_are_a_device_error(b):
    s = ok(b.create_stream())
    fill = func(b, "fill")
    assert b.launch_kernel_with_host_args(fill, 1, s, None, b"\0" * 8, 8) == 0
    assert b.synchronize_stream(s) == Err.RT_INTERNAL_ERROR


def test_transitive_fork_and_join(b):
    s1, s2, s3 = (ok(b.create_stream()) for _ in range(3))
    ea, eb, ec, ed = (ok(b.create_event_ex_with_flag(SYNC)) for _ in range(4))
    x = ok(b.malloc(32))
    put_i32(b, x, [0] * 8)
    fill, affine = func(b, "fill"), func(b, "affine")
    ok(b.capture_begin(s1, 0))
    ok(launch(b, fill, s1, out=x, n=8, value=1))
    ok(b.record_event(ea, s1))
    ok(b.stream_wait_event(s2, ea))            # s2 joins
    ok(launch(b, affine, s2, x=x, y=x, n=8, a=3, b=0))
    ok(b.record_event(eb, s2))
    ok(b.stream_wait_event(s3, eb))            # s3 joins through s2 (transitive)
    assert ok(b.capture_get_info(s3))[0] == CaptureStatus.ACTIVE
    ok(launch(b, affine, s3, x=x, y=x, n=8, a=1, b=4))
    ok(b.record_event(ec, s3))
    ok(b.stream_wait_event(s2, ec))
    ok(b.record_event(ed, s2))
    ok(b.stream_wait_event(s1, ed))
    m = ok(b.capture_end(s1))
    assert len(streams(b, m)) == 3
    assert i32(b, x, 8) == [0] * 8
    ok(b.execute_async(m, s1))
    ok(b.synchronize_stream(s1))
    assert i32(b, x, 8) == [7] * 8
    ok(b.execute_async(m, s1))  # the internal events were reset at the end (XS-08)
    ok(b.synchronize_stream(s1))
    assert i32(b, x, 8) == [7] * 8
    ok(b.destroy(m))


def test_live_counts_and_leaks(b):
    base = b.live_counts()
    s = ok(b.create_stream())
    e = ok(b.create_event_ex_with_flag(SYNC))
    x = ok(b.malloc(8))
    h = ok(b.malloc_host(8))
    ok(b.capture_begin(s, 0))
    ok(launch(b, func(b, "fill"), s, out=x, n=2, value=1))
    c = b.live_counts()
    assert (c.models, c.streams, c.events, c.allocations) == (
        base.models + 1, base.streams + 1, base.events + 1, base.allocations + 2)
    assert c.extra["open_captures"] == 1 and c.extra["internal_allocations"] == 1
    ok(b.destroy(ok(b.capture_end(s))))
    for rc in (b.destroy_stream(s), b.destroy_event(e), b.free(x), b.free_host(h)):
        assert rc == 0
    c = b.live_counts()
    assert (c.models, c.streams, c.events, c.allocations) == (0, 0, 0, 0)
    assert c.extra["internal_allocations"] == 0
