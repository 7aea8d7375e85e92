"""Task groups: capture and update (TG-01..TG-15, TG-18; SETP-06, SEQ-02; ERR-05..ERR-08; Q-06;
RT-30).

aclmdlRICaptureTaskGrpBegin/End mark a group of kernels on a capturing stream;
aclmdlRICaptureTaskUpdateBegin/End re-issue the group's kernels from a non-capturing stream.

Not tested here (see conformance/untestable.toml): TG-16 (capacity of 1024x1024 updated
tasks), TG-17 (driver version).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

from mdlri_conformance.backends.contract import UNWRITTEN, Cap, CaptureStatus, Err, TaskType
from mdlri_conformance.conformance import expect
from mdlri_conformance.conformance.harness import SENTINEL, Buf, Dev
from mdlri_conformance.conformance.specs._setups import Case, bound_stream, case

pytestmark = pytest.mark.requires(Cap.TASK_GROUPS, Cap.CAPTURE, Cap.KERNELS)

X = np.arange(1, 9, dtype=np.int32)


@dataclass
class Grouped:
    """A READY model whose origin stream captured ``affine`` kernels inside one task group."""

    model: Any
    stream: Any
    handle: Any
    x: Buf
    ys: list[Buf]
    coeffs: list[tuple[int, int]]


def affine(x: np.ndarray, a: int, b: int) -> np.ndarray:
    return (a * x + b).astype(np.int32)


def open_group(dev: Dev, s: Any) -> None:
    """Begin a capture on ``s`` and open a task group (both required to succeed)."""
    dev.begin(s)
    expect.ok(dev.b.capture_task_grp_begin(s), "aclmdlRICaptureTaskGrpBegin (setup)")


def grouped(dev: Dev, coeffs: tuple[tuple[int, int], ...] = ((2, 1), (3, -1))) -> Grouped:
    """Capture one grouped ``affine`` kernel per (a, b), then end the group and the capture."""
    s = dev.stream()
    x = dev.buffer(X)
    ys = [dev.buffer(n=8) for _ in coeffs]
    open_group(dev, s)
    for y, (a, b) in zip(ys, coeffs):
        dev.launch("affine", s, x=x, y=y, n=8, a=a, b=b)
    rc, h = dev.b.capture_task_grp_end(s)
    expect.ok(rc, "aclmdlRICaptureTaskGrpEnd (setup)")
    return Grouped(dev.end(s), s, h, x, ys, list(coeffs))


def updater(dev: Dev, g: Grouped) -> Any:
    """A fresh non-capturing stream with an update of ``g``'s group open on it."""
    u = dev.stream()
    expect.ok(dev.b.capture_task_update_begin(u, g.handle), "aclmdlRICaptureTaskUpdateBegin")
    return u


# ---------------------------------------------------------------------------------------------
# TG-01 .. TG-09: capturing a group


@pytest.mark.clause("TG-01")
def test_group_end_returns_a_handle_and_the_group_runs(dev: Dev) -> None:
    """TG-01: GrpBegin/GrpEnd on a capturing stream return 0 and a non-NULL handle; the kernels run."""
    s = dev.stream()
    x, y = dev.buffer(X), dev.buffer(n=8)
    dev.begin(s)
    expect.ok(dev.b.capture_task_grp_begin(s), "aclmdlRICaptureTaskGrpBegin")
    dev.launch("affine", s, x=x, y=y, n=8, a=2, b=1)
    rc, h = dev.b.capture_task_grp_end(s)
    expect.ok(rc, "aclmdlRICaptureTaskGrpEnd")
    expect.true(h is not None and h is not UNWRITTEN, "task group handle", "non-NULL", h)
    model = dev.end(s)
    dev.execute(model, s)
    expect.eq(dev.read(y), affine(X, 2, 1), "output of the grouped kernel")


@pytest.mark.clause("TG-02")
def test_group_begin_outside_capture(dev: Dev) -> None:
    """TG-02: GrpBegin on a stream that is not capturing returns 107029."""
    expect.rc(dev.b.capture_task_grp_begin(dev.stream()), Err.RT_STREAM_NOT_CAPTURED,
              "aclmdlRICaptureTaskGrpBegin outside capture")


def _default_count(dev: Dev, model: Any) -> int:
    return len(dev.tasks_of_type(model, TaskType.DEFAULT))


@pytest.mark.clause("TG-03")
@pytest.mark.requires(Cap.LISTING, Cap.TASK_TYPE, Cap.INTERNAL_TASKS)
def test_group_begin_inserts_default_tasks(dev: Dev, fingerprint: Any) -> None:
    """TG-03: GrpBegin adds NOP tasks, listed as DEFAULT, to the stream's task list."""
    x, y = dev.buffer(X), dev.buffer(n=8)
    s1, s2 = dev.stream(), dev.stream()
    dev.begin(s1)
    dev.launch("affine", s1, x=x, y=y, n=8, a=1, b=0)
    plain = dev.end(s1)
    open_group(dev, s2)
    dev.launch("affine", s2, x=x, y=y, n=8, a=1, b=0)
    expect.ok(dev.b.capture_task_grp_end(s2)[0], "aclmdlRICaptureTaskGrpEnd (setup)")
    with_group = dev.end(s2)
    extra = _default_count(dev, with_group) - _default_count(dev, plain)
    fingerprint.record("TG-03:nops", extra)  # 8 on A2/A3, 4 on arch5162, 10 on dc
    expect.true(extra >= 1, "DEFAULT tasks added by GrpBegin", ">= 1", extra)


@pytest.mark.clause("SEQ-02")
@pytest.mark.requires(Cap.LISTING, Cap.TASK_TYPE, Cap.SEQ_ID, Cap.INTERNAL_TASKS)
def test_internal_tasks_consume_seq_ids(dev: Dev, fingerprint: Any) -> None:
    """SEQ-02: the NOPs of GrpBegin consume seqIds, so two consecutive user kernels' ids have a gap."""
    x, y = dev.buffer(X), dev.buffer(n=8)
    s = dev.stream()
    dev.begin(s)
    dev.launch("affine", s, x=x, y=y, n=8, a=1, b=0)
    expect.ok(dev.b.capture_task_grp_begin(s), "aclmdlRICaptureTaskGrpBegin (setup)")
    dev.launch("affine", s, x=x, y=y, n=8, a=2, b=0)
    expect.ok(dev.b.capture_task_grp_end(s)[0], "aclmdlRICaptureTaskGrpEnd (setup)")
    model = dev.end(s)
    kernels = dev.kernel_tasks(model)
    expect.eq(len(kernels), 2, "kernel tasks listed")
    first, second = (dev.seq_of(t) for t in kernels)
    fingerprint.record("SEQ-02:gap", second - first)
    expect.true(second - first > 1, "seqId gap between the kernels around GrpBegin", "> 1",
                second - first)


@pytest.mark.clause("TG-04")
@pytest.mark.requires(Cap.VALUE_TASKS)
def test_non_kernel_task_in_group_invalidates(dev: Dev) -> None:
    """TG-04: a value write inside a group returns 507009; GrpEnd returns 507009 (no handle); CaptureEnd 507903."""
    s = dev.stream()
    word = dev.buffer64(0)
    open_group(dev, s)
    expect.rc(dev.b.value_write(word, 5, 0, s), Err.RT_TASK_TYPE_NOT_SUPPORT,
              "aclrtValueWrite inside a task group")
    rc, h = dev.b.capture_task_grp_end(s)
    expect.rc(rc, Err.RT_TASK_TYPE_NOT_SUPPORT, "aclmdlRICaptureTaskGrpEnd after the refused task")
    expect.eq(h, UNWRITTEN, "task group handle after the failed GrpEnd")
    expect.rc(dev.end_rc(s)[0], Err.RT_STREAM_CAPTURE_INVALIDATED, "aclmdlRICaptureEnd")


@pytest.mark.clause("Q-06")
@pytest.mark.requires(Cap.VALUE_TASKS)
def test_launch_after_model_invalidation(dev: Dev, fingerprint: Any) -> None:
    """Q-06: whether launches after a model-level invalidation still succeed, and GetInfo's status."""
    s = dev.stream()
    x, y, word = dev.buffer(X), dev.buffer(n=8), dev.buffer64(0)
    open_group(dev, s)
    dev.b.value_write(word, 5, 0, s)
    fingerprint.record("Q-06:grp_end", dev.b.capture_task_grp_end(s)[0])
    fingerprint.record("Q-06:launch", dev.launch_rc("affine", s, x=x, y=y, n=8, a=1, b=0))
    fingerprint.record("Q-06:status", dev.b.capture_get_info(s)[1])
    fingerprint.record("Q-06:end", dev.end_rc(s)[0])


@pytest.mark.clause("TG-05")
@pytest.mark.requires(Cap.CROSS_STREAM)
def test_task_on_other_stream_while_group_open(dev: Dev) -> None:
    """TG-05: with a group open on s1, a kernel on joined s2 returns 107034; GrpEnd 107034; CaptureEnd 507903."""
    s1, s2 = dev.stream(), dev.stream()
    fork, join = dev.event(), dev.event()
    x, y = dev.buffer(X), dev.buffer(n=8)
    dev.begin(s1)
    expect.ok(dev.b.record_event(fork, s1), "aclrtRecordEvent fork (setup)")
    expect.ok(dev.b.stream_wait_event(s2, fork), "aclrtStreamWaitEvent fork (setup)")
    expect.ok(dev.b.capture_task_grp_begin(s1), "aclmdlRICaptureTaskGrpBegin (setup)")
    expect.rc(dev.launch_rc("affine", s2, x=x, y=y, n=8, a=1, b=0), Err.STREAM_TASK_GROUP_INTR,
              "kernel on the other capturing stream while a group is open")
    rc, _ = dev.b.capture_task_grp_end(s1)
    expect.rc(rc, Err.STREAM_TASK_GROUP_INTR, "aclmdlRICaptureTaskGrpEnd")
    dev.b.record_event(join, s2)
    dev.b.stream_wait_event(s1, join)
    expect.rc(dev.end_rc(s1)[0], Err.RT_STREAM_CAPTURE_INVALIDATED, "aclmdlRICaptureEnd")


@pytest.mark.clause("TG-06")
def test_second_group_begin_fails(dev: Dev) -> None:
    """TG-06: a second GrpBegin without GrpEnd returns 107033."""
    s = dev.stream()
    open_group(dev, s)
    expect.rc(dev.b.capture_task_grp_begin(s), Err.STREAM_TASK_GROUP_STATUS,
              "second aclmdlRICaptureTaskGrpBegin")
    dev.b.capture_task_grp_end(s)


@pytest.mark.clause("TG-06")
def test_group_end_without_begin_fails(dev: Dev) -> None:
    """TG-06: GrpEnd without GrpBegin returns 107033."""
    s = dev.stream()
    dev.begin(s)
    rc, _ = dev.b.capture_task_grp_end(s)
    expect.rc(rc, Err.STREAM_TASK_GROUP_STATUS, "aclmdlRICaptureTaskGrpEnd without Begin")


@pytest.mark.clause("TG-07")
def test_capture_end_with_open_group(dev: Dev) -> None:
    """TG-07: CaptureEnd with a group open returns 107033, NULL model, and the stream leaves capture."""
    s = dev.stream()
    x, y = dev.buffer(X), dev.buffer(n=8)
    open_group(dev, s)
    dev.launch("affine", s, x=x, y=y, n=8, a=1, b=0)
    rc, m = dev.b.capture_end(s)
    expect.rc(rc, Err.STREAM_TASK_GROUP_STATUS, "aclmdlRICaptureEnd with an open group")
    expect.eq(m, None, "modelRI after the failed CaptureEnd")
    rc, status, _ = dev.b.capture_get_info(s)
    expect.ok(rc, "aclmdlRICaptureGetInfo")
    expect.eq(status, CaptureStatus.NONE, "capture status after the failed CaptureEnd")


@pytest.mark.clause("TG-08")
def test_failed_group_end_leaves_handle(dev: Dev) -> None:
    """TG-08: a failed GrpEnd (no Begin) leaves *handle unwritten."""
    s = dev.stream()
    dev.begin(s)
    rc, h = dev.b.capture_task_grp_end(s)
    # task-group status is not SAMPLE (`feature/aclgraph/context_aclgraph.cc:819-821`)
    expect.rc(rc, Err.STREAM_TASK_GROUP_STATUS, "aclmdlRICaptureTaskGrpEnd without Begin rc")
    expect.eq(h, UNWRITTEN, "task group handle after the failed GrpEnd")


@pytest.mark.clause("TG-09")
@pytest.mark.requires(Cap.LISTING, Cap.TASK_TYPE, Cap.GET_PARAMS)
def test_get_params_reports_group(dev: Dev) -> None:
    """TG-09: GetParams of a grouped kernel gives taskGrp == the GrpEnd handle; an ungrouped one NULL."""
    s = dev.stream()
    x, y0, y1 = dev.buffer(X), dev.buffer(n=8), dev.buffer(n=8)
    dev.begin(s)
    dev.launch("affine", s, x=x, y=y0, n=8, a=1, b=0)
    expect.ok(dev.b.capture_task_grp_begin(s), "aclmdlRICaptureTaskGrpBegin (setup)")
    dev.launch("affine", s, x=x, y=y1, n=8, a=2, b=0)
    rc, h = dev.b.capture_task_grp_end(s)
    expect.ok(rc, "aclmdlRICaptureTaskGrpEnd (setup)")
    model = dev.end(s)
    plain, in_group = dev.kernel_tasks(model)
    expect.eq(dev.params_of(plain).task_grp, None, "taskGrp of the ungrouped kernel")
    expect.eq(dev.params_of(in_group).task_grp, h, "taskGrp of the grouped kernel")


@pytest.mark.clause("SETP-06")
@pytest.mark.requires(Cap.LISTING, Cap.TASK_TYPE, Cap.GET_PARAMS, Cap.SET_PARAMS)
def test_get_set_round_trip_of_grouped_kernel(dev: Dev) -> None:
    """SETP-06: feeding a grouped kernel's GetParams back to SetParams returns 107000 and FAULTs the model.

    The docs (STRUCT, taskGrp "the setter need not care"; API15 L1591's Get->Set flow) suggest
    the round trip works; the implementation requires taskGrp == NULL.
    """
    g = grouped(dev, ((2, 1),))
    (task,) = dev.kernel_tasks(g.model)
    params = dev.params_of(task)
    expect.rc(dev.b.task_set_params(task, params), Err.RT_PARAM_INVALID,
              "aclmdlRITaskSetParams with the grouped kernel's own params")
    expect.rc(dev.b.execute_async(g.model, g.stream), Err.RT_MODEL_EXECUTE,
              "aclmdlRIExecuteAsync of the faulted model")


# ---------------------------------------------------------------------------------------------
# TG-10 .. TG-15: updating a group


@pytest.mark.clause("TG-10")
def test_update_replaces_group_tasks(dev: Dev) -> None:
    """TG-10: kernels launched between UpdateBegin/End replace the group's tasks in order."""
    g = grouped(dev)
    dev.execute(g.model, g.stream)
    for y, (a, b) in zip(g.ys, g.coeffs):
        expect.eq(dev.read(y), affine(X, a, b), "output before the update (setup)")
    new = [(5, 7), (-1, 4)]
    u = updater(dev, g)
    for y, (a, b) in zip(g.ys, new):
        dev.launch("affine", u, x=g.x, y=y, n=8, a=a, b=b)
    expect.ok(dev.b.capture_task_update_end(u), "aclmdlRICaptureTaskUpdateEnd")
    dev.sync(u)  # the update runs in u's stream order
    dev.execute(g.model, g.stream)
    for i, (y, (a, b)) in enumerate(zip(g.ys, new)):
        expect.eq(dev.read(y), affine(X, a, b), f"output {i} after the update")


@pytest.mark.clause("TG-10")
def test_update_may_change_the_operator(dev: Dev) -> None:
    """TG-10: the replacement may be a different kernel (fill instead of affine)."""
    g = grouped(dev, ((2, 1),))
    u = updater(dev, g)
    dev.launch("fill", u, out=g.ys[0], n=8, value=42)
    expect.ok(dev.b.capture_task_update_end(u), "aclmdlRICaptureTaskUpdateEnd")
    dev.sync(u)
    dev.execute(g.model, g.stream)
    expect.eq(dev.read(g.ys[0]), np.full(8, 42, dtype=np.int32), "output after the update")


@pytest.mark.clause("TG-10")
@pytest.mark.clause("UPD-07")
@pytest.mark.requires(Cap.LISTING, Cap.TASK_TYPE, Cap.SET_PARAMS, Cap.UPDATE)
def test_group_update_survives_a_later_update(dev: Dev) -> None:
    """TG-10, UPD-07: a group update made after the model ran stays in force across a later
    aclmdlRIUpdate that commits another task's SetParams: the updated task was not touched by
    that Update, so it keeps its (updated) behaviour."""
    s = dev.stream()
    x, y, z = dev.buffer(X), dev.buffer(n=8), dev.buffer(n=8)
    open_group(dev, s)
    dev.launch("affine", s, x=x, y=y, n=8, a=2, b=1)
    rc, h = dev.b.capture_task_grp_end(s)
    expect.ok(rc, "aclmdlRICaptureTaskGrpEnd (setup)")
    dev.launch("fill", s, out=z, n=8, value=1)
    model = dev.end(s)
    dev.execute(model, s)
    expect.eq(dev.read(y), affine(X, 2, 1), "grouped output before the group update (setup)")
    u = dev.stream()
    expect.ok(dev.b.capture_task_update_begin(u, h), "aclmdlRICaptureTaskUpdateBegin")
    dev.launch("affine", u, x=x, y=y, n=8, a=5, b=7)
    expect.ok(dev.b.capture_task_update_end(u), "aclmdlRICaptureTaskUpdateEnd")
    dev.sync(u)
    dev.execute(model, s)
    expect.eq(dev.read(y), affine(X, 5, 7), "grouped output after the group update")
    fill = dev.kernel_tasks(model)[-1]
    expect.ok(dev.b.task_set_params(fill, dev.kernel_params("fill", out=z, n=8, value=2)),
              "aclmdlRITaskSetParams(fill, value=2)")
    expect.ok(dev.b.update(model), "aclmdlRIUpdate")
    dev.write(y, np.full(8, SENTINEL, dtype=np.int32))
    dev.execute(model, s)
    expect.eq(dev.read(z), np.full(8, 2, dtype=np.int32), "updated fill output after Update")
    expect.eq(dev.read(y), affine(X, 5, 7), "group-updated output after a later Update")


@pytest.mark.clause("TG-11")
def test_update_begin_on_capturing_stream(dev: Dev) -> None:
    """TG-11: UpdateBegin on a capturing stream returns 107027."""
    g = grouped(dev, ((2, 1),))
    s = dev.stream()
    dev.begin(s)
    expect.rc(dev.b.capture_task_update_begin(s, g.handle), Err.RT_STREAM_CAPTURED,
              "aclmdlRICaptureTaskUpdateBegin on a capturing stream")


@pytest.mark.clause("TG-11")
@pytest.mark.requires(Cap.LISTING)
def test_update_begin_on_model_stream(dev: Dev) -> None:
    """TG-11: UpdateBegin on a model's internal stream returns 107005."""
    g = grouped(dev, ((2, 1),))
    internal = dev.streams_of(g.model)[0]
    expect.rc(dev.b.capture_task_update_begin(internal, g.handle), Err.RT_STREAM_MODEL,
              "aclmdlRICaptureTaskUpdateBegin on a model stream")


@pytest.mark.clause("TG-11")
@pytest.mark.requires(Cap.BUILD)
def test_update_begin_on_bound_stream(dev: Dev) -> None:
    """TG-11: UpdateBegin on a stream bound to a built model returns 107005 (IsModelStream,
    `feature/aclgraph/api_error_aclgraph.cc:92-94`) and the update does not start: the group
    can then be updated from another stream."""
    g = grouped(dev, ((2, 1),))
    s = bound_stream(dev)
    expect.rc(dev.b.capture_task_update_begin(s, g.handle), Err.RT_STREAM_MODEL,
              "aclmdlRICaptureTaskUpdateBegin on a bound stream")
    u = dev.stream()
    expect.ok(dev.b.capture_task_update_begin(u, g.handle),
              "aclmdlRICaptureTaskUpdateBegin of the group on another stream afterwards")
    dev.launch("affine", u, x=g.x, y=g.ys[0], n=8, a=2, b=1)
    expect.ok(dev.b.capture_task_update_end(u), "aclmdlRICaptureTaskUpdateEnd")


@pytest.mark.clause("RT-30")
@pytest.mark.parametrize("which", [
    pytest.param("internal", marks=pytest.mark.requires(Cap.LISTING)),
    pytest.param("bound", marks=pytest.mark.requires(Cap.BUILD)),
])
def test_update_end_on_model_stream(dev: Dev, which: str) -> None:
    """RT-30: UpdateEnd on a model stream, an internal one (GetStreams) or one bound to a built
    model, returns 107005 (`feature/aclgraph/api_error_aclgraph.cc:107-109`), not the
    not-in-update-mode 107033 of a plain stream (TG-12)."""
    if which == "internal":
        s = dev.streams_of(dev.capture_fills([1])[0])[0]
    else:
        s = bound_stream(dev)
    expect.rc(dev.b.capture_task_update_end(s), Err.RT_STREAM_MODEL,
              f"aclmdlRICaptureTaskUpdateEnd on an {which} model stream")


@pytest.mark.clause("TG-12")
def test_update_begin_twice_on_a_stream(dev: Dev) -> None:
    """TG-12: UpdateBegin on a stream already in update mode returns 107033."""
    g = grouped(dev, ((2, 1),))
    u = updater(dev, g)
    expect.rc(dev.b.capture_task_update_begin(u, g.handle), Err.STREAM_TASK_GROUP_STATUS,
              "second aclmdlRICaptureTaskUpdateBegin on the stream")
    dev.launch("affine", u, x=g.x, y=g.ys[0], n=8, a=2, b=1)
    dev.b.capture_task_update_end(u)


@pytest.mark.clause("TG-12")
def test_update_begin_with_busy_handle(dev: Dev) -> None:
    """TG-12: UpdateBegin with a handle being updated on another stream returns 107033."""
    g = grouped(dev, ((2, 1),))
    u = updater(dev, g)
    other = dev.stream()
    expect.rc(dev.b.capture_task_update_begin(other, g.handle), Err.STREAM_TASK_GROUP_STATUS,
              "aclmdlRICaptureTaskUpdateBegin with a busy handle")
    dev.launch("affine", u, x=g.x, y=g.ys[0], n=8, a=2, b=1)
    dev.b.capture_task_update_end(u)


@pytest.mark.clause("TG-12")
def test_update_end_without_begin(dev: Dev) -> None:
    """TG-12: UpdateEnd without UpdateBegin returns 107033."""
    expect.rc(dev.b.capture_task_update_end(dev.stream()), Err.STREAM_TASK_GROUP_STATUS,
              "aclmdlRICaptureTaskUpdateEnd without Begin")


@pytest.mark.clause("TG-13")
def test_update_with_too_many_tasks(dev: Dev) -> None:
    """TG-13: a launch beyond the group's task count returns 507000."""
    g = grouped(dev, ((2, 1),))
    u = updater(dev, g)
    dev.launch("affine", u, x=g.x, y=g.ys[0], n=8, a=3, b=0)
    expect.rc(dev.launch_rc("affine", u, x=g.x, y=g.ys[0], n=8, a=4, b=0), Err.RT_INTERNAL_ERROR,
              "the extra launch in update mode")
    dev.b.capture_task_update_end(u)


@pytest.mark.clause("TG-13")
def test_update_with_too_few_tasks(dev: Dev) -> None:
    """TG-13: UpdateEnd with fewer tasks than the group returns 507000; the handle is reusable after."""
    g = grouped(dev)
    u = updater(dev, g)
    dev.launch("affine", u, x=g.x, y=g.ys[0], n=8, a=3, b=0)
    expect.rc(dev.b.capture_task_update_end(u), Err.RT_INTERNAL_ERROR,
              "aclmdlRICaptureTaskUpdateEnd with one task of two")
    expect.ok(dev.b.capture_task_update_begin(u, g.handle),
              "aclmdlRICaptureTaskUpdateBegin again after the failed UpdateEnd")
    for y, (a, b) in zip(g.ys, g.coeffs):
        dev.launch("affine", u, x=g.x, y=y, n=8, a=a, b=b)
    expect.ok(dev.b.capture_task_update_end(u), "aclmdlRICaptureTaskUpdateEnd (complete)")


@pytest.mark.clause("TG-14")
def test_empty_update_of_a_non_empty_group_fails(dev: Dev) -> None:
    """TG-14: on a group of one task, UpdateBegin immediately followed by UpdateEnd returns
    507000.

    The DG-TU sample does exactly this (loop i == 0) as if it were legal; the implementation
    treats zero launches as "fewer than the group" (TG-13, `feature/aclgraph/
    context_aclgraph.cc:890-898`).
    """
    g = grouped(dev, ((2, 1),))
    u = updater(dev, g)
    expect.rc(dev.b.capture_task_update_end(u), Err.RT_INTERNAL_ERROR,
              "aclmdlRICaptureTaskUpdateEnd with no task on a group of one", clause="TG-14")


@pytest.mark.clause("TG-14", "TG-01")
@pytest.mark.parametrize("outside", [False, True], ids=["empty_model", "kernel_before_group"])
def test_empty_group(dev: Dev, outside: bool) -> None:
    """TG-14, TG-01: a group begun and ended with no task between is legal: GrpBegin, GrpEnd
    (with a handle) and CaptureEnd each return 0. UpdateBegin then UpdateEnd with no launch
    returns 0 on it, because 0 launches match its 0 tasks (Context::StreamEndTaskUpdate
    compares the counts only, `feature/aclgraph/context_aclgraph.cc:878-905`); the model's
    Destroy and a sync of the update stream after it return 0 as well. ``empty_model``: the
    update runs on the stream that captured, as the runtime's UT task_group_update does;
    ``kernel_before_group``: a kernel captured before the group, so the model is not empty,
    and a fresh update stream.
    """
    s = dev.stream()
    x, y = dev.buffer(X), dev.buffer(n=8)
    dev.begin(s)
    if outside:
        dev.launch("affine", s, x=x, y=y, n=8, a=2, b=1)
    expect.rc(dev.b.capture_task_grp_begin(s), Err.SUCCESS,
              "aclmdlRICaptureTaskGrpBegin", clause="TG-01")
    rc, h = dev.b.capture_task_grp_end(s)
    expect.rc(rc, Err.SUCCESS, "aclmdlRICaptureTaskGrpEnd of an empty group", clause="TG-01")
    expect.true(h is not None and h is not UNWRITTEN, "task group handle of an empty group",
                "non-NULL", h, clause="TG-01")
    rc, model = dev.end_rc(s)
    expect.rc(rc, Err.SUCCESS, "aclmdlRICaptureEnd after an empty group", clause="TG-01")
    u = dev.stream() if outside else s
    expect.rc(dev.b.capture_task_update_begin(u, h), Err.SUCCESS,
              "aclmdlRICaptureTaskUpdateBegin on an empty group", clause="TG-14")
    expect.rc(dev.b.capture_task_update_end(u), Err.SUCCESS,
              "aclmdlRICaptureTaskUpdateEnd with no task on an empty group", clause="TG-14")
    if outside:
        dev.execute(model, s)
        expect.eq(dev.read(y), affine(X, 2, 1), "output of the kernel before the empty group")
    expect.rc(dev.destroy(model), Err.SUCCESS, "aclmdlRIDestroy after the empty update",
              clause="TG-14")
    expect.rc(dev.b.synchronize_stream(u), Err.SUCCESS,
              "aclrtSynchronizeStream of the update stream after Destroy", clause="TG-14")


@pytest.mark.clause("TG-15")
@pytest.mark.requires(Cap.VALUE_TASKS)
def test_non_kernel_task_in_update_mode(dev: Dev) -> None:
    """TG-15: a value write on a stream in update mode returns 507009."""
    g = grouped(dev, ((2, 1),))
    u = updater(dev, g)
    word = dev.buffer64(0)
    expect.rc(dev.b.value_write(word, 1, 0, u), Err.RT_TASK_TYPE_NOT_SUPPORT,
              "aclrtValueWrite in update mode")
    dev.launch("affine", u, x=g.x, y=g.ys[0], n=8, a=2, b=1)
    dev.b.capture_task_update_end(u)


# ---------------------------------------------------------------------------------------------
# TG-18 and the ERR-05 .. ERR-08 rows


@pytest.mark.clause("TG-18")
@pytest.mark.parametrize("call", ["grp_begin", "grp_end", "grp_end_null_handle", "update_begin",
                                  "update_begin_null_handle", "update_end"])
def test_null_arguments(dev: Dev, call: str) -> None:
    """TG-18: a NULL stream or handle for GrpBegin/GrpEnd/UpdateBegin/UpdateEnd returns 100000."""
    b = dev.b
    if call == "grp_begin":
        rc = b.capture_task_grp_begin(None)
    elif call == "grp_end":
        rc = b.capture_task_grp_end(None)[0]
    elif call == "grp_end_null_handle":
        s = dev.stream()
        open_group(dev, s)
        rc = b.capture_task_grp_end(s, null_handle=True)[0]
    elif call == "update_begin":
        rc = b.capture_task_update_begin(None, grouped(dev, ((1, 0),)).handle)
    elif call == "update_begin_null_handle":
        rc = b.capture_task_update_begin(dev.stream(), None)
    else:
        rc = b.capture_task_update_end(None)
    expect.rc(rc, Err.INVALID_PARAM, call)


def _begin_null(dev: Dev) -> int:
    return dev.b.capture_task_grp_begin(None)


def _begin_not_capturing(dev: Dev) -> int:
    return dev.b.capture_task_grp_begin(dev.stream())


def _begin_in_group(dev: Dev) -> int:
    s = dev.stream()
    open_group(dev, s)
    return dev.b.capture_task_grp_begin(s)


@pytest.mark.clause("ERR-05")
@pytest.mark.parametrize("make, expected", [
    case(_begin_null, Err.INVALID_PARAM),
    case(_begin_not_capturing, Err.RT_STREAM_NOT_CAPTURED),
    case(_begin_in_group, Err.STREAM_TASK_GROUP_STATUS),
])
def test_err05_task_grp_begin(dev: Dev, make: Case, expected: int) -> None:
    """ERR-05: aclmdlRICaptureTaskGrpBegin returns the error of its error-table cell."""
    expect.rc(make(dev), expected, "aclmdlRICaptureTaskGrpBegin")


def _end_null(dev: Dev) -> int:
    return dev.b.capture_task_grp_end(None)[0]


def _end_null_handle(dev: Dev) -> int:
    s = dev.stream()
    open_group(dev, s)
    return dev.b.capture_task_grp_end(s, null_handle=True)[0]


def _end_not_capturing(dev: Dev) -> int:
    return dev.b.capture_task_grp_end(dev.stream())[0]


def _end_no_begin(dev: Dev) -> int:
    s = dev.stream()
    dev.begin(s)
    return dev.b.capture_task_grp_end(s)[0]


def _end_invalidated(dev: Dev) -> int:
    s = dev.stream()
    open_group(dev, s)
    dev.b.value_write(dev.buffer64(0), 1, 0, s)
    return dev.b.capture_task_grp_end(s)[0]


@pytest.mark.clause("ERR-06")
@pytest.mark.parametrize("make, expected", [
    case(_end_null, Err.INVALID_PARAM),
    case(_end_null_handle, Err.INVALID_PARAM),
    case(_end_not_capturing, Err.RT_STREAM_NOT_CAPTURED),
    case(_end_no_begin, Err.STREAM_TASK_GROUP_STATUS),
    # "invalidated -> 507903 or the earlier error"
    case(_end_invalidated, (Err.RT_STREAM_CAPTURE_INVALIDATED, Err.RT_TASK_TYPE_NOT_SUPPORT),
         Cap.VALUE_TASKS),
])
def test_err06_task_grp_end(dev: Dev, make: Case, expected: Any) -> None:
    """ERR-06: aclmdlRICaptureTaskGrpEnd returns the error of its error-table cell."""
    expect.rc(make(dev), expected, "aclmdlRICaptureTaskGrpEnd")


def _ub_null_stream(dev: Dev) -> int:
    return dev.b.capture_task_update_begin(None, grouped(dev, ((1, 0),)).handle)


def _ub_null_handle(dev: Dev) -> int:
    return dev.b.capture_task_update_begin(dev.stream(), None)


def _ub_capturing(dev: Dev) -> int:
    g = grouped(dev, ((1, 0),))
    s = dev.stream()
    dev.begin(s)
    return dev.b.capture_task_update_begin(s, g.handle)


def _ub_model_stream(dev: Dev) -> int:
    g = grouped(dev, ((1, 0),))
    return dev.b.capture_task_update_begin(dev.streams_of(g.model)[0], g.handle)


def _ub_stream_in_group(dev: Dev) -> int:
    g = grouped(dev, ((1, 0),))
    s = dev.stream()
    open_group(dev, s)
    rc = dev.b.capture_task_update_begin(s, g.handle)
    dev.b.capture_task_grp_end(s)
    return rc


def _ub_handle_busy(dev: Dev) -> int:
    g = grouped(dev, ((1, 0),))
    u = updater(dev, g)
    rc = dev.b.capture_task_update_begin(dev.stream(), g.handle)
    dev.launch("affine", u, x=g.x, y=g.ys[0], n=8, a=1, b=0)
    dev.b.capture_task_update_end(u)
    return rc


@pytest.mark.clause("ERR-07")
@pytest.mark.parametrize("make, expected", [
    case(_ub_null_stream, Err.INVALID_PARAM),
    case(_ub_null_handle, Err.INVALID_PARAM),
    case(_ub_capturing, Err.RT_STREAM_CAPTURED),
    case(_ub_model_stream, Err.RT_STREAM_MODEL, Cap.LISTING),
    # a capturing stream with an open group: the capture check may come first (ERR-07 lists both)
    case(_ub_stream_in_group, (Err.STREAM_TASK_GROUP_STATUS, Err.RT_STREAM_CAPTURED)),
    case(_ub_handle_busy, Err.STREAM_TASK_GROUP_STATUS),
])
def test_err07_task_update_begin(dev: Dev, make: Case, expected: Any) -> None:
    """ERR-07: aclmdlRICaptureTaskUpdateBegin returns the error of its error-table cell."""
    expect.rc(make(dev), expected, "aclmdlRICaptureTaskUpdateBegin")


def _ue_null(dev: Dev) -> int:
    return dev.b.capture_task_update_end(None)


def _ue_fewer(dev: Dev) -> int:
    g = grouped(dev)
    u = updater(dev, g)
    dev.launch("affine", u, x=g.x, y=g.ys[0], n=8, a=1, b=0)
    return dev.b.capture_task_update_end(u)


def _ue_not_in_update(dev: Dev) -> int:
    return dev.b.capture_task_update_end(dev.stream())


def _ue_capturing(dev: Dev) -> int:
    s = dev.stream()
    dev.begin(s)
    return dev.b.capture_task_update_end(s)


@pytest.mark.clause("ERR-08")
@pytest.mark.parametrize("make, expected", [
    case(_ue_null, Err.INVALID_PARAM),
    case(_ue_fewer, Err.RT_INTERNAL_ERROR),
    case(_ue_not_in_update, Err.STREAM_TASK_GROUP_STATUS),
    case(_ue_capturing, Err.RT_STREAM_CAPTURED),
])
def test_err08_task_update_end(dev: Dev, make: Case, expected: int) -> None:
    """ERR-08: aclmdlRICaptureTaskUpdateEnd returns the error of its error-table cell."""
    expect.rc(make(dev), expected, "aclmdlRICaptureTaskUpdateEnd")
