"""External-event record/wait across the graph boundary (aclrtRecordEventWithFlag /
aclrtStreamWaitEventWithFlag with ACL_EVENT_RECORD_EXTERNAL / ACL_EVENT_WAIT_EXTERNAL).

* XS-10: EXTERNAL is capture-only (107029 on a non-capturing stream), at most once per event per
  graph; an EXTERNAL wait needs timeout 0.
* TYPE-03: the captured record/wait is a placeholder that GetType reports as DEFAULT, that cannot
  be disabled (DIS-06), and whose real record/wait acts at each replay.
* TYPE-04: GetParams of the placeholder reports EVENT_RECORD / EVENT_WAIT with
  recordFlag / waitFlag EXTERNAL.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from mdlri_conformance.backends.contract import Cap, CondTaskType, Err, EventRecordFlag, EventWaitFlag, TaskType
from mdlri_conformance.conformance import expect
from mdlri_conformance.conformance.harness import Dev
from mdlri_conformance.conformance.specs._setups import add, capture_sub, parent

pytestmark = pytest.mark.requires(Cap.CAPTURE, Cap.EXTERNAL_EVENTS, Cap.KERNELS)

INPUTS = np.arange(1, 9, dtype=np.int32)


def _wait_ext(dev: Dev, stream: Any, event: Any, timeout: int = 0) -> int:
    return dev.b.stream_wait_event_with_flag(stream, event, timeout, EventWaitFlag.EXTERNAL)


def _record_ext(dev: Dev, event: Any, stream: Any) -> int:
    return dev.b.record_event_with_flag(event, stream, EventRecordFlag.EXTERNAL)


def _placeholders(dev: Dev, model: Any) -> list[tuple[Any, Any]]:
    """(task, params) of the DEFAULT-typed tasks whose GetParams succeeds (the placeholders)."""
    out = []
    for t in dev.tasks_of_type(model, TaskType.DEFAULT):
        rc, p = dev.b.task_get_params(t)
        # 207000 / 207019 (no update family, findings row 11) is UNSUPPORTED, not "no placeholder"
        expect.unsupported_if(rc, "aclmdlRITaskGetParams on a DEFAULT task")
        if rc == Err.SUCCESS:
            out.append((t, p))
    return out


def _wait_model(dev: Dev) -> tuple[Any, Any, Any, Any, Any]:
    """A graph that waits externally on an event, then copies x -> out."""
    s = dev.stream()
    ev = dev.event()
    x, out = dev.buffer(INPUTS), dev.buffer(n=8)
    dev.begin(s)
    expect.ok(_wait_ext(dev, s, ev), "aclrtStreamWaitEventWithFlag(EXTERNAL) in capture")
    dev.launch("copy", s, src=x, dst=out, n=8)
    return dev.end(s), s, ev, x, out


def _record_model(dev: Dev) -> tuple[Any, Any, Any, Any, Any]:
    """A graph that copies x -> out, then records an event externally."""
    s = dev.stream()
    ev = dev.event()
    x, out = dev.buffer(INPUTS), dev.buffer(n=8)
    dev.begin(s)
    dev.launch("copy", s, src=x, dst=out, n=8)
    expect.ok(_record_ext(dev, ev, s), "aclrtRecordEventWithFlag(EXTERNAL) in capture")
    return dev.end(s), s, ev, x, out


# ---------------------------------------------------------------------------------------------
# XS-10


@pytest.mark.clause("XS-10")
def test_external_record_outside_capture_rejected(dev: Dev) -> None:
    """XS-10: aclrtRecordEventWithFlag(EXTERNAL) on a non-capturing stream returns 107029."""
    s, ev = dev.stream(), dev.event()
    expect.rc(_record_ext(dev, ev, s), Err.RT_STREAM_NOT_CAPTURED,
              "aclrtRecordEventWithFlag(EXTERNAL) on a non-capturing stream")


@pytest.mark.clause("XS-10")
def test_external_wait_outside_capture_rejected(dev: Dev) -> None:
    """XS-10: aclrtStreamWaitEventWithFlag(EXTERNAL, 0) on a non-capturing stream returns 107029."""
    s, ev = dev.stream(), dev.event()
    expect.rc(_wait_ext(dev, s, ev), Err.RT_STREAM_NOT_CAPTURED,
              "aclrtStreamWaitEventWithFlag(EXTERNAL) on a non-capturing stream")


@pytest.mark.clause("XS-10")
def test_external_wait_needs_timeout_zero(dev: Dev) -> None:
    """XS-10: an EXTERNAL wait with a non-zero timeout is rejected (only 0 is supported)."""
    s, ev = dev.stream(), dev.event()
    dev.begin(s)
    rc = _wait_ext(dev, s, ev, timeout=5)
    # the ACL layer refuses it before the runtime (`src/acl/aclrt_impl/stream.cpp:248-250`)
    expect.rc(rc, Err.INVALID_PARAM, "aclrtStreamWaitEventWithFlag(EXTERNAL, timeout 5)")
    dev.end(s)


@pytest.mark.clause("XS-10")
@pytest.mark.parametrize("kind", ["record", "wait"])
def test_external_use_once_per_event_per_graph(dev: Dev, kind: str) -> None:
    """XS-10: a second EXTERNAL record (or wait) of the same event in one graph is rejected."""
    s, ev = dev.stream(), dev.event()
    dev.begin(s)
    use = (lambda: _record_ext(dev, ev, s)) if kind == "record" else (lambda: _wait_ext(dev, s, ev))
    expect.ok(use(), f"first EXTERNAL {kind} in capture")
    rc = use()
    # CaptureModel::CheckExternalEventConstraints (`feature/aclgraph/capture_model.cc:489-497`)
    expect.rc(rc, Err.RT_PARAM_INVALID, f"second EXTERNAL {kind} of the event in the same graph")
    rc, model = dev.b.capture_end(s)
    if rc == Err.SUCCESS and model is not None:
        dev.model(model)


@pytest.mark.clause("XS-10")
@pytest.mark.requires(Cap.COND)
@pytest.mark.parametrize("kind", ["record", "wait"])
def test_external_use_rejected_in_sub_graph(dev: Dev, kind: str) -> None:
    """XS-10: an EXTERNAL record/wait on a stream capturing into a sub-graph is rejected."""
    ev = dev.event()
    out = dev.buffer(n=8)
    p = parent(dev)
    (sub,) = add(dev, p, CondTaskType.IF, 1)
    seen: list[int] = []

    def body(u: Any) -> None:
        seen.append(_record_ext(dev, ev, u) if kind == "record" else _wait_ext(dev, u, ev))
        dev.launch("fill", u, out=out, n=out.n, value=1)

    capture_sub(dev, sub, body)
    dev.end(p.stream)
    expect.true(seen[0] != Err.SUCCESS, f"EXTERNAL {kind} in a sub-graph capture", "an error",
                seen[0])


# ---------------------------------------------------------------------------------------------
# TYPE-03


@pytest.mark.clause("TYPE-03")
@pytest.mark.parametrize("kind", ["record", "wait"])
def test_external_placeholder_reports_default(dev: Dev, kind: str) -> None:
    """TYPE-03: the captured EXTERNAL record/wait is listed as a DEFAULT task, not as
    EVENT_RECORD / EVENT_WAIT."""
    model = (_record_model if kind == "record" else _wait_model)(dev)[0]
    ttype = TaskType.EVENT_RECORD if kind == "record" else TaskType.EVENT_WAIT
    expect.eq(len(dev.tasks_of_type(model, ttype)), 0, f"{ttype.name} tasks listed by GetType")
    expect.eq(len(_placeholders(dev, model)), 1, "DEFAULT tasks with event parameters")


@pytest.mark.clause("TYPE-03")
def test_external_wait_released_by_outside_record_each_replay(dev: Dev) -> None:
    """TYPE-03: at every replay the placeholder waits on the user's event: a record on another
    stream releases the graph, which then copies the current input."""
    model, s, ev, x, out = _wait_model(dev)
    other = dev.stream()
    for k in range(2):
        data = INPUTS + 100 * k
        dev.write(x, data)
        expect.ok(dev.b.record_event(ev, other), "aclrtRecordEvent on the external stream")
        dev.execute(model, s)
        expect.eq(dev.read(out), data, f"output after replay {k + 1}")


@pytest.mark.clause("TYPE-03")
def test_external_record_releases_outside_wait(dev: Dev) -> None:
    """TYPE-03: the placeholder records the user's event: a stream waiting on it after
    ExecuteAsync sees the graph's copy done."""
    model, s, ev, x, out = _record_model(dev)
    other = dev.stream()
    dst = dev.buffer(n=8)
    expect.ok(dev.b.execute_async(model, s), "aclmdlRIExecuteAsync")
    expect.ok(dev.b.stream_wait_event(other, ev), "aclrtStreamWaitEvent on the external stream")
    dev.launch("copy", other, src=out, dst=dst, n=8)
    dev.sync(other)
    dev.sync(s)
    expect.eq(dev.read(dst), INPUTS, "copy on the external stream after the wait")


@pytest.mark.clause("TYPE-03", "DIS-06")
def test_external_placeholder_cannot_be_disabled(dev: Dev) -> None:
    """TYPE-03 / DIS-06: disabling the external-wait placeholder returns 107000 and faults the model."""
    model, s, ev, x, out = _wait_model(dev)
    found = _placeholders(dev, model)
    expect.eq(len(found), 1, "external placeholders")
    expect.rc(dev.b.task_disable(found[0][0]), Err.RT_PARAM_INVALID,
              "aclmdlRITaskDisable(external placeholder)")
    expect.rc(dev.b.execute_async(model, s), Err.RT_MODEL_EXECUTE,
              "aclmdlRIExecuteAsync on the faulted model")


# ---------------------------------------------------------------------------------------------
# TYPE-04


@pytest.mark.clause("TYPE-04", "GETP-02")
def test_external_record_params(dev: Dev) -> None:
    """TYPE-04: GetParams of the DEFAULT-typed external record reports EVENT_RECORD with
    recordFlag EXTERNAL; GETP-02: its reserved fields read as zero (ApiImpl::TaskGetParams
    clears the whole struct before filling it, `api/impl/api_impl.cc:9568`)."""
    model = _record_model(dev)[0]
    found = _placeholders(dev, model)
    expect.eq(len(found), 1, "external placeholders")
    p = found[0][1]
    expect.eq(p.type, TaskType.EVENT_RECORD, "GetParams type")
    expect.eq(p.event_record.record_flag, EventRecordFlag.EXTERNAL, "recordFlag")
    expect.eq(tuple(p.rsv0), (0, 0, 0), "rsv0 of the external record's params")
    expect.eq(bytes(p.rsv1), bytes(32), "rsv1 of the external record's params")


@pytest.mark.clause("TYPE-04", "GETP-02")
def test_external_wait_params(dev: Dev) -> None:
    """TYPE-04: GetParams of the DEFAULT-typed external wait reports EVENT_WAIT with waitFlag
    EXTERNAL; GETP-02: its reserved fields read as zero (`api/impl/api_impl.cc:9568`)."""
    model = _wait_model(dev)[0]
    found = _placeholders(dev, model)
    expect.eq(len(found), 1, "external placeholders")
    p = found[0][1]
    expect.eq(p.type, TaskType.EVENT_WAIT, "GetParams type")
    expect.eq(p.event_wait.wait_flag, EventWaitFlag.EXTERNAL, "waitFlag")
    expect.eq(tuple(p.rsv0), (0, 0, 0), "rsv0 of the external wait's params")
    expect.eq(bytes(p.rsv1), bytes(32), "rsv1 of the external wait's params")
