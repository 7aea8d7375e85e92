"""Error returns per API: rows ERR-16 (TaskDisable), ERR-17 (Update), ERR-18 (ExecuteAsync),
ERR-20 (Destroy) of the catalog's error table, and ERR-34 (runtime codes pass through the
ACL layer unchanged).

Each row is a table of cases; a case builds the situation and returns the rc of the call
under test. Cells the contract cannot reach are not tested: built models (ERR-17 207000),
sub-models (207000 everywhere), another context (ERR-18 107003), a NULL exe stream (ERR-18,
Q-08: may crash), and a model still running after ~10 s inside Destroy (ERR-20 107037).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
import pytest

from mdlri_conformance.backends.contract import Cap, CaptureStatus, Err, TaskType
from mdlri_conformance.conformance import expect
from mdlri_conformance.conformance.harness import Buf, Dev
from mdlri_conformance.conformance.specs._setups import Case, case

pytestmark = pytest.mark.requires(Cap.CAPTURE, Cap.KERNELS)

X = np.arange(1, 9, dtype=np.int32)


@dataclass
class Ready:
    """A captured READY model: fallback_main(x -> out) then a memset, on ``stream``."""

    model: Any
    stream: Any
    x: Buf
    out: Buf


def ready_model(dev: Dev) -> Ready:
    s = dev.stream()
    x, out, scratch = dev.buffer(X), dev.buffer(n=8), dev.buffer(n=8)
    dev.begin(s)
    dev.launch("fallback_main", s, input=x, output=out)
    expect.ok(dev.b.memset_async(scratch.addr, scratch.nbytes, 0, scratch.nbytes, s),
              "aclrtMemsetAsync in capture (setup)")
    return Ready(dev.end(s), s, x, out)


def only_kernel(dev: Dev, model: Any) -> Any:
    kernels = dev.kernel_tasks(model)
    expect.eq(len(kernels), 1, "kernel tasks (setup)")
    return kernels[0]


def fault(dev: Dev, r: Ready) -> None:
    """Drive ``r`` into FAULT by disabling its memset (DIS-06)."""
    default = dev.tasks_of_type(r.model, TaskType.DEFAULT)
    expect.true(len(default) >= 1, "a DEFAULT task listed (setup)", ">= 1", 0)
    expect.rc(dev.b.task_disable(default[0]), Err.RT_PARAM_INVALID,
              "aclmdlRITaskDisable(DEFAULT) (setup)")


def during_capture(dev: Dev, call: Callable[[Any, Any], int]) -> int:
    """rc of ``call(stream, model)`` made while ``stream`` captures one kernel into ``model``.

    The capture is ended (and its model tracked) afterwards, whatever the call returned.
    """
    s = dev.stream()
    x, out = dev.buffer(X), dev.buffer(n=8)
    dev.begin(s)
    dev.launch("fallback_main", s, input=x, output=out)
    rc, status, model = dev.b.capture_get_info(s)
    expect.ok(rc, "aclmdlRICaptureGetInfo (setup)")
    expect.eq(status, CaptureStatus.ACTIVE, "capture status (setup)")
    try:
        return call(s, model)
    finally:
        dev.end(s)


def gated(dev: Dev) -> tuple[Ready, int]:
    """A READY model that blocks on value_wait(flag == 1) before its kernel; returns (model, flag)."""
    s = dev.stream()
    flag = dev.buffer64(0)
    x, out = dev.buffer(X), dev.buffer(n=8)
    model = dev.gated(s, flag, "fallback_main", input=x, output=out)
    return Ready(model, s, x, out), flag


def while_running(dev: Dev, call: Callable[[Ready, Any], int]) -> int:
    """rc of ``call(model, kernel_task)`` made while an execution of a gated model is blocked."""
    r, flag = gated(dev)
    kernel = only_kernel(dev, r.model)
    expect.ok(dev.b.execute_async(r.model, r.stream), "aclmdlRIExecuteAsync (setup)")
    try:
        return call(r, kernel)
    finally:
        dev.write64(flag, 1)
        dev.sync(r.stream)


LISTED = (Cap.LISTING, Cap.TASK_TYPE)


# ---------------------------------------------------------------------------------------------
# ERR-16 TaskDisable


def _disable_null(dev: Dev) -> int:
    return dev.b.task_disable(None)


def _disable_default_task(dev: Dev) -> int:
    r = ready_model(dev)
    default = dev.tasks_of_type(r.model, TaskType.DEFAULT)
    expect.true(len(default) >= 1, "a DEFAULT task listed (setup)", ">= 1", 0)
    rc = dev.b.task_disable(default[0])
    # the exact code first (`api/impl/api_impl.cc:9776-9783`): a 207000 from a runtime without the
    # update family is UNSUPPORTED, not "a failed Disable" that leaves the model READY
    expect.rc(rc, Err.RT_PARAM_INVALID, "aclmdlRITaskDisable of a DEFAULT task")
    # the +FAULT half of the cell
    expect.rc(dev.b.execute_async(r.model, r.stream), Err.RT_MODEL_EXECUTE,
              "aclmdlRIExecuteAsync after the failed Disable")
    return rc


def _disable_capturing(dev: Dev) -> int:
    return during_capture(dev, lambda s, m: dev.b.task_disable(only_kernel(dev, m)))


def _disable_fault(dev: Dev) -> int:
    r = ready_model(dev)
    fault(dev, r)
    return dev.b.task_disable(only_kernel(dev, r.model))


def _disable_running(dev: Dev) -> int:
    return while_running(dev, lambda r, kernel: dev.b.task_disable(kernel))


@pytest.mark.clause("ERR-16")
@pytest.mark.requires(Cap.DISABLE)
@pytest.mark.parametrize("make, expected", [
    case(_disable_null, Err.RT_PARAM_INVALID),
    case(_disable_default_task, Err.RT_PARAM_INVALID, *LISTED),
    case(_disable_capturing, Err.RT_MODEL_UPDATE_FAILED, *LISTED),
    case(_disable_fault, Err.RT_MODEL_UPDATE_FAILED, *LISTED),
    case(_disable_running, Err.RT_MODEL_UPDATE_FAILED, *LISTED, Cap.VALUE_TASKS,
         Cap.BLOCKING_WAIT),
])
def test_err16_task_disable(dev: Dev, make: Case, expected: int) -> None:
    """ERR-16: aclmdlRITaskDisable returns the error of its error-table cell."""
    expect.rc(make(dev), expected, "aclmdlRITaskDisable")


# ---------------------------------------------------------------------------------------------
# ERR-17 Update


def _update_null(dev: Dev) -> int:
    return dev.b.update(None)


def _update_capturing(dev: Dev) -> int:
    return during_capture(dev, lambda s, m: dev.b.update(m))


def _update_fault(dev: Dev) -> int:
    r = ready_model(dev)
    fault(dev, r)
    return dev.b.update(r.model)


@pytest.mark.clause("ERR-17")
@pytest.mark.requires(Cap.UPDATE)
@pytest.mark.parametrize("make, expected", [
    case(_update_null, Err.RT_PARAM_INVALID),
    case(_update_capturing, Err.RT_MODEL_UPDATE_FAILED),
    case(_update_fault, Err.RT_MODEL_UPDATE_FAILED, *LISTED, Cap.DISABLE),
])
def test_err17_update(dev: Dev, make: Case, expected: int) -> None:
    """ERR-17: aclmdlRIUpdate returns the error of its error-table cell."""
    expect.rc(make(dev), expected, "aclmdlRIUpdate")


# ---------------------------------------------------------------------------------------------
# ERR-18 ExecuteAsync


def _execute_null_model(dev: Dev) -> int:
    return dev.b.execute_async(None, dev.stream())


def _execute_on_model_stream(dev: Dev) -> int:
    r = ready_model(dev)
    internal = dev.streams_of(r.model)
    expect.true(len(internal) >= 1, "GetStreams (setup)", ">= 1 stream", len(internal))
    return dev.b.execute_async(r.model, internal[0])


def _execute_capturing_model(dev: Dev) -> int:
    other = dev.stream()
    return during_capture(dev, lambda s, m: dev.b.execute_async(m, other))


def _execute_on_capturing_stream(dev: Dev) -> int:
    r = ready_model(dev)
    return during_capture(dev, lambda s, m: dev.b.execute_async(r.model, s))


def _execute_updating(dev: Dev) -> int:
    r = ready_model(dev)
    params = dev.kernel_params("fallback_main", input=r.x, output=r.out)
    expect.ok(dev.b.task_set_params(only_kernel(dev, r.model), params),
              "aclmdlRITaskSetParams (setup)")
    return dev.b.execute_async(r.model, r.stream)


def _execute_fault(dev: Dev) -> int:
    r = ready_model(dev)
    fault(dev, r)
    return dev.b.execute_async(r.model, r.stream)


@pytest.mark.clause("ERR-18")
@pytest.mark.parametrize("make, expected", [
    case(_execute_null_model, Err.INVALID_PARAM),
    case(_execute_on_model_stream, Err.RT_PARAM_INVALID, Cap.LISTING),
    case(_execute_capturing_model, Err.RT_MODEL_CAPTURED),
    case(_execute_on_capturing_stream, Err.RT_STREAM_CAPTURED),
    case(_execute_updating, Err.RT_MODEL_EXECUTE, *LISTED, Cap.SET_PARAMS),
    case(_execute_fault, Err.RT_MODEL_EXECUTE, *LISTED, Cap.DISABLE),
])
def test_err18_execute_async(dev: Dev, make: Case, expected: int) -> None:
    """ERR-18: aclmdlRIExecuteAsync returns the error of its error-table cell."""
    expect.rc(make(dev), expected, "aclmdlRIExecuteAsync")


# ---------------------------------------------------------------------------------------------
# ERR-20 Destroy


def _destroy_null(dev: Dev) -> int:
    return dev.b.destroy(None)


def _destroy_capturing(dev: Dev) -> int:
    return during_capture(dev, lambda s, m: dev.b.destroy(m))


def _destroy_stale(dev: Dev) -> int:
    r = ready_model(dev)
    expect.ok(dev.destroy(r.model), "first aclmdlRIDestroy (setup)")
    return dev.b.destroy(r.model)


@pytest.mark.clause("ERR-20")
@pytest.mark.parametrize("make, expected", [
    case(_destroy_null, Err.INVALID_PARAM),
    case(_destroy_capturing, Err.RT_MODEL_CAPTURED),
    case(_destroy_stale, Err.RT_INVALID_HANDLE, Cap.HANDLE_VALIDATION),
])
def test_err20_destroy(dev: Dev, make: Case, expected: int) -> None:
    """ERR-20: aclmdlRIDestroy returns the error of its error-table cell."""
    expect.rc(make(dev), expected, "aclmdlRIDestroy")


# ---------------------------------------------------------------------------------------------
# ERR-34 pass-through


@pytest.mark.clause("ERR-34")
@pytest.mark.parametrize("make, expected", [
    case(_execute_capturing_model, Err.RT_MODEL_CAPTURED),
    case(_execute_on_capturing_stream, Err.RT_STREAM_CAPTURED),
    case(_destroy_capturing, Err.RT_MODEL_CAPTURED),
    case(_execute_updating, Err.RT_MODEL_EXECUTE, *LISTED, Cap.SET_PARAMS),
])
def test_err34_runtime_codes_pass_through(dev: Dev, make: Case, expected: int) -> None:
    """ERR-34: an API with an ACL-layer wrapper returns the runtime's error code unchanged."""
    expect.rc(make(dev), expected, "runtime error through the ACL layer")
