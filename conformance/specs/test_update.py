"""Committing updates: aclmdlRIUpdate (UPD-01..UPD-10).

Not tested here:

* UPD-06 (Update is not atomic): needs a stream rebuild to fail midway (32768 SQEs or an
  internal failure); there is no portable way to provoke it through the contract.
* UPD-08, built-model and sub-model parts: the contract has no BuildBegin/BuildEnd and no
  AddCondTask, so only the NULL case is checked.
* UPD-11 (profiling sees only pre-first-execution updates): not observable through return
  codes or memory.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from mdlri_conformance.backends.contract import Cap, Err, TaskParams, TaskType, ValueWriteTaskParams
from mdlri_conformance.conformance import expect
from mdlri_conformance.conformance.harness import SENTINEL, Buf, Dev
from mdlri_conformance.conformance.specs._setups import faulted_model

pytestmark = pytest.mark.requires(Cap.CAPTURE, Cap.KERNELS, Cap.LISTING, Cap.TASK_TYPE,
                                  Cap.UPDATE)

X = np.arange(1, 9, dtype=np.int32)
X_2 = np.arange(-4, 4, dtype=np.int32)


def affine_model(dev: Dev, s: Any, x: Buf, coeffs: list[tuple[Buf, int, int]]) -> Any:
    """Capture one ``affine`` kernel per (y, a, b) on ``s``: y = a * x + b."""
    dev.begin(s)
    for y, a, b in coeffs:
        dev.launch("affine", s, x=x, y=y, n=x.n, a=a, b=b)
    return dev.end(s)


def reset(dev: Dev, *bufs: Buf) -> None:
    for b in bufs:
        dev.write(b, np.full(b.n, SENTINEL, dtype=np.int32))


# ---------------------------------------------------------------------------------------------


@pytest.mark.clause("UPD-01")
@pytest.mark.requires(Cap.SEQ_ID)
def test_update_with_nothing_pending_is_noop(dev: Dev) -> None:
    """UPD-01: Update on a READY model returns 0 and leaves the tasks and results unchanged."""
    s = dev.stream()
    x, y = dev.buffer(X), dev.buffer(n=8)
    model = affine_model(dev, s, x, [(y, 3, 1)])
    before = [dev.seq_of(t) for t in dev.all_tasks(model)]
    expect.ok(dev.b.update(model), "aclmdlRIUpdate on a READY model")
    expect.eq([dev.seq_of(t) for t in dev.all_tasks(model)], before, "task seqIds after Update")
    dev.execute(model, s)
    expect.eq(dev.read(y), X * 3 + 1, "output after the no-op Update")


@pytest.mark.clause("UPD-02")
@pytest.mark.requires(Cap.SET_PARAMS, Cap.DISABLE)
def test_update_commits_pending_changes(dev: Dev) -> None:
    """UPD-02: Update commits a pending SetParams and Disable, and the model executes again."""
    s = dev.stream()
    x, y1, y2 = dev.buffer(X), dev.buffer(n=8), dev.buffer(n=8)
    model = affine_model(dev, s, x, [(y1, 2, 0), (y2, 3, 0)])
    k1, k2 = dev.kernel_tasks(model)
    expect.ok(dev.b.task_set_params(k1, dev.kernel_params("affine", x=x, y=y1, n=8, a=5, b=7)),
              "aclmdlRITaskSetParams")
    expect.ok(dev.b.task_disable(k2), "aclmdlRITaskDisable")
    expect.ok(dev.b.update(model), "aclmdlRIUpdate")
    expect.ok(dev.b.execute_async(model, s), "aclmdlRIExecuteAsync after Update")
    dev.sync(s)
    expect.eq(dev.read(y1), X * 5 + 7, "output of the updated kernel")
    expect.eq(dev.read(y2), np.full(8, SENTINEL), "output of the disabled kernel")


@pytest.mark.clause("UPD-03")
@pytest.mark.requires(Cap.SET_PARAMS)
def test_second_update_is_noop(dev: Dev) -> None:
    """UPD-03: a second Update right after a committing one returns 0."""
    s = dev.stream()
    x, y = dev.buffer(X), dev.buffer(n=8)
    model = affine_model(dev, s, x, [(y, 2, 0)])
    (k,) = dev.kernel_tasks(model)
    expect.ok(dev.b.task_set_params(k, dev.kernel_params("affine", x=x, y=y, n=8, a=4, b=1)),
              "aclmdlRITaskSetParams")
    expect.ok(dev.b.update(model), "first aclmdlRIUpdate")
    expect.ok(dev.b.update(model), "second aclmdlRIUpdate")
    dev.execute(model, s)
    expect.eq(dev.read(y), X * 4 + 1, "output after two Updates")


@pytest.mark.clause("UPD-04")
def test_update_on_capturing_model(dev: Dev) -> None:
    """UPD-04: Update on a model that is still capturing returns 107040; the capture goes on."""
    s = dev.stream()
    x, y = dev.buffer(X), dev.buffer(n=8)
    dev.begin(s)
    dev.launch("affine", s, x=x, y=y, n=8, a=2, b=2)
    rc, _, capturing = dev.b.capture_get_info(s)
    expect.ok(rc, "aclmdlRICaptureGetInfo (setup)")
    expect.rc(dev.b.update(capturing), Err.RT_MODEL_UPDATE_FAILED, "aclmdlRIUpdate during capture")
    model = dev.end(s)
    dev.execute(model, s)
    expect.eq(dev.read(y), X * 2 + 2, "output of the model after the refused Update")


@pytest.mark.clause("UPD-04")
@pytest.mark.requires(Cap.DISABLE)
def test_update_on_faulted_model(dev: Dev) -> None:
    """UPD-04: Update on a FAULT model returns 107040."""
    model = faulted_model(dev, dev.stream())
    expect.rc(dev.b.update(model), Err.RT_MODEL_UPDATE_FAILED, "aclmdlRIUpdate on a FAULT model")


@pytest.mark.clause("UPD-05")
@pytest.mark.requires(Cap.SET_PARAMS, Cap.VALUE_TASKS)
def test_new_value_write_value_after_update(dev: Dev) -> None:
    """UPD-05: after SetParams + Update the next execution writes the new VALUE_WRITE value."""
    s = dev.stream()
    word = dev.buffer64(0)
    dev.begin(s)
    expect.ok(dev.b.value_write(word, 5, 0, s), "aclrtValueWrite in capture")
    model = dev.end(s)
    dev.execute(model, s)
    expect.eq(dev.read64(word), 5, "word after the captured write")
    (vw,) = dev.tasks_of_type(model, TaskType.VALUE_WRITE)
    expect.ok(dev.b.task_set_params(vw, TaskParams(
        type=TaskType.VALUE_WRITE, value_write=ValueWriteTaskParams(dev_addr=word, value=9))),
        "aclmdlRITaskSetParams(VALUE_WRITE value 9)")
    expect.ok(dev.b.update(model), "aclmdlRIUpdate")
    dev.write64(word, 0)
    dev.execute(model, s)
    expect.eq(dev.read64(word), 9, "word after the updated write")


@pytest.mark.clause("UPD-05")
@pytest.mark.requires(Cap.SET_PARAMS)
def test_new_kernel_args_after_update(dev: Dev) -> None:
    """UPD-05: after SetParams + Update the next execution runs the kernel with the new args."""
    s = dev.stream()
    x, y = dev.buffer(X), dev.buffer(n=8)
    model = affine_model(dev, s, x, [(y, 2, 3)])
    dev.execute(model, s)
    expect.eq(dev.read(y), X * 2 + 3, "output with the captured args")
    (k,) = dev.kernel_tasks(model)
    expect.ok(dev.b.task_set_params(k, dev.kernel_params("affine", x=x, y=y, n=8, a=5, b=-1)),
              "aclmdlRITaskSetParams(a=5, b=-1)")
    expect.ok(dev.b.update(model), "aclmdlRIUpdate")
    reset(dev, y)
    dev.execute(model, s)
    expect.eq(dev.read(y), X * 5 - 1, "output with the updated args")


@pytest.mark.clause("UPD-07")
@pytest.mark.requires(Cap.SET_PARAMS)
def test_untouched_tasks_unchanged_by_update(dev: Dev) -> None:
    """UPD-07: a task neither updated nor disabled keeps its behaviour across Update."""
    s = dev.stream()
    x, y1, y2 = dev.buffer(X), dev.buffer(n=8), dev.buffer(n=8)
    model = affine_model(dev, s, x, [(y1, 2, 3), (y2, 3, 1)])
    dev.execute(model, s)
    expect.eq(dev.read(y1), X * 2 + 3, "untouched kernel output before Update")
    _, k2 = dev.kernel_tasks(model)
    expect.ok(dev.b.task_set_params(k2, dev.kernel_params("affine", x=x, y=y2, n=8, a=4, b=0)),
              "aclmdlRITaskSetParams(second kernel)")
    expect.ok(dev.b.update(model), "aclmdlRIUpdate")
    dev.write(x, X_2)
    reset(dev, y1, y2)
    dev.execute(model, s)
    expect.eq(dev.read(y1), X_2 * 2 + 3, "untouched kernel output after Update")
    expect.eq(dev.read(y2), X_2 * 4, "updated kernel output after Update")


@pytest.mark.clause("UPD-08")
def test_update_null_model(dev: Dev) -> None:
    """UPD-08: Update(NULL) returns 107000 (no ACL-layer check)."""
    expect.rc(dev.b.update(None), Err.RT_PARAM_INVALID, "aclmdlRIUpdate(NULL)")


@pytest.mark.clause("UPD-09")
@pytest.mark.requires(Cap.SET_PARAMS, Cap.DISABLE, Cap.VALUE_TASKS)
@pytest.mark.requires(Cap.BLOCKING_WAIT)
def test_update_sequence_around_execution(dev: Dev) -> None:
    """UPD-09: SetParams/Disable refused while running, execution refused while UPDATING, Update has no running check."""
    s = dev.stream()
    flag = dev.buffer64(0)
    x, y = dev.buffer(X), dev.buffer(n=8)
    model = dev.gated(s, flag, "affine", x=x, y=y, n=8, a=2, b=0)
    (k,) = dev.kernel_tasks(model)
    new = dev.kernel_params("affine", x=x, y=y, n=8, a=6, b=1)

    expect.ok(dev.b.execute_async(model, s), "aclmdlRIExecuteAsync (blocked on the flag)")
    try:
        expect.rc(dev.b.task_set_params(k, new), Err.RT_MODEL_UPDATE_FAILED,
                  "aclmdlRITaskSetParams while running")
        expect.rc(dev.b.task_disable(k), Err.RT_MODEL_UPDATE_FAILED,
                  "aclmdlRITaskDisable while running")
        expect.ok(dev.b.update(model), "aclmdlRIUpdate while running (nothing pending)")
    finally:
        dev.write64(flag, 1)
    dev.sync(s)
    expect.eq(dev.read(y), X * 2, "output of the running execution")

    expect.ok(dev.b.task_set_params(k, new), "aclmdlRITaskSetParams after sync")
    expect.rc(dev.b.execute_async(model, s), Err.RT_MODEL_EXECUTE,
              "aclmdlRIExecuteAsync while UPDATING")
    expect.ok(dev.b.update(model), "aclmdlRIUpdate")
    reset(dev, y)
    dev.execute(model, s)
    expect.eq(dev.read(y), X * 6 + 1, "output after Update")


@pytest.mark.clause("UPD-10")
@pytest.mark.requires(Cap.SET_PARAMS)
def test_failed_execution_does_not_fault_model(dev: Dev) -> None:
    """UPD-10: a refused execution does not move the model to FAULT; it still executes and updates."""
    s, other = dev.stream(), dev.stream()
    x, y = dev.buffer(X), dev.buffer(n=8)
    model = affine_model(dev, s, x, [(y, 2, 1)])
    # the only execution failure the contract can provoke portably: a refused ExecuteAsync
    scratch = dev.buffer(n=8)
    dev.begin(other)
    dev.launch("affine", other, x=x, y=scratch, n=8, a=1, b=0)
    expect.rc(dev.b.execute_async(model, other), Err.RT_STREAM_CAPTURED,
              "aclmdlRIExecuteAsync on a capturing stream (setup)")
    dev.end(other)
    dev.execute(model, s)
    expect.eq(dev.read(y), X * 2 + 1, "output after the failed execution")
    (k,) = dev.kernel_tasks(model)
    expect.ok(dev.b.task_set_params(k, dev.kernel_params("affine", x=x, y=y, n=8, a=3, b=0)),
              "aclmdlRITaskSetParams after the failed execution")
    expect.ok(dev.b.update(model), "aclmdlRIUpdate after the failed execution")
