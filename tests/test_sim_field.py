"""Simulator unit tests: device-side timeouts and faults, event sync, thread state, stream
resources (TMO-07..11, FLD-06..10, HostStateBackend), and the rules taken from hicann/runtime
@681ef76 (BLD-08/09, XS-12, LIST-14, MODE-03 leak fault)."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from mdlri_conformance.backends.contract import (UNWRITTEN, CaptureMode, CaptureStatus, Cap, Err, EventFlag,
                               LaunchAttr, LaunchAttrId, LaunchKernelCfg, MemcpyKind,
                               ModelStreamFlag, StreamFlag)
from mdlri_conformance.backends.sim import create
from mdlri_conformance.backends.sim.kernels import MAGIC
from mdlri_conformance.kernel import catalog

from .test_sim_support import SYNC, b, func, i32, in_thread, launch, ok, put_i32  # noqa: F401

P = int(StreamFlag.PERSISTENT)
HEAD = int(ModelStreamFlag.HEAD)


def special(b: Any, tmp_path: Path, name: str) -> Any:
    """A function handle of a special kernel, from a manifest that names it."""
    path = tmp_path / "special.manifest"
    path.write_text(f"{MAGIC}\nfill\nwait_flag\ntrap_if\n", encoding="utf-8")
    binh = ok(b.binary_load_from_file(str(path)))
    return ok(b.binary_get_function(binh, name))


def cfg_us(us: int) -> LaunchKernelCfg:
    return LaunchKernelCfg([LaunchAttr(LaunchAttrId.TIMEOUT_US, (us & 0xFFFFFFFF, us >> 32))])


def launch_cfg(b: Any, fn: Any, stream: Any, cfg: Any, **args: int) -> int:
    data = fn.spec.pack(**args)
    return b.launch_kernel_with_host_args(fn, 1, stream, cfg, data, len(data))


def buf(b: Any, values: list[int]) -> int:
    x = ok(b.malloc(4 * len(values)))
    put_i32(b, x, values)
    return x


# ---------------------------------------------------------------------------------------------
# kernels of the catalog


def test_special_kernels_in_the_catalog() -> None:
    wf, tr = catalog.get("wait_flag"), catalog.get("trap_if")
    assert (wf.args_size, tr.args_size) == (24, 8)
    assert catalog.SPECIAL_KERNELS == {"wait_flag", "trap_if"}


def test_wait_flag_times_out_once_on_a_plain_stream(b, tmp_path) -> None:
    """TMO-10: 107020 by the next sync, before its host deadline; once; the stream goes on."""
    wf, fill = special(b, tmp_path, "wait_flag"), func(b, "fill")
    s = ok(b.create_stream())
    flag, out, after = buf(b, [0]), buf(b, [-1]), buf(b, [-1, -1])
    assert launch_cfg(b, wf, s, cfg_us(50_000), flag=flag, out=out, value=77) == 0
    assert launch(b, fill, s, out=after, n=2, value=5) == 0
    assert ok(b.stream_query(s)) != 0  # NOT_READY while the kernel waits
    t0 = time.monotonic()
    assert b.synchronize_stream_with_timeout(s, 5000) == Err.RT_TASK_TIMEOUT
    assert 0.04 <= time.monotonic() - t0 < 1.0
    assert b.synchronize_stream(s) == 0
    assert i32(b, out, 1) == [-1] and i32(b, after, 2) == [5, 5]


def test_wait_flag_released_in_time_and_never_timeout(b, tmp_path) -> None:
    wf = special(b, tmp_path, "wait_flag")
    s = ok(b.create_stream())
    flag, out = buf(b, [0]), buf(b, [-1])
    never = LaunchKernelCfg([LaunchAttr(LaunchAttrId.TIMEOUT, 0)])
    assert launch_cfg(b, wf, s, never, flag=flag, out=out, value=9) == 0
    assert b.synchronize_stream_with_timeout(s, 60) == Err.RT_STREAM_SYNC_TIMEOUT
    threading.Timer(0.03, lambda: (b.set_device(0), put_i32(b, flag, [1]))).start()
    assert b.synchronize_stream_with_timeout(s, 5000) == 0
    assert i32(b, out, 1) == [9]


def test_wait_flag_timeout_inside_a_replay(b, tmp_path) -> None:
    """TMO-11 (behaviour.md Q4): 507011 once on the execute stream; the model stays usable."""
    wf = special(b, tmp_path, "wait_flag")
    s, x = ok(b.create_stream()), ok(b.create_stream())
    flag, out = buf(b, [0]), buf(b, [-1])
    ok(b.capture_begin(s, 0))
    assert launch_cfg(b, wf, s, cfg_us(30_000), flag=flag, out=out, value=7) == 0
    m = ok(b.capture_end(s))
    ok(b.execute_async(m, x))
    assert b.synchronize_stream_with_timeout(x, 5000) == Err.RT_MODEL_EXECUTE
    assert b.synchronize_stream(x) == 0 and m.running == 0
    assert i32(b, out, 1) == [-1]
    put_i32(b, flag, [1])
    ok(b.execute_async(m, x))
    assert b.synchronize_stream(x) == 0 and i32(b, out, 1) == [7]


def test_trap_if_plain_stream_and_replay(b, tmp_path) -> None:
    """FLD-09 / FLD-10: 507015 once on a plain stream; 507011 once on the execute stream."""
    tr, fill = special(b, tmp_path, "trap_if"), func(b, "fill")
    s, x = ok(b.create_stream()), ok(b.create_stream())
    flag, y = buf(b, [1]), buf(b, [-1])
    assert launch(b, tr, s, flag=flag) == 0
    assert b.synchronize_stream(s) == Err.RT_AICORE_EXCEPTION
    assert b.synchronize_stream(s) == 0
    ok(b.capture_begin(s, 0))
    assert launch(b, tr, s, flag=flag) == 0
    assert launch(b, fill, s, out=y, n=1, value=3) == 0
    m = ok(b.capture_end(s))
    ok(b.execute_async(m, x))
    assert b.synchronize_stream(x) == Err.RT_MODEL_EXECUTE
    assert b.synchronize_stream(x) == 0 and i32(b, y, 1) == [-1]
    assert b.update(m) == 0
    put_i32(b, flag, [0])
    ok(b.execute_async(m, x))
    assert b.synchronize_stream(x) == 0 and i32(b, y, 1) == [3]


def test_device_faults_declared_only_with_trap_if_in_the_manifest() -> None:
    names = Path(create().kernel_binary_path()).read_text(encoding="utf-8").split()
    assert (Cap.DEVICE_FAULTS in create().capabilities) == ("trap_if" in names)


def test_garbage_kernel_arguments_are_a_device_error(b) -> None:
    """probe-requests item 4: numpy's ValueError on a negative n becomes a device error."""
    fill = func(b, "fill")
    s = ok(b.create_stream())
    y = buf(b, [-1])
    assert launch(b, fill, s, out=y, n=-5, value=1) == 0
    assert b.synchronize_stream(s) == Err.RT_INTERNAL_ERROR
    assert any("ValueError" in f for f in b.device_faults)
    assert launch(b, fill, s, out=y, n=1, value=4) == 0  # the engine goes on
    assert b.synchronize_stream(s) == 0 and i32(b, y, 1) == [4]


# ---------------------------------------------------------------------------------------------
# syncs with timeout 0, event sync, thread state


def test_event_sync(b) -> None:
    """TMO-07, TMO-09 and the argument checks of aclrtSynchronizeEvent[WithTimeout]."""
    s, c = ok(b.create_stream()), ok(b.create_stream())
    gate, e = ok(b.create_event_ex_with_flag(SYNC)), ok(b.create_event_ex_with_flag(SYNC))
    assert b.synchronize_event_with_timeout(e, 0) == 0  # never recorded
    assert b.synchronize_event(e) == 0
    assert b.synchronize_event_with_timeout(e, -2) == Err.RT_PARAM_INVALID
    assert b.synchronize_event_with_timeout(None, -2) == Err.RT_PARAM_INVALID  # timeout first
    assert b.synchronize_event_with_timeout(None, 10) == Err.INVALID_PARAM
    assert b.synchronize_event(None) == Err.INVALID_PARAM
    ok(b.stream_wait_event(s, gate))
    ok(b.record_event(e, s))
    t0 = time.monotonic()
    assert b.synchronize_event_with_timeout(e, 0) == Err.RT_EVENT_SYNC_TIMEOUT
    assert b.synchronize_event_with_timeout(e, 60) == Err.RT_EVENT_SYNC_TIMEOUT
    assert 0.05 <= time.monotonic() - t0 < 1.0
    threading.Timer(0.03, lambda: (b.set_device(0), b.record_event(gate, None))).start()
    assert b.synchronize_event_with_timeout(e, 5000) == 0
    assert b.synchronize_event_with_timeout(e, 0) == 0
    ext = ok(b.create_event_with_flag(int(EventFlag.EXTERNAL)))
    assert b.synchronize_event(ext) == Err.RT_FEATURE_NOT_SUPPORT
    ok(b.capture_begin(c, 0))
    ok(b.record_event(e, c))
    assert b.synchronize_event(e) == Err.RT_EVENT_CAPTURED
    ok(b.destroy(ok(b.capture_end(c))))
    ok(b.destroy_event(gate))
    assert b.synchronize_event(gate) == Err.RT_INVALID_HANDLE


def test_event_sync_ignores_the_stream_error(b, tmp_path) -> None:
    wf = special(b, tmp_path, "wait_flag")
    s = ok(b.create_stream())
    e = ok(b.create_event_ex_with_flag(SYNC))
    assert launch_cfg(b, wf, s, cfg_us(20_000), flag=buf(b, [0]), out=buf(b, [0]), value=1) == 0
    ok(b.record_event(e, s))
    assert b.synchronize_event_with_timeout(e, 5000) == 0
    assert b.synchronize_stream(s) == Err.RT_TASK_TIMEOUT


def test_get_device_and_context(b) -> None:
    assert b.get_device() == (0, 0)
    assert b.get_device(null_out=True) == (Err.INVALID_PARAM, UNWRITTEN)
    rc, ctx = b.get_current_context()
    assert rc == 0 and ctx is not None and b.get_current_context() == (0, ctx)
    assert in_thread(b, b.get_current_context) == (0, ctx)  # one context per device
    assert in_thread(b, b.get_device, set_device=False) == (Err.RT_CONTEXT_NULL, UNWRITTEN)
    assert in_thread(b, lambda: b.get_device(null_out=True), set_device=False)[0] == \
        Err.INVALID_PARAM
    assert in_thread(b, lambda: b.synchronize_event(None), set_device=False) == \
        Err.INVALID_PARAM
    b2 = create(device_count=2)
    assert in_thread(b2, lambda: (b2.set_device(1), b2.get_device())[1],
                     set_device=False) == (0, 1)


# ---------------------------------------------------------------------------------------------
# stream resources (FLD-06..08)


def test_stream_pool_r1_r2_r3() -> None:
    b = create(stream_limit=4)
    streams = [ok(b.create_stream()) for _ in range(3)]
    s0, s1, s2 = streams
    ok(b.capture_begin(s0, 0))  # 4 in use now
    assert b.create_stream() == (Err.RT_NO_STREAM_RESOURCE, UNWRITTEN)  # R1
    assert b.create_stream_with_config(0, 0) == (Err.RT_NO_STREAM_RESOURCE, UNWRITTEN)
    assert b.capture_begin(s1, 0) == Err.RT_NO_STREAM_RESOURCE  # R2
    assert b.capture_get_info(s1) == (0, CaptureStatus.NONE, None)
    e = ok(b.create_event_ex_with_flag(SYNC))
    ok(b.record_event(e, s0))
    assert b.stream_wait_event(s1, e) == Err.RT_NO_STREAM_RESOURCE  # R3: no join
    assert b.capture_get_info(s1) == (0, CaptureStatus.NONE, None)
    assert b.capture_end(s0) == (Err.RT_STREAM_CAPTURE_INVALIDATED, None)
    ok(b.capture_begin(s1, 0))  # the model's internal stream came back
    ok(b.destroy(ok(b.capture_end(s1))))
    ok(b.destroy_stream(s2))
    assert b.create_stream()[0] == 0
    b.close()


def test_model_stream_pool_r4() -> None:
    b = create(model_stream_limit=1)
    s, t, x = ok(b.create_stream()), ok(b.create_stream()), ok(b.create_stream())
    fork, join = ok(b.create_event_ex_with_flag(SYNC)), ok(b.create_event_ex_with_flag(SYNC))
    ok(b.capture_begin(s, 0))
    ok(b.record_event(fork, s))
    ok(b.stream_wait_event(t, fork))
    ok(b.record_event(join, t))
    ok(b.stream_wait_event(s, join))
    m = ok(b.capture_end(s))
    assert b.execute_async(m, x) == 207005  # ACL_ERROR_RT_RESOURCE_ALLOC_FAIL
    assert b.execute_async(m, x) == 207005 and m.running == 0
    assert b.update(m) == 0 and b.synchronize_stream(x) == 0
    ok(b.destroy(m))
    ok(b.capture_begin(s, 0))
    ok(b.record_event(fork, s))
    m1 = ok(b.capture_end(s))
    ok(b.execute_async(m1, x))
    assert b.synchronize_stream(x) == 0
    b.close()


# ---------------------------------------------------------------------------------------------
# rules taken from the source


def test_bind_stream_checks_persistence_first(b) -> None:
    """BLD-08: a capturing non-PERSISTENT stream 107000; a capturing PERSISTENT one 107027."""
    m = ok(b.build_begin(0))
    plain, pers = ok(b.create_stream()), ok(b.create_stream_with_config(0, P))
    ok(b.capture_begin(plain, 0))
    ok(b.capture_begin(pers, 0))
    assert b.bind_stream(m, plain, HEAD) == Err.RT_PARAM_INVALID
    assert b.bind_stream(m, pers, HEAD) == Err.RT_STREAM_CAPTURED
    for st in (plain, pers):
        ok(b.destroy(ok(b.capture_end(st))))


def test_build_end_needs_end_task(b) -> None:
    """EXE-12 on STARS: BuildEnd without EndTask 507011 (model.cc:969-973); no stream 107005."""
    m = ok(b.build_begin(0))
    assert b.build_end(m, None) == Err.RT_STREAM_MODEL
    s = ok(b.create_stream_with_config(0, P))
    ok(b.bind_stream(m, s, HEAD))
    assert b.build_end(m, None) == Err.RT_MODEL_EXECUTE
    ok(b.end_task(m, s))
    assert b.build_end(m, None) == 0


def test_record_retargets_event_of_another_capture(b) -> None:
    """XS-12: rc 0, neither capture invalidated; wait/reset across captures stay 107032."""
    a, c = ok(b.create_stream()), ok(b.create_stream())
    e = ok(b.create_event_ex_with_flag(SYNC))
    ok(b.capture_begin(a, 0))
    ok(b.capture_begin(c, 0))
    ok(b.record_event(e, a))
    assert b.record_event(e, c) == 0
    ok(b.stream_wait_event(c, e))  # waits for c's own record
    assert b.stream_wait_event(a, e) == Err.STREAM_CAPTURE_CONFLICT
    m_a = b.capture_end(a)
    assert m_a == (Err.RT_STREAM_CAPTURE_INVALIDATED, None)  # the wait invalidated both
    assert b.capture_end(c) == (Err.RT_STREAM_CAPTURE_INVALIDATED, None)
    ok(b.capture_begin(a, 0))
    ok(b.capture_begin(c, 0))
    ok(b.record_event(e, a))
    assert b.record_event(e, c) == 0
    ok(b.destroy(ok(b.capture_end(a))))
    ok(b.destroy(ok(b.capture_end(c))))


def test_active_stream_and_label_switch_need_bound_streams(b) -> None:
    """BLD-09: 107005 on streams not bound to a model; maxValue is not validated."""
    m = ok(b.build_begin(0))
    s = ok(b.create_stream_with_config(0, P))
    ok(b.bind_stream(m, s, HEAD))
    plain = ok(b.create_stream())
    assert b.active_stream(s, plain) == Err.RT_STREAM_MODEL
    assert b.active_stream(plain, s) == Err.RT_STREAM_MODEL
    labels = [ok(b.create_label()) for _ in range(2)]
    lst = ok(b.create_label_list(labels, 2))
    idx = buf(b, [5])
    assert b.switch_label_by_index(idx, 1, lst, plain) == Err.RT_STREAM_MODEL
    assert b.switch_label_by_index(idx, 9, lst, s) == 0  # past the list: accepted
    fill = func(b, "fill")
    a, c = buf(b, [-1]), buf(b, [-1])
    ok(b.set_label(labels[0], s))
    assert launch(b, fill, s, out=a, n=1, value=1) == 0
    ok(b.set_label(labels[1], s))
    assert launch(b, fill, s, out=c, n=1, value=2) == 0
    ok(b.end_task(m, s))
    assert b.execute(m, 5000) == 0
    assert (i32(b, a, 1), i32(b, c, 1)) == ([-1], [2])  # index 5 -> the last label


def test_wrong_thread_end_leaks_mode_fault() -> None:
    """MODE-03: without the fault a later THREAD_LOCAL capture in the beginning thread blocks
    its memcpy (107030); with ``wrong-thread-end-leaks-mode`` the leaked GLOBAL mode lets it
    through."""
    for fault, expected in (((), Err.RT_CAPTURE_MODE_NOT_SUPPORT),
                            (("wrong-thread-end-leaks-mode",), 0)):
        b = create(faults=fault)
        s, t = ok(b.create_stream()), ok(b.create_stream())
        ok(b.capture_begin(s, int(CaptureMode.GLOBAL)))
        assert in_thread(b, lambda: b.capture_end(s)[0]) == Err.RT_STREAM_CAPTURE_WRONG_THREAD
        x = ok(b.malloc(16))
        host = np.zeros(4, dtype=np.int32)
        assert b.memcpy(x, 16, host, 16, MemcpyKind.HOST_TO_DEVICE) == 0  # nothing open
        ok(b.capture_begin(t, int(CaptureMode.THREAD_LOCAL)))
        assert b.memcpy(x, 16, host, 16, MemcpyKind.HOST_TO_DEVICE) == expected
        b.close()


def test_debug_json_of_a_built_model(b) -> None:
    """DBG-05 on a built model: stream ids of the bound streams, the end-graph task's type."""
    m = ok(b.build_begin(0))
    s = ok(b.create_stream_with_config(0, P))
    ok(b.bind_stream(m, s, HEAD))
    ok(b.end_task(m, s))
    import json
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "m.json"
        ok(b.debug_json_print(m, str(path), 0))
        events = json.loads(path.read_text())
    assert [(e["tid"], e["args"]["Task Type"], e["dur"]) for e in events] == \
        [(f"stream{s.id}", "MODEL_END_GRAPH", 9.5)]


def test_switch_stream_needs_bound_streams(b) -> None:
    """BLD-09: aclrtSwitchStream with an unbound trueStream or stream -> 107005."""
    from mdlri_conformance.backends.contract import CompareDataType, Condition
    m = ok(b.build_begin(0))
    s = ok(b.create_stream_with_config(0, P))
    ok(b.bind_stream(m, s, HEAD))
    plain = ok(b.create_stream())
    v = buf(b, [0])
    eq, i32t = int(Condition.EQUAL), int(CompareDataType.INT32)
    assert b.switch_stream(v, eq, v, i32t, plain, None, s) == Err.RT_STREAM_MODEL
    assert b.switch_stream(v, eq, v, i32t, s, None, plain) == Err.RT_STREAM_MODEL


def test_with_flag_acl_layer_checks(b) -> None:
    """XS-10: NULL event, a flag other than 0/1 and an EXTERNAL wait with a timeout are
    ACL-layer checks (100000)."""
    s = ok(b.create_stream())
    e = ok(b.create_event_with_flag(int(EventFlag.EXTERNAL)))
    assert b.record_event_with_flag(None, s, 1) == Err.INVALID_PARAM
    assert b.record_event_with_flag(e, s, 2) == Err.INVALID_PARAM
    assert b.stream_wait_event_with_flag(s, None, 0, 1) == Err.INVALID_PARAM
    assert b.stream_wait_event_with_flag(s, e, 0, 2) == Err.INVALID_PARAM
    assert b.stream_wait_event_with_flag(s, e, 5, 1) == Err.INVALID_PARAM
    assert b.stream_wait_event_with_flag(s, e, 0, 1) == Err.RT_STREAM_NOT_CAPTURED
