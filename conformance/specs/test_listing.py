"""Listing a model's streams and tasks, and task types.

Clause groups: LIST (aclmdlRIGetStreams / aclmdlRIGetTasksByStream), TYPE (aclmdlRITaskGetType),
and the error-table rows ERR-09 (GetStreams), ERR-10 (GetTasksByStream), ERR-12 (TaskGetType).

Not covered here: LIST-09 (cascade streams appear at a device-dependent SQ depth, Q-09),
LIST-12 / LIST-13 and the sub-model / other-context / chip columns of TYPE-06, ERR-09, ERR-10,
ERR-12 (sub-models and contexts are not in the contract). TYPE-03 / TYPE-04 (external-event
placeholders) are in test_external_events.py.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest

from mdlri_conformance.backends.contract import (UNWRITTEN, Cap, Err, MemcpyKind, TaskType, TaskParams, ValueWaitFlag,
                               ValueWriteTaskParams)
from mdlri_conformance.conformance import expect
from mdlri_conformance.conformance.harness import Dev
from mdlri_conformance.conformance.specs._setups import capture_chain

pytestmark = pytest.mark.requires(Cap.CAPTURE, Cap.LISTING, Cap.KERNELS)

N = 8


# ---------------------------------------------------------------------------------------------
# helpers


@dataclass
class Rich:
    """A single-stream capture with one task of every kind the contract can issue."""

    model: Any
    stream: Any
    event: Any
    expected: list[int] = field(default_factory=list)  # non-DEFAULT types in issue order
    # (index in `expected` after which a DEFAULT-typed user task was issued)
    default_after: list[int] = field(default_factory=list)


def _capture_rich(dev: Dev) -> Rich:
    """kernel, memcpyAsync, record, wait, memsetAsync, [value write, value wait], kernel; then
    the EVENT_RESET CaptureEnd appends to the origin for the captured record (XS-08). A user's
    aclrtResetEvent never captures a task: the runtime refuses it with 207000 for an
    aclrtCreateEventExWithFlag event (ApiImpl::EventReset, `api/impl/api_impl.cc:2210-2214`)
    and for an old-mode event on a capturing stream (`:2239-2243`)."""
    b = dev.b
    s = dev.stream()
    e = dev.event()
    src, dst, out = dev.buffer(list(range(N))), dev.buffer(n=N), dev.buffer(n=N)
    word = dev.buffer64(0)
    values = Cap.VALUE_TASKS in b.capabilities
    dev.begin(s)
    dev.fill(s, out, 1)
    expect.ok(b.memcpy_async(dst.addr, dst.nbytes, src.addr, src.nbytes,
                             MemcpyKind.DEVICE_TO_DEVICE, s), "aclrtMemcpyAsync (capture)")
    expect.ok(b.record_event(e, s), "aclrtRecordEvent (capture)")
    expect.ok(b.stream_wait_event(s, e), "aclrtStreamWaitEvent (capture)")
    expect.ok(b.memset_async(dst.addr, dst.nbytes, 0, dst.nbytes, s), "aclrtMemsetAsync (capture)")
    expected = [TaskType.KERNEL, TaskType.EVENT_RECORD, TaskType.EVENT_WAIT]
    if values:
        expect.ok(b.value_write(word, 5, 0, s), "aclrtValueWrite (capture)")
        expect.ok(b.value_wait(word, 5, ValueWaitFlag.EQ, s), "aclrtValueWait (capture)")
        expected += [TaskType.VALUE_WRITE, TaskType.VALUE_WAIT]
    dev.fill(s, out, 2)
    expected.append(TaskType.KERNEL)
    # the record's EVENT_RESET, appended by CaptureEnd after the origin's user tasks (XS-08)
    expected.append(TaskType.EVENT_RESET)
    # memcpyAsync follows the first kernel (index 0), memsetAsync follows the wait (index 2)
    return Rich(dev.end(s), s, e, expected, [0, 2])


def _only_stream(dev: Dev, model: Any) -> Any:
    streams = dev.streams_of(model)
    expect.eq(len(streams), 1, "GetStreams count of a single-stream capture (setup)")
    return streams[0]


# ---------------------------------------------------------------------------------------------
# LIST


@pytest.mark.clause("LIST-01")
@pytest.mark.requires(Cap.CROSS_STREAM)
def test_list_01_streams_are_internal(dev: Dev) -> None:
    """LIST-01 GetStreams returns one internal stream per participating user stream, none of them a user stream."""
    model, user_streams, _ = capture_chain(dev, [1, 1])
    listed = dev.streams_of(model)
    expect.eq(len(listed), len(user_streams), "GetStreams count for a 2-stream capture")
    for i, u in enumerate(user_streams):
        expect.true(all(x != u for x in listed), f"user stream {i} absent from GetStreams",
                    "not listed", listed)


@pytest.mark.clause("LIST-02")
@pytest.mark.requires(Cap.CROSS_STREAM, Cap.TASK_TYPE)
def test_list_02_reverse_attachment_order(dev: Dev) -> None:
    """LIST-02 GetStreams lists streams most-recently-attached first; the origin stream is last."""
    kernels = [1, 2, 3]  # origin, first joined, second joined
    model, _, _ = capture_chain(dev, kernels)
    per_stream = [sum(1 for t in dev.tasks_of(s) if dev.type_of(t) == TaskType.KERNEL)
                  for s in dev.streams_of(model)]
    expect.eq(per_stream, list(reversed(kernels)),
              "KERNEL count per GetStreams entry (identifies origin=1, joined=2, 3)")


@pytest.mark.clause("LIST-03")
def test_list_03_two_phase(dev: Dev) -> None:
    """LIST-03 A NULL array returns rc 0 and the count, which a second call with that capacity fills."""
    b = dev.b
    model, _, _ = dev.capture_fills([1, 2, 3])
    rc, slots, n = b.get_streams(model, None)
    expect.ok(rc, "GetStreams(streams=NULL)")
    expect.true(isinstance(n, int) and n >= 1, "GetStreams count", ">= 1", n)
    rc, slots, got = b.get_streams(model, n)
    expect.ok(rc, "GetStreams(capacity=count)")
    expect.eq(got, n, "*numStreams after the fill call")
    expect.true(all(x is not None and x is not UNWRITTEN for x in slots),
                "every stream slot filled", "non-NULL handles", slots)
    for s in slots:
        rc, _, nt = b.get_tasks_by_stream(s, None)
        expect.ok(rc, "GetTasksByStream(tasks=NULL)")
        expect.true(isinstance(nt, int) and nt >= 0, "GetTasksByStream count", ">= 0", nt)
        rc, tslots, tgot = b.get_tasks_by_stream(s, nt)
        expect.ok(rc, "GetTasksByStream(capacity=count)")
        expect.eq(tgot, nt, "*numTasks after the fill call")
        expect.true(all(x is not None and x is not UNWRITTEN for x in tslots),
                    "every task slot filled", "non-NULL handles", tslots)
    total = sum(len(dev.tasks_of(s)) for s in slots)
    expect.true(total >= 3, "tasks listed for 3 captured kernels", ">= 3", total)


@pytest.mark.clause("LIST-04")
def test_list_04_tail_set_to_null(dev: Dev) -> None:
    """LIST-04 With capacity > count, the count entries are filled and *num=count, rc 0; the tail
    slots stay untouched for GetStreams (the public API copies back only *num entries,
    `api/api_c_standard_soc.cc:1874-1881`) and become NULL for GetTasksByStream (the user array
    goes straight to `core/src/stream/stream.cc:5427-5442`)."""
    b = dev.b
    model, _, _ = dev.capture_fills([1, 2])
    streams = dev.streams_of(model)
    extra = 3
    rc, slots, got = b.get_streams(model, len(streams) + extra)
    expect.ok(rc, "GetStreams(capacity=count+3)")
    expect.eq(got, len(streams), "*numStreams")
    expect.eq(slots[:len(streams)], streams, "filled stream slots")
    expect.eq(slots[len(streams):], [UNWRITTEN] * extra, "stream tail slots (untouched, not NULL)")
    tasks = dev.tasks_of(streams[0])
    rc, tslots, tgot = b.get_tasks_by_stream(streams[0], len(tasks) + extra)
    expect.ok(rc, "GetTasksByStream(capacity=count+3)")
    expect.eq(tgot, len(tasks), "*numTasks")
    expect.eq(tslots[:len(tasks)], tasks, "filled task slots")
    expect.eq(tslots[len(tasks):], [None] * extra, "task tail slots (NULL, not untouched)")


@pytest.mark.clause("LIST-05")
def test_list_05_tasks_partial_fill(dev: Dev) -> None:
    """LIST-05 Capacity < count: the first capacity tasks in list order are filled, *num=capacity, rc 107039."""
    model, _, _ = dev.capture_fills([1, 2, 3, 4])
    s = _only_stream(dev, model)
    full = dev.tasks_of(s)
    cap = 2
    expect.true(len(full) > cap, "task count (setup)", f"> {cap}", len(full))
    rc, slots, got = dev.b.get_tasks_by_stream(s, cap)
    expect.rc(rc, Err.RT_INSUFFICIENT_INPUT_ARRAY, "GetTasksByStream(capacity=2)")
    expect.eq(got, cap, "*numTasks after a short buffer")
    expect.eq(slots, full[:cap], "task slots after a short buffer")


@pytest.mark.clause("LIST-05")
@pytest.mark.requires(Cap.CROSS_STREAM)
def test_list_05_streams_partial_fill(dev: Dev) -> None:
    """LIST-05 GetStreams with capacity < count returns 107039 with *num=capacity and writes
    nothing into the array (the public API fills a temporary vector and copies back only on
    success, `api/api_c_standard_soc.cc:1874-1881`; unlike GetTasksByStream)."""
    model, _, _ = capture_chain(dev, [1, 1, 1])
    full = dev.streams_of(model)
    cap = len(full) - 1
    rc, slots, got = dev.b.get_streams(model, cap)
    expect.rc(rc, Err.RT_INSUFFICIENT_INPUT_ARRAY, f"GetStreams(capacity={cap})")
    expect.eq(got, cap, "*numStreams after a short buffer")
    expect.eq(slots, [UNWRITTEN] * cap, "stream slots after a short buffer (untouched)")


@pytest.mark.clause("LIST-05")
def test_list_05_capacity_zero(dev: Dev) -> None:
    """LIST-05 Capacity 0 with a non-NULL array and count > 0 gives *num=0 and rc 107039."""
    b = dev.b
    model, _, _ = dev.capture_fills([1])
    s = _only_stream(dev, model)
    rc, slots, got = b.get_streams(model, 0)
    expect.rc(rc, Err.RT_INSUFFICIENT_INPUT_ARRAY, "GetStreams(capacity=0)")
    expect.eq(got, 0, "*numStreams after capacity 0")
    rc, slots, got = b.get_tasks_by_stream(s, 0)
    expect.rc(rc, Err.RT_INSUFFICIENT_INPUT_ARRAY, "GetTasksByStream(capacity=0)")
    expect.eq(got, 0, "*numTasks after capacity 0")


@pytest.mark.clause("LIST-06")
def test_list_06_null_arguments(dev: Dev) -> None:
    """LIST-06 NULL model/stream or NULL count pointer returns 107000 (no ACL-layer 100000)."""
    b = dev.b
    model, _, _ = dev.capture_fills([1])
    s = _only_stream(dev, model)
    expect.rc(b.get_streams(None, None)[0], Err.RT_PARAM_INVALID, "GetStreams(model=NULL)")
    expect.rc(b.get_streams(None, 4)[0], Err.RT_PARAM_INVALID,
              "GetStreams(model=NULL, capacity 4)")
    expect.rc(b.get_streams(model, None, null_count=True)[0], Err.RT_PARAM_INVALID,
              "GetStreams(numStreams=NULL)")
    expect.rc(b.get_tasks_by_stream(None, None)[0], Err.RT_PARAM_INVALID,
              "GetTasksByStream(stream=NULL)")
    expect.rc(b.get_tasks_by_stream(s, None, null_count=True)[0], Err.RT_PARAM_INVALID,
              "GetTasksByStream(numTasks=NULL)")


@pytest.mark.clause("LIST-07")
def test_list_07_non_model_stream(dev: Dev) -> None:
    """LIST-07 GetTasksByStream on a stream bound to no model (the user's origin stream, a fresh stream) returns 107000."""
    b = dev.b
    _, origin, _ = dev.capture_fills([1])
    expect.rc(b.get_tasks_by_stream(origin, None)[0], Err.RT_PARAM_INVALID,
              "GetTasksByStream(user origin stream after capture)")
    expect.rc(b.get_tasks_by_stream(dev.stream(), None)[0], Err.RT_PARAM_INVALID,
              "GetTasksByStream(never-captured stream)")


@pytest.mark.clause("LIST-08")
@pytest.mark.requires(Cap.TASK_TYPE, Cap.GET_PARAMS)
def test_list_08_kernel_submission_order(dev: Dev) -> None:
    """LIST-08 Kernel tasks are listed in submission order (identified by GetParams funcHandle)."""
    s = dev.stream()
    x, y, z = dev.buffer(list(range(N))), dev.buffer(n=N), dev.buffer(n=N)
    order = ["fill", "copy", "affine", "add", "fill"]
    dev.begin(s)
    dev.launch("fill", s, out=x, n=N, value=3)
    dev.launch("copy", s, src=x, dst=y, n=N)
    dev.launch("affine", s, x=y, y=z, n=N, a=2, b=1)
    dev.launch("add", s, a=y, b=z, out=x, n=N)
    dev.launch("fill", s, out=y, n=N, value=4)
    model = dev.end(s)
    listed = [dev.params_of(t).kernel.func_handle for t in dev.kernel_tasks(model)]
    expect.eq(listed, [dev.func(name) for name in order],
              "funcHandle of KERNEL tasks in list order")


@pytest.mark.clause("LIST-08")
@pytest.mark.requires(Cap.TASK_TYPE, Cap.GET_PARAMS, Cap.VALUE_TASKS)
def test_list_08_mixed_submission_order(dev: Dev) -> None:
    """LIST-08 Kernel and value-write tasks interleave in the list exactly as submitted."""
    b = dev.b
    s = dev.stream()
    out = dev.buffer(n=N)
    word = dev.buffer64(0)
    dev.begin(s)
    dev.fill(s, out, 1)
    expect.ok(b.value_write(word, 11, 0, s), "aclrtValueWrite (capture)")
    dev.launch("copy", s, src=out, dst=out, n=N)
    expect.ok(b.value_write(word, 22, 0, s), "aclrtValueWrite (capture)")
    dev.fill(s, out, 2)
    model = dev.end(s)
    seen: list[tuple[str, Any]] = []
    for t in dev.tasks_of(_only_stream(dev, model)):
        ty = dev.type_of(t)
        if ty == TaskType.KERNEL:
            seen.append(("kernel", dev.params_of(t).kernel.func_handle))
        elif ty == TaskType.VALUE_WRITE:
            seen.append(("value_write", dev.params_of(t).value_write.value))
    expected = [("kernel", dev.func("fill")), ("value_write", 11), ("kernel", dev.func("copy")),
                ("value_write", 22), ("kernel", dev.func("fill"))]
    expect.eq(seen, expected, "KERNEL / VALUE_WRITE tasks in list order")


@pytest.mark.clause("LIST-10")
@pytest.mark.requires(Cap.TASK_TYPE)
def test_list_10_extra_tasks_are_default(dev: Dev) -> None:
    """LIST-10 Besides the user's kernels, any listed task of a kernel-only capture has type DEFAULT."""
    values = [1, 2, 3]
    model, _, _ = dev.capture_fills(values)
    types = [dev.type_of(t) for t in dev.all_tasks(model)]
    expect.eq(sum(1 for t in types if t == TaskType.KERNEL), len(values), "KERNEL task count")
    others = sorted({t for t in types if t != TaskType.KERNEL})
    expect.true(others in ([], [TaskType.DEFAULT]), "types of the non-user tasks",
                "only DEFAULT", others)


@pytest.mark.clause("LIST-11")
def test_list_11_listing_during_capture(dev: Dev) -> None:
    """LIST-11 GetStreams / GetTasksByStream succeed on a model that is still capturing."""
    b = dev.b
    s = dev.stream()
    out = dev.buffer(n=N)
    dev.begin(s)
    dev.fill(s, out, 1)
    rc, status, model = b.capture_get_info(s)
    expect.ok(rc, "aclmdlRICaptureGetInfo (setup)")
    rc, _, n = b.get_streams(model, None)
    expect.ok(rc, "GetStreams during capture")
    expect.eq(n, 1, "GetStreams count during a single-stream capture")
    rc, slots, _ = b.get_streams(model, 1)
    expect.ok(rc, "GetStreams(fill) during capture")
    rc, _, before = b.get_tasks_by_stream(slots[0], None)
    expect.ok(rc, "GetTasksByStream during capture")
    expect.true(before >= 1, "tasks listed after one captured kernel", ">= 1", before)
    dev.fill(s, out, 2)
    rc, _, after = b.get_tasks_by_stream(slots[0], None)
    expect.ok(rc, "GetTasksByStream during capture (second)")
    expect.true(after > before, "task count grows with a second captured kernel",
                f"> {before}", after)
    dev.end(s)


@pytest.mark.clause("LIST-11")
@pytest.mark.requires(Cap.VALUE_TASKS)
@pytest.mark.requires(Cap.BLOCKING_WAIT)
def test_list_11_listing_during_execution(dev: Dev) -> None:
    """LIST-11 GetStreams / GetTasksByStream succeed and list the same entries while an execution is in flight."""
    b = dev.b
    s, exe = dev.stream(), dev.stream()
    out = dev.buffer(n=N)
    word = dev.buffer64(1)
    dev.begin(s)
    expect.ok(b.value_wait(word, 1, ValueWaitFlag.EQ, s), "aclrtValueWait (capture)")
    dev.fill(s, out, 7)
    model = dev.end(s)
    dev.execute(model, exe)  # first run unblocked, so any first-run internal task exists now
    streams = dev.streams_of(model)
    tasks = [dev.tasks_of(x) for x in streams]
    dev.write(out, np.full(N, -1))
    dev.write64(word, 0)
    expect.ok(b.execute_async(model, exe), "aclmdlRIExecuteAsync (blocked run)")
    try:
        rc, slots, n = b.get_streams(model, len(streams))
        expect.ok(rc, "GetStreams while executing")
        expect.eq(slots, streams, "GetStreams while executing")
        for x, before in zip(streams, tasks):
            rc, tslots, _ = b.get_tasks_by_stream(x, len(before))
            expect.ok(rc, "GetTasksByStream while executing")
            expect.eq(tslots, before, "GetTasksByStream while executing")
    finally:
        dev.write64(word, 1)
        dev.sync(exe)
    expect.eq(dev.read(out), np.full(N, 7), "output after unblocking (harness check)")


# ---------------------------------------------------------------------------------------------
# TYPE


@pytest.mark.clause("TYPE-01")
@pytest.mark.requires(Cap.TASK_TYPE)
def test_type_01_values_in_enumeration(dev: Dev) -> None:
    """TYPE-01 Every GetType value is one of DEFAULT(0)..VALUE_WAIT(6)."""
    rich = _capture_rich(dev)
    allowed = {int(t) for t in TaskType}
    types = [dev.type_of(t) for t in dev.all_tasks(rich.model)]
    expect.true(all(int(t) in allowed for t in types), "GetType values", sorted(allowed), types)


@pytest.mark.clause("TYPE-02")
@pytest.mark.requires(Cap.TASK_TYPE)
def test_type_02_api_to_type_mapping(dev: Dev) -> None:
    """TYPE-02 Launch→KERNEL, Record→EVENT_RECORD, Wait→EVENT_WAIT, reset (CaptureEnd's, XS-08)→EVENT_RESET, ValueWrite/Wait→VALUE_*, memcpy/memset→DEFAULT."""
    rich = _capture_rich(dev)
    types = [dev.type_of(t) for t in dev.tasks_of(_only_stream(dev, rich.model))]
    typed = [(i, t) for i, t in enumerate(types) if t != TaskType.DEFAULT]
    head = [t for _, t in typed[:len(rich.expected)]]
    expect.eq(head, rich.expected, "non-DEFAULT task types in list order")
    # anything after these is runtime-added too (XS-08 resets at CaptureEnd)
    tail = [t for _, t in typed[len(rich.expected):]]
    expect.true(all(t == TaskType.EVENT_RESET for t in tail), "types after the user's tasks",
                "only EVENT_RESET", tail)
    idx = [i for i, _ in typed]
    for k in rich.default_after:
        expect.true(idx[k + 1] - idx[k] >= 2,
                    f"a DEFAULT task between typed tasks {k} and {k + 1} (memcpy/memset)",
                    ">= 1 DEFAULT task", types[idx[k]:idx[k + 1] + 1])


@pytest.mark.clause("TYPE-05")
@pytest.mark.requires(Cap.TASK_TYPE)
def test_type_05_runtime_tasks_default(dev: Dev) -> None:
    """TYPE-05 Every task of an empty capture is runtime-owned and reports DEFAULT."""
    s = dev.stream()
    dev.begin(s)
    model = dev.end(s)
    types = [dev.type_of(t) for t in dev.all_tasks(model)]
    expect.true(all(t == TaskType.DEFAULT for t in types), "GetType of runtime-owned tasks",
                "all DEFAULT", types)


@pytest.mark.clause("TYPE-06")
@pytest.mark.requires(Cap.TASK_TYPE)
def test_type_06_null_arguments(dev: Dev) -> None:
    """TYPE-06 GetType with a NULL task or NULL out-pointer returns 107000."""
    b = dev.b
    model, _, _ = dev.capture_fills([1])
    task = dev.tasks_of(_only_stream(dev, model))[0]
    expect.rc(b.task_get_type(None)[0], Err.RT_PARAM_INVALID, "GetType(task=NULL)")
    expect.rc(b.task_get_type(task, null_out=True)[0], Err.RT_PARAM_INVALID,
              "GetType(type=NULL)")


@pytest.mark.clause("TYPE-07")
@pytest.mark.requires(Cap.TASK_TYPE, Cap.SET_PARAMS, Cap.VALUE_TASKS)
def test_type_07_set_params_changes_type(dev: Dev) -> None:
    """TYPE-07 After SetParams(VALUE_WRITE) on a kernel task, GetType returns VALUE_WRITE before Update."""
    model, _, _ = dev.capture_fills([1])
    [task] = dev.kernel_tasks(model)
    word = dev.buffer64(0)
    params = TaskParams(type=TaskType.VALUE_WRITE,
                        value_write=ValueWriteTaskParams(dev_addr=word, value=9))
    expect.ok(dev.b.task_set_params(task, params), "SetParams(VALUE_WRITE) on a kernel task")
    expect.eq(dev.type_of(task), TaskType.VALUE_WRITE, "GetType after SetParams, before Update")


# ---------------------------------------------------------------------------------------------
# error-table rows


@pytest.mark.clause("ERR-09")
def test_err_09_get_streams_row(dev: Dev) -> None:
    """ERR-09 GetStreams: NULL model 107000, NULL numStreams 107000, capacity < count 107039."""
    b = dev.b
    model, _, _ = dev.capture_fills([1])
    expect.rc(b.get_streams(None, None)[0], Err.RT_PARAM_INVALID, "GetStreams(model=NULL)")
    expect.rc(b.get_streams(model, None, null_count=True)[0], Err.RT_PARAM_INVALID,
              "GetStreams(numStreams=NULL)")
    expect.rc(b.get_streams(model, 0)[0], Err.RT_INSUFFICIENT_INPUT_ARRAY,
              "GetStreams(capacity 0 < count)")
    expect.ok(b.get_streams(model, 1)[0], "GetStreams(capacity = count)")


@pytest.mark.clause("ERR-10")
def test_err_10_get_tasks_by_stream_row(dev: Dev) -> None:
    """ERR-10 GetTasksByStream: NULL stream / NULL numTasks / non-model stream 107000, capacity < count 107039."""
    b = dev.b
    model, origin, _ = dev.capture_fills([1, 2])
    s = _only_stream(dev, model)
    n = len(dev.tasks_of(s))
    expect.rc(b.get_tasks_by_stream(None, None)[0], Err.RT_PARAM_INVALID,
              "GetTasksByStream(stream=NULL)")
    expect.rc(b.get_tasks_by_stream(s, None, null_count=True)[0], Err.RT_PARAM_INVALID,
              "GetTasksByStream(numTasks=NULL)")
    expect.rc(b.get_tasks_by_stream(origin, None)[0], Err.RT_PARAM_INVALID,
              "GetTasksByStream(non-model stream)")
    expect.rc(b.get_tasks_by_stream(s, n - 1)[0], Err.RT_INSUFFICIENT_INPUT_ARRAY,
              "GetTasksByStream(capacity = count-1)")


@pytest.mark.clause("ERR-12")
@pytest.mark.requires(Cap.TASK_TYPE)
def test_err_12_task_get_type_row(dev: Dev) -> None:
    """ERR-12 TaskGetType: NULL task 107000, NULL type pointer 107000."""
    b = dev.b
    model, _, _ = dev.capture_fills([1])
    [task] = dev.kernel_tasks(model)
    expect.rc(b.task_get_type(None)[0], Err.RT_PARAM_INVALID, "TaskGetType(task=NULL)")
    expect.rc(b.task_get_type(task, null_out=True)[0], Err.RT_PARAM_INVALID,
              "TaskGetType(type=NULL)")
    rc, ty = b.task_get_type(task)
    expect.ok(rc, "TaskGetType(valid)")
    expect.eq(ty, TaskType.KERNEL, "TaskGetType(valid) type")
