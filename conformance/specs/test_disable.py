"""Disabling tasks: aclmdlRITaskDisable (DIS-01..DIS-11, Q-15).

Most specs use the seed pair of scenarios.md S6: ``fallback_main`` (x -> mid, +10) followed by
``fallback_postprocess`` (mid -> out, *2), captured on one stream. The post-processing kernel
is the task that gets disabled; its output ``out`` starts at the sentinel so "did not run" is
observable.

DIS-08 is checked with a value write/wait handshake instead of the catalog's event
record/wait example: a disabled EVENT_RECORD whose wait survives blocks the model for good
(the host cannot record the captured event on the model's behalf), so the stream could never
be drained and the model never destroyed cleanly. A disabled VALUE_WRITE whose VALUE_WAIT
survives breaks the same kind of dependency, and the host can release it afterwards.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

from mdlri_conformance.backends.contract import Cap, Err, MemcpyKind, TaskType, ValueWaitFlag
from mdlri_conformance.conformance import expect
from mdlri_conformance.conformance.harness import SENTINEL, Buf, Dev

pytestmark = pytest.mark.requires(Cap.CAPTURE, Cap.KERNELS, Cap.LISTING, Cap.TASK_TYPE,
                                  Cap.DISABLE, Cap.UPDATE)

INPUTS = np.arange(1, 9, dtype=np.int32)
#: a second input, so a kernel that did not run keeps the value computed from INPUTS
INPUTS_2 = np.arange(21, 29, dtype=np.int32)
TIMEOUT_MS = 100


@dataclass
class Seed:
    """The captured seed pair and its buffers."""

    model: Any
    stream: Any
    x: Buf
    mid: Buf
    out: Buf


def capture_seed(dev: Dev) -> Seed:
    """Capture main(x -> mid) then post(mid -> out) on a new stream."""
    s = dev.stream()
    x = dev.buffer(INPUTS)
    mid = dev.buffer(n=8)
    out = dev.buffer(n=8)
    dev.begin(s)
    dev.launch("fallback_main", s, input=x, output=mid)
    dev.launch("fallback_postprocess", s, input=mid, output=out)
    return Seed(dev.end(s), s, x, mid, out)


def seed_kernels(dev: Dev, model: Any) -> tuple[Any, Any]:
    """(main, post): the two kernel tasks in list order (capture order, LIST-08)."""
    kernels = dev.kernel_tasks(model)
    expect.eq(len(kernels), 2, "kernel tasks of the seed model (setup)")
    return kernels[0], kernels[1]


def stream_of(dev: Dev, model: Any, task: Any) -> Any:
    """The internal stream whose listing holds ``task``."""
    for st in dev.streams_of(model):
        if task in dev.tasks_of(st):
            return st
    expect.fail("internal stream holding the task (setup)", "found", "none")


def reset(dev: Dev, *bufs: Buf) -> None:
    for b in bufs:
        dev.write(b, np.full(b.n, SENTINEL, dtype=np.int32))


# ---------------------------------------------------------------------------------------------
# DIS-01 / DIS-02


@pytest.mark.clause("DIS-01")
def test_disabled_kernel_stops_running_after_update(dev: Dev) -> None:
    """DIS-01: after Disable + Update a kernel no longer runs; its old output stays."""
    sd = capture_seed(dev)
    dev.execute(sd.model, sd.stream)
    expect.eq(dev.read(sd.out), (INPUTS + 10) * 2, "post output of the baseline run")
    _, post = seed_kernels(dev, sd.model)

    expect.ok(dev.b.task_disable(post), "aclmdlRITaskDisable(post)")
    expect.ok(dev.b.update(sd.model), "aclmdlRIUpdate")
    dev.write(sd.x, INPUTS_2)
    dev.execute(sd.model, sd.stream)
    expect.eq(dev.read(sd.mid), INPUTS_2 + 10, "main output after Update (main still runs)")
    expect.eq(dev.read(sd.out), (INPUTS + 10) * 2,
              "post output keeps the value of the earlier run")

    reset(dev, sd.out)
    dev.execute(sd.model, sd.stream)
    expect.eq(dev.read(sd.out), np.full(8, SENTINEL), "post output after a run with post disabled")


@pytest.mark.clause("DIS-02")
def test_disable_blocks_execution_until_update(dev: Dev) -> None:
    """DIS-02: after Disable and before Update, ExecuteAsync returns 507011 and runs nothing."""
    sd = capture_seed(dev)
    _, post = seed_kernels(dev, sd.model)
    expect.ok(dev.b.task_disable(post), "aclmdlRITaskDisable(post)")
    expect.rc(dev.b.execute_async(sd.model, sd.stream), Err.RT_MODEL_EXECUTE,
              "aclmdlRIExecuteAsync before Update")
    dev.sync(sd.stream)
    expect.eq(dev.read(sd.mid), np.full(8, SENTINEL), "main output after the refused execution")
    expect.ok(dev.b.update(sd.model), "aclmdlRIUpdate")
    dev.execute(sd.model, sd.stream)
    expect.eq(dev.read(sd.mid), INPUTS + 10, "main output after Update")


# ---------------------------------------------------------------------------------------------
# DIS-03 / DIS-04 / DIS-05


@pytest.mark.clause("DIS-03")
@pytest.mark.requires(Cap.SEQ_ID)
def test_disable_twice_is_idempotent(dev: Dev) -> None:
    """DIS-03: Disable twice before Update returns 0 both times and removes one task."""
    sd = capture_seed(dev)
    main, post = seed_kernels(dev, sd.model)
    main_seq = dev.seq_of(main)
    expect.ok(dev.b.task_disable(post), "first aclmdlRITaskDisable(post)")
    expect.ok(dev.b.task_disable(post), "second aclmdlRITaskDisable(post)")
    expect.ok(dev.b.update(sd.model), "aclmdlRIUpdate")
    kernels = dev.kernel_tasks(sd.model)
    expect.eq([dev.seq_of(t) for t in kernels], [main_seq], "kernel seqIds after Update")
    dev.execute(sd.model, sd.stream)
    expect.eq(dev.read(sd.mid), INPUTS + 10, "main output after Update")
    expect.eq(dev.read(sd.out), np.full(8, SENTINEL), "post output after Update")


@pytest.mark.clause("DIS-04")
@pytest.mark.requires(Cap.SET_PARAMS, Cap.SEQ_ID)
def test_set_params_after_disable_keeps_task(dev: Dev) -> None:
    """DIS-04: SetParams after Disable (before Update) keeps the task with its new params."""
    sd = capture_seed(dev)
    _, post = seed_kernels(dev, sd.model)
    post_seq = dev.seq_of(post)
    expect.ok(dev.b.task_disable(post), "aclmdlRITaskDisable(post)")
    # post now reads x directly: out = x * 2 instead of (x + 10) * 2
    expect.ok(dev.b.task_set_params(post, dev.kernel_params("fallback_postprocess",
                                                        input=sd.x, output=sd.out)),
              "aclmdlRITaskSetParams(post) after Disable")
    expect.ok(dev.b.update(sd.model), "aclmdlRIUpdate")
    seqs = [dev.seq_of(t) for t in dev.kernel_tasks(sd.model)]
    expect.true(post_seq in seqs, "post task listed after Update", f"seqId {post_seq} in list",
                seqs)
    dev.execute(sd.model, sd.stream)
    expect.eq(dev.read(sd.out), INPUTS * 2, "post output with the new params")


@pytest.mark.clause("DIS-04")
@pytest.mark.requires(Cap.SET_PARAMS, Cap.SEQ_ID)
def test_disable_after_set_params_wins(dev: Dev) -> None:
    """DIS-04: Disable after SetParams (before Update) removes the task."""
    sd = capture_seed(dev)
    main, post = seed_kernels(dev, sd.model)
    main_seq = dev.seq_of(main)
    expect.ok(dev.b.task_set_params(post, dev.kernel_params("fallback_postprocess",
                                                        input=sd.x, output=sd.out)),
              "aclmdlRITaskSetParams(post)")
    expect.ok(dev.b.task_disable(post), "aclmdlRITaskDisable(post) after SetParams")
    expect.ok(dev.b.update(sd.model), "aclmdlRIUpdate")
    seqs = [dev.seq_of(t) for t in dev.kernel_tasks(sd.model)]
    expect.eq(seqs, [main_seq], "kernel seqIds after Update")
    dev.execute(sd.model, sd.stream)
    expect.eq(dev.read(sd.out), np.full(8, SENTINEL), "post output after Update")


@pytest.mark.clause("DIS-05")
@pytest.mark.requires(Cap.SEQ_ID)
def test_update_removes_disabled_task_from_listing(dev: Dev) -> None:
    """DIS-05: after Update the listing loses exactly the disabled task; survivors keep order and seqIds."""
    s = dev.stream()
    x = dev.buffer(INPUTS)
    outs = [dev.buffer(n=8) for _ in range(3)]
    dev.begin(s)
    for o in outs:
        dev.launch("affine", s, x=x, y=o, n=8, a=1, b=0)
    model = dev.end(s)
    kernels = dev.kernel_tasks(model)
    expect.eq(len(kernels), 3, "kernel tasks (setup)")
    victim = kernels[1]
    stream = stream_of(dev, model, victim)
    before = [dev.seq_of(t) for t in dev.tasks_of(stream)]
    victim_seq = dev.seq_of(victim)

    expect.ok(dev.b.task_disable(victim), "aclmdlRITaskDisable(middle kernel)")
    expect.ok(dev.b.update(model), "aclmdlRIUpdate")
    after = [dev.seq_of(t) for t in dev.tasks_of(stream)]
    expect.eq(after, [q for q in before if q != victim_seq],
              "seqIds of the stream's tasks after Update (one fewer, same order)")


# ---------------------------------------------------------------------------------------------
# DIS-06


def _capture_with_default_task(dev: Dev, kind: str) -> tuple[Seed, Any]:
    """Seed pair with a memcpy_async / memset_async between the kernels; returns the DEFAULT task."""
    s = dev.stream()
    x = dev.buffer(INPUTS)
    mid = dev.buffer(n=8)
    out = dev.buffer(n=8)
    scratch = dev.buffer(n=8)
    dev.begin(s)
    dev.launch("fallback_main", s, input=x, output=mid)
    if kind == "memcpy_async":
        rc = dev.b.memcpy_async(scratch.addr, scratch.nbytes, mid.addr, mid.nbytes,
                                MemcpyKind.DEVICE_TO_DEVICE, s)
    else:
        rc = dev.b.memset_async(scratch.addr, scratch.nbytes, 0, scratch.nbytes, s)
    expect.ok(rc, f"aclrt{'MemcpyAsync' if kind == 'memcpy_async' else 'MemsetAsync'} in capture")
    dev.launch("fallback_postprocess", s, input=mid, output=out)
    sd = Seed(dev.end(s), s, x, mid, out)
    main, post = seed_kernels(dev, sd.model)
    tasks = dev.tasks_of(stream_of(dev, sd.model, main))
    i, j = tasks.index(main), tasks.index(post)
    between = [t for t in tasks[i + 1:j] if dev.type_of(t) == TaskType.DEFAULT]
    expect.true(len(between) >= 1, f"a DEFAULT task listed for the captured {kind}",
                ">= 1 DEFAULT task between the kernels", [dev.type_of(t) for t in tasks[i + 1:j]])
    return sd, between[0]


@pytest.mark.clause("DIS-06")
@pytest.mark.parametrize("kind", ["memcpy_async", "memset_async"])
def test_disable_default_task_faults_model(dev: Dev, kind: str) -> None:
    """DIS-06: disabling a DEFAULT task returns 107000 and leaves the model in FAULT."""
    sd, default_task = _capture_with_default_task(dev, kind)
    expect.rc(dev.b.task_disable(default_task), Err.RT_PARAM_INVALID,
              f"aclmdlRITaskDisable(DEFAULT task of {kind})")
    expect.rc(dev.b.execute_async(sd.model, sd.stream), Err.RT_MODEL_EXECUTE,
              "aclmdlRIExecuteAsync on the faulted model")


@pytest.mark.clause("DIS-06")
@pytest.mark.requires(Cap.VALUE_TASKS)
@pytest.mark.parametrize("ttype", [TaskType.KERNEL, TaskType.EVENT_RECORD, TaskType.EVENT_WAIT,
                                   TaskType.VALUE_WRITE, TaskType.VALUE_WAIT],
                         ids=lambda t: TaskType(t).name)
@pytest.mark.requires(Cap.BLOCKING_WAIT)
def test_non_default_tasks_can_be_disabled(dev: Dev, ttype: TaskType) -> None:
    """DIS-06: a task of any non-DEFAULT type can be disabled and the model updated and run."""
    s = dev.stream()
    word = dev.buffer64(0)
    gate = dev.buffer64(7)
    x = dev.buffer(INPUTS)
    out = dev.buffer(n=8)
    lone, paired = dev.event(), dev.event()
    dev.begin(s)
    expect.ok(dev.b.record_event(lone, s), "aclrtRecordEvent (no waiter) in capture")
    expect.ok(dev.b.record_event(paired, s), "aclrtRecordEvent in capture")
    expect.ok(dev.b.stream_wait_event(s, paired), "aclrtStreamWaitEvent in capture")
    expect.ok(dev.b.value_write(word, 5, 0, s), "aclrtValueWrite in capture")
    expect.ok(dev.b.value_wait(gate, 7, ValueWaitFlag.EQ, s), "aclrtValueWait in capture")
    dev.launch("fallback_main", s, input=x, output=out)
    model = dev.end(s)
    # the first EVENT_RECORD in list order is the one nobody waits for (LIST-08)
    target = dev.tasks_of_type(model, ttype)
    expect.true(len(target) >= 1, f"a {TaskType(ttype).name} task listed (setup)", ">= 1", 0)
    expect.ok(dev.b.task_disable(target[0]), f"aclmdlRITaskDisable({TaskType(ttype).name})")
    expect.ok(dev.b.update(model), "aclmdlRIUpdate")
    dev.execute(model, s)
    expected_out = np.full(8, SENTINEL) if ttype == TaskType.KERNEL else INPUTS + 10
    expect.eq(dev.read(out), expected_out, "kernel output after Update")
    expect.eq(dev.read64(word), 0 if ttype == TaskType.VALUE_WRITE else 5,
              "value-write target after Update")


# ---------------------------------------------------------------------------------------------
# DIS-07 / DIS-08


@pytest.mark.clause("DIS-07")
@pytest.mark.requires(Cap.INTERNAL_TASKS, Cap.SEQ_ID)
def test_fully_disabled_stream_gets_nop(dev: Dev) -> None:
    """DIS-07: Update appends one DEFAULT task with a new seqId to a stream whose tasks are all disabled."""
    s = dev.stream()
    x = dev.buffer(INPUTS)
    out = dev.buffer(n=8)
    dev.begin(s)
    dev.launch("fallback_main", s, input=x, output=out)
    model = dev.end(s)
    (kernel,) = dev.kernel_tasks(model)
    stream = stream_of(dev, model, kernel)
    before = dev.tasks_of(stream)
    old_seqs = {dev.seq_of(t) for t in before}
    for t in before:
        if dev.type_of(t) != TaskType.DEFAULT:
            expect.ok(dev.b.task_disable(t), "aclmdlRITaskDisable")
    expect.ok(dev.b.update(model), "aclmdlRIUpdate")
    after = dev.tasks_of(stream)
    # which internal DEFAULT tasks a stream lists (EndGraph at CaptureEnd or not) depends on the
    # SQ mode: count only what Update appended (new seqIds) and that nothing else is left
    types = [int(dev.type_of(t)) for t in after]
    expect.true(all(t == TaskType.DEFAULT for t in types), "types of the tasks left after Update",
                "only DEFAULT", types)
    appended = [dev.seq_of(t) for t in after if dev.seq_of(t) not in old_seqs]
    expect.eq(len(appended), 1, "DEFAULT tasks with a new seqId appended by Update "
              f"(old seqIds {sorted(old_seqs)})")


@pytest.mark.clause("DIS-11", "DIS-07", "LIST-02")
@pytest.mark.requires(Cap.CROSS_STREAM, Cap.INTERNAL_TASKS)
def test_emptied_side_stream_stays_listed_after_update(dev: Dev) -> None:
    """DIS-11: a side stream whose every task is disabled stays in the model: after Update,
    GetStreams lists the same streams in the same order and count (CaptureModel::Update
    rebuilds each stream in place, `feature/aclgraph/capture_model.cc:1381-1393`), and the
    emptied stream lists only DEFAULT tasks, the NOP Update appended (DIS-07)."""
    s0, s1, s2 = dev.stream(), dev.stream(), dev.stream()
    x = dev.buffer(INPUTS)
    a, b, c = dev.buffer(n=8), dev.buffer(n=8), dev.buffer(n=8)
    dev.begin(s0)
    dev.fork(s0, s1)
    dev.fork(s0, s2)
    dev.launch("fallback_main", s1, input=x, output=a)
    dev.launch("fallback_main", s1, input=x, output=b)
    dev.launch("fallback_main", s2, input=x, output=c)
    dev.join(s0, s1)
    dev.join(s0, s2)
    model = dev.end(s0)
    before = dev.streams_of(model)
    expect.eq(len(before), 3, "internal streams after the capture (setup)")
    kernels_on = [sum(dev.type_of(t) == TaskType.KERNEL for t in dev.tasks_of(st))
                  for st in before]
    expect.true(2 in kernels_on, "a stream holding the two kernels of s1 (setup)", "one",
                kernels_on)
    emptied = before[kernels_on.index(2)]
    for t in dev.tasks_of(emptied):
        if dev.type_of(t) != TaskType.DEFAULT:
            expect.ok(dev.b.task_disable(t), f"aclmdlRITaskDisable (type {dev.type_of(t)})")
    expect.ok(dev.b.update(model), "aclmdlRIUpdate")
    after = dev.streams_of(model)
    expect.eq(len(after), len(before), "GetStreams count after the Update that emptied a stream")
    expect.true(after == before, "GetStreams after the Update", "the same streams in the same "
                f"order ({len(before)}, emptied one at {before.index(emptied)})",
                f"{[before.index(h) if h in before else 'new' for h in after]}")
    types = [int(dev.type_of(t)) for t in dev.tasks_of(emptied)]
    expect.true(bool(types) and all(t == TaskType.DEFAULT for t in types),
                "tasks of the emptied stream after Update", "only DEFAULT (its NOP)", types)


@pytest.mark.clause("DIS-08", "Q-15")
@pytest.mark.requires(Cap.VALUE_TASKS, Cap.SYNC_TIMEOUT)
@pytest.mark.requires(Cap.BLOCKING_WAIT)
def test_disabling_dependency_producer_blocks_execution(dev: Dev, fingerprint: Any) -> None:
    """DIS-08: disabling the producer of a surviving wait makes the next execution block."""
    s = dev.stream()
    flag = dev.buffer64(0)
    x = dev.buffer(INPUTS)
    out = dev.buffer(n=8)
    dev.begin(s)
    expect.ok(dev.b.value_write(flag, 1, 0, s), "aclrtValueWrite (producer) in capture")
    expect.ok(dev.b.value_wait(flag, 1, ValueWaitFlag.EQ, s), "aclrtValueWait in capture")
    dev.launch("fallback_main", s, input=x, output=out)
    model = dev.end(s)
    dev.execute(model, s)
    expect.eq(dev.read(out), INPUTS + 10, "output of the intact model")

    (producer,) = dev.tasks_of_type(model, TaskType.VALUE_WRITE)
    expect.ok(dev.b.task_disable(producer), "aclmdlRITaskDisable(VALUE_WRITE)")
    expect.ok(dev.b.update(model), "aclmdlRIUpdate")
    dev.write64(flag, 0)
    reset(dev, out)
    expect.ok(dev.b.execute_async(model, s), "aclmdlRIExecuteAsync with the producer disabled")
    try:
        rc = dev.b.synchronize_stream_with_timeout(s, TIMEOUT_MS)
        fingerprint.record("Q-15", rc)
        # the wait blocks until the host deadline (TMO-03)
        expect.rc(rc, Err.RT_STREAM_SYNC_TIMEOUT, "timed sync while the wait has no producer")
        expect.eq(dev.read(out), np.full(8, SENTINEL), "output while the wait has no producer")
    finally:
        dev.write64(flag, 1)
    final = dev.b.synchronize_stream_with_timeout(s, 5000)
    fingerprint.record("Q-15:sync_after_release", final)
    if rc == Err.RT_STREAM_SYNC_TIMEOUT:
        # the hang interpretation of Q-15: releasing the wait lets the model finish
        expect.ok(final, "sync after the host released the wait")
        expect.eq(dev.read(out), INPUTS + 10, "output after the host released the wait")


# ---------------------------------------------------------------------------------------------
# DIS-09 / DIS-10


@pytest.mark.clause("DIS-09")
def test_disable_null_task(dev: Dev) -> None:
    """DIS-09: Disable(NULL) returns 107000."""
    expect.rc(dev.b.task_disable(None), Err.RT_PARAM_INVALID, "aclmdlRITaskDisable(NULL)")


@pytest.mark.clause("DIS-09")
def test_disable_during_capture_keeps_state(dev: Dev) -> None:
    """DIS-09: Disable on a task of a capturing model returns 107040 and changes nothing."""
    s = dev.stream()
    x = dev.buffer(INPUTS)
    out = dev.buffer(n=8)
    dev.begin(s)
    dev.launch("fallback_main", s, input=x, output=out)
    rc, _, capturing = dev.b.capture_get_info(s)
    expect.ok(rc, "aclmdlRICaptureGetInfo (setup)")
    kernels = dev.kernel_tasks(capturing)
    expect.eq(len(kernels), 1, "kernel tasks listed during capture (setup)")
    expect.rc(dev.b.task_disable(kernels[0]), Err.RT_MODEL_UPDATE_FAILED,
              "aclmdlRITaskDisable during capture")
    model = dev.end(s)
    expect.eq(len(dev.kernel_tasks(model)), 1, "kernel tasks after CaptureEnd")
    dev.execute(model, s)
    expect.eq(dev.read(out), INPUTS + 10, "output of the model (task not disabled)")


@pytest.mark.clause("DIS-09")
def test_disable_on_faulted_model(dev: Dev) -> None:
    """DIS-09: Disable on a task of a FAULT model returns 107040."""
    sd, default_task = _capture_with_default_task(dev, "memset_async")
    expect.rc(dev.b.task_disable(default_task), Err.RT_PARAM_INVALID,
              "aclmdlRITaskDisable(DEFAULT) to fault the model (setup)")
    _, post = seed_kernels(dev, sd.model)
    expect.rc(dev.b.task_disable(post), Err.RT_MODEL_UPDATE_FAILED,
              "aclmdlRITaskDisable on a FAULT model")


@pytest.mark.clause("DIS-09")
@pytest.mark.requires(Cap.VALUE_TASKS)
@pytest.mark.requires(Cap.BLOCKING_WAIT)
def test_disable_while_running_keeps_state(dev: Dev) -> None:
    """DIS-09: Disable while an execution is in flight returns 107040 and the model stays READY."""
    s = dev.stream()
    flag = dev.buffer64(0)
    x = dev.buffer(INPUTS)
    out = dev.buffer(n=8)
    model = dev.gated(s, flag, "fallback_main", input=x, output=out)
    (kernel,) = dev.kernel_tasks(model)
    expect.ok(dev.b.execute_async(model, s), "aclmdlRIExecuteAsync")
    try:
        expect.rc(dev.b.task_disable(kernel), Err.RT_MODEL_UPDATE_FAILED,
                  "aclmdlRITaskDisable while running")
    finally:
        dev.write64(flag, 1)
    dev.sync(s)
    reset(dev, out)
    dev.execute(model, s)
    expect.eq(dev.read(out), INPUTS + 10, "output of the next execution (task kept)")


@pytest.mark.clause("DIS-10")
@pytest.mark.requires(Cap.GET_PARAMS, Cap.SET_PARAMS)
def test_disable_clears_op_info(dev: Dev) -> None:
    """DIS-10: GetParams after Disable (before Update) reports opInfoSize 0."""
    sd = capture_seed(dev)
    _, post = seed_kernels(dev, sd.model)
    info = bytes(range(16))
    params = dev.kernel_params("fallback_postprocess", input=sd.mid, output=sd.out)
    params.op_info_ptr = info
    params.op_info_size = len(info)
    expect.ok(dev.b.task_set_params(post, params), "aclmdlRITaskSetParams with opInfo (setup)")
    expect.ok(dev.b.update(sd.model), "aclmdlRIUpdate (setup)")
    _, post = seed_kernels(dev, sd.model)
    expect.eq(dev.params_of(post).op_info_size, len(info), "opInfoSize before Disable (setup)")
    expect.ok(dev.b.task_disable(post), "aclmdlRITaskDisable(post)")
    expect.eq(dev.params_of(post).op_info_size, 0, "opInfoSize after Disable")
