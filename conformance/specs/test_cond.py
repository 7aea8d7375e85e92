"""Conditional tasks and sub-models (COND-01..COND-12, LIST-12, LIFE-05, EXE-08, ERR-28..ERR-31,
Q-19).

A parent capture creates a cond handle on its model (the GetInfo handle), adds an IF / WHILE /
SWITCH task that yields sub-models, and each sub-model is captured on its own stream with
aclmdlRICaptureToModelRIBegin before the parent capture ends.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest

from mdlri_conformance.backends.contract import (
    UNWRITTEN, Cap, CaptureMode, CaptureStatus, CondHandleFlag, CondTaskParams, CondTaskType, Err,
    ModelStreamFlag, StreamFlag, err_name,
)
from mdlri_conformance.conformance import expect
from mdlri_conformance.conformance.harness import SENTINEL, SYNC_MS, Buf, Dev
from mdlri_conformance.conformance.engine.graphs import COND_SIZES
from mdlri_conformance.conformance.specs._setups import (
    Case, Parent, add, begin_build, capture_sub, case, parent, persistent_stream,
)

pytestmark = pytest.mark.requires(Cap.COND, Cap.CAPTURE, Cap.KERNELS)

X = np.arange(1, 9, dtype=np.int32)


def cond_ptr(dev: Dev, h: Any) -> int:
    rc, ptr = dev.b.cond_handle_get_cond_ptr(h)
    expect.ok(rc, "aclmdlRICondHandleGetCondPtr (setup)")
    return ptr


def fill_body(dev: Dev, out: Buf, value: int) -> Callable[[Any], None]:
    return lambda u: dev.launch("fill", u, out=out, n=out.n, value=value)


def branches(dev: Dev, ctype: int, values: list[int], default: int = 0,
             flag: int = CondHandleFlag.NONE) -> tuple[Any, Parent, int, Buf]:
    """A model with one cond task whose sub-model i fills ``out`` with values[i].

    Returns (model, parent, cond pointer, out)."""
    out = dev.buffer(n=8)
    p = parent(dev, default, flag)
    ptr = cond_ptr(dev, p.handle)
    for sub, v in zip(add(dev, p, ctype, len(values)), values):
        capture_sub(dev, sub, fill_body(dev, out, v))
    return dev.end(p.stream), p, ptr, out


def run_with(dev: Dev, model: Any, s: Any, ptr: int, cond: int, out: Buf) -> np.ndarray:
    """Reset ``out``, store ``cond`` in the condition word, execute, read ``out``."""
    dev.write(out, np.full(out.n, SENTINEL, dtype=np.int32))
    dev.write64(ptr, cond)
    dev.execute(model, s)
    return dev.read(out)


def full(v: int) -> np.ndarray:
    return np.full(8, v, dtype=np.int32)


def sub_model(dev: Dev) -> tuple[Parent, Any]:
    """A parent capture (still open) with one IF sub-model already captured."""
    out = dev.buffer(n=8)
    p = parent(dev)
    (sub,) = add(dev, p, CondTaskType.IF, 1)
    capture_sub(dev, sub, fill_body(dev, out, 1))
    return p, sub


# ---------------------------------------------------------------------------------------------
# COND-01 .. COND-04: cond handles


@pytest.mark.clause("COND-01")
def test_cond_handle_on_ended_capture(dev: Dev) -> None:
    """COND-01: CondHandleCreate on a captured model that is no longer capturing returns 107000.

    DES L501 documents ACL_ERROR_INVALID_PARAM (100000) for "not capturing"; the code
    returns 107000.
    """
    s = dev.stream()
    dev.begin(s)
    model = dev.end(s)
    rc, _ = dev.b.cond_handle_create(model, 0, CondHandleFlag.NONE)
    expect.rc(rc, Err.RT_PARAM_INVALID, "aclmdlRICondHandleCreate after CaptureEnd")


@pytest.mark.clause("COND-01")
@pytest.mark.requires(Cap.BUILD)
def test_cond_handle_on_built_model(dev: Dev) -> None:
    """COND-01: CondHandleCreate on a model that is not a capture model returns 207000."""
    m = begin_build(dev)
    rc, _ = dev.b.cond_handle_create(m, 0, CondHandleFlag.NONE)
    expect.rc(rc, Err.RT_FEATURE_NOT_SUPPORT, "aclmdlRICondHandleCreate on a built model")


@pytest.mark.clause("COND-01")
@pytest.mark.requires(Cap.BUILD)
def test_cond_handle_bad_flag_before_the_model_type(dev: Dev) -> None:
    """COND-01: CondHandleCreate on a built model with flag 2 returns 107000, not the built
    model's 207000: the error decorator checks the flag first
    (`feature/aclgraph/api_error_aclgraph.cc:197-202`)."""
    m = begin_build(dev)
    rc, h = dev.b.cond_handle_create(m, 0, 2)
    if rc == Err.RT_FEATURE_NOT_SUPPORT:
        # the built model's answer (test_cond_handle_on_built_model) came first: a wrong
        # order, not a missing feature
        expect.fail("aclmdlRICondHandleCreate(built model, flag 2) rc",
                    err_name(Err.RT_PARAM_INVALID), err_name(rc), clause="COND-01")
    expect.rc(rc, Err.RT_PARAM_INVALID, "aclmdlRICondHandleCreate(built model, flag 2)",
              clause="COND-01")
    expect.eq(h, UNWRITTEN, "aclmdlRICondHandleCreate handle out-parameter", clause="COND-01")


@pytest.mark.clause("COND-01")
@pytest.mark.parametrize("flag", [2, 7])
def test_cond_handle_bad_flag(dev: Dev, flag: int) -> None:
    """COND-01: CondHandleCreate with flag > 1 returns 107000."""
    s = dev.stream()
    dev.begin(s)
    m = dev.b.capture_get_info(s)[2]
    expect.rc(dev.b.cond_handle_create(m, 0, flag)[0], Err.RT_PARAM_INVALID,
              f"aclmdlRICondHandleCreate(flag {flag})")


@pytest.mark.clause("COND-01")
@pytest.mark.parametrize("which", ["model", "handle"])
def test_cond_handle_null(dev: Dev, which: str) -> None:
    """COND-01: CondHandleCreate with a NULL model or handle pointer returns 100000."""
    s = dev.stream()
    dev.begin(s)
    m = dev.b.capture_get_info(s)[2]
    if which == "model":
        rc = dev.b.cond_handle_create(None, 0, CondHandleFlag.NONE)[0]
    else:
        rc = dev.b.cond_handle_create(m, 0, CondHandleFlag.NONE, null_handle=True)[0]
    expect.rc(rc, Err.INVALID_PARAM, f"aclmdlRICondHandleCreate(NULL {which})")


@pytest.mark.clause("COND-01")
def test_cond_handle_on_sub_model_follows_its_capture(dev: Dev) -> None:
    """COND-01: a sub-model is a capture model (Context::CreateSubCaptureModels makes it with
    ModelCreate(RT_MODEL_CAPTURE_MODEL), `feature/aclgraph/context_aclgraph.cc:907-911`), so
    CondHandleCreate on it follows its own capture status: 107000 before its
    CaptureToModelRIBegin (status NONE, not CAPTURE_ACTIVE:
    `feature/aclgraph/v100/api_impl_aclgraph.cc:202-204`), 0 and a handle while its capture is
    active (Stream::EnterCapture -> CaptureModel::EnterCaptureNotify sets CAPTURE_ACTIVE on the
    capture stream's model, `feature/aclgraph/stream_capture.cc:138-144`,
    `feature/aclgraph/capture_model.cc:755-758`), 107000 again after its CaptureEnd
    (ExitCaptureNotify -> READY, `feature/aclgraph/stream_capture.cc:169-176`,
    `feature/aclgraph/capture_model.cc:761-763`). While it captures, GetInfo on its stream
    answers ACTIVE and the sub-model (captureStream->Model_(),
    `feature/aclgraph/context_aclgraph.cc:656-681`)."""
    p = parent(dev)
    (sub,) = add(dev, p, CondTaskType.IF, 1)
    expect.rc(dev.b.cond_handle_create(sub, 0, CondHandleFlag.NONE)[0], Err.RT_PARAM_INVALID,
              "aclmdlRICondHandleCreate on a sub-model before its capture begins")
    u = dev.stream()
    expect.ok(dev.b.capture_to_model_ri_begin(u, sub, CaptureMode.RELAXED),
              "aclmdlRICaptureToModelRIBegin")
    st, m = dev.capture_status(u, "on the sub-model's stream")
    expect.eq(st, CaptureStatus.ACTIVE, "sub stream status during its capture")
    expect.eq(m, sub, "GetInfo model of the sub stream")
    rc, h = dev.b.cond_handle_create(sub, 0, CondHandleFlag.NONE)
    expect.ok(rc, "aclmdlRICondHandleCreate on a sub-model during its capture")
    expect.true(h is not None and h is not UNWRITTEN, "cond handle", "non-NULL", h)
    dev.launch("fill", u, out=dev.buffer(n=8), n=8, value=1)
    expect.ok(dev.b.capture_end(u, null_model=True)[0], "aclmdlRICaptureEnd of the sub-model")
    expect.rc(dev.b.cond_handle_create(sub, 0, CondHandleFlag.NONE)[0], Err.RT_PARAM_INVALID,
              "aclmdlRICondHandleCreate on a sub-model after its capture ended")


@pytest.mark.clause("COND-02")
def test_initial_cond_value_is_zero(dev: Dev) -> None:
    """COND-02: right after CondHandleCreate the condition word reads 0, not defaultLaunchValue."""
    p = parent(dev, default=5, flag=CondHandleFlag.ASSIGN_DEFAULT)
    expect.eq(dev.read64(cond_ptr(dev, p.handle)), 0, "condition value after create")


@pytest.mark.clause("COND-03")
def test_assign_default_sets_value_each_execution(dev: Dev) -> None:
    """COND-03: with ASSIGN_DEFAULT the condition is set to defaultLaunchValue at every execution."""
    model, p, ptr, out = branches(dev, CondTaskType.IF, [7], default=1,
                                  flag=CondHandleFlag.ASSIGN_DEFAULT)
    for run in range(2):
        got = run_with(dev, model, p.stream, ptr, 0, out)  # the user's 0 is overwritten by 1
        expect.eq(got, full(7), f"output of run {run} (IF taken)")
        expect.eq(dev.read64(ptr), 1, f"condition value after run {run}")


@pytest.mark.clause("COND-03")
def test_assign_default_skips_a_handle_without_cond_task(dev: Dev) -> None:
    """COND-03: the execute-time write of defaultLaunchValue covers the handles a conditional
    task was added with: CaptureModel::InitAllSubCaptureModelCondTaskByDefValue walks
    condHandleTaskMap_ (`feature/aclgraph/capture_model.cc:286-306`), which only
    AddCondTask's captured task fills (`core/src/task/task_info/cond_op/aclgraph_cond_task.cc:
    303`, `feature/aclgraph/capture_model.cc:1629-1644`). So an ASSIGN_DEFAULT handle created in
    the capture but never given to AddCondTask keeps its value (0 from creation, COND-02, or
    what the user stores) through the executions, while the used handle of the same model gets
    its default."""
    out = dev.buffer(n=8)
    p = parent(dev, 1, CondHandleFlag.ASSIGN_DEFAULT)
    rc, spare = dev.b.cond_handle_create(p.model, 5, CondHandleFlag.ASSIGN_DEFAULT)
    expect.ok(rc, "aclmdlRICondHandleCreate of the unused handle (setup)")
    spare_ptr, used_ptr = cond_ptr(dev, spare), cond_ptr(dev, p.handle)
    (sub,) = add(dev, p, CondTaskType.IF, 1)
    capture_sub(dev, sub, fill_body(dev, out, 7))
    model = dev.end(p.stream)
    expect.eq(run_with(dev, model, p.stream, used_ptr, 0, out), full(7), "output of run 0")
    expect.eq(dev.read64(used_ptr), 1, "used handle's condition after run 0 (its default)")
    expect.eq(dev.read64(spare_ptr), 0, "unused handle's condition after run 0")
    dev.write64(spare_ptr, 9)
    run_with(dev, model, p.stream, used_ptr, 0, out)
    expect.eq(dev.read64(spare_ptr), 9, "unused handle's condition after run 1 (the user's 9)")


@pytest.mark.clause("COND-03")
def test_assign_default_of_a_nested_cond_task(dev: Dev) -> None:
    """COND-03 in a sub-model: the execute-time write of defaultLaunchValue also covers the
    handles of conditional tasks captured in sub-models, at any depth
    (InitAllSubCaptureModelCondTaskByDefValue walks GetAllSubCaptureModels,
    `feature/aclgraph/capture_model.cc:255-282, 295-303`). A sub-model's capture may create a
    handle on the sub-model (COND-01) and add an IF task with it (the stream captures into the
    handle's model, `feature/aclgraph/v100/api_impl_aclgraph.cc:256-260`); executing the root
    writes that handle's default, so the nested branch runs whatever the user stored."""
    out = dev.buffer(n=8)
    p = parent(dev)
    ptr = cond_ptr(dev, p.handle)
    (sub,) = add(dev, p, CondTaskType.IF, 1)
    u = dev.stream()
    expect.ok(dev.b.capture_to_model_ri_begin(u, sub, CaptureMode.RELAXED),
              "aclmdlRICaptureToModelRIBegin (setup)")
    rc, inner = dev.b.cond_handle_create(sub, 1, CondHandleFlag.ASSIGN_DEFAULT)
    expect.ok(rc, "aclmdlRICondHandleCreate on the sub-model (setup)")
    inner_ptr = cond_ptr(dev, inner)
    rc, slots = dev.b.add_cond_task(CondTaskParams(inner, CondTaskType.IF, 1, 1), u, 0)
    expect.ok(rc, "nested aclmdlRIAddCondTask in the sub-model's capture")
    capture_sub(dev, slots[0], fill_body(dev, out, 7))
    expect.ok(dev.b.capture_end(u, null_model=True)[0], "aclmdlRICaptureEnd of the sub-model")
    model = dev.end(p.stream)
    for run in range(2):
        dev.write64(inner_ptr, 0)  # overwritten by the nested handle's default 1 at execute
        got = run_with(dev, model, p.stream, ptr, 1, out)
        expect.eq(dev.read64(inner_ptr), 1, f"nested condition value after run {run}")
        expect.eq(got, full(7), f"output of run {run} (both IFs taken)")


@pytest.mark.clause("COND-03")
def test_flag_none_keeps_user_value(dev: Dev) -> None:
    """COND-03: with flag 0 the runtime never writes the condition; the user's value decides."""
    model, p, ptr, out = branches(dev, CondTaskType.IF, [7], default=1)
    expect.eq(run_with(dev, model, p.stream, ptr, 0, out), full(SENTINEL), "output with cond 0")
    expect.eq(dev.read64(ptr), 0, "condition value after the run")
    expect.eq(run_with(dev, model, p.stream, ptr, 1, out), full(7), "output with cond 1")


@pytest.mark.clause("COND-04")
def test_get_cond_ptr(dev: Dev) -> None:
    """COND-04: GetCondPtr returns a non-NULL device address of an 8-byte value the host can write."""
    p = parent(dev)
    rc, ptr = dev.b.cond_handle_get_cond_ptr(p.handle)
    expect.ok(rc, "aclmdlRICondHandleGetCondPtr")
    expect.true(bool(ptr) and ptr is not UNWRITTEN, "cond pointer", "non-NULL", ptr)
    dev.write64(ptr, 0x1_0000_0003)
    expect.eq(dev.read64(ptr), 0x1_0000_0003, "the 8-byte condition value read back")


@pytest.mark.clause("COND-04")
@pytest.mark.parametrize("which", ["handle", "ptr"])
def test_get_cond_ptr_null(dev: Dev, which: str) -> None:
    """COND-04: GetCondPtr with a NULL handle or out-pointer returns 100000."""
    if which == "handle":
        rc = dev.b.cond_handle_get_cond_ptr(None)[0]
    else:
        rc = dev.b.cond_handle_get_cond_ptr(parent(dev).handle, null_out=True)[0]
    expect.rc(rc, Err.INVALID_PARAM, f"aclmdlRICondHandleGetCondPtr(NULL {which})")


# ---------------------------------------------------------------------------------------------
# COND-05 .. COND-09: AddCondTask and sub-model capture


def _add_rc(dev: Dev, p: Parent, *, stream: Any = "parent", flags: int = 0,
            **fields: Any) -> int:
    params = CondTaskParams(**{"handle": p.handle, "type": CondTaskType.IF, "size": 1,
                               "model_ri_array": 1, **fields})
    return dev.b.add_cond_task(params, p.stream if stream == "parent" else stream, flags)[0]


@pytest.mark.clause("COND-05")
@pytest.mark.parametrize("ctype, size", [
    (CondTaskType.IF, 0), (CondTaskType.IF, 3), (CondTaskType.WHILE, 0), (CondTaskType.WHILE, 2),
    (CondTaskType.SWITCH, 0), (3, 1), (-1, 1),
], ids=["if0", "if3", "while0", "while2", "switch0", "type3", "type-1"])
def test_add_cond_task_bad_type_or_size(dev: Dev, ctype: int, size: int) -> None:
    """COND-05: type > 2 or a size outside IF {1,2} / WHILE 1 / SWITCH >= 1 returns 107000.

    type -1 (the enum is 4 bytes, so a caller can pass it): ApiErrorDecorator::StreamAddCondTask
    compares ``static_cast<uint32_t>(params.type) > RT_COND_TASK_TYPE_SWITCH``
    (`feature/aclgraph/api_error_aclgraph.cc:219-221`), so -1 is 0xFFFFFFFF and 107000 like 3;
    the switch of CheckCondTaskParamsSize would refuse it too (default branch,
    `core/src/task/task_info/cond_op/aclgraph_cond_task.cc:275-278`).
    """
    p = parent(dev)
    expect.rc(_add_rc(dev, p, type=ctype, size=size, model_ri_array=max(size, 1)),
              Err.RT_PARAM_INVALID, f"aclmdlRIAddCondTask(type {ctype}, size {size})")


@pytest.mark.clause("COND-05")
def test_add_cond_task_nonzero_flags(dev: Dev) -> None:
    """COND-05: AddCondTask with flags != 0 returns 107000."""
    expect.rc(_add_rc(dev, parent(dev), flags=1), Err.RT_PARAM_INVALID,
              "aclmdlRIAddCondTask(flags 1)")


@pytest.mark.clause("COND-05")
def test_add_cond_task_handle_reuse(dev: Dev) -> None:
    """COND-05: a cond handle can be used by one AddCondTask only; the second returns 107000.

    DES L549 documents ACL_ERROR_INVALID_PARAM (100000) for reuse; the code returns 107000.
    """
    p = parent(dev)
    add(dev, p, CondTaskType.IF, 1)
    expect.rc(_add_rc(dev, p), Err.RT_PARAM_INVALID, "second aclmdlRIAddCondTask with the handle")


@pytest.mark.clause("COND-05")
def test_add_cond_task_stream_not_capturing(dev: Dev) -> None:
    """COND-05: AddCondTask on a stream that is not capturing returns 107029."""
    expect.rc(_add_rc(dev, parent(dev), stream=dev.stream()), Err.RT_STREAM_NOT_CAPTURED,
              "aclmdlRIAddCondTask on a non-capturing stream")


@pytest.mark.clause("COND-05")
@pytest.mark.parametrize("ctype, size", [(CondTaskType.IF, 3), (CondTaskType.WHILE, 2)],
                         ids=["if3", "while2"])
def test_add_cond_task_checks_the_stream_before_the_size(dev: Dev, ctype: int,
                                                          size: int) -> None:
    """COND-05: AddCondTask with a size its type refuses, on a stream that is not capturing,
    returns 107029: the impl checks the handle's use, the stream's capture and the handle's
    model before the size (`feature/aclgraph/v100/api_impl_aclgraph.cc:240-271`)."""
    expect.rc(_add_rc(dev, parent(dev), stream=dev.stream(), type=ctype, size=size,
                      model_ri_array=size),
              Err.RT_STREAM_NOT_CAPTURED,
              f"aclmdlRIAddCondTask(type {ctype}, size {size}) on a non-capturing stream",
              clause="COND-05")


@pytest.mark.clause("COND-05")
@pytest.mark.requires(Cap.LISTING)
def test_add_cond_task_on_a_model_stream(dev: Dev) -> None:
    """COND-05: AddCondTask on an internal stream of a captured model (aclmdlRIGetStreams) returns
    107029: the stream is not capturing (StreamAddCondTaskParasCheck,
    `feature/aclgraph/v100/api_impl_aclgraph.cc:250-252`; the handle, created in that model's
    capture and never used, passes the checks before, `:240-244`)."""
    s = dev.stream()
    dev.begin(s)
    _, m = dev.capture_status(s, "(setup)")
    rc, h = dev.b.cond_handle_create(m, 0, CondHandleFlag.NONE)
    expect.ok(rc, "aclmdlRICondHandleCreate (setup)")
    dev.launch("fill", s, out=dev.buffer(n=8), n=8, value=1)
    model = dev.end(s)
    (ms,) = dev.streams_of(model)
    rc, _ = dev.b.add_cond_task(CondTaskParams(h, CondTaskType.IF, 1, 1), ms, 0)
    expect.rc(rc, Err.RT_STREAM_NOT_CAPTURED, "aclmdlRIAddCondTask on a model's internal stream")


@pytest.mark.clause("COND-05")
def test_add_cond_task_other_model(dev: Dev) -> None:
    """COND-05: AddCondTask on a stream capturing into another model returns 107000."""
    p = parent(dev)
    other = dev.stream()
    dev.begin(other)
    expect.rc(_add_rc(dev, p, stream=other), Err.RT_PARAM_INVALID,
              "aclmdlRIAddCondTask on a stream of another capture")


@pytest.mark.clause("COND-05")
@pytest.mark.parametrize("which", ["handle", "array", "stream"])
def test_add_cond_task_null(dev: Dev, which: str) -> None:
    """COND-05: NULL params.handle or modelRIArray returns 107000; a NULL stream returns 100000."""
    p = parent(dev)
    if which == "handle":
        rc, want = _add_rc(dev, p, handle=None), Err.RT_PARAM_INVALID
    elif which == "array":
        rc, want = _add_rc(dev, p, model_ri_array=None), Err.RT_PARAM_INVALID
    else:
        rc, want = _add_rc(dev, p, stream=None), Err.INVALID_PARAM
    expect.rc(rc, want, f"aclmdlRIAddCondTask(NULL {which})")


@pytest.mark.clause("COND-06")
@pytest.mark.parametrize("ctype, size", [(CondTaskType.IF, 2), (CondTaskType.SWITCH, 3)],
                         ids=["if2", "switch3"])
def test_add_cond_task_fills_sub_models(dev: Dev, ctype: int, size: int) -> None:
    """COND-06: a successful AddCondTask fills size distinct non-NULL sub-model handles."""
    p = parent(dev)
    rc, slots = dev.b.add_cond_task(CondTaskParams(p.handle, ctype, size, size), p.stream, 0)
    expect.ok(rc, "aclmdlRIAddCondTask")
    subs = list(slots[:size])
    expect.true(all(h is not None and h is not UNWRITTEN for h in subs), "sub-model handles",
                "all non-NULL", subs)
    for i in range(size):
        for j in range(i + 1, size):
            expect.ne(subs[i], subs[j], f"sub-model handles {i} and {j}")
    for i, sub in enumerate(subs):
        expect.ne(sub, p.model, f"sub-model {i} vs the parent")


@pytest.mark.clause("COND-07")
def test_capture_to_root_model(dev: Dev) -> None:
    """COND-07: CaptureToModelRIBegin with a root (captured) model returns 107000.

    API15 L2163 reads as if any modelRI were accepted; the implementation requires a
    sub-model made by AddCondTask.
    """
    s = dev.stream()
    dev.begin(s)
    model = dev.end(s)
    expect.rc(dev.b.capture_to_model_ri_begin(dev.stream(), model, CaptureMode.RELAXED),
              Err.RT_PARAM_INVALID, "aclmdlRICaptureToModelRIBegin with a root model")


@pytest.mark.clause("CAP-18")
@pytest.mark.parametrize("flag", [StreamFlag.DEVICE_USE_ONLY, StreamFlag.CPU_SCHEDULE],
                         ids=lambda f: f.name)
@pytest.mark.parametrize("target", ["sub", "root"])
def test_capture_to_model_on_an_uncapturable_stream(dev: Dev, flag: StreamFlag,
                                                    target: str) -> None:
    """CAP-18: CaptureToModelRIBegin on a DEVICE_USE_ONLY or CPU_SCHEDULE stream returns 507000,
    with a sub-model and also with a root model (the flag check comes before the sub-model one,
    `feature/aclgraph/api_error_aclgraph.cc:46-52`); the sub-model stays capturable."""
    p = parent(dev)
    (sub,) = add(dev, p, CondTaskType.IF, 1)
    if target == "sub":
        model = sub
    else:
        s = dev.stream()
        dev.begin(s)
        model = dev.end(s)
    u = dev.stream(flag)
    expect.rc(dev.b.capture_to_model_ri_begin(u, model, CaptureMode.RELAXED),
              Err.RT_INTERNAL_ERROR,
              f"aclmdlRICaptureToModelRIBegin({target} model) on a {flag.name} stream",
              clause="CAP-18")
    st, _ = dev.capture_status(u, f"({flag.name} stream) after the refusal")
    expect.eq(st, CaptureStatus.NONE, f"{flag.name} stream status after the refusal",
              clause="CAP-18")
    capture_sub(dev, sub, lambda v: dev.fill(v, dev.buffer(n=8), 1))
    dev.end(p.stream)


@pytest.mark.clause("COND-07")
def test_capture_sub_model_twice(dev: Dev) -> None:
    """COND-07: CaptureToModelRIBegin on a sub-model already captured returns 107026."""
    _, sub = sub_model(dev)
    expect.rc(dev.b.capture_to_model_ri_begin(dev.stream(), sub, CaptureMode.RELAXED),
              Err.RT_MODEL_CAPTURED, "second aclmdlRICaptureToModelRIBegin of the sub-model")


@pytest.mark.clause("COND-07")
def test_capture_sub_model_on_capturing_stream(dev: Dev) -> None:
    """COND-07: CaptureToModelRIBegin on a stream that is capturing returns 107027."""
    p = parent(dev)
    (sub,) = add(dev, p, CondTaskType.IF, 1)
    busy = dev.stream()
    dev.begin(busy)
    expect.rc(dev.b.capture_to_model_ri_begin(busy, sub, CaptureMode.RELAXED),
              Err.RT_STREAM_CAPTURED, "aclmdlRICaptureToModelRIBegin on a capturing stream")


@pytest.mark.clause("COND-07")
@pytest.mark.parametrize("mode, ok", [
    (CaptureMode.GLOBAL, True), (CaptureMode.THREAD_LOCAL, True), (-1, False),
], ids=["global", "thread_local", "mode-1"])
def test_capture_to_model_modes(dev: Dev, mode: int, ok: bool) -> None:
    """COND-07: CaptureToModelRIBegin takes every capture mode, GLOBAL and THREAD_LOCAL as well
    as RELAXED, and refuses a mode outside [GLOBAL, MAX) with 107000: -1 like 3
    (ApiErrorDecorator::StreamBeginCapture, `feature/aclgraph/api_error_aclgraph.cc:41-44`;
    the ACL layer passes the mode on unchanged, `src/acl/aclrt_impl/model_ri.cpp:418-421`). An
    accepted sub-capture records a kernel and ends with 0."""
    p = parent(dev)
    (sub,) = add(dev, p, CondTaskType.IF, 1)
    u = dev.stream()
    out = dev.buffer(n=8)
    rc = dev.b.capture_to_model_ri_begin(u, sub, mode)
    if not ok:
        expect.rc(rc, Err.RT_PARAM_INVALID, f"aclmdlRICaptureToModelRIBegin(mode {mode})")
        return
    expect.ok(rc, f"aclmdlRICaptureToModelRIBegin(mode {mode})")
    dev.launch("fill", u, out=out, n=8, value=1)
    expect.ok(dev.b.capture_end(u, null_model=True)[0], "aclmdlRICaptureEnd of the sub-model")


@pytest.mark.clause("COND-07")
@pytest.mark.requires(Cap.BUILD)
def test_capture_sub_model_on_a_bound_stream(dev: Dev) -> None:
    """COND-07: CaptureToModelRIBegin on a stream bound to a built model returns 107005
    (ApiImpl::StreamBeginCapture, `feature/aclgraph/v100/api_impl_aclgraph.cc:32-34`:
    stm->Model_() != nullptr -> RT_ERROR_STREAM_MODEL, as for CaptureBegin, CAP-09), and the
    sub-model can still be captured on another stream."""
    p = parent(dev)
    (sub,) = add(dev, p, CondTaskType.IF, 1)
    bm = begin_build(dev)
    bs = persistent_stream(dev)
    expect.ok(dev.b.bind_stream(bm, bs, ModelStreamFlag.HEAD), "aclmdlRIBindStream (setup)")
    expect.rc(dev.b.capture_to_model_ri_begin(bs, sub, CaptureMode.RELAXED), Err.RT_STREAM_MODEL,
              "aclmdlRICaptureToModelRIBegin on a bound stream")
    capture_sub(dev, sub, fill_body(dev, dev.buffer(n=8), 1))


@pytest.mark.clause("COND-07")
@pytest.mark.parametrize("which", ["stream", "model"])
def test_capture_to_model_null(dev: Dev, which: str) -> None:
    """COND-07: CaptureToModelRIBegin with a NULL stream or model returns 100000."""
    p = parent(dev)
    (sub,) = add(dev, p, CondTaskType.IF, 1)
    if which == "stream":
        rc = dev.b.capture_to_model_ri_begin(None, sub, CaptureMode.RELAXED)
    else:
        rc = dev.b.capture_to_model_ri_begin(dev.stream(), None, CaptureMode.RELAXED)
    expect.rc(rc, Err.INVALID_PARAM, f"aclmdlRICaptureToModelRIBegin(NULL {which})")


@pytest.mark.clause("COND-08")
def test_sub_capture_end_with_null_model(dev: Dev) -> None:
    """COND-08: CaptureEnd of a sub-model capture accepts modelRI == NULL and returns 0."""
    p = parent(dev)
    (sub,) = add(dev, p, CondTaskType.IF, 1)
    u = dev.stream()
    expect.ok(dev.b.capture_to_model_ri_begin(u, sub, CaptureMode.RELAXED),
              "aclmdlRICaptureToModelRIBegin")
    dev.launch("fill", u, out=dev.buffer(n=8), n=8, value=1)
    rc, _ = dev.b.capture_end(u, null_model=True)
    expect.ok(rc, "aclmdlRICaptureEnd(sub, NULL)")
    expect.eq(dev.b.capture_get_info(u)[1], CaptureStatus.NONE, "sub stream status after End")


@pytest.mark.clause("COND-09")
def test_parent_end_while_sub_capturing(dev: Dev) -> None:
    """COND-09: the parent's CaptureEnd while a sub-model is capturing returns 107045 and NULL."""
    p = parent(dev)
    (sub,) = add(dev, p, CondTaskType.IF, 1)
    u = dev.stream()
    expect.ok(dev.b.capture_to_model_ri_begin(u, sub, CaptureMode.RELAXED),
              "aclmdlRICaptureToModelRIBegin (setup)")
    rc, m = dev.b.capture_end(p.stream)
    if rc == Err.SUCCESS and m:
        dev.model(m)
    expect.rc(rc, Err.RT_SUB_ACLGRAPH_IS_CAPTURING, "parent aclmdlRICaptureEnd")
    expect.eq(m, None, "parent modelRI after the failed CaptureEnd")


# ---------------------------------------------------------------------------------------------
# COND-10, LIST-12, LIFE-05, EXE-08: sub-models refuse most APIs


def _sub_call(dev: Dev, call: str) -> int:
    p, sub = sub_model(dev)
    b = dev.b
    s = dev.stream()
    return {
        "get_streams": lambda: b.get_streams(sub, None)[0],
        "update": lambda: b.update(sub),
        "destroy": lambda: b.destroy(sub),
        "execute_async": lambda: b.execute_async(sub, s),
        "abort": lambda: b.abort(sub),
        "register_callback": lambda: b.destroy_register_callback(sub, lambda _: None, None),
        "unregister_callback": lambda: b.destroy_unregister_callback(sub, lambda _: None),
    }[call]()


@pytest.mark.clause("COND-10")
@pytest.mark.parametrize("call", [
    pytest.param("get_streams", marks=pytest.mark.requires(Cap.LISTING)),
    pytest.param("update", marks=pytest.mark.requires(Cap.UPDATE)),
    "destroy", "execute_async",
    pytest.param("abort", marks=pytest.mark.requires(Cap.ABORT)),
    pytest.param("register_callback", marks=pytest.mark.requires(Cap.CALLBACKS)),
    pytest.param("unregister_callback", marks=pytest.mark.requires(Cap.CALLBACKS)),
])
def test_sub_model_refuses(dev: Dev, call: str) -> None:
    """COND-10: sub-models refuse GetStreams/Update/Destroy/Execute/Abort/callbacks with 207000."""
    expect.rc(_sub_call(dev, call), Err.RT_FEATURE_NOT_SUPPORT, f"{call} on a sub-model")


@pytest.mark.clause("LIST-12")
@pytest.mark.requires(Cap.LISTING)
def test_sub_model_not_listable(dev: Dev) -> None:
    """LIST-12: GetStreams on a sub-model returns 207000."""
    expect.rc(_sub_call(dev, "get_streams"), Err.RT_FEATURE_NOT_SUPPORT, "aclmdlRIGetStreams(sub)")


@pytest.mark.clause("LIFE-05")
def test_sub_model_cannot_be_destroyed(dev: Dev) -> None:
    """LIFE-05: aclmdlRIDestroy of a sub-model handle returns 207000 (destroyed with the parent)."""
    expect.rc(_sub_call(dev, "destroy"), Err.RT_FEATURE_NOT_SUPPORT, "aclmdlRIDestroy(sub)")


@pytest.mark.clause("EXE-08")
def test_sub_model_cannot_be_executed(dev: Dev) -> None:
    """EXE-08: ExecuteAsync of a sub-model returns 207000."""
    expect.rc(_sub_call(dev, "execute_async"), Err.RT_FEATURE_NOT_SUPPORT,
              "aclmdlRIExecuteAsync(sub)")


# ---------------------------------------------------------------------------------------------
# COND-11, COND-12, Q-19: branch semantics


@pytest.mark.clause("COND-11")
def test_if_two_branches(dev: Dev) -> None:
    """COND-11: IF with size 2 runs model[0] when cond != 0 and model[1] when cond == 0."""
    model, p, ptr, out = branches(dev, CondTaskType.IF, [11, 22])
    expect.eq(run_with(dev, model, p.stream, ptr, 1, out), full(11), "output with cond 1")
    expect.eq(run_with(dev, model, p.stream, ptr, 0, out), full(22), "output with cond 0")
    expect.eq(run_with(dev, model, p.stream, ptr, 9, out), full(11), "output with cond 9")


@pytest.mark.clause("COND-11")
def test_switch_selects_by_value(dev: Dev) -> None:
    """COND-11: SWITCH runs model[cond]."""
    values = [10, 20, 30]
    model, p, ptr, out = branches(dev, CondTaskType.SWITCH, values)
    for cond in (2, 0, 1):
        expect.eq(run_with(dev, model, p.stream, ptr, cond, out), full(values[cond]),
                  f"output with cond {cond}")


@pytest.mark.clause("COND-11")
@pytest.mark.requires(Cap.VALUE_TASKS)
def test_while_runs_body_while_nonzero(dev: Dev) -> None:
    """COND-11: WHILE runs the body while cond != 0 (a body that clears cond runs once; cond 0: never)."""
    acc, x = dev.buffer(np.zeros(8, dtype=np.int32)), dev.buffer(X)
    p = parent(dev)
    ptr = cond_ptr(dev, p.handle)
    (body,) = add(dev, p, CondTaskType.WHILE, 1)

    def loop(u: Any) -> None:
        dev.launch("accumulate", u, acc=acc, x=x, n=8)
        expect.ok(dev.b.value_write(ptr, 0, 0, u), "aclrtValueWrite in the body (setup)")

    capture_sub(dev, body, loop)
    model = dev.end(p.stream)
    dev.write64(ptr, 1)
    dev.execute(model, p.stream)
    expect.eq(dev.read(acc), X, "accumulator after a run with cond 1")
    dev.write64(ptr, 0)
    dev.execute(model, p.stream)
    expect.eq(dev.read(acc), X, "accumulator after a run with cond 0")


@pytest.mark.clause("COND-12")
def test_assign_default_overwrites_user_write(dev: Dev) -> None:
    """COND-12: under ASSIGN_DEFAULT (default 0) a value the user wrote is overwritten at execution.

    The 3_cond_model example writes the condition with aclrtMemcpy and expects it to select the
    branch; its README output shows the same result for "true" and "false", as the code implies.
    """
    model, p, ptr, out = branches(dev, CondTaskType.IF, [11, 22], default=0,
                                  flag=CondHandleFlag.ASSIGN_DEFAULT)
    expect.eq(run_with(dev, model, p.stream, ptr, 1, out), full(22),
              "output after writing cond 1 (ASSIGN_DEFAULT 0 wins)")


@pytest.mark.clause("Q-19")
def test_switch_out_of_range(dev: Dev, fingerprint: Any) -> None:
    """Q-19: what an out-of-range SWITCH value runs (records the output and the sync rc; the
    runtime's answer, no branch, is pinned by COND-13)."""
    model, p, ptr, out = branches(dev, CondTaskType.SWITCH, [10, 20])
    dev.write64(ptr, 5)
    expect.ok(dev.b.execute_async(model, p.stream), "aclmdlRIExecuteAsync")
    fingerprint.record("Q-19:sync", dev.b.synchronize_stream_with_timeout(p.stream, SYNC_MS))
    fingerprint.record("Q-19:output", dev.read(out).tolist())


#: the SWITCH branch counts the generator draws (engine.graphs.COND_SIZES), every one specced
SWITCH_SIZES = list(range(COND_SIZES["switch"][0], COND_SIZES["switch"][1] + 1))


@pytest.mark.clause("COND-13", "COND-11")
@pytest.mark.parametrize("size", SWITCH_SIZES, ids=[f"size{n}" for n in SWITCH_SIZES])
def test_switch_value_at_or_past_the_branch_count_runs_no_branch(dev: Dev, size: int) -> None:
    """COND-13: a SWITCH value at or past the branch count runs no branch and the task after
    the cond task runs (the ISA skips to the next SQE, `stars_cond_isa_helper.cc:2453-2467`);
    an in-range value afterwards still selects its branch (COND-11)."""
    values = [10 * (k + 1) for k in range(size)]
    out, after = dev.buffer(n=8), dev.buffer(n=8)
    p = parent(dev)
    ptr = cond_ptr(dev, p.handle)
    for sub, v in zip(add(dev, p, CondTaskType.SWITCH, size), values):
        capture_sub(dev, sub, fill_body(dev, out, v))
    dev.launch("fill", p.stream, out=after, n=after.n, value=77)
    model = dev.end(p.stream)
    for cond in (size, size + 1, 1000):
        dev.write(after, np.full(after.n, SENTINEL, dtype=np.int32))
        expect.eq(run_with(dev, model, p.stream, ptr, cond, out), full(SENTINEL),
                  f"output of a {size}-branch SWITCH with value {cond}")
        expect.eq(dev.read(after), full(77), f"task after the SWITCH with value {cond}")
    expect.eq(run_with(dev, model, p.stream, ptr, size - 1, out), full(values[-1]),
              f"output with the in-range value {size - 1} afterwards")


# ---------------------------------------------------------------------------------------------
# ERR-28 .. ERR-31


def _capturing_model(dev: Dev) -> Any:
    s = dev.stream()
    dev.begin(s)
    return dev.b.capture_get_info(s)[2]


def _create_null_model(dev: Dev) -> int:
    return dev.b.cond_handle_create(None, 0, 0)[0]


def _create_null_handle(dev: Dev) -> int:
    return dev.b.cond_handle_create(_capturing_model(dev), 0, 0, null_handle=True)[0]


def _create_flag(dev: Dev) -> int:
    return dev.b.cond_handle_create(_capturing_model(dev), 0, 2)[0]


def _create_not_capturing(dev: Dev) -> int:
    s = dev.stream()
    dev.begin(s)
    return dev.b.cond_handle_create(dev.end(s), 0, 0)[0]


def _create_built(dev: Dev) -> int:
    m = begin_build(dev)
    return dev.b.cond_handle_create(m, 0, 0)[0]


@pytest.mark.clause("ERR-28")
@pytest.mark.parametrize("make, expected", [
    case(_create_null_model, Err.INVALID_PARAM),
    case(_create_null_handle, Err.INVALID_PARAM),
    case(_create_flag, Err.RT_PARAM_INVALID),
    case(_create_not_capturing, Err.RT_PARAM_INVALID),
    case(_create_built, Err.RT_FEATURE_NOT_SUPPORT, Cap.BUILD),
])
def test_err28_cond_handle_create(dev: Dev, make: Case, expected: int) -> None:
    """ERR-28: aclmdlRICondHandleCreate returns the error of its error-table cell."""
    expect.rc(make(dev), expected, "aclmdlRICondHandleCreate")


@pytest.mark.clause("ERR-29")
@pytest.mark.parametrize("which", ["handle", "ptr"])
def test_err29_get_cond_ptr(dev: Dev, which: str) -> None:
    """ERR-29: aclmdlRICondHandleGetCondPtr with a NULL handle or ptr returns 100000."""
    if which == "handle":
        rc = dev.b.cond_handle_get_cond_ptr(None)[0]
    else:
        rc = dev.b.cond_handle_get_cond_ptr(parent(dev).handle, null_out=True)[0]
    expect.rc(rc, Err.INVALID_PARAM, "aclmdlRICondHandleGetCondPtr")


def _add_null_stream(dev: Dev) -> int:
    return _add_rc(dev, parent(dev), stream=None)


def _add_null_handle(dev: Dev) -> int:
    return _add_rc(dev, parent(dev), handle=None)


def _add_null_array(dev: Dev) -> int:
    return _add_rc(dev, parent(dev), model_ri_array=None)


def _add_flags(dev: Dev) -> int:
    return _add_rc(dev, parent(dev), flags=2)


def _add_type(dev: Dev) -> int:
    return _add_rc(dev, parent(dev), type=5)


def _add_size(dev: Dev) -> int:
    return _add_rc(dev, parent(dev), type=CondTaskType.WHILE, size=3, model_ri_array=3)


def _add_reused(dev: Dev) -> int:
    p = parent(dev)
    add(dev, p, CondTaskType.IF, 1)
    return _add_rc(dev, p)


def _add_not_capturing(dev: Dev) -> int:
    return _add_rc(dev, parent(dev), stream=dev.stream())


def _add_other_model(dev: Dev) -> int:
    p = parent(dev)
    other = dev.stream()
    dev.begin(other)
    return _add_rc(dev, p, stream=other)


@pytest.mark.clause("ERR-30")
@pytest.mark.parametrize("make, expected", [
    case(_add_null_stream, Err.INVALID_PARAM),
    case(_add_null_handle, Err.RT_PARAM_INVALID),
    case(_add_null_array, Err.RT_PARAM_INVALID),
    case(_add_flags, Err.RT_PARAM_INVALID),
    case(_add_type, Err.RT_PARAM_INVALID),
    case(_add_size, Err.RT_PARAM_INVALID),
    case(_add_reused, Err.RT_PARAM_INVALID),
    case(_add_not_capturing, Err.RT_STREAM_NOT_CAPTURED),
    case(_add_other_model, Err.RT_PARAM_INVALID),
])
def test_err30_add_cond_task(dev: Dev, make: Case, expected: int) -> None:
    """ERR-30: aclmdlRIAddCondTask returns the error of its error-table cell."""
    expect.rc(make(dev), expected, "aclmdlRIAddCondTask")


def _ctm_null_stream(dev: Dev) -> int:
    (sub,) = add(dev, parent(dev), CondTaskType.IF, 1)
    return dev.b.capture_to_model_ri_begin(None, sub, CaptureMode.RELAXED)


def _ctm_null_model(dev: Dev) -> int:
    return dev.b.capture_to_model_ri_begin(dev.stream(), None, CaptureMode.RELAXED)


def _ctm_root(dev: Dev) -> int:
    s = dev.stream()
    dev.begin(s)
    return dev.b.capture_to_model_ri_begin(dev.stream(), dev.end(s), CaptureMode.RELAXED)


def _ctm_mode(dev: Dev) -> int:
    (sub,) = add(dev, parent(dev), CondTaskType.IF, 1)
    return dev.b.capture_to_model_ri_begin(dev.stream(), sub, 3)


def _ctm_captured(dev: Dev) -> int:
    _, sub = sub_model(dev)
    return dev.b.capture_to_model_ri_begin(dev.stream(), sub, CaptureMode.RELAXED)


def _ctm_capturing_stream(dev: Dev) -> int:
    (sub,) = add(dev, parent(dev), CondTaskType.IF, 1)
    busy = dev.stream()
    dev.begin(busy)
    return dev.b.capture_to_model_ri_begin(busy, sub, CaptureMode.RELAXED)


@pytest.mark.clause("ERR-31")
@pytest.mark.parametrize("make, expected", [
    case(_ctm_null_stream, Err.INVALID_PARAM),
    case(_ctm_null_model, Err.INVALID_PARAM),
    case(_ctm_root, Err.RT_PARAM_INVALID),
    case(_ctm_mode, Err.RT_PARAM_INVALID),
    case(_ctm_captured, Err.RT_MODEL_CAPTURED),
    case(_ctm_capturing_stream, Err.RT_STREAM_CAPTURED),
])
def test_err31_capture_to_model_ri_begin(dev: Dev, make: Case, expected: int) -> None:
    """ERR-31: aclmdlRICaptureToModelRIBegin returns the error of its error-table cell."""
    expect.rc(make(dev), expected, "aclmdlRICaptureToModelRIBegin")


@pytest.mark.clause("RT-39", "LIFE-06")
@pytest.mark.requires(Cap.HANDLE_VALIDATION)
@pytest.mark.parametrize("bad", ["flags", "type", "null_array"])
def test_add_cond_task_stale_handle_first(dev: Dev, bad: str) -> None:
    """RT-39: AddCondTask with the cond handle of a destroyed model and a bad argument (flags 1,
    type 3 or a NULL modelRIArray) returns 107017: the rts entry validates the handle
    (`api/api_c_standard_soc.cc:801`) before the decorator's 107000
    (`feature/aclgraph/api_error_aclgraph.cc:216-232`)."""
    old = parent(dev)
    expect.ok(dev.destroy(dev.end(old.stream)), "aclmdlRIDestroy of the handle's model (setup)")
    p = Parent(old.stream, None, old.handle)
    dev.begin(p.stream)
    kw: dict[str, Any] = {"flags": 1} if bad == "flags" else (
        {"type": 3} if bad == "type" else {"model_ri_array": None})
    rc = _add_rc(dev, p, **kw)
    dev.end(p.stream)
    expect.rc(rc, Err.RT_INVALID_HANDLE, f"aclmdlRIAddCondTask(stale handle, bad {bad})",
              clause="RT-39")
