"""The explicit build path and aclmdlRIExecute (BLD-01..BLD-03, BLD-05..BLD-08, EXE-10..EXE-13,
CAP-09, UPD-08/SEQ-08/ERR-11 built-model cells, ERR-19, ERR-27, Q-16, RT-28, RT-32, RT-33, RT-35,
RT-42).

A built model: aclmdlRIBuildBegin, aclmdlRIBindStream of an ACL_STREAM_PERSISTENT stream,
tasks issued on it, aclmdlRIEndTask, aclmdlRIBuildEnd; run with aclmdlRIExecute.

Not tested here: BLD-04 (tasks after BuildEnd make executions "abnormal": undefined).
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

from mdlri_conformance.backends.contract import (
    UNWRITTEN, WAIT_FOREVER, Cap, CaptureMode, Err, MemcpyKind, ModelStreamFlag, StreamFlag,
    TaskType, ValueWaitFlag,
)
from mdlri_conformance.conformance import expect
from mdlri_conformance.conformance.framework import outcomes
from mdlri_conformance.conformance.harness import SYNC_MS, Buf, Dev
from mdlri_conformance.conformance.specs._setups import (
    Case, begin_build, case, persistent_stream, sub_model,
)

pytestmark = pytest.mark.requires(Cap.BUILD, Cap.KERNELS)

X = np.arange(1, 9, dtype=np.int32)
TIMEOUT_MS = 100


@dataclass
class Built:
    model: Any
    stream: Any
    out: Buf


def bound(dev: Dev) -> tuple[Any, Any]:
    """A building model with one persistent stream bound to it: (model, stream)."""
    m = begin_build(dev)
    s = persistent_stream(dev)
    # HEAD: the stream runs from the start (a DEFAULT-flag stream waits for aclrtActiveStream)
    expect.ok(dev.b.bind_stream(m, s, ModelStreamFlag.HEAD), "aclmdlRIBindStream (setup)")
    return m, s


def built(dev: Dev, *, end_task: bool = True, gate: int | None = None) -> Built:
    """A built model running fallback_main(X -> out); ``gate``: a value_wait(word == 1) first."""
    m, s = bound(dev)
    x, out = dev.buffer(X), dev.buffer(n=8)
    if gate is not None:
        expect.ok(dev.b.value_wait(gate, 1, ValueWaitFlag.EQ, s), "aclrtValueWait (setup)")
    dev.launch("fallback_main", s, input=x, output=out)
    if end_task:
        expect.ok(dev.b.end_task(m, s), "aclmdlRIEndTask (setup)")
    expect.ok(dev.b.build_end(m, None), "aclmdlRIBuildEnd (setup)")
    return Built(m, s, out)


def captured(dev: Dev) -> tuple[Any, Any]:
    """A captured model (fallback_main) and its origin stream."""
    s = dev.stream()
    x, out = dev.buffer(X), dev.buffer(n=8)
    dev.begin(s)
    dev.launch("fallback_main", s, input=x, output=out)
    return dev.end(s), s


# ---------------------------------------------------------------------------------------------
# BLD


@pytest.mark.clause("BLD-01")
def test_build_begin_flag_zero(dev: Dev) -> None:
    """BLD-01: BuildBegin with flag 0 returns 0 and a non-NULL model."""
    rc, m = dev.b.build_begin(0)
    expect.ok(rc, "aclmdlRIBuildBegin(flag 0)")
    dev.model(m)
    expect.true(bool(m), "modelRI", "non-NULL", m)


@pytest.mark.clause("BLD-01")
@pytest.mark.parametrize("flag", [1, 0x7FFFFFFF])
def test_build_begin_nonzero_flag(dev: Dev, flag: int) -> None:
    """BLD-01: BuildBegin with a flag other than 0 returns 107000."""
    rc, m = dev.b.build_begin(flag)
    if rc == Err.SUCCESS and m:
        dev.model(m)
    expect.rc(rc, Err.RT_PARAM_INVALID, f"aclmdlRIBuildBegin(flag {flag:#x})")


@pytest.mark.clause("BLD-01")
def test_build_begin_null_model(dev: Dev) -> None:
    """BLD-01: BuildBegin with modelRI == NULL returns 100000."""
    expect.rc(dev.b.build_begin(0, null_model=True)[0], Err.INVALID_PARAM,
              "aclmdlRIBuildBegin(NULL)")


@pytest.mark.clause("BLD-02")
def test_bind_non_persistent_stream(dev: Dev) -> None:
    """BLD-02: binding a stream without ACL_STREAM_PERSISTENT returns 107000."""
    m = begin_build(dev)
    expect.rc(dev.b.bind_stream(m, dev.stream(), ModelStreamFlag.DEFAULT), Err.RT_PARAM_INVALID,
              "aclmdlRIBindStream of an ordinary stream")


@pytest.mark.clause("BLD-02")
@pytest.mark.parametrize("flag", [ModelStreamFlag.HEAD, ModelStreamFlag.DEFAULT],
                         ids=lambda f: f.name)
def test_bind_accepts_head_and_default(dev: Dev, flag: int) -> None:
    """BLD-02: BindStream accepts the flags HEAD (0) and DEFAULT (0x7FFFFFFF)."""
    m = begin_build(dev)
    expect.ok(dev.b.bind_stream(m, persistent_stream(dev), flag), "aclmdlRIBindStream")


@pytest.mark.clause("BLD-02")
@pytest.mark.parametrize("flag", [1, 2, 0x7FFFFFFE])
def test_bind_invalid_flag(dev: Dev, flag: int) -> None:
    """BLD-02: BindStream with a flag other than HEAD/DEFAULT returns 107000."""
    m = begin_build(dev)
    expect.rc(dev.b.bind_stream(m, persistent_stream(dev), flag), Err.RT_PARAM_INVALID,
              f"aclmdlRIBindStream(flag {flag:#x})")


@pytest.mark.clause("BLD-02")
def test_bind_stream_already_bound(dev: Dev) -> None:
    """BLD-02: binding a stream already bound to another model returns 107005."""
    _, s = bound(dev)
    other = begin_build(dev)
    expect.rc(dev.b.bind_stream(other, s, ModelStreamFlag.DEFAULT), Err.RT_STREAM_MODEL,
              "aclmdlRIBindStream of a bound stream")


@pytest.mark.clause("BLD-02")
@pytest.mark.requires(Cap.CAPTURE)
def test_bind_to_captured_model(dev: Dev) -> None:
    """BLD-02: BindStream with a captured modelRI returns 107000."""
    m, _ = captured(dev)
    expect.rc(dev.b.bind_stream(m, persistent_stream(dev), ModelStreamFlag.DEFAULT),
              Err.RT_PARAM_INVALID, "aclmdlRIBindStream to a captured model")


@pytest.mark.clause("BLD-02", "BLD-08")
@pytest.mark.requires(Cap.CAPTURE)
def test_bind_capturing_stream(dev: Dev) -> None:
    """BLD-08: persistence is checked first: a capturing ordinary stream gets 107000, not 107027
    (`api/api_c_model.cc:82-84` before `api/impl/api_error.cc:3905-3908`)."""
    m = begin_build(dev)
    s = dev.stream()
    dev.begin(s)
    expect.rc(dev.b.bind_stream(m, s, ModelStreamFlag.DEFAULT), Err.RT_PARAM_INVALID,
              "aclmdlRIBindStream of a capturing non-persistent stream")


@pytest.mark.clause("RT-23")
def test_bind_refuses_fast_launch_stream(dev: Dev) -> None:
    """RT-23: BindStream of a PERSISTENT | FAST_LAUNCH stream returns 207000
    (`api/impl/api_error.cc:3928-3932`); the model still takes a plain PERSISTENT stream
    afterwards."""
    m = begin_build(dev)
    s = dev.stream(StreamFlag.PERSISTENT | StreamFlag.FAST_LAUNCH)
    expect.rc(dev.b.bind_stream(m, s, ModelStreamFlag.HEAD), Err.RT_FEATURE_NOT_SUPPORT,
              "aclmdlRIBindStream of a PERSISTENT | FAST_LAUNCH stream", clause="RT-23")
    expect.ok(dev.b.bind_stream(m, persistent_stream(dev), ModelStreamFlag.HEAD),
              "aclmdlRIBindStream of a plain PERSISTENT stream after the refusal")


@pytest.mark.clause("CAP-18")
@pytest.mark.requires(Cap.CAPTURE)
def test_bound_cpu_schedule_stream_cannot_capture(dev: Dev) -> None:
    """CAP-18: CaptureBegin and CaptureEnd on a PERSISTENT | CPU_SCHEDULE stream bound to a
    built model return 507000, not the 107005 of a bound stream (ERR-01, ERR-04): the error
    decorator checks the stream's flags before the impl looks at its model
    (`feature/aclgraph/api_error_aclgraph.cc:46-49`, `:59-63`). UNSUPPORTED where BindStream
    does not take such a stream (an AICPU stream binds through the AICPU model path,
    `api/impl/api_impl.cc:4367-4370`)."""
    m = begin_build(dev)
    s = dev.stream(StreamFlag.PERSISTENT | StreamFlag.CPU_SCHEDULE)
    rc = dev.b.bind_stream(m, s, ModelStreamFlag.HEAD)
    if rc != Err.SUCCESS:
        raise outcomes.Unsupported(
            f"aclmdlRIBindStream of a PERSISTENT | CPU_SCHEDULE stream returned {rc}: this "
            "configuration cannot bind the stream the spec needs")
    expect.rc(dev.b.capture_begin(s, CaptureMode.RELAXED), Err.RT_INTERNAL_ERROR,
              "aclmdlRICaptureBegin on a bound CPU_SCHEDULE stream", clause="CAP-18")
    rc, model = dev.b.capture_end(s)
    expect.rc(rc, Err.RT_INTERNAL_ERROR, "aclmdlRICaptureEnd on a bound CPU_SCHEDULE stream",
              clause="CAP-18")
    expect.eq(model, UNWRITTEN, "aclmdlRICaptureEnd model out-parameter", clause="CAP-18")


def capturing_persistent(dev: Dev) -> Any:
    """A PERSISTENT stream with a capture begun on it; UNSUPPORTED where CaptureBegin refuses
    PERSISTENT streams (v200 chips, `feature/aclgraph/v200/capture_adapt_v200.cc:24-33`; the
    910B path accepts them, `v100/capture_adapt_v100.cc:22-33`)."""
    s = persistent_stream(dev)
    rc = dev.b.capture_begin(s, CaptureMode.GLOBAL)
    if rc != Err.SUCCESS:
        raise outcomes.Unsupported(
            f"aclmdlRICaptureBegin on a PERSISTENT stream returned {rc}: this configuration "
            "cannot capture a stream that BindStream accepts")
    return s


@pytest.mark.clause("BLD-02")
@pytest.mark.requires(Cap.CAPTURE)
def test_bind_capturing_persistent_stream(dev: Dev) -> None:
    """BLD-02: binding a PERSISTENT stream that is capturing returns 107027."""
    m = begin_build(dev)
    s = capturing_persistent(dev)
    expect.rc(dev.b.bind_stream(m, s, ModelStreamFlag.DEFAULT), Err.RT_STREAM_CAPTURED,
              "aclmdlRIBindStream of a capturing PERSISTENT stream")


@pytest.mark.clause("BLD-03")
def test_tasks_on_bound_stream_are_stored(dev: Dev) -> None:
    """BLD-03: a kernel issued on a bound stream does not run until Execute; then it does."""
    m, s = bound(dev)
    x, out = dev.buffer(X), dev.buffer(n=8)
    dev.launch("fallback_main", s, input=x, output=out)
    expect.ok(dev.b.end_task(m, s), "aclmdlRIEndTask")
    expect.ok(dev.b.build_end(m, None), "aclmdlRIBuildEnd")
    expect.eq(dev.read(out), np.full(8, -1, dtype=np.int32), "output before Execute")
    expect.ok(dev.b.execute(m, SYNC_MS), "aclmdlRIExecute")
    expect.eq(dev.read(out), X + 10, "output after Execute")


@pytest.mark.clause("BLD-03")
def test_built_model_runs_with_execute_async(dev: Dev) -> None:
    """BLD-03: a built model also runs with ExecuteAsync on an ordinary stream."""
    b = built(dev)
    dev.execute(b.model, dev.stream())
    expect.eq(dev.read(b.out), X + 10, "output after ExecuteAsync")


@pytest.mark.clause("BLD-05")
def test_build_end_reserve_not_null(dev: Dev) -> None:
    """BLD-05: BuildEnd with reserve != NULL returns 100000."""
    m, s = bound(dev)
    expect.ok(dev.b.end_task(m, s), "aclmdlRIEndTask (setup)")
    expect.rc(dev.b.build_end(m, 1), Err.INVALID_PARAM, "aclmdlRIBuildEnd(reserve != NULL)")


@pytest.mark.clause("BLD-05")
@pytest.mark.requires(Cap.CAPTURE)
def test_build_end_captured_model(dev: Dev) -> None:
    """BLD-05: BuildEnd on a captured modelRI returns 107000."""
    m, _ = captured(dev)
    expect.rc(dev.b.build_end(m, None), Err.RT_PARAM_INVALID,
              "aclmdlRIBuildEnd of a captured model")


@pytest.mark.clause("BLD-06", "UPD-08")
@pytest.mark.requires(Cap.UPDATE)
def test_update_built_model(dev: Dev) -> None:
    """BLD-06, UPD-08: aclmdlRIUpdate on a built model returns 207000."""
    expect.rc(dev.b.update(built(dev).model), Err.RT_FEATURE_NOT_SUPPORT,
              "aclmdlRIUpdate of a built model")


def _built_task(dev: Dev, b: Built) -> Any:
    tasks = [t for t in dev.tasks_of(b.stream) if dev.type_of(t) == TaskType.KERNEL]
    expect.eq(len(tasks), 1, "kernel tasks of the built model (setup)")
    return tasks[0]


@pytest.mark.clause("BLD-06")
@pytest.mark.requires(Cap.LISTING, Cap.TASK_TYPE, Cap.SET_PARAMS)
def test_set_params_built_model(dev: Dev) -> None:
    """BLD-06: SetParams on a built model's kernel returns 207000."""
    b = built(dev)
    task = _built_task(dev, b)
    params = dev.kernel_params("fallback_main", input=b.out, output=b.out)
    expect.rc(dev.b.task_set_params(task, params), Err.RT_FEATURE_NOT_SUPPORT,
              "aclmdlRITaskSetParams on a built model")


@pytest.mark.clause("BLD-06")
@pytest.mark.requires(Cap.LISTING, Cap.TASK_TYPE, Cap.DISABLE)
def test_disable_built_model(dev: Dev) -> None:
    """BLD-06: Disable on a built model's kernel returns 207000."""
    b = built(dev)
    expect.rc(dev.b.task_disable(_built_task(dev, b)), Err.RT_FEATURE_NOT_SUPPORT,
              "aclmdlRITaskDisable on a built model")


@pytest.mark.clause("BLD-06", "SEQ-08", "ERR-11")
@pytest.mark.requires(Cap.LISTING, Cap.TASK_TYPE, Cap.SEQ_ID)
def test_seq_id_built_model(dev: Dev) -> None:
    """BLD-06, SEQ-08, ERR-11: GetSeqId of a built model's task returns 207000."""
    b = built(dev)
    rc, _ = dev.b.task_get_seq_id(_built_task(dev, b))
    expect.rc(rc, Err.RT_FEATURE_NOT_SUPPORT, "aclmdlRITaskGetSeqId on a built model")


@pytest.mark.clause("BLD-06")
@pytest.mark.requires(Cap.LISTING)
def test_get_streams_built_model(dev: Dev) -> None:
    """BLD-06: GetStreams of a built model returns the bound user streams, last bound first."""
    m = begin_build(dev)
    s1, s2 = persistent_stream(dev), persistent_stream(dev)
    for s in (s1, s2):
        expect.ok(dev.b.bind_stream(m, s, ModelStreamFlag.DEFAULT), "aclmdlRIBindStream (setup)")
        expect.ok(dev.b.end_task(m, s), "aclmdlRIEndTask (setup)")
    expect.ok(dev.b.build_end(m, None), "aclmdlRIBuildEnd (setup)")
    expect.eq(dev.streams_of(m), [s2, s1], "GetStreams of the built model")


@pytest.mark.clause("BLD-07")
@pytest.mark.requires(Cap.CAPTURE)
def test_unbind_captured_model(dev: Dev) -> None:
    """BLD-07: UnbindStream with a captured modelRI returns 107000."""
    m, s = captured(dev)
    expect.rc(dev.b.unbind_stream(m, s), Err.RT_PARAM_INVALID,
              "aclmdlRIUnbindStream with a captured model")


@pytest.mark.clause("BLD-07")
@pytest.mark.requires(Cap.CAPTURE)
def test_unbind_capturing_stream(dev: Dev) -> None:
    """BLD-07: UnbindStream of a stream that is capturing returns 107027."""
    m = begin_build(dev)
    s = dev.stream()
    dev.begin(s)
    expect.rc(dev.b.unbind_stream(m, s), Err.RT_STREAM_CAPTURED,
              "aclmdlRIUnbindStream of a capturing stream")


def _not_bound(dev: Dev, which: str) -> tuple[Any, Any]:
    """A stream that is not bound to a new building model, and the model it is bound to
    (None when it is bound to none): an unbound PERSISTENT stream, a plain stream, a stream
    bound to another building model, or NULL (the default stream on 910B,
    `core/src/runtime.cc:6017-6024`)."""
    if which == "unbound_persistent":
        return persistent_stream(dev), None
    if which == "plain":
        return dev.stream(), None
    if which == "bound_elsewhere":
        other, t = bound(dev)
        return t, other
    return None, None


NOT_BOUND = ["unbound_persistent", "plain", "bound_elsewhere", "null"]


@pytest.mark.clause("RT-32", "ERR-27")
@pytest.mark.parametrize("which", NOT_BOUND)
def test_end_task_stream_not_bound(dev: Dev, which: str) -> None:
    """RT-32: aclmdlRIEndTask(m, s) with s not bound to m returns 507000 and adds no end task
    (STARS: `core/src/context/context.cc:2110-2115`): BuildEnd of m, and of the model s is
    bound to, still answers 507011 (EXE-12). A NULL stream is the default stream, which is
    never bound."""
    m, _ = bound(dev)
    t, other = _not_bound(dev, which)
    expect.rc(dev.b.end_task(m, t), Err.RT_INTERNAL_ERROR,
              f"aclmdlRIEndTask on a stream not bound to the model ({which})", clause="RT-32")
    expect.rc(dev.b.build_end(m, None), Err.RT_MODEL_EXECUTE,
              "aclmdlRIBuildEnd after the refused EndTask (no end task added)")
    if other is not None:
        expect.rc(dev.b.build_end(other, None), Err.RT_MODEL_EXECUTE,
                  "aclmdlRIBuildEnd of the stream's own model (no end task added)")


@pytest.mark.clause("RT-32", "ERR-27")
@pytest.mark.requires(Cap.CAPTURE)
def test_end_task_capturing_stream(dev: Dev) -> None:
    """RT-32: aclmdlRIEndTask on a capturing stream returns 107027, before the not-bound
    507000 (`api/impl/api_error.cc:4239-4242`), and adds no end task."""
    m, _ = bound(dev)
    s = dev.stream()
    dev.begin(s)
    expect.rc(dev.b.end_task(m, s), Err.RT_STREAM_CAPTURED,
              "aclmdlRIEndTask on a capturing stream", clause="RT-32")
    expect.rc(dev.b.build_end(m, None), Err.RT_MODEL_EXECUTE,
              "aclmdlRIBuildEnd after the refused EndTask (no end task added)")


@pytest.mark.clause("RT-33", "ERR-27")
@pytest.mark.parametrize("which", [*NOT_BOUND, "already_unbound"])
def test_unbind_stream_not_bound(dev: Dev, which: str) -> None:
    """RT-33: aclmdlRIUnbindStream(m, s) with s not bound to m returns 107005
    (Model::UnbindStream, `feature/model/model.cc:604-608`); a stream bound to another model
    stays bound to it (its EndTask still returns 0)."""
    m, s = bound(dev)
    if which == "already_unbound":
        expect.ok(dev.b.unbind_stream(m, s), "aclmdlRIUnbindStream (setup)")
        t, other = s, None
    else:
        t, other = _not_bound(dev, which)
    expect.rc(dev.b.unbind_stream(m, t), Err.RT_STREAM_MODEL,
              f"aclmdlRIUnbindStream of a stream not bound to the model ({which})",
              clause="RT-33")
    if other is not None:
        expect.ok(dev.b.end_task(other, t), "aclmdlRIEndTask on the stream's own model")


@pytest.mark.clause("RT-42", "RT-33")
def test_unbind_stream_after_build_end(dev: Dev) -> None:
    """RT-42: aclmdlRIUnbindStream of a stream bound to a model after aclmdlRIBuildEnd
    returns 0: no layer checks whether the model was built (Model::UnbindStream,
    `feature/model/model.cc:597-630`). The stream is then no longer the model's: a second
    Unbind is 107005 (RT-33), and it binds to another building model (0; a stream still bound
    would be 107005)."""
    b = built(dev)
    expect.rc(dev.b.unbind_stream(b.model, b.stream), Err.SUCCESS,
              "aclmdlRIUnbindStream after aclmdlRIBuildEnd", clause="RT-42")
    expect.rc(dev.b.unbind_stream(b.model, b.stream), Err.RT_STREAM_MODEL,
              "aclmdlRIUnbindStream of the unbound stream again", clause="RT-42")
    other = begin_build(dev)
    expect.rc(dev.b.bind_stream(other, b.stream, ModelStreamFlag.HEAD), Err.SUCCESS,
              "aclmdlRIBindStream of the unbound stream to another model", clause="RT-42")


@pytest.mark.clause("BLD-02", "BLD-05", "BLD-07", "ERR-27")
@pytest.mark.requires(Cap.CAPTURE, Cap.COND)
@pytest.mark.parametrize("api", ["bind_stream", "end_task", "build_end", "unbind_stream"])
def test_build_apis_reject_sub_model(dev: Dev, api: str) -> None:
    """BLD-02, BLD-05, BLD-07, ERR-27: a sub-model is a capture model, so BindStream (with a
    fresh PERSISTENT stream), EndTask, BuildEnd and UnbindStream of it return 107000 like for
    any captured model (`api/impl/api_error.cc:3902-3904`, `:4236-4238`, `:3978-3980`,
    `:3958-3960`); none of these decorators has the sub-model 207000 of Abort or Destroy."""
    sub, p = sub_model(dev), persistent_stream(dev)
    rc = {
        "bind_stream": lambda: dev.b.bind_stream(sub, p, ModelStreamFlag.HEAD),
        "end_task": lambda: dev.b.end_task(sub, p),
        "build_end": lambda: dev.b.build_end(sub, None),
        "unbind_stream": lambda: dev.b.unbind_stream(sub, p),
    }[api]()
    expect.rc(rc, Err.RT_PARAM_INVALID, f"{api} of a sub-model")


@pytest.mark.clause("CAP-09")
@pytest.mark.requires(Cap.CAPTURE)
def test_capture_bound_stream(dev: Dev) -> None:
    """CAP-09: CaptureBegin on a stream bound to a model returns 107005."""
    _, s = bound(dev)
    expect.rc(dev.b.capture_begin(s, CaptureMode.RELAXED), Err.RT_STREAM_MODEL,
              "aclmdlRICaptureBegin of a bound stream")


# ---------------------------------------------------------------------------------------------
# EXE-10 .. EXE-13: aclmdlRIExecute


@pytest.mark.clause("EXE-10")
@pytest.mark.requires(Cap.CAPTURE)
def test_execute_rejects_captured_model(dev: Dev) -> None:
    """EXE-10: aclmdlRIExecute on a captured modelRI returns 107000."""
    m, _ = captured(dev)
    expect.rc(dev.b.execute(m, SYNC_MS), Err.RT_PARAM_INVALID,
              "aclmdlRIExecute of a captured model")


@pytest.mark.clause("EXE-10")
@pytest.mark.requires(Cap.CAPTURE, Cap.COND)
def test_execute_rejects_sub_model(dev: Dev) -> None:
    """EXE-10: aclmdlRIExecute of a sub-model returns 107000, as for any capture model
    (`api/impl/api_error.cc:4039-4041`): the synchronous decorator has no sub-model case, unlike
    ExecuteAsync's 207000 (EXE-08)."""
    expect.rc(dev.b.execute(sub_model(dev), SYNC_MS), Err.RT_PARAM_INVALID,
              "aclmdlRIExecute of a sub-model")


@pytest.mark.clause("EXE-11")
@pytest.mark.parametrize("timeout", [0, -2, -1000])
def test_execute_invalid_timeout(dev: Dev, timeout: int) -> None:
    """EXE-11: aclmdlRIExecute with timeout 0 or < -1 returns 107000."""
    b = built(dev)
    expect.rc(dev.b.execute(b.model, timeout), Err.RT_PARAM_INVALID,
              f"aclmdlRIExecute(timeout {timeout})")
    expect.eq(dev.read(b.out), np.full(8, -1, dtype=np.int32), "output after the refused Execute")


@pytest.mark.clause("EXE-11")
@pytest.mark.parametrize("timeout", [WAIT_FOREVER, SYNC_MS])
def test_execute_valid_timeout(dev: Dev, timeout: int) -> None:
    """EXE-11: aclmdlRIExecute with -1 or a positive timeout runs the model to completion."""
    b = built(dev)
    expect.ok(dev.b.execute(b.model, timeout), f"aclmdlRIExecute(timeout {timeout})")
    expect.eq(dev.read(b.out), X + 10, "output after Execute")


@pytest.mark.clause("EXE-11")
@pytest.mark.requires(Cap.VALUE_TASKS, Cap.THREADS, Cap.BLOCKING_WAIT)
def test_execute_minus_one_waits_for_blocked_model(dev: Dev) -> None:
    """EXE-11: timeout -1 has no deadline: aclmdlRIExecute(-1) of a built model blocked on a
    device word returns 0 only after another thread writes the word (0.3 s later), with the
    model's output written."""
    gate = dev.buffer64(0)
    b = built(dev, gate=gate)
    box: dict[str, Any] = {}

    def release() -> None:
        box["set_device"] = dev.b.set_device(0)
        time.sleep(0.3)
        box["at"] = time.monotonic()  # before the write: Execute cannot end earlier
        box["write"] = dev.b.memcpy(gate, 8, np.array([1], dtype=np.uint64), 8,
                                    MemcpyKind.HOST_TO_DEVICE)

    worker = threading.Thread(target=release, name="mdlri-spec-release")
    worker.start()
    try:
        rc = dev.b.execute(b.model, WAIT_FOREVER)
        ended = time.monotonic()
    finally:
        worker.join(30.0)
    expect.ok(box.get("set_device", -1), "aclrtSetDevice in the releasing thread (setup)")
    expect.ok(box.get("write", -1), "release of the device word (setup)")
    expect.ok(rc, "aclmdlRIExecute(-1) of a blocked model")
    expect.true(ended >= box["at"], "aclmdlRIExecute(-1) returned after the release",
                "after the release", f"{(box['at'] - ended) * 1000:.1f} ms before it")
    expect.eq(dev.read(b.out), X + 10, "output after aclmdlRIExecute(-1)")


@pytest.mark.clause("EXE-11", "LIFE-01")
def test_destroy_after_execute(dev: Dev) -> None:
    """EXE-11, LIFE-01: aclmdlRIExecute is synchronous, so when it has returned 0 the model is
    no longer running (Model::SynchronizeExecute waits for the end, `feature/model/model.cc:
    1105-1135`) and aclmdlRIDestroy returns 0, not the running-model code 107037 (ERR-20)."""
    b = built(dev)
    expect.ok(dev.b.execute(b.model, SYNC_MS), "aclmdlRIExecute")
    expect.ok(dev.b.execute(b.model, SYNC_MS), "aclmdlRIExecute (second run)")
    expect.rc(dev.destroy(b.model), Err.SUCCESS, "aclmdlRIDestroy after two aclmdlRIExecute")


@pytest.mark.clause("EXE-11")
@pytest.mark.requires(Cap.CAPTURE)
def test_execute_timeout_checked_before_model_type(dev: Dev) -> None:
    """EXE-11: the timeout is checked before the model type (timeout 0 on a captured model: 107000)."""
    m, _ = captured(dev)
    expect.rc(dev.b.execute(m, 0), Err.RT_PARAM_INVALID, "aclmdlRIExecute(captured, timeout 0)")


@pytest.mark.clause("RT-35", "LIFE-06")
@pytest.mark.requires(Cap.HANDLE_VALIDATION)
def test_execute_destroyed_model_timeout_zero(dev: Dev) -> None:
    """RT-35, LIFE-06: aclmdlRIExecute(destroyed model, 0) returns 107017, not the invalid
    timeout's 107000: rtsModelExecute validates the handle (`api/api_c_model.cc:137`) before
    the decorator checks the timeout (`api/impl/api_error.cc:4033-4035`)."""
    b = built(dev)
    expect.ok(dev.destroy(b.model), "aclmdlRIDestroy (setup)")
    expect.rc(dev.b.execute(b.model, 0), Err.RT_INVALID_HANDLE,
              "aclmdlRIExecute(destroyed model, timeout 0)", clause="RT-35")


@pytest.mark.clause("EXE-12")
def test_execute_without_end_task(dev: Dev) -> None:
    """EXE-12: on STARS chips aclmdlRIBuildEnd of a model without aclmdlRIEndTask returns 507011
    (`feature/model/model.cc:969-973`); the Execute-time check (`model.cc:1123-1127`) is then
    unreachable."""
    m, s = bound(dev)
    dev.launch("fallback_main", s, input=dev.buffer(X), output=dev.buffer(n=8))
    expect.rc(dev.b.build_end(m, None), Err.RT_MODEL_EXECUTE, "aclmdlRIBuildEnd without EndTask")


@pytest.mark.clause("RT-28")
def test_execute_async_before_build_end(dev: Dev) -> None:
    """RT-28: aclmdlRIExecuteAsync of a built model that has its EndTask but no aclmdlRIBuildEnd
    returns 507011 and runs nothing (`feature/model/model.cc:1302-1307`: isModelComplete_ is
    set by BuildEnd only); after BuildEnd the same model runs."""
    m, s = bound(dev)
    x, out = dev.buffer(X), dev.buffer(n=8)
    dev.launch("fallback_main", s, input=x, output=out)
    expect.ok(dev.b.end_task(m, s), "aclmdlRIEndTask (setup)")
    run = dev.stream()
    expect.rc(dev.b.execute_async(m, run), Err.RT_MODEL_EXECUTE,
              "aclmdlRIExecuteAsync before aclmdlRIBuildEnd")
    dev.sync(run)
    expect.eq(dev.read(out), np.full(8, -1, dtype=np.int32), "output (nothing executed)")
    expect.ok(dev.b.build_end(m, None), "aclmdlRIBuildEnd")
    dev.execute(m, run)
    expect.eq(dev.read(out), X + 10, "output after BuildEnd and ExecuteAsync")


@pytest.mark.clause("EXE-13", "Q-16")
@pytest.mark.requires(Cap.VALUE_TASKS)
@pytest.mark.requires(Cap.BLOCKING_WAIT)
def test_execute_timeout_expiry(dev: Dev, fingerprint: Any) -> None:
    """EXE-13: a blocked built model makes aclmdlRIExecute return 507046 after at least the timeout
    (the host deadline of the model stream's sync, `core/src/stream/stream.cc:1958`,
    `core/src/common/errcode_manage.cc:140`)."""
    gate = dev.buffer64(0)
    b = built(dev, gate=gate)
    t0 = time.monotonic()
    try:
        rc = dev.b.execute(b.model, TIMEOUT_MS)
        elapsed = (time.monotonic() - t0) * 1000.0
    finally:
        dev.write64(gate, 1)
    fingerprint.record("Q-16:rc", rc)
    # the second run drains the model (the gate is open now) so nothing is left blocked
    fingerprint.record("Q-16:rerun", dev.b.execute(b.model, SYNC_MS))
    fingerprint.record("Q-16:output", dev.read(b.out).tolist())
    expect.rc(rc, Err.RT_STREAM_SYNC_TIMEOUT, "aclmdlRIExecute rc on expiry")
    expect.true(elapsed >= TIMEOUT_MS - 2, "elapsed ms", f">= {TIMEOUT_MS}", round(elapsed, 1))


# ---------------------------------------------------------------------------------------------
# ERR-19, ERR-27


def _exec_null(dev: Dev) -> int:
    return dev.b.execute(None, SYNC_MS)


def _exec_timeout_zero(dev: Dev) -> int:
    return dev.b.execute(built(dev).model, 0)


def _exec_timeout_below(dev: Dev) -> int:
    return dev.b.execute(built(dev).model, -7)


def _exec_captured(dev: Dev) -> int:
    return dev.b.execute(captured(dev)[0], SYNC_MS)


def _exec_no_end_task(dev: Dev) -> int:
    # STARS refuses BuildEnd itself (EXE-12, `feature/model/model.cc:969-973`)
    m, s = bound(dev)
    dev.launch("fallback_main", s, input=dev.buffer(X), output=dev.buffer(n=8))
    return dev.b.build_end(m, None)


@pytest.mark.clause("ERR-19")
@pytest.mark.parametrize("make, expected", [
    case(_exec_null, Err.INVALID_PARAM),
    case(_exec_timeout_zero, Err.RT_PARAM_INVALID),
    case(_exec_timeout_below, Err.RT_PARAM_INVALID),
    case(_exec_captured, Err.RT_PARAM_INVALID, Cap.CAPTURE),
    case(_exec_no_end_task, Err.RT_MODEL_EXECUTE),
])
def test_err19_execute(dev: Dev, make: Case, expected: int) -> None:
    """ERR-19: aclmdlRIExecute returns the error of its error-table cell."""
    expect.rc(make(dev), expected, "aclmdlRIExecute")


def _bb_null(dev: Dev) -> int:
    return dev.b.build_begin(0, null_model=True)[0]


def _bb_flag(dev: Dev) -> int:
    rc, m = dev.b.build_begin(3)
    if rc == Err.SUCCESS and m:
        dev.model(m)
    return rc


def _bind_null_model(dev: Dev) -> int:
    return dev.b.bind_stream(None, persistent_stream(dev), ModelStreamFlag.DEFAULT)


def _bind_non_persistent(dev: Dev) -> int:
    return dev.b.bind_stream(begin_build(dev), dev.stream(), ModelStreamFlag.DEFAULT)


def _bind_bad_flag(dev: Dev) -> int:
    return dev.b.bind_stream(begin_build(dev), persistent_stream(dev), 5)


def _bind_destroyed_model(dev: Dev) -> int:
    # a destroyed handle is UB on hardware (LIFE-06); backends that validate handles say 107017
    m = begin_build(dev)
    expect.ok(dev.destroy(m), "aclmdlRIDestroy (setup)")
    return dev.b.bind_stream(m, persistent_stream(dev), ModelStreamFlag.DEFAULT)


def _bind_captured_model(dev: Dev) -> int:
    return dev.b.bind_stream(captured(dev)[0], persistent_stream(dev), ModelStreamFlag.DEFAULT)


def _bind_already_bound(dev: Dev) -> int:
    _, s = bound(dev)
    return dev.b.bind_stream(begin_build(dev), s, ModelStreamFlag.DEFAULT)


def _bind_capturing(dev: Dev) -> int:
    s = dev.stream()
    m = begin_build(dev)
    dev.begin(s)
    return dev.b.bind_stream(m, s, ModelStreamFlag.DEFAULT)


def _bind_capturing_persistent(dev: Dev) -> int:
    m = begin_build(dev)
    return dev.b.bind_stream(m, capturing_persistent(dev), ModelStreamFlag.DEFAULT)


def _end_task_null(dev: Dev) -> int:
    return dev.b.end_task(None, persistent_stream(dev))


def _build_end_null(dev: Dev) -> int:
    return dev.b.build_end(None, None)


def _build_end_reserve(dev: Dev) -> int:
    m, s = bound(dev)
    dev.b.end_task(m, s)
    return dev.b.build_end(m, 1)


def _build_end_captured(dev: Dev) -> int:
    return dev.b.build_end(captured(dev)[0], None)


def _unbind_null(dev: Dev) -> int:
    return dev.b.unbind_stream(None, persistent_stream(dev))


def _unbind_captured(dev: Dev) -> int:
    m, s = captured(dev)
    return dev.b.unbind_stream(m, s)


def _unbind_capturing(dev: Dev) -> int:
    s = dev.stream()
    m = begin_build(dev)
    dev.begin(s)
    return dev.b.unbind_stream(m, s)


@pytest.mark.clause("ERR-27")
@pytest.mark.parametrize("make, expected", [
    case(_bb_null, Err.INVALID_PARAM),
    case(_bb_flag, Err.RT_PARAM_INVALID),
    case(_bind_null_model, Err.INVALID_PARAM),
    case(_bind_non_persistent, Err.RT_PARAM_INVALID),
    case(_bind_bad_flag, Err.RT_PARAM_INVALID),
    case(_bind_destroyed_model, Err.RT_INVALID_HANDLE, Cap.HANDLE_VALIDATION),
    case(_bind_captured_model, Err.RT_PARAM_INVALID, Cap.CAPTURE),
    case(_bind_already_bound, Err.RT_STREAM_MODEL),
    case(_bind_capturing, Err.RT_PARAM_INVALID, Cap.CAPTURE),
    case(_bind_capturing_persistent, Err.RT_STREAM_CAPTURED, Cap.CAPTURE),
    case(_end_task_null, Err.INVALID_PARAM),
    case(_build_end_null, Err.INVALID_PARAM),
    case(_build_end_reserve, Err.INVALID_PARAM),
    case(_build_end_captured, Err.RT_PARAM_INVALID, Cap.CAPTURE),
    case(_unbind_null, Err.INVALID_PARAM),
    case(_unbind_captured, Err.RT_PARAM_INVALID, Cap.CAPTURE),
    case(_unbind_capturing, Err.RT_STREAM_CAPTURED, Cap.CAPTURE),
])
def test_err27_build_apis(dev: Dev, make: Case, expected: int) -> None:
    """ERR-27: BuildBegin/BindStream/EndTask/BuildEnd/UnbindStream return their error-table cells."""
    expect.rc(make(dev), expected, "build API")
