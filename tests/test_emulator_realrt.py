"""Smoke checks of the emulator behaviours that follow the real runtime code (hicann/runtime
@681ef76, shared/ref/real-runtime/findings.md), through the ctypes binding: one test per
behaviour, plus the new exports (aclrtGetDevice, aclrtGetCurrentContext,
aclrtSynchronizeEvent[WithTimeout]), the device-side kernel timeout and the
``wrong-thread-end-leaks-mode`` fault. The conformance suite on acl+emulator is the full check."""

from __future__ import annotations

import json
import os
import shutil
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from mdlri_conformance.backends.contract import (CaptureMode, Err, EventFlag, HostStateBackend, LaunchAttr,
                               LaunchAttrId, LaunchKernelCfg, MemcpyKind, ModelStreamFlag,
                               StreamFlag)

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc not on PATH")

NEW_EXPORTS = ("aclrtGetDevice", "aclrtGetCurrentContext", "aclrtSynchronizeEvent",
               "aclrtSynchronizeEventWithTimeout")


@pytest.fixture(scope="module")
def b() -> Any:
    from mdlri_conformance.backends.acl import create

    backend = create("emulator")
    yield backend
    backend.close()


def _stream(b: Any, flag: int = 0) -> Any:
    rc, s = b.create_stream_with_config(0, flag)
    assert rc == 0
    return s


def _dev(b: Any, n: int = 64) -> int:
    rc, p = b.malloc(n)
    assert rc == 0
    assert b.memset(p, n, 0, n) == 0
    return p


def _read_i32(b: Any, addr: int) -> int:
    out = np.zeros(1, np.int32)
    assert b.memcpy(out, 4, addr, 4, MemcpyKind.DEVICE_TO_HOST) == 0
    return int(out[0])


def _set_i32(b: Any, addr: int, v: int) -> None:
    src = np.array([v], np.int32)
    assert b.memcpy(addr, 4, src, 4, MemcpyKind.HOST_TO_DEVICE) == 0


def _kernel(b: Any, name: str) -> Any:
    rc, binh = b.binary_load_from_file(b.kernel_binary_path())
    assert rc == 0
    rc, f = b.binary_get_function(binh, name)
    assert rc == 0
    return f


def _built(b: Any, *flags: int) -> tuple[Any, list[Any]]:
    rc, m = b.build_begin(0)
    assert rc == 0
    streams = []
    for f in flags:
        s = _stream(b, StreamFlag.PERSISTENT)
        assert b.bind_stream(m, s, f) == 0
        streams.append(s)
    return m, streams


# -- exports ----------------------------------------------------------------------------------


def test_new_exports_are_bound_and_exported(b: Any) -> None:
    """The four host-state functions are in the symbol table, exported by the emulator, and the
    acl backend implements the contract's HostStateBackend protocol with them."""
    from mdlri_conformance.backends.acl.symbols import SIGNATURES

    for name in NEW_EXPORTS:
        assert name in SIGNATURES
        assert b.sym.has(name), name
    assert isinstance(b, HostStateBackend)


def test_get_device_and_context(b: Any) -> None:
    """aclrtGetDevice / aclrtGetCurrentContext: the thread's device and context; NULL 100000;
    a thread without aclrtSetDevice 107002 (api_c_device.cc:93, api_c.cc:1357)."""
    assert b.get_device() == (0, 0)
    rc, ctx = b.get_current_context()
    assert rc == 0 and ctx is not None
    assert b.get_device(null_out=True)[0] == Err.INVALID_PARAM
    assert b.get_current_context(null_out=True)[0] == Err.INVALID_PARAM
    seen: dict[str, Any] = {}

    def other() -> None:
        seen["dev"] = b.get_device()[0]
        seen["ctx"] = b.get_current_context()[0]
        b.set_device(0)
        seen["after"] = b.get_current_context()

    t = threading.Thread(target=other)
    t.start()
    t.join()
    assert seen["dev"] == seen["ctx"] == Err.RT_CONTEXT_NULL
    assert seen["after"] == (0, ctx)


# -- event synchronization ---------------------------------------------------------------------


def test_event_sync(b: Any) -> None:
    """aclrtSynchronizeEvent[WithTimeout]: a never-recorded event 0; the host deadline 507047;
    timeout 0 the immediate check (0 or 507047 at once, TMO-07); < -1 107000; NULL 100000;
    done once the record ran."""
    rc, e = b.create_event_ex_with_flag(0)
    assert rc == 0
    assert b.synchronize_event(e) == 0
    assert b.synchronize_event_with_timeout(e, 50) == 0
    assert b.synchronize_event_with_timeout(e, 0) == 0
    assert b.synchronize_event_with_timeout(e, -2) == Err.RT_PARAM_INVALID
    assert b.synchronize_event_with_timeout(None, -2) == Err.RT_PARAM_INVALID
    assert b.synchronize_event_with_timeout(None, 50) == Err.INVALID_PARAM
    s, flag = _stream(b), _dev(b)
    assert b.value_wait(flag, 1, 0, s) == 0
    assert b.record_event(e, s) == 0
    t0 = time.monotonic()
    assert b.synchronize_event_with_timeout(e, 100) == Err.RT_EVENT_SYNC_TIMEOUT
    assert time.monotonic() - t0 >= 0.09
    assert b.synchronize_event_with_timeout(e, 0) == Err.RT_EVENT_SYNC_TIMEOUT
    assert b.synchronize_stream_with_timeout(s, 0) == Err.RT_STREAM_SYNC_TIMEOUT
    assert b.value_write(flag, 1, 0, None) == 0
    assert b.synchronize_event_with_timeout(e, 5000) == 0
    assert b.synchronize_stream(s) == 0
    assert b.synchronize_event_with_timeout(e, 0) == 0
    assert b.synchronize_stream_with_timeout(s, 0) == 0
    assert b.destroy_event(e) == 0
    assert b.destroy_stream(s) == 0


def test_event_sync_refusals(b: Any) -> None:
    """An EXTERNAL event 207000, an event of an open capture 107028 (api_error.cc:1776-1781)."""
    rc, ext = b.create_event_with_flag(EventFlag.EXTERNAL)
    assert rc == 0
    assert b.synchronize_event(ext) == Err.RT_FEATURE_NOT_SUPPORT
    rc, e = b.create_event_ex_with_flag(0)
    s = _stream(b)
    assert b.capture_begin(s, CaptureMode.RELAXED) == 0
    assert b.record_event(e, s) == 0
    assert b.synchronize_event(e) == Err.RT_EVENT_CAPTURED
    rc, m = b.capture_end(s)
    assert rc == 0
    assert b.synchronize_event(e) == 0
    for x in (b.destroy(m), b.destroy_event(e), b.destroy_event(ext), b.destroy_stream(s)):
        assert x == 0


# -- device-side kernel timeout ------------------------------------------------------------------


def _wait_args(flag: int, out: int, value: int) -> bytes:
    return struct.pack("<QQi4x", flag, out, value)


TIMEOUT_100MS = LaunchKernelCfg([LaunchAttr(LaunchAttrId.TIMEOUT_US, (100_000, 0))])


def test_kernel_timeout_on_a_stream(b: Any) -> None:
    """A waiting kernel launched with a TIMEOUT_US attribute whose flag stays 0 completes with
    the timeout bit: the next sync returns 107020 before its host deadline, once; the kernel's
    output is not written. With the flag set it runs."""
    f = _kernel(b, "wait_flag")
    s, flag, out = _stream(b), _dev(b), _dev(b)
    args = _wait_args(flag, out, 7)
    rc, e = b.create_event_ex_with_flag(0)
    assert b.launch_kernel_with_host_args(f, 1, s, TIMEOUT_100MS, args, len(args)) == 0
    assert b.record_event(e, s) == 0
    assert b.synchronize_event_with_timeout(e, 5000) == 0  # the error belongs to the stream
    t0 = time.monotonic()
    assert b.synchronize_stream_with_timeout(s, 5000) == Err.RT_TASK_TIMEOUT
    assert time.monotonic() - t0 < 4
    assert b.synchronize_stream_with_timeout(s, 100) == 0
    assert _read_i32(b, out) == 0
    assert b.launch_kernel_with_host_args(f, 1, s, TIMEOUT_100MS, args, len(args)) == 0
    _set_i32(b, flag, 1)
    assert b.synchronize_stream_with_timeout(s, 5000) == 0
    assert _read_i32(b, out) == 7
    _set_i32(b, flag, 0)
    assert b.launch_kernel_with_host_args(f, 1, s, None, args, len(args)) == 0  # 1800 s
    assert b.synchronize_stream_with_timeout(s, 100) == Err.RT_STREAM_SYNC_TIMEOUT
    _set_i32(b, flag, 1)
    assert b.synchronize_stream(s) == 0
    assert b.destroy_event(e) == 0
    assert b.destroy_stream(s) == 0


def test_kernel_timeout_ends_a_model_execution(b: Any) -> None:
    """Inside a captured model the timeout fails the execution (the rest is skipped) and the
    ExecuteAsync stream's next sync returns 507011 (TS_MODEL_STREAM_EXE_FAILED,
    model_execute_task.cc:227-251); aclmdlRIExecute returns it itself."""
    f = _kernel(b, "wait_flag")
    s, x, flag, out, out2 = _stream(b), _stream(b), _dev(b), _dev(b), _dev(b)
    assert b.capture_begin(s, CaptureMode.RELAXED) == 0
    a1, a2 = _wait_args(flag, out, 1), _wait_args(flag, out2, 2)
    assert b.launch_kernel_with_host_args(f, 1, s, TIMEOUT_100MS, a1, len(a1)) == 0
    assert b.launch_kernel_with_host_args(f, 1, s, None, a2, len(a2)) == 0
    rc, m = b.capture_end(s)
    assert rc == 0
    assert b.execute_async(m, x) == 0
    assert b.synchronize_stream_with_timeout(x, 5000) == Err.RT_MODEL_EXECUTE
    assert b.synchronize_stream_with_timeout(x, 100) == 0
    assert (_read_i32(b, out), _read_i32(b, out2)) == (0, 0)
    assert b.destroy(m) == 0

    built, (head,) = _built(b, ModelStreamFlag.HEAD)
    assert b.launch_kernel_with_host_args(f, 1, head, TIMEOUT_100MS, a1, len(a1)) == 0
    assert b.end_task(built, head) == 0
    assert b.build_end(built) == 0
    assert b.execute(built, 5000) == Err.RT_MODEL_EXECUTE
    assert b.destroy(built) == 0
    for st in (s, x, head):
        assert b.destroy_stream(st) == 0


# -- return codes that follow the code (findings §3) -------------------------------------------


def test_bind_checks_persistence_before_capture(b: Any) -> None:
    """A capturing non-persistent stream: 107000 (api_c_model.cc:82-84); a capturing
    PERSISTENT one: 107027 (api_error.cc:3905-3908)."""
    m, _ = _built(b)
    for flag, want in ((0, Err.RT_PARAM_INVALID), (StreamFlag.PERSISTENT,
                                                   Err.RT_STREAM_CAPTURED)):
        s = _stream(b, flag)
        assert b.capture_begin(s, CaptureMode.RELAXED) == 0
        assert b.bind_stream(m, s, ModelStreamFlag.HEAD) == want
        rc, cm = b.capture_end(s)
        assert rc == 0
        assert b.destroy(cm) == 0
        assert b.destroy_stream(s) == 0
    assert b.destroy(m) == 0


def test_build_end_needs_streams_and_end_task(b: Any) -> None:
    """BuildEnd: no bound stream 107005, no EndTask 507011 (model.cc:941-957, 969-973)."""
    m, _ = _built(b)
    assert b.build_end(m) == Err.RT_STREAM_MODEL
    s = _stream(b, StreamFlag.PERSISTENT)
    assert b.bind_stream(m, s, ModelStreamFlag.HEAD) == 0
    assert b.build_end(m) == Err.RT_MODEL_EXECUTE
    assert b.end_task(m, s) == 0
    assert b.build_end(m) == 0
    assert b.execute(m, 5000) == 0
    assert b.destroy(m) == 0
    assert b.destroy_stream(s) == 0


def test_record_in_another_capture_retargets_the_event(b: Any) -> None:
    """XS-07: a record of capture A's event on a stream capturing into B moves it to B (rc 0,
    both captures end); a wait across captures still conflicts (107032); a reset is refused
    first (new-mode event: 207000, api_impl.cc:2210-2214) and both captures end."""
    for op, want in (("record", 0), ("wait", Err.STREAM_CAPTURE_CONFLICT),
                     ("reset", Err.RT_FEATURE_NOT_SUPPORT)):
        sa, sb = _stream(b), _stream(b)
        rc, e = b.create_event_ex_with_flag(0)
        assert b.capture_begin(sa, CaptureMode.RELAXED) == 0
        assert b.capture_begin(sb, CaptureMode.RELAXED) == 0
        assert b.record_event(e, sa) == 0
        rc = {"record": lambda: b.record_event(e, sb),
              "wait": lambda: b.stream_wait_event(sb, e),
              "reset": lambda: b.reset_event(e, sb)}[op]()
        assert rc == want, op
        for s in (sa, sb):
            rc, m = b.capture_end(s)
            if op != "wait":
                assert rc == 0
                assert b.destroy(m) == 0
            else:
                assert rc == Err.RT_STREAM_CAPTURE_INVALIDATED
        for x in (b.destroy_event(e), b.destroy_stream(sa), b.destroy_stream(sb)):
            assert x == 0


def _two_stream_model(b: Any) -> tuple[Any, list[Any]]:
    s1, s2 = _stream(b), _stream(b)
    rc, e1 = b.create_event_ex_with_flag(0)
    rc, e2 = b.create_event_ex_with_flag(0)
    assert b.capture_begin(s1, CaptureMode.RELAXED) == 0
    assert b.record_event(e1, s1) == 0
    assert b.stream_wait_event(s2, e1) == 0
    assert b.record_event(e2, s2) == 0
    assert b.stream_wait_event(s1, e2) == 0
    rc, m = b.capture_end(s1)
    assert rc == 0
    return m, [s1, s2, e1, e2]


def test_get_streams_copies_back_only_on_success(b: Any) -> None:
    """GetStreams: 107039 leaves the array untouched; slots past the count are left alone
    (api_c_standard_soc.cc:1874-1881). GetTasksByStream keeps the partial fill and NULL tail."""
    from mdlri_conformance.backends.contract import UNWRITTEN

    m, objs = _two_stream_model(b)
    rc, slots, n = b.get_streams(m, 1)
    assert (rc, slots, n) == (Err.RT_INSUFFICIENT_INPUT_ARRAY, [UNWRITTEN], 1)
    rc, slots, n = b.get_streams(m, 4)
    assert rc == 0 and n == 2
    assert None not in slots[:2] and slots[2:] == [UNWRITTEN, UNWRITTEN]
    rc, _, total = b.get_tasks_by_stream(slots[0], None)
    assert rc == 0 and total >= 2
    rc, tasks, n = b.get_tasks_by_stream(slots[0], total - 1)
    assert rc == Err.RT_INSUFFICIENT_INPUT_ARRAY and UNWRITTEN not in tasks
    rc, tasks, n = b.get_tasks_by_stream(slots[0], total + 2)
    assert rc == 0 and tasks[total:] == [None, None]
    assert b.destroy(m) == 0
    s1, s2, e1, e2 = objs
    for x in (b.destroy_event(e1), b.destroy_event(e2), b.destroy_stream(s1),
              b.destroy_stream(s2)):
        assert x == 0


def test_debug_json_uses_the_runtime_keys(b: Any, tmp_path: Path) -> None:
    """DebugJsonPrint writes the runtime writer's args keys (stream.cc:4979-5016)."""
    f = _kernel(b, "fill")
    s, buf = _stream(b), _dev(b)
    assert b.capture_begin(s, CaptureMode.RELAXED) == 0
    args = struct.pack("<Qii", buf, 4, 3)
    assert b.launch_kernel_with_host_args(f, 2, s, None, args, len(args)) == 0
    rc, m = b.capture_end(s)
    assert rc == 0
    path = tmp_path / "m.json"
    assert b.debug_json_print(m, str(path), 1) == 0
    events = json.loads(path.read_text())
    (ev,) = events
    assert ev["ph"] == "X" and ev["name"] == "fill" and ev["pid"].endswith(" aclGraph")
    assert {"Model Id", "Stream Id", "Task Id", "Task Type", "Numblocks", "Schem Mode",
            "Kernel Args", "Kernel Args Size"} <= set(ev["args"])
    assert ev["args"]["Task Type"] == "KERNEL_AICORE" and ev["args"]["Numblocks"] == 2
    assert ev["args"]["Kernel Args Size"] == 16
    assert ev["args"]["Kernel Args"] == f"0x{buf:016x} 0x{(3 << 32) | 4:016x}"
    assert b.destroy(m) == 0
    assert b.destroy_stream(s) == 0


def test_switch_apis_on_ordinary_streams(b: Any) -> None:
    """ActiveStream / SwitchStream / SwitchLabelByIndex on or to an ordinary stream: 107005
    (api_impl.cc:5086-5091, 5036-5043, 5513-5516); SwitchLabelByIndex does not validate
    maxValue (api_impl.cc:5505-5522)."""
    m, (head,) = _built(b, ModelStreamFlag.HEAD)
    plain = _stream(b)
    v = _dev(b)
    assert b.active_stream(head, plain) == Err.RT_STREAM_MODEL
    assert b.active_stream(plain, head) == Err.RT_STREAM_MODEL
    assert b.switch_stream(v, 0, v, 0, plain, None, head) == Err.RT_STREAM_MODEL
    rc, label = b.create_label()
    rc, lst = b.create_label_list([label], 1)
    assert rc == 0
    assert b.switch_label_by_index(v, 1, lst, plain) == Err.RT_STREAM_MODEL
    assert b.switch_label_by_index(v, 0, lst, head) == 0
    assert b.switch_label_by_index(v, 5, lst, head) == 0
    assert b.set_label(label, head) == 0
    assert b.end_task(m, head) == 0
    assert b.execute(m, 5000) == 0
    for x in (b.destroy(m), b.destroy_label_list(lst), b.destroy_label(label),
              b.destroy_stream(head), b.destroy_stream(plain)):
        assert x == 0


def test_seq_id_of_a_built_model_task(b: Any) -> None:
    """GetSeqId on a built (non-capture) model's task: 207000 (api_impl.cc:9925-9928)."""
    m, (head,) = _built(b, ModelStreamFlag.HEAD)
    assert b.end_task(m, head) == 0
    rc, tasks, n = b.get_tasks_by_stream(head, 1)
    assert rc == 0 and n == 1
    assert b.task_get_seq_id(tasks[0])[0] == Err.RT_FEATURE_NOT_SUPPORT
    assert b.destroy(m) == 0
    assert b.destroy_stream(head) == 0


# -- the wrong-thread CaptureEnd leak (a real-runtime bug, as an emulator fault) -----------------

_LEAK_SCRIPT = r"""
import ctypes as C, sys, threading
lib = C.CDLL(sys.argv[1])
VP = C.c_void_p
lib.aclmdlRICaptureEnd.argtypes = [VP, C.POINTER(VP)]
lib.aclmdlRICaptureBegin.argtypes = [VP, C.c_int]
lib.aclrtMalloc.argtypes = [C.POINTER(VP), C.c_size_t, C.c_int]
lib.aclrtMemcpy.argtypes = [VP, C.c_size_t, VP, C.c_size_t, C.c_int]
assert lib.aclrtSetDevice(0) == 0
s1, s2, dev = VP(), VP(), VP()
assert lib.aclrtCreateStream(C.byref(s1)) == 0 and lib.aclrtCreateStream(C.byref(s2)) == 0
assert lib.aclrtMalloc(C.byref(dev), 64, 0) == 0
host = (C.c_char * 64)()
assert lib.aclmdlRICaptureBegin(s1, 0) == 0          # GLOBAL, begun by this thread
out = []
def end():
    lib.aclrtSetDevice(0)
    m = VP()
    out.append(lib.aclmdlRICaptureEnd(s1, C.byref(m)))
t = threading.Thread(target=end); t.start(); t.join()
assert out == [107038], out
assert lib.aclmdlRICaptureBegin(s2, 1) == 0          # THREAD_LOCAL, this thread
print(lib.aclrtMemcpy(dev, 64, host, 64, 1))         # MODE-03: 107030 unless the mode leaked
"""


@pytest.mark.parametrize("faults,want", [("", "107030"), ("wrong-thread-end-leaks-mode", "0")])
def test_wrong_thread_end_leak_fault(faults: str, want: str) -> None:
    """Without the fault a THREAD_LOCAL capture blocks its own thread's aclrtMemcpy after a
    wrong-thread CaptureEnd; with it the begin thread keeps the leaked GLOBAL thread mode and
    the copy passes, like the real runtime (context_aclgraph.cc:529-531)."""
    from mdlri_conformance.backends.acl.emulator.build import emulator_library

    env = dict(os.environ, MDLRI_EMU_FAULTS=faults)
    r = subprocess.run([sys.executable, "-c", _LEAK_SCRIPT, str(emulator_library())],
                       capture_output=True, text=True, env=env, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == want


def test_flagged_event_calls_check_at_the_acl_layer(b: Any) -> None:
    """aclrtRecordEventWithFlag / aclrtStreamWaitEventWithFlag: a flag other than DEFAULT /
    EXTERNAL and an EXTERNAL wait with a non-zero timeout are 100000 (event.cpp:100-103,
    stream.cpp:243-250)."""
    rc, e = b.create_event_ex_with_flag(0)
    s = _stream(b)
    assert b.record_event_with_flag(e, s, 2) == Err.INVALID_PARAM
    assert b.stream_wait_event_with_flag(s, e, 0, 2) == Err.INVALID_PARAM
    assert b.capture_begin(s, CaptureMode.RELAXED) == 0
    assert b.stream_wait_event_with_flag(s, e, 5, 1) == Err.INVALID_PARAM
    assert b.stream_wait_event_with_flag(s, e, 0, 1) == 0
    rc, m = b.capture_end(s)
    assert rc == 0
    for x in (b.destroy(m), b.destroy_event(e), b.destroy_stream(s)):
        assert x == 0
