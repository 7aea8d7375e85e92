"""Task sequence ids (aclmdlRITaskGetSeqId).

Clause groups: SEQ, and the error-table row ERR-11 (TaskGetSeqId).

Per Q-03 the specs assert ordering, uniqueness and stability of ids, never density.
Not covered: SEQ-02 (gaps from internal tasks are device-dependent, Q-02/Q-03: only the
consequences in SEQ-03/04/06 are checked), SEQ-09 (a "do not call concurrently" rule with no
observable), and the non-capture / sub-model columns of SEQ-08 and ERR-11 (built models and
sub-models are not in the contract).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from mdlri_conformance.backends.contract import (
    Cap, Err, TaskParams, TaskType, ValueWaitFlag, ValueWaitTaskParams, ValueWriteTaskParams,
)
from mdlri_conformance.conformance import expect
from mdlri_conformance.conformance.harness import Dev, iter_pairs
from mdlri_conformance.conformance.specs._setups import capture_chain

pytestmark = pytest.mark.requires(Cap.CAPTURE, Cap.LISTING, Cap.SEQ_ID, Cap.KERNELS)

N = 8


# ---------------------------------------------------------------------------------------------
# helpers


def _ids_per_stream(dev: Dev, model: Any) -> list[list[int]]:
    return [[dev.seq_of(t) for t in dev.tasks_of(s)] for s in dev.streams_of(model)]


def _kernel_ids_per_stream(dev: Dev, model: Any) -> list[list[int]]:
    return [[dev.seq_of(t) for t in dev.tasks_of(s) if dev.type_of(t) == TaskType.KERNEL]
            for s in dev.streams_of(model)]


def _strictly_increasing(ids: list[int]) -> bool:
    return all(a < b for a, b in iter_pairs(ids))


# ---------------------------------------------------------------------------------------------
# SEQ


@pytest.mark.clause("SEQ-01")
@pytest.mark.requires(Cap.CROSS_STREAM, Cap.TASK_TYPE)
def test_seq_01_one_counter_across_streams(dev: Dev) -> None:
    """SEQ-01 Ids come from one model counter in host submission order, interleaving across streams."""
    s1, s2 = dev.stream(), dev.stream()
    fork, join = dev.event(), dev.event()
    bufs = [dev.buffer(n=N) for _ in range(5)]
    dev.begin(s1)
    dev.fill(s1, bufs[0], 0)                        # a1
    dev.fork(s1, s2, fork)
    dev.fill(s2, bufs[1], 1)                        # b1
    dev.fill(s1, bufs[2], 2)                        # a2
    dev.fill(s2, bufs[3], 3)                        # b2
    dev.fill(s1, bufs[4], 4)                        # a3
    dev.join(s1, s2, join)
    model = dev.end(s1)
    per_stream = _kernel_ids_per_stream(dev, model)
    origin = [ids for ids in per_stream if len(ids) == 3]
    joined = [ids for ids in per_stream if len(ids) == 2]
    expect.true(len(origin) == 1 and len(joined) == 1, "KERNEL tasks per internal stream (setup)",
                "one stream with 3, one with 2", per_stream)
    (a1, a2, a3), (b1, b2) = origin[0], joined[0]
    merged = [a1, b1, a2, b2, a3]
    expect.true(_strictly_increasing(merged),
                "seq ids in host submission order a1 < b1 < a2 < b2 < a3", "increasing", merged)


@pytest.mark.clause("SEQ-03")
@pytest.mark.requires(Cap.CROSS_STREAM)
def test_seq_03_increasing_within_stream(dev: Dev) -> None:
    """SEQ-03 Ids are strictly increasing in each stream's list order (after capture and after a run)."""
    model, _, _ = capture_chain(dev, [3, 2])
    for i, ids in enumerate(_ids_per_stream(dev, model)):
        expect.true(_strictly_increasing(ids), f"seq ids of stream {i} in list order",
                    "strictly increasing", ids)
    dev.execute(model, dev.stream())
    for i, ids in enumerate(_ids_per_stream(dev, model)):
        expect.true(_strictly_increasing(ids), f"seq ids of stream {i} after one execution",
                    "strictly increasing", ids)


@pytest.mark.clause("SEQ-04")
@pytest.mark.requires(Cap.CROSS_STREAM)
def test_seq_04_unique_within_model(dev: Dev) -> None:
    """SEQ-04 No two tasks of one model, on any of its streams, share a seq id."""
    model, _, _ = capture_chain(dev, [2, 2, 2])
    ids = [i for per in _ids_per_stream(dev, model) for i in per]
    dups = sorted({i for i in ids if ids.count(i) > 1})
    expect.eq(dups, [], "duplicate seq ids across the model's streams")


@pytest.mark.clause("SEQ-05")
@pytest.mark.requires(Cap.TASK_TYPE, Cap.SET_PARAMS, Cap.DISABLE, Cap.UPDATE)
def test_seq_05_stable_across_set_disable_update(dev: Dev) -> None:
    """SEQ-05 SetParams, Disable and Update leave the surviving tasks' seq ids unchanged."""
    b = dev.b
    values = [1, 2, 3]
    model, _, bufs = dev.capture_fills(values)
    k0, k1, k2 = dev.kernel_tasks(model)
    before = [dev.seq_of(t) for t in (k0, k1, k2)]
    new_value = 40
    expect.ok(b.task_set_params(k0, dev.fill_params(bufs[0], new_value)), "SetParams(k0)")
    expect.eq([dev.seq_of(t) for t in (k0, k1, k2)], before, "seq ids after SetParams")
    expect.ok(b.task_disable(k1), "TaskDisable(k1)")
    expect.eq([dev.seq_of(t) for t in (k0, k2)], [before[0], before[2]],
              "seq ids after Disable")
    expect.ok(b.update(model), "aclmdlRIUpdate")
    # re-list: k1 is gone and its handle must not be reused (DIS-05)
    after = [dev.seq_of(t) for t in dev.kernel_tasks(model)]
    expect.eq(after, [before[0], before[2]], "seq ids of the surviving kernels after Update")
    dev.execute(model, dev.stream())
    expect.eq(dev.read(bufs[0]), np.full(N, new_value), "k0 output (update applied; harness)")
    expect.eq(dev.read(bufs[1]), np.full(N, -1), "k1 output (disabled; harness)")
    expect.eq(dev.read(bufs[2]), np.full(N, values[2]), "k2 output (untouched; harness)")


@pytest.mark.clause("SEQ-05", "SETP-07")
@pytest.mark.requires(Cap.TASK_TYPE, Cap.SET_PARAMS, Cap.UPDATE, Cap.VALUE_TASKS)
def test_seq_05_kept_across_a_type_conversion(dev: Dev) -> None:
    """SEQ-05 A kernel task that SetParams converts into a VALUE_WRITE and one converted into
    a VALUE_WAIT (SETP-07) keep their seq ids and handles, after SetParams and after Update:
    the conversion rewrites the TaskInfo in place (`core/src/task/task_info/memory/
    memory_task.cc:726-766`; TaskCommonInfoInit, `task_manager.cc:921-937`, leaves
    modelSeqId alone), and Update does not renumber. The listing shows them where they were,
    with their new types."""
    b = dev.b
    model, _, _ = dev.capture_fills([1, 2, 3])
    k0, k1, k2 = dev.kernel_tasks(model)
    listed = dev.all_tasks(model)
    before = {t: dev.seq_of(t) for t in listed}
    word, cond = dev.buffer64(0), dev.buffer64(0)
    write = TaskParams(type=TaskType.VALUE_WRITE,
                       value_write=ValueWriteTaskParams(dev_addr=word, value=5))
    wait = TaskParams(type=TaskType.VALUE_WAIT, value_wait=ValueWaitTaskParams(
        dev_addr=cond, value=0, flag=ValueWaitFlag.GEQ))
    expect.ok(b.task_set_params(k0, write), "SetParams(VALUE_WRITE) on kernel k0")
    expect.ok(b.task_set_params(k2, wait), "SetParams(VALUE_WAIT) on kernel k2")
    expect.eq([dev.seq_of(t) for t in (k0, k1, k2)], [before[k0], before[k1], before[k2]],
              "seq ids of k0, k1, k2 after the conversions")
    expect.ok(b.update(model), "aclmdlRIUpdate")
    after = dev.all_tasks(model)
    expect.eq(after, listed, "task handles listed after Update (same tasks, same order)")
    expect.eq({int(before[t]): int(dev.seq_of(t)) for t in after},
              {int(before[t]): int(before[t]) for t in after},
              "seq id of every task after Update, keyed by its id before")
    expect.eq([int(dev.type_of(t)) for t in (k0, k1, k2)],
              [int(TaskType.VALUE_WRITE), int(TaskType.KERNEL), int(TaskType.VALUE_WAIT)],
              "types of k0, k1, k2 after Update")


@pytest.mark.clause("SEQ-06")
# KERNEL_EXEC: the Execute below must really run the model; against a driver stub that runs no
# kernel the recycle path drops listed tasks (`core/src/stream/stream.cc:3820`, then
# `:5430-5435` -> 107000), an artefact of the stub's completion reports
@pytest.mark.requires(Cap.TASK_TYPE, Cap.DISABLE, Cap.UPDATE, Cap.KERNEL_EXEC)
def test_seq_06_gaps_and_new_ids(dev: Dev) -> None:
    """SEQ-06 After Disable+Update the removed id is gone (a gap) and any new task gets an id above all old ones."""
    b = dev.b
    model, _, _ = dev.capture_fills([1, 2, 3])
    k0, k1, k2 = dev.kernel_tasks(model)
    old = {i for per in _ids_per_stream(dev, model) for i in per}
    gone = dev.seq_of(k1)
    expect.ok(b.task_disable(k1), "TaskDisable(k1)")
    expect.ok(b.update(model), "aclmdlRIUpdate")
    dev.execute(model, dev.stream())  # a first run may append runtime tasks (LIST-10)
    now = [i for per in _ids_per_stream(dev, model) for i in per]
    expect.true(gone not in now, "the disabled task's id after Update", "absent", now)
    kernels = [dev.seq_of(t) for t in dev.kernel_tasks(model)]
    expect.true(len(kernels) == 2 and kernels[1] - kernels[0] >= 2,
                "surviving kernel ids leave a gap", "2 ids, at least 2 apart", kernels)
    fresh = [i for i in now if i not in old]
    expect.true(all(i > max(old) for i in fresh), "ids of tasks added after capture",
                f"all > {max(old)}", fresh)


@pytest.mark.clause("SEQ-07")
@pytest.mark.requires(Cap.TASK_TYPE)
def test_seq_07_counter_per_model(dev: Dev) -> None:
    """SEQ-07 A second model starts its own counter: its first kernel gets the same id as the first model's."""
    s = dev.stream()
    first, _, _ = dev.capture_fills([1, 2, 3, 4], stream=s)
    second, _, _ = dev.capture_fills([5], stream=s)
    a = [dev.seq_of(t) for t in dev.kernel_tasks(first)]
    c = [dev.seq_of(t) for t in dev.kernel_tasks(second)]
    expect.eq(c[0], a[0], "seq id of the first kernel of the second model "
              f"(first model's kernels had {a})")


@pytest.mark.clause("SEQ-08")
def test_seq_08_null_arguments(dev: Dev) -> None:
    """SEQ-08 GetSeqId with a NULL task or a NULL id pointer returns 107000."""
    b = dev.b
    model, _, _ = dev.capture_fills([1])
    task = dev.all_tasks(model)[0]
    expect.rc(b.task_get_seq_id(None)[0], Err.RT_PARAM_INVALID, "GetSeqId(task=NULL)")
    expect.rc(b.task_get_seq_id(task, null_out=True)[0], Err.RT_PARAM_INVALID,
              "GetSeqId(id=NULL)")


# ---------------------------------------------------------------------------------------------
# error-table row


@pytest.mark.clause("ERR-11")
def test_err_11_task_get_seq_id_row(dev: Dev) -> None:
    """ERR-11 TaskGetSeqId: NULL task 107000, NULL id pointer 107000; a valid call succeeds."""
    b = dev.b
    model, _, _ = dev.capture_fills([1, 2])
    task = dev.all_tasks(model)[-1]
    expect.rc(b.task_get_seq_id(None)[0], Err.RT_PARAM_INVALID, "TaskGetSeqId(task=NULL)")
    expect.rc(b.task_get_seq_id(task, null_out=True)[0], Err.RT_PARAM_INVALID,
              "TaskGetSeqId(id=NULL)")
    rc, seq = b.task_get_seq_id(task)
    expect.ok(rc, "TaskGetSeqId(valid)")
    expect.true(isinstance(seq, int) and seq >= 0, "TaskGetSeqId(valid) id", ">= 0", seq)
