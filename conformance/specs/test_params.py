"""Reading and setting task parameters (aclmdlRITaskGetParams / aclmdlRITaskSetParams).

Clause groups: GETP, SETP, and the error-table rows ERR-13 (TaskGetParams), ERR-14
(TaskSetParams) and ERR-33 (NULL -> 107000 for the experimental list/task APIs vs 100000 for
the ACL-checked ones).

Not covered: GETP-08 (chip-specific 207000), GETP-09 and SETP-17 (concurrency rules with no
observable), SETP-06 (task groups are not in the contract), SETP-08 (launch attributes and
KernelTaskGetAttribute are not in the contract), SETP-16 (the contract leaves how an
opInfoPtr blob is passed unspecified), the stale-funcHandle 107017 case of SETP-05, and the
sub-model / non-capture / no-software-SQ columns of GETP-07, SETP-11, ERR-13, ERR-14.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest

from mdlri_conformance.backends.contract import (
    UNION_MEMBER_SIZE, UNION_SIZE, Cap, CaptureMode, Err, EventRecordTaskParams,
    EventResetTaskParams, EventWaitTaskParams, MemcpyKind, TaskParams, TaskType, ValueWaitFlag,
    ValueWaitTaskParams, ValueWriteTaskParams,
)
from mdlri_conformance.conformance import expect
from mdlri_conformance.conformance.harness import SENTINEL, Buf, Dev

pytestmark = pytest.mark.requires(Cap.CAPTURE, Cap.LISTING, Cap.TASK_TYPE, Cap.KERNELS)

N = 8
GETP = (Cap.GET_PARAMS,)
SETP = (Cap.SET_PARAMS, Cap.UPDATE)


# ---------------------------------------------------------------------------------------------
# helpers


def _value_write(addr: int, value: int) -> TaskParams:
    return TaskParams(type=TaskType.VALUE_WRITE,
                      value_write=ValueWriteTaskParams(dev_addr=addr, value=value))


def _fill_model(dev: Dev, value: int = 1, num_blocks: int = 1) -> tuple[Any, Any, Buf, Any]:
    """Single-stream capture of one ``fill`` -> (model, stream, output buffer, kernel task)."""
    s = dev.stream()
    out = dev.buffer(n=N)
    dev.begin(s)
    dev.launch("fill", s, num_blocks, out=out, n=N, value=value)
    model = dev.end(s)
    [task] = dev.kernel_tasks(model)
    return model, s, out, task


def _blocked_fill_model(dev: Dev, value: int) -> tuple[Any, Buf, int, Any]:
    """Capture ``value_wait(word == 1)`` then ``fill``; the word starts at 0 so a run blocks.

    Returns (model, output buffer, word address, kernel task).
    """
    b = dev.b
    s = dev.stream()
    out = dev.buffer(n=N)
    word = dev.buffer64(0)
    dev.begin(s)
    expect.ok(b.value_wait(word, 1, ValueWaitFlag.EQ, s), "aclrtValueWait (capture)")
    dev.launch("fill", s, out=out, n=N, value=value)
    model = dev.end(s)
    [task] = dev.kernel_tasks(model)
    return model, out, word, task


def _typed(dev: Dev, model: Any) -> dict[int, list[Any]]:
    """Tasks of a model grouped by GetType, list order kept."""
    out: dict[int, list[Any]] = {}
    for t in dev.all_tasks(model):
        out.setdefault(dev.type_of(t), []).append(t)
    return out


def _default_between_kernels(dev: Dev, model: Any) -> Any:
    """The first DEFAULT task listed between the first two KERNEL tasks of a 1-stream model."""
    tasks = dev.tasks_of(dev.streams_of(model)[0])
    types = [dev.type_of(t) for t in tasks]
    k = [i for i, t in enumerate(types) if t == TaskType.KERNEL]
    between = [tasks[i] for i in range(k[0] + 1, k[1]) if types[i] == TaskType.DEFAULT]
    expect.true(len(between) >= 1, "DEFAULT task between the kernels (setup)", ">= 1", types)
    return between[0]


def _memcpy_model(dev: Dev) -> tuple[Any, Any]:
    """Capture fill, memcpyAsync (a DEFAULT task, TYPE-02), fill -> (model, stream)."""
    s = dev.stream()
    a, c = dev.buffer(n=N), dev.buffer(n=N)
    dev.begin(s)
    dev.launch("fill", s, out=a, n=N, value=1)
    expect.ok(dev.b.memcpy_async(c.addr, c.nbytes, a.addr, a.nbytes,
                                 MemcpyKind.DEVICE_TO_DEVICE, s), "aclrtMemcpyAsync (capture)")
    dev.launch("fill", s, out=c, n=N, value=2)
    return dev.end(s), s


def _event_model(dev: Dev) -> tuple[Any, Any, Any]:
    """Capture fill, record(e), wait(e) on one stream -> (model, stream, user event); the
    EVENT_RESET is the one CaptureEnd appends for the captured record (XS-08): the runtime
    refuses a user's aclrtResetEvent of an aclrtCreateEventExWithFlag event with 207000
    (ApiImpl::EventReset, `api/impl/api_impl.cc:2210-2214`)."""
    b = dev.b
    s = dev.stream()
    e = dev.event()
    out = dev.buffer(n=N)
    dev.begin(s)
    dev.launch("fill", s, out=out, n=N, value=1)
    expect.ok(b.record_event(e, s), "aclrtRecordEvent (capture)")
    expect.ok(b.stream_wait_event(s, e), "aclrtStreamWaitEvent (capture)")
    return dev.end(s), s, e


def _expect_fault(dev: Dev, model: Any, stream: Any, out: Buf | None = None) -> None:
    """The model is in FAULT: ExecuteAsync -> 507011 (nothing runs), Update -> 107040."""
    b = dev.b
    if out is not None:
        dev.write(out, np.full(out.n, SENTINEL))
    expect.rc(b.execute_async(model, stream), Err.RT_MODEL_EXECUTE, "ExecuteAsync after FAULT")
    dev.sync(stream)
    if out is not None:
        expect.eq(dev.read(out), np.full(out.n, SENTINEL), "output after a refused execution")
    expect.rc(b.update(model), Err.RT_MODEL_UPDATE_FAILED, "aclmdlRIUpdate after FAULT")


def _expect_fill(dev: Dev, out: Buf, value: int, what: str) -> None:
    expect.eq(dev.read(out), np.full(out.n, value, dtype=np.int32), what)


# ---------------------------------------------------------------------------------------------
# GETP


@pytest.mark.clause("GETP-01")
@pytest.mark.requires(*GETP)
def test_getp_01_supported_types(dev: Dev) -> None:
    """GETP-01 GetParams succeeds with params.type = GetType for non-DEFAULT tasks and returns 107000 for DEFAULT ones."""
    b = dev.b
    s = dev.stream()
    e = dev.event()
    a, c = dev.buffer(n=N), dev.buffer(n=N)
    word = dev.buffer64(0)
    dev.begin(s)
    dev.launch("fill", s, out=a, n=N, value=1)
    expect.ok(b.memcpy_async(c.addr, c.nbytes, a.addr, a.nbytes, MemcpyKind.DEVICE_TO_DEVICE, s),
              "aclrtMemcpyAsync (capture)")
    expect.ok(b.record_event(e, s), "aclrtRecordEvent (capture)")
    expect.ok(b.stream_wait_event(s, e), "aclrtStreamWaitEvent (capture)")
    expect.ok(b.memset_async(c.addr, c.nbytes, 0, c.nbytes, s), "aclrtMemsetAsync (capture)")
    # EVENT_RESET: CaptureEnd's, for the captured record (XS-08; a user's reset is refused,
    # `api/impl/api_impl.cc:2210-2214`)
    want = {TaskType.KERNEL, TaskType.EVENT_RECORD, TaskType.EVENT_WAIT, TaskType.EVENT_RESET}
    if Cap.VALUE_TASKS in b.capabilities:
        expect.ok(b.value_write(word, 3, 0, s), "aclrtValueWrite (capture)")
        expect.ok(b.value_wait(word, 3, ValueWaitFlag.EQ, s), "aclrtValueWait (capture)")
        want |= {TaskType.VALUE_WRITE, TaskType.VALUE_WAIT}
    model = dev.end(s)
    typed = _typed(dev, model)
    expect.true(want <= set(typed), "task types present (setup)", sorted(want), sorted(typed))
    expect.true(len(typed.get(TaskType.DEFAULT, [])) >= 2, "DEFAULT tasks (memcpy, memset)",
                ">= 2", len(typed.get(TaskType.DEFAULT, [])))
    for ty, tasks in sorted(typed.items()):
        for t in tasks:
            rc, p = b.task_get_params(t)
            if ty == TaskType.DEFAULT:
                expect.rc(rc, Err.RT_PARAM_INVALID, "GetParams on a DEFAULT task")
            else:
                expect.ok(rc, f"GetParams on a {TaskType(ty).name} task")
                expect.eq(p.type, ty, f"params.type of a {TaskType(ty).name} task")


@pytest.mark.clause("GETP-02")
@pytest.mark.requires(*GETP)
def test_getp_02_zeroed_reserved_and_tail(dev: Dev) -> None:
    """GETP-02 Reserved fields, unused union bytes and the inactive members read as zero/NULL."""
    b = dev.b
    model, _, _ = _event_model(dev)
    if Cap.VALUE_TASKS in b.capabilities:
        s = dev.stream()
        word = dev.buffer64(0)
        dev.begin(s)
        expect.ok(b.value_write(word, 3, 0, s), "aclrtValueWrite (capture)")
        expect.ok(b.value_wait(word, 3, ValueWaitFlag.GEQ, s), "aclrtValueWait (capture)")
        models = [model, dev.end(s)]
    else:
        models = [model]
    members = {TaskType.KERNEL: "kernel", TaskType.EVENT_RECORD: "event_record",
               TaskType.EVENT_WAIT: "event_wait", TaskType.EVENT_RESET: "event_reset",
               TaskType.VALUE_WRITE: "value_write", TaskType.VALUE_WAIT: "value_wait"}
    checked = 0
    for m in models:
        for ty, tasks in _typed(dev, m).items():
            if ty == TaskType.DEFAULT:
                continue
            name = TaskType(ty).name
            for t in tasks:
                p = dev.params_of(t)
                checked += 1
                expect.eq(tuple(p.rsv0), (0, 0, 0), f"{name} rsv0")
                expect.eq(bytes(p.rsv1), bytes(32), f"{name} rsv1")
                tail = UNION_SIZE - UNION_MEMBER_SIZE[TaskType(ty)]
                expect.eq(bytes(p.union_tail), bytes(tail), f"{name} union bytes past the member")
                inactive = [k for k in members.values()
                            if k != members[ty] and getattr(p, k) is not None]
                expect.eq(inactive, [], f"{name} inactive union members")
                if ty == TaskType.KERNEL:
                    expect.eq(tuple(p.kernel.rsv), (0,) * 10, "kernel rsv")
                else:
                    expect.true(p.task_grp is None and p.op_info_ptr is None
                                and p.op_info_size == 0, f"{name} taskGrp/opInfo",
                                "NULL/NULL/0", (p.task_grp, p.op_info_ptr, p.op_info_size))
    expect.true(checked >= 4, "tasks checked (setup)", ">= 4", checked)


@pytest.mark.clause("GETP-03")
@pytest.mark.requires(*GETP)
def test_getp_03_kernel_fields(dev: Dev) -> None:
    """GETP-03 Kernel params: funcHandle, cfg NULL, isHostArgs 0, argsSize, numBlocks, taskGrp NULL, args = device copy of the launch args."""
    value, blocks = 42, 3
    model, _, out, task = _fill_model(dev, value=value, num_blocks=blocks)
    packed = dev.args("fill", out=out, n=N, value=value)
    p = dev.params_of(task)
    expect.eq(p.type, TaskType.KERNEL, "params.type")
    k = p.kernel
    expect.true(k is not None, "params.kernel", "filled", k)
    expect.eq(k.func_handle, dev.func("fill"), "mdlri_conformance.kernel.funcHandle")
    expect.true(k.cfg is None, "mdlri_conformance.kernel.cfg", None, k.cfg)
    expect.eq(k.is_host_args, 0, "mdlri_conformance.kernel.isHostArgs")
    expect.eq(k.args_size, len(packed), "mdlri_conformance.kernel.argsSize")
    expect.eq(k.num_blocks, blocks, "mdlri_conformance.kernel.numBlocks")
    expect.true(p.task_grp is None, "params.taskGrp (no task group)", None, p.task_grp)
    expect.true(isinstance(k.args, int) and k.args != 0, "mdlri_conformance.kernel.args", "a device address",
                k.args)
    expect.eq(dev.read_bytes(k.args, k.args_size), packed, "bytes at kernel.args on the device")


@pytest.mark.clause("GETP-04")
@pytest.mark.requires(*GETP)
def test_getp_04_event_fields(dev: Dev) -> None:
    """GETP-04 Event params name an internal event (not the user's), with record/wait/reset flags 0."""
    model, _, user_event = _event_model(dev)
    typed = _typed(dev, model)
    expect.true(TaskType.EVENT_RESET in typed, "CaptureEnd's EVENT_RESET task (XS-08, setup)",
                "present", sorted(typed))
    rec = dev.params_of(typed[TaskType.EVENT_RECORD][0]).event_record
    wait = dev.params_of(typed[TaskType.EVENT_WAIT][0]).event_wait
    reset = dev.params_of(typed[TaskType.EVENT_RESET][0]).event_reset
    for name, m in (("record", rec), ("wait", wait), ("reset", reset)):
        expect.true(m is not None and m.event is not None, f"{name}.event", "non-NULL", m)
        expect.ne(m.event, user_event, f"{name}.event vs the user's aclrtEvent")
    expect.eq(rec.record_flag, 0, "eventRecord.recordFlag")
    expect.eq(wait.wait_flag, 0, "eventWait.waitFlag")
    expect.eq(reset.reset_flag, 0, "eventReset.resetFlag")


@pytest.mark.clause("GETP-05")
@pytest.mark.requires(*GETP, Cap.VALUE_TASKS)
def test_getp_05_value_fields_round_trip(dev: Dev) -> None:
    """GETP-05 VALUE_WRITE returns the captured devAddr/value; VALUE_WAIT returns devAddr/value/flag."""
    b = dev.b
    s = dev.stream()
    w1, w2 = dev.buffer64(0), dev.buffer64(0)
    v1, v2, flag = 0x1_2345_6789, 0xFEDC_BA98_7654_3210, ValueWaitFlag.AND
    dev.begin(s)
    expect.ok(b.value_write(w1, v1, 0, s), "aclrtValueWrite (capture)")
    expect.ok(b.value_wait(w2, v2, flag, s), "aclrtValueWait (capture)")
    model = dev.end(s)
    typed = _typed(dev, model)
    pw = dev.params_of(typed[TaskType.VALUE_WRITE][0])
    pv = dev.params_of(typed[TaskType.VALUE_WAIT][0])
    expect.eq((pw.type, pw.value_write.dev_addr, pw.value_write.value),
              (TaskType.VALUE_WRITE, w1, v1), "VALUE_WRITE (type, devAddr, value)")
    expect.eq((pv.type, pv.value_wait.dev_addr, pv.value_wait.value, pv.value_wait.flag),
              (TaskType.VALUE_WAIT, w2, v2, flag), "VALUE_WAIT (type, devAddr, value, flag)")


@pytest.mark.clause("GETP-06")
@pytest.mark.requires(*GETP, *SETP)
def test_getp_06_kernel_new_values_before_update(dev: Dev) -> None:
    """GETP-06 After a kernel SetParams, GetParams returns the new funcHandle/numBlocks/argsSize before Update."""
    model, _, out, task = _fill_model(dev, value=1, num_blocks=1)
    dst = dev.buffer(n=N)
    new = dev.kernel_params("copy", num_blocks=5, src=out, dst=dst, n=N)
    expect.ok(dev.b.task_set_params(task, new), "SetParams(copy kernel)")
    k = dev.params_of(task).kernel
    expect.eq((k.func_handle, k.num_blocks, k.args_size),
              (dev.func("copy"), 5, new.kernel.args_size),
              "GetParams (funcHandle, numBlocks, argsSize) before Update")


@pytest.mark.clause("GETP-06")
@pytest.mark.requires(*GETP, *SETP, Cap.VALUE_TASKS)
def test_getp_06_value_new_values_before_update(dev: Dev) -> None:
    """GETP-06 After a VALUE_WRITE SetParams, GetParams returns the new devAddr/value before Update."""
    b = dev.b
    s = dev.stream()
    w1, w2 = dev.buffer64(0), dev.buffer64(0)
    dev.begin(s)
    expect.ok(b.value_write(w1, 1, 0, s), "aclrtValueWrite (capture)")
    model = dev.end(s)
    [task] = _typed(dev, model)[TaskType.VALUE_WRITE]
    expect.ok(b.task_set_params(task, _value_write(w2, 77)), "SetParams(VALUE_WRITE)")
    p = dev.params_of(task)
    expect.eq((p.value_write.dev_addr, p.value_write.value), (w2, 77),
              "GetParams (devAddr, value) before Update")


@pytest.mark.clause("GETP-07")
@pytest.mark.requires(*GETP)
def test_getp_07_error_cases(dev: Dev) -> None:
    """GETP-07 GetParams: NULL task 107000, NULL params 107000, DEFAULT (memcpy) task 107000."""
    b = dev.b
    model, _ = _memcpy_model(dev)
    kernel = dev.kernel_tasks(model)[0]
    expect.rc(b.task_get_params(None)[0], Err.RT_PARAM_INVALID, "GetParams(task=NULL)")
    expect.rc(b.task_get_params(kernel, null_out=True)[0], Err.RT_PARAM_INVALID,
              "GetParams(params=NULL)")
    expect.rc(b.task_get_params(_default_between_kernels(dev, model))[0], Err.RT_PARAM_INVALID,
              "GetParams(memcpy task)")


# ---------------------------------------------------------------------------------------------
# SETP


@pytest.mark.clause("SETP-01")
@pytest.mark.requires(*SETP)
def test_setp_01_deferred_until_update(dev: Dev) -> None:
    """SETP-01 New kernel args reach the device only after Update: before it nothing runs with them, after it they do."""
    b = dev.b
    old, new = 1, 2
    model, s, out, task = _fill_model(dev, value=old)
    dev.execute(model, s)
    _expect_fill(dev, out, old, "output of the captured kernel (harness)")
    dev.write(out, np.full(N, SENTINEL))
    out2 = dev.buffer(n=N)
    expect.ok(b.task_set_params(task, dev.fill_params(out2, new)), "SetParams")
    rc = b.execute_async(model, s)
    dev.sync(s)
    # Refusing the run (SETP-02) and running the old parameters both keep the new ones off the
    # device; only the latter writes `out`.
    expect.eq(dev.read(out2), np.full(N, SENTINEL), "new target before Update")
    expect.eq(dev.read(out), np.full(N, old if rc == Err.SUCCESS else SENTINEL),
              f"old target before Update (ExecuteAsync rc {rc})")
    dev.write(out, np.full(N, SENTINEL))
    expect.ok(b.update(model), "aclmdlRIUpdate")
    dev.execute(model, s)
    _expect_fill(dev, out2, new, "new target after Update + execute")
    expect.eq(dev.read(out), np.full(N, SENTINEL), "old target after Update + execute")


@pytest.mark.clause("SETP-02")
@pytest.mark.requires(*SETP)
def test_setp_02_execute_while_updating(dev: Dev) -> None:
    """SETP-02 ExecuteAsync between SetParams and Update returns 507011 and enqueues nothing."""
    b = dev.b
    model, s, out, task = _fill_model(dev, value=1)
    out2 = dev.buffer(n=N)
    expect.ok(b.task_set_params(task, dev.fill_params(out2, 2)), "SetParams")
    expect.rc(b.execute_async(model, s), Err.RT_MODEL_EXECUTE, "ExecuteAsync while UPDATING")
    dev.sync(s)
    expect.eq(dev.read(out), np.full(N, SENTINEL), "old target after the refused run")
    expect.eq(dev.read(out2), np.full(N, SENTINEL), "new target after the refused run")


def _event_record(e: Any) -> TaskParams:
    return TaskParams(type=TaskType.EVENT_RECORD, event_record=EventRecordTaskParams(event=e))


def _event_wait(e: Any) -> TaskParams:
    return TaskParams(type=TaskType.EVENT_WAIT, event_wait=EventWaitTaskParams(event=e))


def _event_reset(e: Any) -> TaskParams:
    return TaskParams(type=TaskType.EVENT_RESET, event_reset=EventResetTaskParams(event=e))


REJECTED_TYPES: dict[str, Callable[[Any], TaskParams]] = {
    "EVENT_RECORD": _event_record,
    "EVENT_WAIT": _event_wait,
    "EVENT_RESET": _event_reset,
    "DEFAULT": lambda e: TaskParams(type=TaskType.DEFAULT),
    "type_99": lambda e: TaskParams(type=99),
}


@pytest.mark.clause("SETP-03")
@pytest.mark.requires(*SETP)
@pytest.mark.parametrize("kind", list(REJECTED_TYPES))
def test_setp_03_rejected_types_fault(dev: Dev, kind: str) -> None:
    """SETP-03 SetParams with a type other than KERNEL/VALUE_WRITE/VALUE_WAIT returns 107000 and leaves the model in FAULT."""
    model, s, out, task = _fill_model(dev)
    params = REJECTED_TYPES[kind](dev.event())
    expect.rc(dev.b.task_set_params(task, params), Err.RT_PARAM_INVALID, f"SetParams(type {kind})")
    _expect_fault(dev, model, s, out)


@pytest.mark.clause("SETP-04")
@pytest.mark.requires(*SETP)
def test_setp_04_kernel_params_on_non_kernel(dev: Dev) -> None:
    """SETP-04 KERNEL params on a non-kernel (EVENT_RECORD) task return 107000 and leave the model in FAULT."""
    model, s, _ = _event_model(dev)
    [rec] = _typed(dev, model)[TaskType.EVENT_RECORD]
    out = dev.buffer(n=N)
    expect.rc(dev.b.task_set_params(rec, dev.fill_params(out, 5)), Err.RT_PARAM_INVALID,
              "SetParams(KERNEL) on an EVENT_RECORD task")
    _expect_fault(dev, model, s, out)


def _no_func(p: TaskParams) -> None:
    p.kernel.func_handle = None


def _no_args(p: TaskParams) -> None:
    p.kernel.args = None


def _zero_size(p: TaskParams) -> None:
    p.kernel.args_size = 0


BAD_KERNEL_ARGS: dict[str, Callable[[TaskParams], None]] = {
    "funcHandle_NULL": _no_func, "args_NULL": _no_args, "argsSize_0": _zero_size}


@pytest.mark.clause("SETP-05")
@pytest.mark.requires(*SETP)
@pytest.mark.parametrize("case", list(BAD_KERNEL_ARGS))
def test_setp_05_kernel_args_validation(dev: Dev, case: str) -> None:
    """SETP-05 A NULL funcHandle, NULL args or argsSize 0 returns 107000 and leaves the model in FAULT."""
    model, s, out, task = _fill_model(dev)
    params = dev.fill_params(out, 5)
    BAD_KERNEL_ARGS[case](params)
    expect.rc(dev.b.task_set_params(task, params), Err.RT_PARAM_INVALID, f"SetParams({case})")
    _expect_fault(dev, model, s, out)


@pytest.mark.clause("SETP-07")
@pytest.mark.requires(*SETP, *GETP, Cap.VALUE_TASKS)
def test_setp_07_kernel_to_value_write(dev: Dev) -> None:
    """SETP-07 SetParams(VALUE_WRITE) converts a kernel task: GetParams shows it and, after Update, the run writes the value instead of the kernel output."""
    b = dev.b
    model, s, out, task = _fill_model(dev)
    word = dev.buffer64(0)
    value = 0x5_0000_0003
    expect.ok(b.task_set_params(task, _value_write(word, value)), "SetParams(VALUE_WRITE)")
    p = dev.params_of(task)
    expect.eq((p.type, p.value_write.dev_addr, p.value_write.value),
              (TaskType.VALUE_WRITE, word, value), "GetParams after the conversion")
    expect.ok(b.update(model), "aclmdlRIUpdate")
    dev.execute(model, s)
    expect.eq(dev.read64(word), value, "word written by the converted task")
    expect.eq(dev.read(out), np.full(N, SENTINEL), "former kernel output (no longer a kernel)")


@pytest.mark.clause("SETP-07")
@pytest.mark.requires(*SETP, *GETP, Cap.VALUE_TASKS)
@pytest.mark.requires(Cap.BLOCKING_WAIT)
@pytest.mark.parametrize("flag", [ValueWaitFlag.GEQ, ValueWaitFlag.EQ, ValueWaitFlag.NOR],
                         ids=["GEQ", "EQ", "NOR"])
def test_setp_07_value_write_to_value_wait(dev: Dev, flag: int) -> None:
    """SETP-07 SetParams(VALUE_WAIT) converts a VALUE_WRITE task and keeps the flag it is
    given, the last of the four (NOR) too: GetParams shows it, and after Update the wait holds
    on a word its condition accepts (GEQ 0 - 0 >= 0; EQ 0 == 0; NOR ~(0 | 0) != 0, abi.md
    §3.5), so the execution completes and the write no longer happens (the runtime stores the
    flag as given, `core/src/task/task_info/memory/memory_task.cc:751-762, 401-410`)."""
    b = dev.b
    s = dev.stream()
    word, cond = dev.buffer64(0), dev.buffer64(0)
    dev.begin(s)
    expect.ok(b.value_write(word, 3, 0, s), "aclrtValueWrite (capture)")
    model = dev.end(s)
    [task] = _typed(dev, model)[TaskType.VALUE_WRITE]
    params = TaskParams(type=TaskType.VALUE_WAIT, value_wait=ValueWaitTaskParams(
        dev_addr=cond, value=0, flag=flag))
    expect.ok(b.task_set_params(task, params), "SetParams(VALUE_WAIT) on a VALUE_WRITE task")
    p = dev.params_of(task)
    expect.eq((p.type, p.value_wait.dev_addr, p.value_wait.value, p.value_wait.flag),
              (TaskType.VALUE_WAIT, cond, 0, flag), "GetParams after the conversion")
    expect.ok(b.update(model), "aclmdlRIUpdate")
    dev.execute(model, s)
    expect.eq(dev.read64(word), 0, "word the former VALUE_WRITE targeted")


@pytest.mark.clause("SETP-07")
@pytest.mark.requires(*SETP, Cap.VALUE_TASKS)
def test_setp_07_default_task_rejected(dev: Dev) -> None:
    """SETP-07 SetParams(VALUE_WRITE) on a DEFAULT (memcpy) task returns 107000 and leaves the model in FAULT."""
    model, s = _memcpy_model(dev)
    word = dev.buffer64(0)
    target = _default_between_kernels(dev, model)
    expect.rc(dev.b.task_set_params(target, _value_write(word, 1)), Err.RT_PARAM_INVALID,
              "SetParams(VALUE_WRITE) on a memcpy task")
    _expect_fault(dev, model, s)


@pytest.mark.clause("SETP-09")
@pytest.mark.requires(*SETP)
@pytest.mark.parametrize("host", [
    pytest.param(True, id="isHostArgs_1"),
    # the args live in device memory written by aclrtMemcpy: without data movement the kernel
    # would run on garbage arguments
    pytest.param(False, id="isHostArgs_0", marks=pytest.mark.requires(Cap.DATA_MOVEMENT)),
])
def test_setp_09_is_host_args(dev: Dev, host: bool) -> None:
    """SETP-09 Args given as host memory (isHostArgs=1) or device memory (isHostArgs=0) both reach the kernel."""
    b = dev.b
    model, s, out, task = _fill_model(dev, value=1)
    out2 = dev.buffer(n=N)
    value = 31 if host else 57
    expect.ok(b.task_set_params(task, dev.fill_params(out2, value, host=host)), "SetParams")
    expect.ok(b.update(model), "aclmdlRIUpdate")
    dev.execute(model, s)
    _expect_fill(dev, out2, value, "output written with the new args")
    expect.eq(dev.read(out), np.full(N, SENTINEL), "old target")


@pytest.mark.clause("SETP-10")
@pytest.mark.requires(*SETP, Cap.DISABLE)
def test_setp_10_fault_is_terminal(dev: Dev) -> None:
    """SETP-10 After a failed SetParams: SetParams/Disable/Update 107040, ExecuteAsync 507011; Destroy still works."""
    b = dev.b
    model, s, out, task = _fill_model(dev)
    expect.rc(b.task_set_params(task, TaskParams(type=TaskType.DEFAULT)), Err.RT_PARAM_INVALID,
              "SetParams(DEFAULT) (poisons the model)")
    expect.rc(b.task_set_params(task, dev.fill_params(out, 3)), Err.RT_MODEL_UPDATE_FAILED,
              "valid SetParams after FAULT")
    expect.rc(b.task_disable(task), Err.RT_MODEL_UPDATE_FAILED, "TaskDisable after FAULT")
    _expect_fault(dev, model, s, out)
    expect.ok(dev.destroy(model), "aclmdlRIDestroy of a FAULT model")


@pytest.mark.clause("SETP-11")
@pytest.mark.requires(*SETP)
def test_setp_11_capture_state_error_keeps_model(dev: Dev) -> None:
    """SETP-11 SetParams refused during capture (107040) leaves the model READY: it executes with the original args."""
    b = dev.b
    s = dev.stream()
    out, out2 = dev.buffer(n=N), dev.buffer(n=N)
    dev.begin(s)
    dev.launch("fill", s, out=out, n=N, value=6)
    rc, _, capturing = b.capture_get_info(s)
    expect.ok(rc, "aclmdlRICaptureGetInfo (setup)")
    [task] = dev.kernel_tasks(capturing)
    expect.rc(b.task_set_params(task, dev.fill_params(out2, 9)), Err.RT_MODEL_UPDATE_FAILED,
              "SetParams during capture")
    model = dev.end(s)
    expect.ok(b.update(model), "aclmdlRIUpdate (nothing pending)")
    dev.execute(model, s)
    _expect_fill(dev, out, 6, "output with the original args")
    expect.eq(dev.read(out2), np.full(N, SENTINEL), "target of the refused SetParams")


@pytest.mark.clause("SETP-11")
@pytest.mark.requires(*SETP, Cap.VALUE_TASKS)
@pytest.mark.requires(Cap.BLOCKING_WAIT)
def test_setp_11_running_state_error_keeps_model(dev: Dev) -> None:
    """SETP-11 SetParams refused while running (107040) leaves the model READY: it re-executes with the original args."""
    b = dev.b
    model, out, word, task = _blocked_fill_model(dev, value=4)
    exe = dev.stream()
    out2 = dev.buffer(n=N)
    expect.ok(b.execute_async(model, exe), "aclmdlRIExecuteAsync (blocked run)")
    try:
        expect.rc(b.task_set_params(task, dev.fill_params(out2, 8)),
                  Err.RT_MODEL_UPDATE_FAILED, "SetParams while running")
    finally:
        dev.write64(word, 1)
        dev.sync(exe)
    _expect_fill(dev, out, 4, "output of the unblocked run")
    dev.write(out, np.full(N, SENTINEL))
    expect.ok(b.update(model), "aclmdlRIUpdate (nothing pending)")
    dev.execute(model, exe)
    _expect_fill(dev, out, 4, "output of a second run (original args)")
    expect.eq(dev.read(out2), np.full(N, SENTINEL), "target of the refused SetParams")


@pytest.mark.clause("SETP-12")
@pytest.mark.requires(*SETP, Cap.VALUE_TASKS)
@pytest.mark.requires(Cap.BLOCKING_WAIT)
def test_setp_12_in_flight_execution(dev: Dev) -> None:
    """SETP-12 SetParams returns 107040 while an execution is in flight and 0 once it has been synchronized."""
    b = dev.b
    model, _, word, task = _blocked_fill_model(dev, value=1)
    exe = dev.stream()
    out2 = dev.buffer(n=N)
    params = dev.fill_params(out2, 12)
    expect.ok(b.execute_async(model, exe), "aclmdlRIExecuteAsync (blocked run)")
    try:
        expect.rc(b.task_set_params(task, params), Err.RT_MODEL_UPDATE_FAILED,
                  "SetParams while the execution is blocked")
    finally:
        dev.write64(word, 1)
        dev.sync(exe)
    expect.ok(b.task_set_params(task, params), "SetParams after unblock + sync")
    expect.ok(b.update(model), "aclmdlRIUpdate")
    dev.execute(model, exe)
    _expect_fill(dev, out2, 12, "output with the new args")


@pytest.mark.clause("SETP-13")
@pytest.mark.requires(*SETP)
def test_setp_13_during_capture(dev: Dev) -> None:
    """SETP-13 SetParams on a task of a model that is still capturing returns 107040."""
    b = dev.b
    s = dev.stream()
    out = dev.buffer(n=N)
    dev.begin(s)
    dev.launch("fill", s, out=out, n=N, value=1)
    rc, _, capturing = b.capture_get_info(s)
    expect.ok(rc, "aclmdlRICaptureGetInfo (setup)")
    [task] = dev.kernel_tasks(capturing)
    rc = b.task_set_params(task, dev.fill_params(out, 2))
    dev.end(s)
    expect.rc(rc, Err.RT_MODEL_UPDATE_FAILED, "SetParams during capture")


@pytest.mark.clause("SETP-14")
@pytest.mark.requires(*SETP)
def test_setp_14_null_arguments(dev: Dev) -> None:
    """SETP-14 SetParams with a NULL task or NULL params returns 107000."""
    b = dev.b
    _, _, out, task = _fill_model(dev)
    expect.rc(b.task_set_params(None, dev.fill_params(out, 2)), Err.RT_PARAM_INVALID,
              "SetParams(task=NULL)")
    expect.rc(b.task_set_params(task, None), Err.RT_PARAM_INVALID, "SetParams(params=NULL)")


@pytest.mark.clause("SETP-15")
@pytest.mark.requires(*SETP, *GETP)
def test_setp_15_num_blocks_truncated(dev: Dev) -> None:
    """SETP-15 numBlocks 70000 is accepted and stored in 16 bits (GetParams shows 70000 & 0xFFFF)."""
    _, _, out, task = _fill_model(dev)
    blocks = 70000
    expect.ok(dev.b.task_set_params(task, dev.fill_params(out, 2, num_blocks=blocks)),
              f"SetParams(numBlocks={blocks})")
    expect.eq(dev.params_of(task).kernel.num_blocks, blocks & 0xFFFF, "GetParams numBlocks")


# ---------------------------------------------------------------------------------------------
# error-table rows


@pytest.mark.clause("ERR-13")
@pytest.mark.requires(*GETP)
def test_err_13_task_get_params_row(dev: Dev) -> None:
    """ERR-13 TaskGetParams: NULL task 107000, NULL params 107000, DEFAULT task 107000."""
    b = dev.b
    model, _ = _memcpy_model(dev)
    kernel = dev.kernel_tasks(model)[0]
    expect.rc(b.task_get_params(None)[0], Err.RT_PARAM_INVALID, "TaskGetParams(task=NULL)")
    expect.rc(b.task_get_params(kernel, null_out=True)[0], Err.RT_PARAM_INVALID,
              "TaskGetParams(params=NULL)")
    expect.rc(b.task_get_params(_default_between_kernels(dev, model))[0], Err.RT_PARAM_INVALID,
              "TaskGetParams(DEFAULT task)")
    expect.ok(b.task_get_params(kernel)[0], "TaskGetParams(kernel task)")


@pytest.mark.clause("ERR-14")
@pytest.mark.requires(*SETP)
def test_err_14_task_set_params_row(dev: Dev) -> None:
    """ERR-14 TaskSetParams: NULL task/params 107000; wrong target type 107000 + FAULT; then 107040."""
    b = dev.b
    model, s, _ = _event_model(dev)
    [rec] = _typed(dev, model)[TaskType.EVENT_RECORD]
    [kernel] = dev.kernel_tasks(model)
    out = dev.buffer(n=N)
    good = dev.fill_params(out, 5)
    expect.rc(b.task_set_params(None, good), Err.RT_PARAM_INVALID, "TaskSetParams(task=NULL)")
    expect.rc(b.task_set_params(kernel, None), Err.RT_PARAM_INVALID, "TaskSetParams(params=NULL)")
    expect.rc(b.task_set_params(rec, good), Err.RT_PARAM_INVALID,
              "TaskSetParams(KERNEL params on an EVENT_RECORD task)")
    expect.rc(b.task_set_params(kernel, good), Err.RT_MODEL_UPDATE_FAILED,
              "TaskSetParams on the FAULT model")
    _expect_fault(dev, model, s)


@pytest.mark.clause("ERR-33")
@pytest.mark.requires(*GETP, *SETP, Cap.SEQ_ID, Cap.DISABLE)
def test_err_33_experimental_apis_null_107000(dev: Dev) -> None:
    """ERR-33 The list/task APIs (and Update) have no ACL-layer NULL check: NULL handles return 107000."""
    b = dev.b
    model, _, out, _ = _fill_model(dev)
    cases = {
        "GetStreams(model=NULL)": b.get_streams(None, None)[0],
        "GetTasksByStream(stream=NULL)": b.get_tasks_by_stream(None, None)[0],
        "TaskGetType(task=NULL)": b.task_get_type(None)[0],
        "TaskGetSeqId(task=NULL)": b.task_get_seq_id(None)[0],
        "TaskGetParams(task=NULL)": b.task_get_params(None)[0],
        "TaskSetParams(task=NULL)": b.task_set_params(None, dev.fill_params(out, 1)),
        "TaskDisable(task=NULL)": b.task_disable(None),
        "aclmdlRIUpdate(model=NULL)": b.update(None),
    }
    for what, rc in cases.items():
        expect.rc(rc, Err.RT_PARAM_INVALID, what)
    dev.execute(model, dev.stream())  # the model is untouched by the NULL calls
    _expect_fill(dev, out, 1, "output after the NULL calls (harness)")


@pytest.mark.clause("ERR-33")
def test_err_33_acl_checked_apis_null_100000(dev: Dev) -> None:
    """ERR-33 Capture/execute/destroy APIs check NULL in the ACL layer: NULL returns 100000."""
    b = dev.b
    s = dev.stream()
    cases = {
        "aclmdlRICaptureBegin(stream=NULL)": b.capture_begin(None, CaptureMode.RELAXED),
        "aclmdlRICaptureGetInfo(stream=NULL)": b.capture_get_info(None)[0],
        "aclmdlRICaptureEnd(stream=NULL)": b.capture_end(None)[0],
        "aclmdlRIExecuteAsync(model=NULL)": b.execute_async(None, s),
        "aclmdlRIDestroy(model=NULL)": b.destroy(None),
    }
    for what, rc in cases.items():
        expect.rc(rc, Err.INVALID_PARAM, what)
