"""Simulator unit tests: names and ids, DebugJsonPrint, destroy callbacks, launch attributes,
abort (NAME-01..05, DBG-01..04, LIFE-09..14, ATTR-01..06, SETP-08, ABT-01..03)."""

from __future__ import annotations

import json

from mdlri_conformance.backends.contract import (
    UNWRITTEN,
    Err,
    LaunchAttr,
    LaunchAttrId,
    LaunchKernelCfg,
    TaskType,
)
from mdlri_conformance.backends.sim.attributes import DEFAULT_OP_TIMEOUT_S

from .test_sim_support import b, func, ok, streams, tasks  # noqa: F401


def _model(b, cfg=None, capture_open=False):
    fill = func(b, "fill")
    s = ok(b.create_stream())
    x = ok(b.malloc(64))
    ok(b.capture_begin(s, 0))
    assert b.launch_kernel_with_host_args(fill, 1, s, cfg, fill.spec.pack(out=x, n=1, value=1),
                                          fill.spec.args_size) == 0
    ok(b.value_write(x + 8, 1, 0, s))
    if capture_open:
        return ok(b.capture_get_info(s))[1], s
    return ok(b.capture_end(s)), s


def test_names_and_ids(b):
    m, s = _model(b)
    assert b.get_name(m, 16) == (0, "")  # NAME-02
    ok(b.set_name(m, "first"))
    ok(b.set_name(m, "second"))
    assert b.get_name(m, 16) == (0, "second")  # NAME-01
    long = "n" * 600
    ok(b.set_name(m, long))
    assert b.get_name(m, 601) == (0, long)  # NAME-03: no truncation
    assert b.get_name(m, 600) == (Err.RT_INTERNAL_ERROR, "")
    assert b.get_name(m, 0) == (Err.RT_PARAM_INVALID, UNWRITTEN)  # NAME-04
    assert b.get_name(None, 8)[0] == Err.INVALID_PARAM
    assert b.get_name(m, 8, null_buf=True)[0] == Err.INVALID_PARAM
    assert b.set_name(m, None) == Err.INVALID_PARAM
    assert b.set_name(None, "x") == Err.INVALID_PARAM
    m2, _ = _model(b, capture_open=True)
    ok(b.set_name(m2, "capturing"))  # NAME-04: during capture
    assert ok(b.get_id(m)) != ok(b.get_id(m2))  # NAME-05
    assert b.get_id(None)[0] == Err.INVALID_PARAM
    assert b.get_id(m, null_out=True)[0] == Err.INVALID_PARAM
    ok(b.destroy(m))
    assert b.get_name(m, 8)[0] == Err.RT_INVALID_HANDLE


def test_debug_json(b, tmp_path):
    m, s = _model(b)
    path = tmp_path / "m.json"
    assert b.debug_json_print(m, str(path), 0) == 0  # DBG-01
    events = json.loads(path.read_text())
    assert isinstance(events, list) and {e["ph"] for e in events} == {"X"}
    assert [e["args"]["Task Type"] for e in events] == ["KERNEL_AICORE", "MEM_WRITE_VALUE"]
    assert all(e["tid"].startswith("stream") and e["pid"].endswith("aclGraph") for e in events)
    assert [list(e) for e in events] == [["name", "pid", "tid", "ts", "dur", "ph", "args"]] * 2
    k, v = (e["args"] for e in events)  # DBG-05: the runtime's keys, kernels add two
    assert list(k) == ["Model Id", "Stream Id", "Task Id", "Task Type", "Numblocks", "Schem Mode"]
    assert list(v) == ["Model Id", "Stream Id", "Task Id", "Task Type"]
    assert (k["Model Id"], k["Task Id"], v["Task Id"], k["Numblocks"]) == (m.id, 0, 1, 1)
    assert [(e["ts"], e["dur"]) for e in events] == [(0, 9.5), (10, 9.5)]
    assert events[0]["name"] == "fill" and "Kernel Args" not in k
    assert b.debug_json_print(m, str(path), 7) == 0  # DBG-03, VERBOSE adds the argument words
    args = json.loads(path.read_text())[0]["args"]
    assert args["Kernel Args Size"] == 16 and args["Kernel Args"].startswith("0x")
    assert b.debug_json_print(m, str(tmp_path / "no" / "x.json"), 0) == Err.RT_PARAM_INVALID
    assert b.debug_json_print(None, str(path), 0) == Err.INVALID_PARAM  # DBG-02
    assert b.debug_json_print(m, None, 0) == Err.INVALID_PARAM
    m2, _ = _model(b, capture_open=True)
    assert b.debug_json_print(m2, str(path), 0) == 0  # DBG-04


def test_destroy_callbacks(b):
    m, s = _model(b)
    calls = []

    def f(d):
        calls.append(("f", d))

    def g(d):
        calls.append(("g", d))

    def h(d):
        calls.append(("h", d))

    ok(b.destroy_register_callback(m, f, 1))
    assert b.destroy_register_callback(m, f, 2) == Err.RT_PARAM_INVALID  # LIFE-10
    ok(b.destroy_register_callback(m, g, 3))
    ok(b.destroy_register_callback(m, h, 4))
    ok(b.destroy_unregister_callback(m, h))
    assert b.destroy_unregister_callback(m, h) == Err.RT_PARAM_INVALID
    assert b.destroy_register_callback(None, f, 1) == Err.RT_PARAM_INVALID  # LIFE-13
    assert b.destroy_register_callback(m, None, 1) == Err.RT_PARAM_INVALID
    ok(b.destroy(m))
    expected = sorted([("f", 1), ("g", 3)], key=lambda c: id({"f": f, "g": g}[c[0]]))
    assert calls == expected  # LIFE-09, LIFE-11, LIFE-12
    # LIFE-14: a failed CaptureEnd destroys the model and runs the callback
    m2, s2 = _model(b, capture_open=True)
    ok(b.destroy_register_callback(m2, f, 9))
    ok(b.capture_task_grp_begin(s2))
    assert b.capture_end(s2) == (Err.STREAM_TASK_GROUP_STATUS, None)
    assert calls[-1] == ("f", 9)


def test_attributes(b):
    cfg = LaunchKernelCfg([LaunchAttr(LaunchAttrId.SCHEM_MODE, 1),
                           LaunchAttr(LaunchAttrId.TIMEOUT, 5),
                           LaunchAttr(LaunchAttrId.DATA_DUMP, 1)])
    m, s = _model(b, cfg)
    kt, vt = tasks(b, streams(b, m)[0])
    get = b.kernel_task_get_attribute
    assert get(kt, LaunchAttrId.SCHEM_MODE) == (0, 1)
    assert get(kt, LaunchAttrId.TIMEOUT) == (0, 5)  # ATTR-03 seconds
    assert get(kt, LaunchAttrId.TIMEOUT_US) == (0, (5_000_000, 0))
    assert get(kt, LaunchAttrId.DATA_DUMP) == (0, 1)
    assert get(kt, LaunchAttrId.DYN_UBUF_SIZE) == (0, 0)
    for bad in (LaunchAttrId.ENGINE_TYPE, LaunchAttrId.BLOCKDIM_OFFSET,
                LaunchAttrId.BLOCK_TASK_PREFETCH, 99):
        assert get(kt, bad) == (Err.RT_PARAM_INVALID, UNWRITTEN)  # ATTR-02
    assert get(vt, LaunchAttrId.TIMEOUT)[0] == Err.RT_PARAM_INVALID  # ATTR-01
    assert get(None, LaunchAttrId.TIMEOUT)[0] == Err.INVALID_PARAM  # ATTR-05
    assert get(kt, LaunchAttrId.TIMEOUT, null_out=True)[0] == Err.INVALID_PARAM
    p = ok(b.task_get_params(kt))
    ok(b.task_set_params(kt, p))  # cfg None: attributes reset (SETP-08), at once (ATTR-06)
    assert get(kt, LaunchAttrId.SCHEM_MODE) == (0, 0)  # ATTR-04
    assert get(kt, LaunchAttrId.TIMEOUT) == (0, DEFAULT_OP_TIMEOUT_S)  # ATTR-03 default
    p.kernel.cfg = LaunchKernelCfg([LaunchAttr(LaunchAttrId.TIMEOUT_US, (7, 1))])
    ok(b.task_set_params(kt, p))
    assert get(kt, LaunchAttrId.TIMEOUT_US) == (0, (7, 1))
    p.kernel.cfg = LaunchKernelCfg([LaunchAttr(LaunchAttrId.TIMEOUT, 0)])
    ok(b.task_set_params(kt, p))
    assert get(kt, LaunchAttrId.TIMEOUT_US) == (0, (0, 0))  # never
    ok(b.update(m))
    ok(b.execute_async(m, s))
    ok(b.synchronize_stream(s))
    fill = func(b, "fill")
    bad = LaunchKernelCfg([LaunchAttr(77, 1)])
    x = ok(b.malloc(8))
    assert b.launch_kernel_with_host_args(fill, 1, s, bad, fill.spec.pack(out=x, n=1, value=1),
                                          fill.spec.args_size) == Err.RT_PARAM_INVALID
    assert ok(b.task_get_type(kt)) == TaskType.KERNEL


def test_abort(b):
    assert b.abort(None) == Err.RT_PARAM_INVALID  # ABT-03
    s = ok(b.create_stream())
    x = ok(b.malloc(16))
    ok(b.memset(x, 16, 0, 16))
    ok(b.capture_begin(s, 0))
    ok(b.value_wait(x, 1, 1, s))
    ok(b.value_write(x + 8, 5, 0, s))
    m = ok(b.capture_end(s))
    e = ok(b.create_stream())
    ok(b.execute_async(m, e))
    assert b.abort(m) == 0
    assert b.synchronize_stream(e) == Err.RT_MODEL_EXECUTE
    assert b.mem.read_u64(x + 8) == 0
    ok(b.memset(x, 8, 1, 1))
    ok(b.execute_async(m, e))  # ABT-02: executable again
    ok(b.synchronize_stream(e))
    assert b.mem.read_u64(x + 8) == 5
    ok(b.destroy(m))
    assert b.abort(m) == Err.RT_INVALID_HANDLE


def test_callbacks_run_in_the_destroying_thread_and_may_call_apis(b):
    import threading

    from .test_sim_support import in_thread

    m, s = _model(b)
    seen = []

    def cb(data):
        seen.append((threading.current_thread(), b.get_name(m, 32), data))

    ok(b.set_name(m, "named"))
    ok(b.destroy_register_callback(m, cb, "u"))
    assert in_thread(b, lambda: b.destroy(m)) == 0
    (thread, name, data), = seen
    assert thread is not threading.current_thread() and name == (0, "named") and data == "u"
    assert b.callback_errors == []

    m2, _ = _model(b)

    def boom(data):
        raise RuntimeError("callback failed")

    ok(b.destroy_register_callback(m2, boom, None))
    ok(b.destroy(m2))  # recorded, Destroy succeeds
    assert len(b.callback_errors) == 1


def test_external_event_gates_a_captured_model(b):
    """ACL_EVENT_EXTERNAL (0x20) waited on and reset inside a capture, released by a record
    outside the model (the 1_model_update pattern, CHOICES 'external-events')."""
    fill = func(b, "fill")
    s, other = ok(b.create_stream()), ok(b.create_stream())
    ev = ok(b.create_event_with_flag(0x20))
    x = ok(b.malloc(16))
    ok(b.capture_begin(s, 2))
    ok(b.stream_wait_event(s, ev))
    ok(b.reset_event(ev, s))
    assert b.launch_kernel_with_host_args(fill, 1, s, None, fill.spec.pack(out=x, n=1, value=4),
                                          fill.spec.args_size) == 0
    m = ok(b.capture_end(s))
    assert [int(ok(b.task_get_type(t))) for t in tasks(b, streams(b, m)[0])] == \
        [TaskType.EVENT_WAIT, TaskType.EVENT_RESET, TaskType.KERNEL]
    for _ in range(2):
        ok(b.memset(x, 4, 0xFF, 4))
        ok(b.execute_async(m, s))
        assert b.synchronize_stream_with_timeout(s, 50) == Err.RT_STREAM_SYNC_TIMEOUT
        assert b.mem.read(x, 4).tolist() == [0xFF] * 4
        ok(b.record_event(ev, other))
        ok(b.synchronize_stream(s))
        assert b.mem.read(x, 4).tolist() == [4, 0, 0, 0]
    ok(b.destroy(m))
