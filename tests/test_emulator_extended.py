"""Raw-ctypes smoke checks of the emulator's issue-7 exports (the rest of the Model RI API):
task groups, the explicit build path, conditional tasks with the by-value
``aclmdlRICondTaskParams``, names/ids, debug JSON, destroy callbacks (a CFUNCTYPE kept alive),
launch attributes and abort. The full validation is the conformance suite on acl+emulator."""

from __future__ import annotations

import ctypes as C
import json
import shutil
import struct

import numpy as np
import pytest

from mdlri_conformance.backends.acl import structs as S

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc not on PATH")

VP = C.c_void_p
PVP = C.POINTER(VP)
U32 = C.c_uint32

SIGS = {
    "aclInit": (C.c_int, [C.c_char_p]),
    "aclrtSetDevice": (C.c_int, [C.c_int32]),
    "aclrtMalloc": (C.c_int, [PVP, C.c_size_t, C.c_int]),
    "aclrtFree": (C.c_int, [VP]),
    "aclrtMemcpy": (C.c_int, [VP, C.c_size_t, VP, C.c_size_t, C.c_int]),
    "aclrtCreateStream": (C.c_int, [PVP]),
    "aclrtCreateStreamWithConfig": (C.c_int, [PVP, U32, U32]),
    "aclrtDestroyStream": (C.c_int, [VP]),
    "aclrtSynchronizeStream": (C.c_int, [VP]),
    "aclrtSynchronizeStreamWithTimeout": (C.c_int, [VP, C.c_int32]),
    "aclrtCreateEventWithFlag": (C.c_int, [PVP, U32]),
    "aclrtDestroyEvent": (C.c_int, [VP]),
    "aclrtRecordEvent": (C.c_int, [VP, VP]),
    "aclrtStreamWaitEvent": (C.c_int, [VP, VP]),
    "aclrtResetEvent": (C.c_int, [VP, VP]),
    "aclrtBinaryLoadFromFile": (C.c_int, [C.c_char_p, VP, PVP]),
    "aclrtBinaryGetFunction": (C.c_int, [VP, C.c_char_p, PVP]),
    "aclrtLaunchKernelWithHostArgs": (C.c_int, [VP, U32, VP, C.POINTER(S.LaunchKernelCfg), VP,
                                                C.c_size_t, VP, C.c_size_t]),
    "aclmdlRICaptureBegin": (C.c_int, [VP, C.c_int]),
    "aclmdlRICaptureGetInfo": (C.c_int, [VP, C.POINTER(C.c_int), PVP]),
    "aclmdlRICaptureEnd": (C.c_int, [VP, PVP]),
    "aclmdlRIGetStreams": (C.c_int, [VP, PVP, C.POINTER(U32)]),
    "aclmdlRIGetTasksByStream": (C.c_int, [VP, PVP, C.POINTER(U32)]),
    "aclmdlRITaskGetParams": (C.c_int, [VP, C.POINTER(S.TaskParams)]),
    "aclmdlRIExecuteAsync": (C.c_int, [VP, VP]),
    "aclmdlRIDestroy": (C.c_int, [VP]),
    "aclmdlRICaptureTaskGrpBegin": (C.c_int, [VP]),
    "aclmdlRICaptureTaskGrpEnd": (C.c_int, [VP, PVP]),
    "aclmdlRICaptureTaskUpdateBegin": (C.c_int, [VP, VP]),
    "aclmdlRICaptureTaskUpdateEnd": (C.c_int, [VP]),
    "aclmdlRIBuildBegin": (C.c_int, [PVP, U32]),
    "aclmdlRIBindStream": (C.c_int, [VP, VP, U32]),
    "aclmdlRIEndTask": (C.c_int, [VP, VP]),
    "aclmdlRIBuildEnd": (C.c_int, [VP, VP]),
    "aclmdlRIUnbindStream": (C.c_int, [VP, VP]),
    "aclmdlRIExecute": (C.c_int, [VP, C.c_int32]),
    "aclmdlRIAbort": (C.c_int, [VP]),
    "aclmdlRISetName": (C.c_int, [VP, C.c_char_p]),
    "aclmdlRIGetName": (C.c_int, [VP, U32, VP]),
    "aclmdlRIGetId": (C.c_int, [VP, C.POINTER(U32)]),
    "aclmdlRIDebugJsonPrint": (C.c_int, [VP, C.c_char_p, U32]),
    "aclmdlRIDestroyRegisterCallback": (C.c_int, [VP, S.Callback, VP]),
    "aclmdlRIDestroyUnregisterCallback": (C.c_int, [VP, S.Callback]),
    "aclmdlRIKernelTaskGetAttribute": (C.c_int, [VP, C.c_int,
                                                 C.POINTER(S.LaunchKernelAttrValue)]),
    "aclmdlRICondHandleCreate": (C.c_int, [VP, U32, C.c_int, PVP]),
    "aclmdlRICondHandleGetCondPtr": (C.c_int, [VP, PVP]),
    "aclmdlRIAddCondTask": (C.c_int, [S.CondTaskParams, VP, U32]),
    "aclmdlRICaptureToModelRIBegin": (C.c_int, [VP, VP, C.c_int]),
}


@pytest.fixture(scope="module")
def env():
    from mdlri_conformance.backends.acl.emulator.build import emulator_library, kernel_library

    lib = C.CDLL(str(emulator_library()))
    for name, (res, args) in SIGS.items():
        fn = getattr(lib, name)
        fn.restype, fn.argtypes = res, args
    assert lib.aclInit(None) in (0, 100002)
    assert lib.aclrtSetDevice(0) == 0
    b, fill = VP(), VP()
    assert lib.aclrtBinaryLoadFromFile(str(kernel_library()).encode(), None, C.byref(b)) == 0
    assert lib.aclrtBinaryGetFunction(b, b"fill", C.byref(fill)) == 0
    return lib, fill


def _malloc(lib, n: int) -> int:
    p = VP()
    assert lib.aclrtMalloc(C.byref(p), n, 0) == 0
    return p.value


def _stream(lib, flag: int = 0) -> VP:
    s = VP()
    assert lib.aclrtCreateStreamWithConfig(C.byref(s), 0, flag) == 0
    return s


def _fill(lib, fill, stream, out: int, value: int, cfg=None) -> int:
    args = C.create_string_buffer(struct.pack("<Qii", out, 4, value), 16)
    return lib.aclrtLaunchKernelWithHostArgs(fill, 1, stream, cfg, args, 16, None, 0)


def _read(lib, src: int) -> list[int]:
    out = np.zeros(4, dtype=np.int32)
    assert lib.aclrtMemcpy(out.ctypes.data, 16, src, 16, 2) == 0
    return out.tolist()


def _write(lib, dst: int, arr: np.ndarray) -> None:
    assert lib.aclrtMemcpy(dst, arr.nbytes, arr.ctypes.data, arr.nbytes, 1) == 0


def test_task_group_capture_and_update(env) -> None:
    lib, fill = env
    buf = _malloc(lib, 64)
    s, u = _stream(lib), _stream(lib)
    grp, model = VP(0x1234), VP()
    assert lib.aclmdlRICaptureTaskGrpBegin(s) == 107029          # TG-02
    assert lib.aclmdlRICaptureBegin(s, 2) == 0
    assert lib.aclmdlRICaptureTaskGrpEnd(s, C.byref(grp)) == 107033 and grp.value == 0x1234
    assert lib.aclmdlRICaptureTaskGrpBegin(s) == 0
    assert _fill(lib, fill, s, buf, 1) == 0
    assert lib.aclmdlRICaptureTaskGrpEnd(s, C.byref(grp)) == 0 and grp.value != 0x1234
    assert lib.aclmdlRICaptureEnd(s, C.byref(model)) == 0
    streams, n = (VP * 1)(), U32(1)
    assert lib.aclmdlRIGetStreams(model, streams, C.byref(n)) == 0
    tasks, n = (VP * 16)(), U32(16)
    assert lib.aclmdlRIGetTasksByStream(streams[0], tasks, C.byref(n)) == 0
    params = S.TaskParams()
    assert lib.aclmdlRITaskGetParams(tasks[n.value - 1], C.byref(params)) == 0
    assert params.type == 1 and params.taskGrp == grp.value             # TG-09
    assert lib.aclmdlRICaptureTaskUpdateBegin(u, grp) == 0
    assert _fill(lib, fill, u, buf, 5) == 0
    assert _fill(lib, fill, u, buf, 6) == 507000                        # TG-13
    assert lib.aclmdlRICaptureTaskUpdateEnd(u) == 0
    assert lib.aclmdlRICaptureTaskUpdateEnd(u) == 107033
    assert lib.aclmdlRIExecuteAsync(model, u) == 0 and lib.aclrtSynchronizeStream(u) == 0
    assert _read(lib, buf) == [5] * 4
    assert lib.aclmdlRIDestroy(model) == 0
    for x in (s, u):
        assert lib.aclrtDestroyStream(x) == 0
    assert lib.aclrtFree(buf) == 0


def test_build_bind_execute_unbind(env) -> None:
    lib, fill = env
    buf = _malloc(lib, 64)
    p, plain = _stream(lib, 0x4), _stream(lib)
    model = VP()
    assert lib.aclmdlRIBuildBegin(None, 0) == 100000
    assert lib.aclmdlRIBuildBegin(C.byref(model), 1) == 107000
    assert lib.aclmdlRIBuildBegin(C.byref(model), 0) == 0
    assert lib.aclmdlRIBindStream(model, plain, 0) == 107000             # not PERSISTENT
    assert lib.aclmdlRIBindStream(model, p, 1) == 107000                 # bad flag
    assert lib.aclmdlRIBindStream(model, p, 0) == 0
    assert lib.aclmdlRIBindStream(model, p, 0) == 107005
    _write(lib, buf, np.full(4, -1, dtype=np.int32))
    assert _fill(lib, fill, p, buf, 3) == 0
    assert _read(lib, buf) == [-1] * 4                                   # BLD-03
    assert lib.aclmdlRIExecute(model, 1000) == 507011                    # EXE-12
    assert lib.aclmdlRIEndTask(model, p) == 0
    assert lib.aclmdlRIBuildEnd(model, VP(8)) == 100000
    assert lib.aclmdlRIBuildEnd(model, None) == 0
    assert lib.aclmdlRIExecute(model, 0) == 107000                       # EXE-11
    assert lib.aclmdlRIExecute(model, 5000) == 0
    assert _read(lib, buf) == [3] * 4
    assert lib.aclmdlRIAbort(model) == 0
    assert lib.aclmdlRIAbort(None) == 107000
    assert lib.aclmdlRIUnbindStream(model, p) == 0
    assert lib.aclmdlRIUnbindStream(model, p) == 107005
    assert lib.aclmdlRIDestroy(model) == 0
    for x in (p, plain):
        assert lib.aclrtDestroyStream(x) == 0
    assert lib.aclrtFree(buf) == 0


@pytest.mark.parametrize("cond, expect", [(1, 1), (0, 2)])
def test_cond_if_by_value_params(env, cond: int, expect: int) -> None:
    lib, fill = env
    buf = _malloc(lib, 64)
    s, sub, ex = _stream(lib), _stream(lib), _stream(lib)
    parent, handle, ptr = VP(), VP(), VP()
    assert lib.aclmdlRICaptureBegin(s, 2) == 0
    assert lib.aclmdlRICaptureGetInfo(s, None, C.byref(parent)) == 0
    assert lib.aclmdlRICondHandleCreate(parent, 0, 0, C.byref(handle)) == 0
    assert lib.aclmdlRICondHandleGetCondPtr(handle, C.byref(ptr)) == 0 and ptr.value
    subs = (VP * 2)()
    params = S.CondTaskParams(handle=handle, type=0, size=2,
                              modelRIArray=C.cast(subs, PVP))
    assert lib.aclmdlRIAddCondTask(params, s, 1) == 107000               # flags reserved
    assert list(subs) == [None, None]                                    # COND-06
    assert lib.aclmdlRIAddCondTask(params, s, 0) == 0
    assert all(subs) and subs[0] != subs[1]
    for i in range(2):
        assert lib.aclmdlRICaptureToModelRIBegin(sub, subs[i], 2) == 0
        assert _fill(lib, fill, sub, buf, i + 1) == 0
        assert lib.aclmdlRICaptureEnd(sub, None) == 0                    # COND-08
    assert lib.aclmdlRICaptureToModelRIBegin(sub, parent, 2) == 107000   # COND-07
    assert lib.aclmdlRICaptureEnd(s, C.byref(parent)) == 0
    assert lib.aclmdlRIDestroy(subs[0]) == 207000                        # LIFE-05
    _write(lib, ptr.value, np.array([cond], dtype=np.uint64))
    assert lib.aclmdlRIExecuteAsync(parent, ex) == 0 and lib.aclrtSynchronizeStream(ex) == 0
    assert _read(lib, buf) == [expect] * 4                               # COND-11
    assert lib.aclmdlRIDestroy(parent) == 0
    for x in (s, sub, ex):
        assert lib.aclrtDestroyStream(x) == 0
    assert lib.aclrtFree(buf) == 0


def test_names_ids_debug_callbacks_attributes(env, tmp_path) -> None:
    lib, fill = env
    buf = _malloc(lib, 64)
    s = _stream(lib)
    model = VP()
    attrs = (S.LaunchKernelAttr * 2)()
    attrs[0].id, attrs[0].value.timeout = 7, 3
    attrs[1].id, attrs[1].value.schemMode = 1, 1
    cfg = S.LaunchKernelCfg(attrs=C.cast(attrs, C.POINTER(S.LaunchKernelAttr)), numAttrs=2)
    assert lib.aclmdlRICaptureBegin(s, 2) == 0
    assert _fill(lib, fill, s, buf, 1, C.byref(cfg)) == 0
    assert lib.aclmdlRICaptureEnd(s, C.byref(model)) == 0

    streams, n = (VP * 1)(), U32(1)
    assert lib.aclmdlRIGetStreams(model, streams, C.byref(n)) == 0
    task, n = (VP * 1)(), U32(1)
    assert lib.aclmdlRIGetTasksByStream(streams[0], task, C.byref(n)) == 0
    v = S.LaunchKernelAttrValue()
    assert lib.aclmdlRIKernelTaskGetAttribute(task[0], 7, C.byref(v)) == 0 and v.timeout == 3
    assert lib.aclmdlRIKernelTaskGetAttribute(task[0], 8, C.byref(v)) == 0
    assert (v.timeoutUs.timeoutLow, v.timeoutUs.timeoutHigh) == (3_000_000, 0)
    assert lib.aclmdlRIKernelTaskGetAttribute(task[0], 1, C.byref(v)) == 0 and v.schemMode == 1
    assert lib.aclmdlRIKernelTaskGetAttribute(task[0], 3, C.byref(v)) == 107000  # ATTR-02
    assert lib.aclmdlRIKernelTaskGetAttribute(task[0], 1, None) == 100000        # ATTR-05

    name = C.create_string_buffer(16)
    assert lib.aclmdlRIGetName(model, 16, name) == 0 and name.value == b""
    assert lib.aclmdlRISetName(model, b"first") == 0
    assert lib.aclmdlRISetName(model, b"graph") == 0
    assert lib.aclmdlRIGetName(model, 16, name) == 0 and name.value == b"graph"
    assert lib.aclmdlRIGetName(model, 3, name) == 507000                 # NAME-03
    assert lib.aclmdlRIGetName(model, 0, name) == 107000
    mid = U32()
    assert lib.aclmdlRIGetId(model, C.byref(mid)) == 0

    out = tmp_path / "graph.json"
    assert lib.aclmdlRIDebugJsonPrint(model, str(out).encode(), 7) == 0  # DBG-03
    events = json.loads(out.read_text())
    assert events and events[0]["ph"] == "X"
    assert lib.aclmdlRIDebugJsonPrint(model, str(tmp_path / "no" / "x").encode(), 0) == 107000

    seen: list[int] = []
    cb = S.Callback(lambda ud: seen.append(ud))  # kept alive by this frame until Destroy
    other = S.Callback(lambda ud: seen.append(-1))
    assert lib.aclmdlRIDestroyRegisterCallback(model, cb, VP(42)) == 0
    assert lib.aclmdlRIDestroyRegisterCallback(model, cb, VP(43)) == 107000  # LIFE-10
    assert lib.aclmdlRIDestroyRegisterCallback(model, other, None) == 0
    assert lib.aclmdlRIDestroyUnregisterCallback(model, other) == 0
    assert lib.aclmdlRIDestroyUnregisterCallback(model, other) == 107000
    assert lib.aclmdlRIDestroy(model) == 0
    assert seen == [42]                                                  # LIFE-09, LIFE-12
    assert lib.aclrtDestroyStream(s) == 0
    assert lib.aclrtFree(buf) == 0


def test_external_event_gates_a_captured_model(env) -> None:
    """An ACL_EVENT_EXTERNAL event waited on inside the capture is released by a record
    outside the model (the 1_model_update pattern; README CHOICES)."""
    lib, fill = env
    buf = _malloc(lib, 64)
    s, other = _stream(lib), _stream(lib)
    ev, model = VP(), VP()
    assert lib.aclrtCreateEventWithFlag(C.byref(ev), 0x20) == 0
    assert lib.aclmdlRICaptureBegin(s, 2) == 0
    assert lib.aclrtStreamWaitEvent(s, ev) == 0
    assert lib.aclrtResetEvent(ev, s) == 0
    assert _fill(lib, fill, s, buf, 4) == 0
    assert lib.aclmdlRICaptureEnd(s, C.byref(model)) == 0
    _write(lib, buf, np.full(4, -1, dtype=np.int32))
    for _ in range(2):
        assert lib.aclmdlRIExecuteAsync(model, s) == 0
        assert lib.aclrtSynchronizeStreamWithTimeout(s, 50) == 507046     # gated
        assert _read(lib, buf) == [-1] * 4
        assert lib.aclrtRecordEvent(ev, other) == 0
        assert lib.aclrtSynchronizeStream(s) == 0
        assert _read(lib, buf) == [4] * 4
        _write(lib, buf, np.full(4, -1, dtype=np.int32))
    assert lib.aclmdlRIDestroy(model) == 0
    assert lib.aclrtDestroyEvent(ev) == 0
    for x in (s, other):
        assert lib.aclrtDestroyStream(x) == 0
    assert lib.aclrtFree(buf) == 0
