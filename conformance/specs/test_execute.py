"""Executing captured models: aclmdlRIExecuteAsync (EXE-01..EXE-09, EXE-15, EXE-17; RT-29, the
order of its checks).

Not tested here:

* EXE-08 (sub-model) alone: test_cond.py; here only against the stream checks (RT-29).
* EXE-10, EXE-11, EXE-12, EXE-13 (aclmdlRIExecute, the synchronous variant): not in the
  contract. EXE-13 would also need it.
* EXE-14 (stream from another context): the contract has no contexts.
* EXE-16 (ACL_STREAM_FORBIDDEN_DEFAULT streams): the contract has no such stream flag.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np
import pytest

from mdlri_conformance.backends.contract import Cap, CondTaskType, Err, ModelStreamFlag, err_name
from mdlri_conformance.conformance import expect
from mdlri_conformance.conformance.harness import SENTINEL, Buf, Dev
from mdlri_conformance.conformance.specs._setups import (
    Case, add, begin_build, bound_stream, capture_sub, case, faulted_model, parent,
    persistent_stream, update_mode_stream,
)

pytestmark = pytest.mark.requires(Cap.CAPTURE, Cap.KERNELS)

X = np.arange(1, 9, dtype=np.int32)


def main_model(dev: Dev, s: Any, x: Buf, out: Buf) -> Any:
    """Capture fallback_main(x -> out) on ``s``."""
    dev.begin(s)
    dev.launch("fallback_main", s, input=x, output=out)
    return dev.end(s)


# ---------------------------------------------------------------------------------------------
# EXE-01 .. EXE-03


@pytest.mark.clause("EXE-01")
def test_execute_is_stream_ordered(dev: Dev) -> None:
    """EXE-01: the model runs after earlier work on the stream and before later work on it."""
    cap, s = dev.stream(), dev.stream()
    x, mid, after = dev.buffer(X), dev.buffer(n=8), dev.buffer(n=8)
    model = main_model(dev, cap, x, mid)
    value = 40
    dev.launch("fill", s, out=x, n=8, value=value)          # before: the model must read 40s
    expect.ok(dev.b.execute_async(model, s), "aclmdlRIExecuteAsync")
    dev.launch("copy", s, src=mid, dst=after, n=8)          # after: must see the model's output
    dev.sync(s)
    expect.eq(dev.read(mid), np.full(8, value + 10), "model output (input written before it)")
    expect.eq(dev.read(after), np.full(8, value + 10), "copy enqueued after the model")


@pytest.mark.clause("EXE-01")
@pytest.mark.requires(Cap.VALUE_TASKS, Cap.THREADS)
@pytest.mark.requires(Cap.BLOCKING_WAIT)
def test_execute_async_returns_before_completion(dev: Dev) -> None:
    """EXE-01: ExecuteAsync returns while the model is still blocked; sync waits for it."""
    s = dev.stream()
    flag = dev.buffer64(0)
    x, out = dev.buffer(X), dev.buffer(n=8)
    model = dev.gated(s, flag, "fallback_main", input=x, output=out)
    result: dict[str, int] = {}
    returned = threading.Event()

    def enqueue() -> None:
        dev.b.set_device(0)
        result["rc"] = dev.b.execute_async(model, s)
        returned.set()

    t = threading.Thread(target=enqueue, daemon=True)
    t.start()
    try:
        came_back = returned.wait(2.0)
        expect.true(came_back, "aclmdlRIExecuteAsync returned while the model is blocked",
                    "returned within 2 s", "still blocked")
        expect.ok(result["rc"], "aclmdlRIExecuteAsync")
        expect.eq(dev.read(out), np.full(8, SENTINEL), "output while the model is blocked")
    finally:
        dev.write64(flag, 1)
        t.join(5.0)
    dev.sync(s)
    expect.eq(dev.read(out), X + 10, "output after sync")


@pytest.mark.clause("EXE-02")
def test_repeated_execution_reapplies_effects(dev: Dev) -> None:
    """EXE-02: N executions of an accumulating model add its input N times."""
    s = dev.stream()
    acc0 = np.arange(100, 108, dtype=np.int32)
    acc, x = dev.buffer(acc0), dev.buffer(X * 3)
    dev.begin(s)
    dev.launch("accumulate", s, acc=acc, x=x, n=8)
    model = dev.end(s)
    expect.eq(dev.read(acc), acc0, "accumulator after capture (nothing executed)")
    for k in range(1, 4):
        dev.execute(model, s)
        expect.eq(dev.read(acc), acc0 + k * X * 3, f"accumulator after {k} execution(s)")


@pytest.mark.clause("EXE-03")
def test_origin_stream_executes_its_model(dev: Dev) -> None:
    """EXE-03: the stream that captured the model can execute it after CaptureEnd."""
    s = dev.stream()
    x, out = dev.buffer(X), dev.buffer(n=8)
    model = main_model(dev, s, x, out)
    expect.ok(dev.b.execute_async(model, s), "aclmdlRIExecuteAsync on the origin stream")
    dev.sync(s)
    expect.eq(dev.read(out), X + 10, "output")


# ---------------------------------------------------------------------------------------------
# EXE-04 .. EXE-09


@pytest.mark.clause("EXE-04")
def test_execute_capturing_model(dev: Dev) -> None:
    """EXE-04: executing a model that is still capturing returns 107026."""
    s, other = dev.stream(), dev.stream()
    x, out = dev.buffer(X), dev.buffer(n=8)
    dev.begin(s)
    dev.launch("fallback_main", s, input=x, output=out)
    rc, _, capturing = dev.b.capture_get_info(s)
    expect.ok(rc, "aclmdlRICaptureGetInfo (setup)")
    expect.rc(dev.b.execute_async(capturing, other), Err.RT_MODEL_CAPTURED,
              "aclmdlRIExecuteAsync of a capturing model")
    dev.end(s)
    dev.sync(other)
    expect.eq(dev.read(out), np.full(8, SENTINEL), "output (nothing executed)")


@pytest.mark.clause("EXE-05")
def test_execute_on_capturing_stream(dev: Dev) -> None:
    """EXE-05: executing a model on a capturing stream returns 107027."""
    s, other = dev.stream(), dev.stream()
    x, out, scratch = dev.buffer(X), dev.buffer(n=8), dev.buffer(n=8)
    model = main_model(dev, s, x, out)
    dev.begin(other)
    dev.launch("fill", other, out=scratch, n=8, value=3)
    expect.rc(dev.b.execute_async(model, other), Err.RT_STREAM_CAPTURED,
              "aclmdlRIExecuteAsync on a capturing stream")
    dev.end(other)


@pytest.mark.clause("EXE-06")
@pytest.mark.requires(Cap.LISTING)
def test_execute_on_model_stream(dev: Dev) -> None:
    """EXE-06: executing on a stream obtained from GetStreams returns 107000."""
    s = dev.stream()
    x, out = dev.buffer(X), dev.buffer(n=8)
    model = main_model(dev, s, x, out)
    internal = dev.streams_of(model)
    expect.true(len(internal) >= 1, "GetStreams (setup)", ">= 1 stream", len(internal))
    expect.rc(dev.b.execute_async(model, internal[0]), Err.RT_PARAM_INVALID,
              "aclmdlRIExecuteAsync on the model's own stream")


@pytest.mark.clause("EXE-07")
@pytest.mark.requires(Cap.LISTING, Cap.TASK_TYPE, Cap.SET_PARAMS)
def test_execute_updating_model(dev: Dev) -> None:
    """EXE-07: executing a model with a pending SetParams (UPDATING) returns 507011."""
    s = dev.stream()
    x, out = dev.buffer(X), dev.buffer(n=8)
    model = main_model(dev, s, x, out)
    (k,) = dev.kernel_tasks(model)
    params = dev.kernel_params("fallback_main", input=x, output=out)
    expect.ok(dev.b.task_set_params(k, params), "aclmdlRITaskSetParams (setup)")
    expect.rc(dev.b.execute_async(model, s), Err.RT_MODEL_EXECUTE,
              "aclmdlRIExecuteAsync while UPDATING")
    dev.sync(s)
    expect.eq(dev.read(out), np.full(8, SENTINEL), "output (nothing executed)")


@pytest.mark.clause("EXE-07")
@pytest.mark.requires(Cap.LISTING, Cap.TASK_TYPE, Cap.DISABLE)
def test_execute_faulted_model(dev: Dev) -> None:
    """EXE-07: executing a FAULT model returns 507011."""
    s = dev.stream()
    model = faulted_model(dev, s)
    expect.rc(dev.b.execute_async(model, s), Err.RT_MODEL_EXECUTE,
              "aclmdlRIExecuteAsync on a FAULT model")


@pytest.mark.clause("EXE-09")
def test_execute_null_model(dev: Dev) -> None:
    """EXE-09: ExecuteAsync(NULL model) returns 100000."""
    expect.rc(dev.b.execute_async(None, dev.stream()), Err.INVALID_PARAM,
              "aclmdlRIExecuteAsync(NULL)")


@pytest.mark.clause("EXE-17", "LIFE-08")
@pytest.mark.requires(Cap.HANDLE_VALIDATION)
def test_execute_on_a_destroyed_stream(dev: Dev) -> None:
    """EXE-17: ExecuteAsync onto a destroyed stream returns 107017 (rtModelExecute validates
    the stream handle, `api/api_c.cc:1709-1710`) and runs nothing: the model's output stays
    unwritten after the default stream is drained, and the model, still READY, runs on a live
    stream afterwards."""
    cap = dev.stream()
    x, out = dev.buffer(X), dev.buffer(n=8)
    model = main_model(dev, cap, x, out)
    rc, gone = dev.b.create_stream()
    expect.ok(rc, "aclrtCreateStream (setup)")
    expect.ok(dev.b.destroy_stream(gone), "aclrtDestroyStream (setup)")
    expect.rc(dev.b.execute_async(model, gone), Err.RT_INVALID_HANDLE,
              "aclmdlRIExecuteAsync onto a destroyed stream")
    dev.sync(None)
    dev.sync(cap)
    expect.eq(dev.read(out), np.full(8, SENTINEL, dtype=np.int32),
              "model output after the refused execution")
    dev.execute(model, dev.stream())
    expect.eq(dev.read(out), X + 10, "model output after an execution on a live stream")


# ---------------------------------------------------------------------------------------------
# EXE-15


@pytest.mark.clause("EXE-15")
@pytest.mark.requires(Cap.VALUE_TASKS)
@pytest.mark.requires(Cap.BLOCKING_WAIT)
def test_two_executions_in_flight(dev: Dev) -> None:
    """EXE-15: a second ExecuteAsync while the first is in flight returns 0; both complete."""
    s = dev.stream()
    flag = dev.buffer64(0)
    acc0 = np.zeros(8, dtype=np.int32)
    acc, x = dev.buffer(acc0), dev.buffer(X)
    model = dev.gated(s, flag, "accumulate", acc=acc, x=x, n=8)
    try:
        expect.ok(dev.b.execute_async(model, s), "first aclmdlRIExecuteAsync")
        expect.ok(dev.b.execute_async(model, s), "second aclmdlRIExecuteAsync (first in flight)")
        expect.eq(dev.read(acc), acc0, "accumulator while both executions are blocked")
    finally:
        dev.write64(flag, 1)
    dev.sync(s)
    expect.eq(dev.read(acc), acc0 + 2 * X, "accumulator after both executions")


# ---------------------------------------------------------------------------------------------
# RT-29: the order of the checks, two failing conditions at a time


def _sub(dev: Dev) -> tuple[Any, Any]:
    """(parent's capturing stream, a captured IF sub-model of that open capture)."""
    p = parent(dev)
    (sub,) = add(dev, p, CondTaskType.IF, 1)
    capture_sub(dev, sub, lambda u: dev.fill(u, dev.buffer(n=8), 1))
    return p.stream, sub


def _capturing(dev: Dev) -> tuple[Any, Any]:
    """(a capturing stream, the model of its open capture from GetInfo)."""
    s = dev.stream()
    dev.begin(s)
    dev.fill(s, dev.buffer(n=8), 1)
    return s, dev.capture_status(s, "(setup)")[1]


def _built_without_end_task(dev: Dev) -> Any:
    """A building model with one kernel on its bound stream and no EndTask (so no BuildEnd)."""
    m = begin_build(dev)
    s = persistent_stream(dev)
    expect.ok(dev.b.bind_stream(m, s, ModelStreamFlag.HEAD), "aclmdlRIBindStream (setup)")
    dev.fill(s, dev.buffer(n=8), 1)
    return m


def _sub_model_on_capturing_stream(dev: Dev) -> int:
    s, sub = _sub(dev)
    return dev.b.execute_async(sub, s)


def _sub_model_on_bound_stream(dev: Dev) -> int:
    return dev.b.execute_async(_sub(dev)[1], bound_stream(dev))


def _capturing_model_on_its_capturing_stream(dev: Dev) -> int:
    s, m = _capturing(dev)
    return dev.b.execute_async(m, s)


def _capturing_model_on_bound_stream(dev: Dev) -> int:
    return dev.b.execute_async(_capturing(dev)[1], bound_stream(dev))


def _built_without_end_task_on_capturing_stream(dev: Dev) -> int:
    m = _built_without_end_task(dev)
    return dev.b.execute_async(m, _capturing(dev)[0])


def _null_model_on_update_stream(dev: Dev) -> int:
    u = update_mode_stream(dev)
    rc = dev.b.execute_async(None, u.stream)
    u.finish()
    return rc


def _faulted_model_on_update_stream(dev: Dev) -> int:
    m = faulted_model(dev, dev.stream())
    u = update_mode_stream(dev)
    rc = dev.b.execute_async(m, u.stream)
    u.finish()
    return rc


def _ready_model_on_update_stream(dev: Dev) -> int:
    m = main_model(dev, dev.stream(), dev.buffer(X), dev.buffer(n=8))
    u = update_mode_stream(dev)
    rc = dev.b.execute_async(m, u.stream)
    u.finish()
    return rc


@pytest.mark.clause("RT-29", "EXE-05", "EXE-06", "EXE-08", "TG-15")
@pytest.mark.parametrize("make, expected", [
    case(_sub_model_on_capturing_stream, Err.RT_STREAM_CAPTURED, Cap.COND),
    case(_sub_model_on_bound_stream, Err.RT_PARAM_INVALID, Cap.COND, Cap.BUILD),
    case(_capturing_model_on_its_capturing_stream, Err.RT_STREAM_CAPTURED),
    case(_capturing_model_on_bound_stream, Err.RT_PARAM_INVALID, Cap.BUILD),
    case(_built_without_end_task_on_capturing_stream, Err.RT_STREAM_CAPTURED, Cap.BUILD),
    case(_null_model_on_update_stream, Err.INVALID_PARAM, Cap.TASK_GROUPS),
    case(_faulted_model_on_update_stream, Err.RT_MODEL_EXECUTE,
         Cap.TASK_GROUPS, Cap.LISTING, Cap.TASK_TYPE, Cap.DISABLE),
    case(_ready_model_on_update_stream, Err.RT_TASK_TYPE_NOT_SUPPORT, Cap.TASK_GROUPS),
])
def test_execute_async_check_order(dev: Dev, make: Case, expected: int) -> None:
    """RT-29: with two failing conditions, aclmdlRIExecuteAsync answers the one it checks
    first: the NULL model (100000); a model stream, internal or bound (107000,
    `api/impl/api_error.cc:3994-3996`), then a capturing stream (107027, `:3997-4000`), both
    before the sub-model (207000, `:4018-4023`) and the model's state (107026, 507011); a
    stream in task-update mode (507009, `core/src/stream/stream.cc:4747-4760`) last, when the
    execution's task is allocated."""
    rc = make(dev)
    if rc == Err.RT_FEATURE_NOT_SUPPORT:
        # the sub-model check (EXE-08) answered first: a wrong order, not a missing feature
        expect.fail("aclmdlRIExecuteAsync rc", err_name(expected), err_name(rc))
    expect.rc(rc, expected, "aclmdlRIExecuteAsync")
