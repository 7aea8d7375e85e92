"""Open questions of the task-level API and the last implementation clauses (SETP-16; Q-01..Q-04,
Q-07, Q-10, Q-11, Q-13, Q-14, Q-23, Q-25).

A Q-xx spec records what the backend does with the ``fingerprint`` fixture and asserts only
that its setup steps succeeded (the catalog leaves the value undefined). The open questions
about the extended API sit with their groups (Q-06 task groups, Q-16 build, Q-17 abort,
Q-18 callbacks, Q-19 cond, Q-24 names); the untestable ones are in untestable.toml.
"""

from __future__ import annotations

import threading
from collections import Counter
from typing import Any

import numpy as np
import pytest

from mdlri_conformance.backends.contract import (
    Cap, CaptureMode, Err, TaskParams, TaskType, ValueWriteTaskParams,
)
from mdlri_conformance.conformance import expect
from mdlri_conformance.conformance.harness import SYNC_MS, Buf, Dev

pytestmark = pytest.mark.requires(Cap.CAPTURE, Cap.KERNELS)

X = np.arange(1, 9, dtype=np.int32)
LISTED = pytest.mark.requires(Cap.LISTING, Cap.TASK_TYPE)


def kernel_model(dev: Dev, n: int = 1) -> tuple[Any, Any, Buf]:
    """Capture ``n`` fallback_main kernels into one output; returns (model, stream, out)."""
    s = dev.stream()
    x, out = dev.buffer(X), dev.buffer(n=8)
    dev.begin(s)
    for _ in range(n):
        dev.launch("fallback_main", s, input=x, output=out)
    return dev.end(s), s, out


@pytest.mark.clause("SETP-16")
@LISTED
@pytest.mark.requires(Cap.GET_PARAMS, Cap.SET_PARAMS)
def test_op_info_replaced_and_cleared(dev: Dev) -> None:
    """SETP-16: SetParams with opInfo (ptr, size > 0) sets GetParams opInfoSize; NULL/0 clears it."""
    model, _, out = kernel_model(dev)
    (task,) = dev.kernel_tasks(model)
    info = bytes(range(24))
    params = dev.fill_params(out, 3)
    params.op_info_ptr, params.op_info_size = info, len(info)
    expect.ok(dev.b.task_set_params(task, params), "aclmdlRITaskSetParams with opInfo")
    expect.eq(dev.params_of(task).op_info_size, len(info), "opInfoSize after SetParams")
    expect.ok(dev.b.task_set_params(task, dev.fill_params(out, 4)),
              "aclmdlRITaskSetParams with NULL opInfo")
    expect.eq(dev.params_of(task).op_info_size, 0, "opInfoSize after SetParams without opInfo")


@pytest.mark.clause("Q-01")
@pytest.mark.requires(Cap.HANDLE_VALIDATION, Cap.LISTING)
def test_destroyed_model_use(dev: Dev, fingerprint: Any) -> None:
    """Q-01: what GetStreams and ExecuteAsync return for a destroyed model handle (recorded)."""
    model, s, _ = kernel_model(dev)
    expect.ok(dev.destroy(model), "aclmdlRIDestroy (setup)")
    fingerprint.record("Q-01:get_streams", dev.b.get_streams(model, None)[0])
    fingerprint.record("Q-01:execute_async", dev.b.execute_async(model, s))
    dev.b.synchronize_stream_with_timeout(s, 2000)


@pytest.mark.clause("Q-02")
@LISTED
def test_internal_task_counts(dev: Dev, fingerprint: Any) -> None:
    """Q-02: the task types and counts listed for a one-kernel capture (recorded, before and after a run)."""
    model, s, _ = kernel_model(dev)

    def census() -> dict[str, int]:
        return dict(Counter(TaskType(dev.type_of(t)).name for t in dev.all_tasks(model)))

    fingerprint.record("Q-02:after_end", census())
    dev.execute(model, s)
    fingerprint.record("Q-02:after_run", census())


@pytest.mark.clause("Q-03")
@LISTED
@pytest.mark.requires(Cap.SEQ_ID)
def test_seq_id_density(dev: Dev, fingerprint: Any) -> None:
    """Q-03: the seqIds of three captured kernels (whether they are dense from 0; recorded)."""
    model, _, _ = kernel_model(dev, 3)
    fingerprint.record("Q-03:kernel_ids", [dev.seq_of(t) for t in dev.kernel_tasks(model)])
    fingerprint.record("Q-03:all_ids", [dev.seq_of(t) for t in dev.all_tasks(model)])


@pytest.mark.clause("Q-04")
@LISTED
@pytest.mark.requires(Cap.CROSS_STREAM)
def test_stream_order(dev: Dev, fingerprint: Any) -> None:
    """Q-04: the GetStreams position of the origin's capture stream in a two-stream model (recorded)."""
    s1, s2 = dev.stream(), dev.stream()
    fork, join = dev.event(), dev.event()
    x, y1, y2 = dev.buffer(X), dev.buffer(n=8), dev.buffer(n=8)
    dev.begin(s1)
    dev.launch("fallback_main", s1, input=x, output=y1)
    expect.ok(dev.b.record_event(fork, s1), "aclrtRecordEvent (setup)")
    expect.ok(dev.b.stream_wait_event(s2, fork), "aclrtStreamWaitEvent (setup)")
    dev.launch("fallback_main", s2, input=x, output=y2)
    expect.ok(dev.b.record_event(join, s2), "aclrtRecordEvent (setup)")
    expect.ok(dev.b.stream_wait_event(s1, join), "aclrtStreamWaitEvent (setup)")
    model = dev.end(s1)
    streams = dev.streams_of(model)
    types = [[TaskType(dev.type_of(t)).name for t in dev.tasks_of(st)] for st in streams]
    fingerprint.record("Q-04:types_per_stream", types)


@pytest.mark.clause("Q-07")
@LISTED
@pytest.mark.requires(Cap.VALUE_TASKS, Cap.GET_PARAMS, Cap.SET_PARAMS)
def test_get_params_between_set_and_update(dev: Dev, fingerprint: Any) -> None:
    """Q-07: the VALUE_WRITE value GetParams reports between SetParams and Update (recorded)."""
    s = dev.stream()
    word = dev.buffer64(0)
    dev.begin(s)
    expect.ok(dev.b.value_write(word, 5, 0, s), "aclrtValueWrite (setup)")
    model = dev.end(s)
    (task,) = dev.tasks_of_type(model, TaskType.VALUE_WRITE)
    params = TaskParams(type=TaskType.VALUE_WRITE,
                        value_write=ValueWriteTaskParams(dev_addr=word, value=9))
    expect.ok(dev.b.task_set_params(task, params), "aclmdlRITaskSetParams (setup)")
    fingerprint.record("Q-07:value_before_update", dev.params_of(task).value_write.value)
    expect.ok(dev.b.update(model), "aclmdlRIUpdate (setup)")


@pytest.mark.clause("Q-10")
def test_execute_empty_model(dev: Dev, fingerprint: Any) -> None:
    """Q-10: ExecuteAsync and sync of an empty captured model (recorded)."""
    s = dev.stream()
    dev.begin(s)
    model = dev.end(s)
    fingerprint.record("Q-10:execute", dev.b.execute_async(model, s))
    fingerprint.record("Q-10:sync", dev.b.synchronize_stream_with_timeout(s, SYNC_MS))


@pytest.mark.clause("Q-11")
def test_concurrent_executions_on_two_streams(dev: Dev, fingerprint: Any) -> None:
    """Q-11: an accumulate model executed on two streams without a sync between (final value recorded)."""
    s, other = dev.stream(), dev.stream()
    acc, x = dev.buffer(np.zeros(8, dtype=np.int32)), dev.buffer(X)
    dev.begin(s)
    dev.launch("accumulate", s, acc=acc, x=x, n=8)
    model = dev.end(s)
    expect.ok(dev.b.execute_async(model, s), "aclmdlRIExecuteAsync on s (setup)")
    fingerprint.record("Q-11:second_execute", dev.b.execute_async(model, other))
    dev.sync(s)
    dev.sync(other)
    fingerprint.record("Q-11:acc_over_x", (dev.read(acc) // X).tolist())


@pytest.mark.clause("Q-13")
@LISTED
@pytest.mark.requires(Cap.CROSS_STREAM, Cap.GET_PARAMS)
def test_event_identity_in_params(dev: Dev, fingerprint: Any) -> None:
    """Q-13: whether GetParams of an EVENT_RECORD names the user's event (recorded)."""
    s1, s2 = dev.stream(), dev.stream()
    fork, join = dev.event(), dev.event()
    dev.begin(s1)
    expect.ok(dev.b.record_event(fork, s1), "aclrtRecordEvent (setup)")
    expect.ok(dev.b.stream_wait_event(s2, fork), "aclrtStreamWaitEvent (setup)")
    expect.ok(dev.b.record_event(join, s2), "aclrtRecordEvent (setup)")
    expect.ok(dev.b.stream_wait_event(s1, join), "aclrtStreamWaitEvent (setup)")
    model = dev.end(s1)
    events = [dev.params_of(t).event_record.event
              for t in dev.tasks_of_type(model, TaskType.EVENT_RECORD)]
    fingerprint.record("Q-13:user_event", [e in (fork, join) for e in events])


@pytest.mark.clause("Q-14")
@LISTED
@pytest.mark.requires(Cap.GET_PARAMS, Cap.SET_PARAMS)
def test_num_blocks_above_16_bits(dev: Dev, fingerprint: Any) -> None:
    """Q-14: SetParams with numBlocks 70000: rc and the numBlocks GetParams reports (recorded)."""
    model, _, out = kernel_model(dev)
    (task,) = dev.kernel_tasks(model)
    rc = dev.b.task_set_params(task, dev.fill_params(out, 1, num_blocks=70000))
    fingerprint.record("Q-14:rc", rc)
    if rc == Err.SUCCESS:
        fingerprint.record("Q-14:num_blocks", dev.params_of(task).kernel.num_blocks)


@pytest.mark.clause("Q-23")
@LISTED
@pytest.mark.requires(Cap.SET_PARAMS, Cap.UPDATE)
def test_task_handle_across_update(dev: Dev, fingerprint: Any) -> None:
    """Q-23: whether a kernel's task handle is the same after Update and after the first run (recorded)."""
    model, s, out = kernel_model(dev)
    (task,) = dev.kernel_tasks(model)
    expect.ok(dev.b.task_set_params(task, dev.fill_params(out, 6)),
              "aclmdlRITaskSetParams (setup)")
    expect.ok(dev.b.update(model), "aclmdlRIUpdate (setup)")
    (after_update,) = dev.kernel_tasks(model)
    fingerprint.record("Q-23:same_after_update", after_update == task)
    dev.execute(model, s)
    (after_run,) = dev.kernel_tasks(model)
    fingerprint.record("Q-23:same_after_run", after_run == task)


@pytest.mark.clause("Q-25")
@pytest.mark.requires(Cap.CAPTURE_MODES, Cap.THREADS)
def test_malloc_under_global_capture(dev: Dev, fingerprint: Any) -> None:
    """Q-25: aclrtMalloc/aclrtFree and stream create during a GLOBAL capture, in the capturing thread and another (recorded)."""
    s = dev.stream()
    dev.begin(s, CaptureMode.GLOBAL)
    seen: dict[str, Any] = {}

    def probe(where: str) -> None:
        rc, addr = dev.b.malloc(64)
        seen[f"{where}:malloc"] = rc
        if rc == Err.SUCCESS:
            seen[f"{where}:free"] = dev.b.free(addr)
        rc, st = dev.b.create_stream()
        seen[f"{where}:create_stream"] = rc
        if rc == Err.SUCCESS:
            seen[f"{where}:destroy_stream"] = dev.b.destroy_stream(st)

    def other() -> None:
        dev.b.set_device(0)
        probe("other_thread")

    try:
        probe("capturing_thread")
        t = threading.Thread(target=other)
        t.start()
        t.join(10)
    finally:
        dev.end(s)
    for k, v in seen.items():
        fingerprint.record(f"Q-25:{k}", v)
