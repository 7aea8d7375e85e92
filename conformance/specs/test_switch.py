"""Branching inside a built model: aclrtActiveStream, aclrtSwitchStream and labels
(CANN examples 2_model_switch and label/0_simple_label, scenarios.md S3/S8; the runtime api
docs of aclrtActiveStream, aclrtSwitchStream and the Label functions).

The catalog has no clause of its own for these calls: the specs cite BLD-03 (tasks issued on a
bound stream are stored and run when the model executes) and EXE-01; the label rules found in
the runtime's code are RT-22, RT-38 and RT-40 .. RT-43. Each branch is observed
through a byte fill (``aclrtMemsetAsync``) recorded on the stream it belongs to: a fill that
ran holds its byte pattern, one that did not keeps the sentinel.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from mdlri_conformance.backends.contract import (
    UNWRITTEN, Cap, CompareDataType, Condition, Err, MemcpyKind, ModelStreamFlag,
)
from mdlri_conformance.conformance import expect
from mdlri_conformance.conformance.harness import SENTINEL, Buf, Dev
from mdlri_conformance.conformance.specs._setups import begin_build, persistent_stream


def _fill(dev: Dev, buf: Buf, byte: int, stream: Any) -> None:
    expect.ok(dev.b.memset_async(buf.addr, 4, byte, 4, stream), "aclrtMemsetAsync (setup)")


def _word(byte: int) -> int:
    return int(np.frombuffer(bytes([byte]) * 4, dtype=np.int32)[0])


def _run(dev: Dev, model: Any) -> None:
    s = dev.stream()
    expect.ok(dev.b.build_end(model, None), "aclmdlRIBuildEnd (setup)")
    expect.ok(dev.b.execute_async(model, s), "aclmdlRIExecuteAsync")
    expect.ok(dev.b.synchronize_stream(s), "aclrtSynchronizeStream")


def _bind(dev: Dev, model: Any, flag: int) -> Any:
    s = persistent_stream(dev)
    expect.ok(dev.b.bind_stream(model, s, flag), "aclmdlRIBindStream (setup)")
    return s


def _device_value(dev: Dev, value: int, width: int) -> int:
    rc, addr = dev.b.malloc(64)
    expect.ok(rc, "aclrtMalloc (setup)")
    dev.track("free", lambda: dev.b.free(addr))
    arr = np.array([value], dtype=np.int32 if width == 4 else np.int64)
    expect.ok(dev.b.memcpy(addr, arr.nbytes, arr, arr.nbytes, MemcpyKind.HOST_TO_DEVICE),
              "aclrtMemcpy H2D (setup)")
    return addr


_CONDITIONS = {
    Condition.EQUAL: lambda a, b: a == b,
    Condition.NOT_EQUAL: lambda a, b: a != b,
    Condition.GREATER: lambda a, b: a > b,
    Condition.GREATER_OR_EQUAL: lambda a, b: a >= b,
    Condition.LESS: lambda a, b: a < b,
    Condition.LESS_OR_EQUAL: lambda a, b: a <= b,
}


@pytest.mark.requires(Cap.BUILD, Cap.STREAM_SWITCH)
@pytest.mark.clause("BLD-03", "EXE-01")
@pytest.mark.parametrize("data_type", [CompareDataType.INT32, CompareDataType.INT64])
@pytest.mark.parametrize("cond", list(Condition))
@pytest.mark.parametrize("left,right", [(-3, 5), (7, 7), (9, -2)])
def test_switch_stream_condition(dev: Dev, cond: Condition, data_type: CompareDataType,
                                 left: int, right: int) -> None:
    """aclrtSwitchStream compares the signed device values *left <cond> *right: when it holds
    the true stream runs and the rest of the switching stream does not; otherwise the
    switching stream goes on and the (DEFAULT) true stream never runs. A taken switch
    deactivates the switching stream (STREAM_SWITCH_EX's DEACTIVE of the current SQ,
    `core/src/task/stars_cond_isa_helper.cc:1223-1224`), so its end task never runs: the true
    stream carries an end task of its own, or the model would never end."""
    width = 4 if data_type == CompareDataType.INT32 else 8
    m = begin_build(dev)
    head = _bind(dev, m, ModelStreamFlag.HEAD)
    target = _bind(dev, m, ModelStreamFlag.DEFAULT)
    after, taken = dev.buffer(n=1), dev.buffer(n=1)
    lv, rv = _device_value(dev, left, width), _device_value(dev, right, width)
    expect.ok(dev.b.switch_stream(lv, cond, rv, data_type, target, None, head),
              "aclrtSwitchStream")
    _fill(dev, after, 0x11, head)
    _fill(dev, taken, 0x22, target)
    expect.ok(dev.b.end_task(m, head), "aclmdlRIEndTask (setup)")
    expect.ok(dev.b.end_task(m, target), "aclmdlRIEndTask on the true stream (setup)")
    _run(dev, m)
    holds = _CONDITIONS[cond](left, right)
    expect.eq(int(dev.read(taken)[0]), _word(0x22) if holds else SENTINEL,
              f"true stream's fill ({left} {cond.name} {right} is {holds})")
    expect.eq(int(dev.read(after)[0]), SENTINEL if holds else _word(0x11),
              "switching stream's fill after the switch")


@pytest.mark.requires(Cap.BUILD, Cap.STREAM_SWITCH)
@pytest.mark.clause("BLD-03", "EXE-01")
def test_active_stream_runs_default_stream(dev: Dev) -> None:
    """A DEFAULT-bound stream runs only when an aclrtActiveStream task reaches it: of two
    DEFAULT streams, the activated one runs and the other keeps its sentinel."""
    m = begin_build(dev)
    head = _bind(dev, m, ModelStreamFlag.HEAD)
    on, off = _bind(dev, m, ModelStreamFlag.DEFAULT), _bind(dev, m, ModelStreamFlag.DEFAULT)
    b_on, b_off, b_head = dev.buffer(n=1), dev.buffer(n=1), dev.buffer(n=1)
    _fill(dev, b_on, 0x33, on)
    _fill(dev, b_off, 0x44, off)
    expect.ok(dev.b.active_stream(on, head), "aclrtActiveStream")
    _fill(dev, b_head, 0x55, head)
    expect.ok(dev.b.end_task(m, on), "aclmdlRIEndTask (setup)")
    _run(dev, m)
    expect.eq(int(dev.read(b_on)[0]), _word(0x33), "activated stream's fill")
    expect.eq(int(dev.read(b_off)[0]), SENTINEL, "never activated stream's fill")


@pytest.mark.requires(Cap.BUILD, Cap.STREAM_SWITCH)
@pytest.mark.clause("BLD-03", "BLD-09")
def test_active_and_switch_need_bound_streams(dev: Dev) -> None:
    """BLD-09: aclrtActiveStream / aclrtSwitchStream on (or to) a stream not bound to a model:
    107005 (RT_ERROR_STREAM_MODEL, `api/impl/api_impl.cc:5086-5091`, `:5035-5041`)."""
    m = begin_build(dev)
    head = _bind(dev, m, ModelStreamFlag.HEAD)
    plain = dev.stream()
    v = _device_value(dev, 0, 4)
    expect.rc(dev.b.active_stream(head, plain), Err.RT_STREAM_MODEL,
              "aclrtActiveStream issued on an ordinary stream")
    expect.rc(dev.b.active_stream(plain, head), Err.RT_STREAM_MODEL,
              "aclrtActiveStream of an ordinary stream")
    expect.rc(dev.b.switch_stream(v, Condition.EQUAL, v, CompareDataType.INT32, plain, None,
                                  head), Err.RT_STREAM_MODEL,
              "aclrtSwitchStream to an ordinary stream")


#: ids of aclrtCreateLabel's process-wide allocator, [0, 0xFFFF) (RT-40)
LABEL_IDS = 0xFFFF


class _Owned:
    """The labels a spec creates; those it has not destroyed itself are destroyed at its end
    (one cleanup step for tens of thousands of labels)."""

    def __init__(self, dev: Dev) -> None:
        self.b = dev.b
        self.live: dict[Any, None] = {}  # insertion-ordered set
        dev.track("destroy_label", self.destroy_all)

    def create(self) -> tuple[int, Any]:
        rc, label = self.b.create_label()
        if rc == Err.SUCCESS:
            self.live[label] = None
        return rc, label

    def fill(self, n: int, what: str) -> list[Any]:
        """``n`` new labels, each required to succeed."""
        out = []
        for k in range(n):
            rc, label = self.create()
            expect.ok(rc, f"aclrtCreateLabel #{k + 1} of {n} ({what})", clause="RT-40")
            out.append(label)
        return out

    def destroy(self, label: Any) -> int:
        del self.live[label]
        return self.b.destroy_label(label)

    def destroy_all(self) -> int:
        """Destroy every label still owned; the first failing rc, else 0."""
        first = int(Err.SUCCESS)
        while self.live:
            label, _ = self.live.popitem()
            rc = self.b.destroy_label(label)
            first = first or rc
        return first


def _labels(dev: Dev, n: int) -> list[Any]:
    """``n`` new labels, destroyed at the end of the spec."""
    labels = []
    for _ in range(n):
        rc, label = dev.b.create_label()
        expect.ok(rc, "aclrtCreateLabel (setup)")
        dev.track("destroy_label", lambda lb=label: dev.b.destroy_label(lb))
        labels.append(label)
    return labels


@pytest.mark.requires(Cap.BUILD, Cap.LABELS)
@pytest.mark.clause("BLD-09")
def test_set_label_needs_a_bound_stream(dev: Dev) -> None:
    """BLD-09: aclrtSetLabel on an ordinary stream returns 107005 (Label::Set,
    `core/src/launch/label.cc:153`: the stream has no model, RT_ERROR_STREAM_MODEL)."""
    (label,) = _labels(dev, 1)
    expect.rc(dev.b.set_label(label, dev.stream()), Err.RT_STREAM_MODEL,
              "aclrtSetLabel on an ordinary stream", clause="BLD-09")


@pytest.mark.requires(Cap.BUILD, Cap.LABELS)
@pytest.mark.clause("BLD-03", "EXE-01")
@pytest.mark.parametrize("index,ran", [(0, (True, True)), (1, (False, True)),
                                       (7, (False, True))])
def test_switch_label_by_index(dev: Dev, index: int, ran: tuple[bool, bool]) -> None:
    """aclrtSwitchLabelByIndex continues at the label the device index selects (an index past
    the last label selects the last): switch, label0, fill A, label1, fill B, end. Index 0
    runs both fills, index 1 (and 7) skips fill A."""
    b = dev.b
    m = begin_build(dev)
    s = _bind(dev, m, ModelStreamFlag.HEAD)
    idx = _device_value(dev, index, 4)
    labels = []
    for _ in range(2):
        rc, label = b.create_label()
        expect.ok(rc, "aclrtCreateLabel")
        dev.track("destroy_label", lambda label=label: b.destroy_label(label))
        labels.append(label)
    rc, lst = b.create_label_list(labels, 2)
    expect.ok(rc, "aclrtCreateLabelList")
    dev.track("destroy_label_list", lambda: b.destroy_label_list(lst))
    a, c = dev.buffer(n=1), dev.buffer(n=1)
    expect.ok(b.switch_label_by_index(idx, 2, lst, s), "aclrtSwitchLabelByIndex")
    expect.ok(b.set_label(labels[0], s), "aclrtSetLabel(label0)")
    _fill(dev, a, 0x66, s)
    expect.ok(b.set_label(labels[1], s), "aclrtSetLabel(label1)")
    _fill(dev, c, 0x77, s)
    expect.ok(b.end_task(m, s), "aclmdlRIEndTask (setup)")
    _run(dev, m)
    expect.eq(int(dev.read(a)[0]), _word(0x66) if ran[0] else SENTINEL,
              f"fill after label0 (index {index})")
    expect.eq(int(dev.read(c)[0]), _word(0x77) if ran[1] else SENTINEL,
              f"fill after label1 (index {index})")


@pytest.mark.requires(Cap.BUILD, Cap.LABELS)
@pytest.mark.clause("BLD-03", "BLD-09")
def test_label_list_arguments(dev: Dev) -> None:
    """aclrtCreateLabelList: NULL labels 100000, num 0 107000. BLD-09: aclrtSwitchLabelByIndex
    does not validate maxValue (0 or past the list: rc 0; `label.cpp:85-98`,
    `api/impl/api_error.cc:4752-4765`, `api_impl.cc:5505-5522`, `core/src/launch/label_stars.cc:23-36`)
    and returns 107005 on a stream not bound to a model (`api_impl.cc:5513-5516`)."""
    b = dev.b
    rc, label = b.create_label()
    expect.ok(rc, "aclrtCreateLabel")
    dev.track("destroy_label", lambda: b.destroy_label(label))
    expect.rc(b.create_label_list(None, 1)[0], Err.INVALID_PARAM, "CreateLabelList(NULL, 1)")
    expect.rc(b.create_label_list([label], 0)[0], Err.RT_PARAM_INVALID,
              "CreateLabelList(labels, 0)")
    rc, lst = b.create_label_list([label], 1)
    expect.ok(rc, "aclrtCreateLabelList")
    dev.track("destroy_label_list", lambda: b.destroy_label_list(lst))
    m = begin_build(dev)
    s = _bind(dev, m, ModelStreamFlag.HEAD)
    idx = _device_value(dev, 0, 4)
    expect.rc(b.switch_label_by_index(idx, 0, lst, s), Err.SUCCESS, "maxValue 0 (not validated)")
    expect.rc(b.switch_label_by_index(idx, 2, lst, s), Err.SUCCESS,
              "maxValue past the list (not validated)")
    expect.rc(b.switch_label_by_index(idx, 0xFFFF_FFFF, lst, s), Err.SUCCESS,
              "maxValue 0xFFFFFFFF (not validated)")
    expect.rc(b.switch_label_by_index(idx, 1, lst, dev.stream()), Err.RT_STREAM_MODEL,
              "on an ordinary stream")


@pytest.mark.requires(Cap.BUILD, Cap.LABELS)
@pytest.mark.clause("RT-22", "BLD-03")
def test_label_set_twice(dev: Dev) -> None:
    """RT-22: a second aclrtSetLabel of a label on the stream it was set on returns 507000
    (RT_ERROR_LABEL_SET, ``core/src/launch/label.cc:167-168``); the bound stream goes on: its
    fill after the refusal runs once the model executes (BLD-03). The label is in a label
    list, which Label::Set asks of newer task schedulers (:170-174)."""
    b = dev.b
    m = begin_build(dev)
    s = _bind(dev, m, ModelStreamFlag.HEAD)
    rc, label = b.create_label()
    expect.ok(rc, "aclrtCreateLabel")
    dev.track("destroy_label", lambda: b.destroy_label(label))
    rc, lst = b.create_label_list([label], 1)
    expect.ok(rc, "aclrtCreateLabelList")
    dev.track("destroy_label_list", lambda: b.destroy_label_list(lst))
    expect.ok(b.set_label(label, s), "aclrtSetLabel (first)")
    expect.rc(b.set_label(label, s), Err.RT_INTERNAL_ERROR, "aclrtSetLabel of a label already set")
    out = dev.buffer(n=1)
    _fill(dev, out, 0x5C, s)
    expect.ok(b.end_task(m, s), "aclmdlRIEndTask (setup)")
    _run(dev, m)
    expect.eq(int(dev.read(out)[0]), _word(0x5C), "fill recorded after the refused aclrtSetLabel")


@pytest.mark.requires(Cap.BUILD, Cap.LABELS)
@pytest.mark.clause("RT-38")
def test_set_label_needs_a_label_list(dev: Dev) -> None:
    """RT-38: aclrtSetLabel of a label that is in no label list returns 507000
    (RT_ERROR_LABEL_PHY_ADDR_NULL, `core/src/launch/label.cc:170-174`: "call
    aclrtCreateLabelList first"); once the label is in a list, the same call returns 0."""
    m = begin_build(dev)
    s = _bind(dev, m, ModelStreamFlag.HEAD)
    (label,) = _labels(dev, 1)
    expect.rc(dev.b.set_label(label, s), Err.RT_INTERNAL_ERROR,
              "aclrtSetLabel of a label in no list", clause="RT-38")
    rc, lst = dev.b.create_label_list([label], 1)
    expect.ok(rc, "aclrtCreateLabelList")
    dev.track("destroy_label_list", lambda: dev.b.destroy_label_list(lst))
    expect.ok(dev.b.set_label(label, s), "aclrtSetLabel once the label is in a list")


@pytest.mark.requires(Cap.LABELS)
@pytest.mark.clause("RT-38")
@pytest.mark.parametrize("how", ["twice_in_one", "in_a_second", "after_destroy"])
def test_a_label_is_in_one_list_only(dev: Dev, how: str) -> None:
    """RT-38: a label can be in one aclrtCreateLabelList only: the same label twice in one call,
    or in a second list (even after aclrtDestroyLabelList of the first, which only frees the
    list) returns 507000 and writes no list (Label::SetLabelDevAddr, SAME_LABELS_IN_SWITCH,
    `core/src/launch/label.cc:296-300`); another label still makes a list."""
    a, fresh = _labels(dev, 2)
    if how == "twice_in_one":
        rc, lst = dev.b.create_label_list([a, a], 2)
    else:
        rc, first = dev.b.create_label_list([a], 1)
        expect.ok(rc, "aclrtCreateLabelList (first)")
        if how == "after_destroy":
            expect.ok(dev.b.destroy_label_list(first), "aclrtDestroyLabelList (first)")
        else:
            dev.track("destroy_label_list", lambda: dev.b.destroy_label_list(first))
        rc, lst = dev.b.create_label_list([a], 1)
    expect.rc(rc, Err.RT_INTERNAL_ERROR, f"aclrtCreateLabelList ({how})", clause="RT-38")
    expect.eq(lst, UNWRITTEN, "aclrtCreateLabelList labelList out-parameter", clause="RT-38")
    rc, other = dev.b.create_label_list([fresh], 1)
    expect.ok(rc, "aclrtCreateLabelList of another label")
    expect.ok(dev.b.destroy_label_list(other), "aclrtDestroyLabelList (setup)")


@pytest.mark.requires(Cap.LABELS)
@pytest.mark.clause("RT-40")
def test_label_ids_run_out(dev: Dev) -> None:
    """RT-40: aclrtCreateLabel takes an id of the runtime's one, process-wide allocator of
    0xFFFF ids (`core/src/runtime.cc:1257-1259`, `core/src/launch/label.cc:34-57`): with
    65,535 labels live the next is refused with 507000 and *label NULL; destroying one frees
    its id, so exactly one more creation succeeds.

    The spec creates labels until one is refused, at most 65,536 tries: whatever else is live,
    the refusal must come by then. That it comes after exactly 65,535 holds because no other
    label is live when the spec starts: the harness makes none, every spec destroys the
    labels it made at its end, and the refused creations here make none. The spec destroys
    all it made (one cleanup step)."""
    owned = _Owned(dev)
    rc, label = Err.SUCCESS, None
    for _ in range(LABEL_IDS + 1):
        rc, label = owned.create()
        if rc != Err.SUCCESS:
            break
    n = len(owned.live)
    expect.rc(rc, Err.RT_INTERNAL_ERROR, f"aclrtCreateLabel with {n} labels of this spec live",
              clause="RT-40")
    expect.eq(label, None, "aclrtCreateLabel *label when refused", clause="RT-40")
    expect.eq(n, LABEL_IDS, "labels created before the refusal (none live before the spec)",
              clause="RT-40")
    expect.ok(owned.destroy(next(iter(owned.live))), "aclrtDestroyLabel of one of them")
    expect.rc(owned.create()[0], Err.SUCCESS, "aclrtCreateLabel once one id was freed",
              clause="RT-40")
    expect.rc(owned.create()[0], Err.RT_INTERNAL_ERROR,
              "aclrtCreateLabel with every id in use again", clause="RT-40")


@pytest.mark.requires(Cap.LABELS)
@pytest.mark.clause("RT-41")
def test_label_list_length_limit(dev: Dev) -> None:
    """RT-41: aclrtCreateLabelList takes at most 65,535 labels (`api/api_c_model.cc:176-178`):
    65,536 entries are refused with 107000 and no list is written, before the entries are
    looked at (here they hold a label twice, RT-38's 507000 otherwise); a list of 65,535
    distinct labels is made. 65,535 distinct live labels are every id of RT-40's allocator:
    no other label is live when the spec starts (see test_label_ids_run_out)."""
    owned = _Owned(dev)
    labels = owned.fill(LABEL_IDS, "the labels of a full list")
    rc, lst = dev.b.create_label_list(labels + labels[:1], LABEL_IDS + 1)
    expect.rc(rc, Err.RT_PARAM_INVALID, "aclrtCreateLabelList of 65,536 labels", clause="RT-41")
    expect.eq(lst, UNWRITTEN, "aclrtCreateLabelList labelList out-parameter (65,536)",
              clause="RT-41")
    rc, lst = dev.b.create_label_list(labels, LABEL_IDS)
    expect.rc(rc, Err.SUCCESS, "aclrtCreateLabelList of 65,535 labels", clause="RT-41")
    expect.true(lst not in (None, UNWRITTEN), "aclrtCreateLabelList label list (65,535)",
                "a list", lst, clause="RT-41")
    expect.ok(dev.b.destroy_label_list(lst), "aclrtDestroyLabelList")


@pytest.mark.requires(Cap.LABELS)
@pytest.mark.clause("RT-43")
def test_null_label_handles(dev: Dev) -> None:
    """RT-43: the ACL layer refuses a NULL label (aclrtSetLabel, aclrtDestroyLabel), labels
    array or labelList out-parameter (aclrtCreateLabelList) and label list
    (aclrtDestroyLabelList) with 100000 before the runtime sees the call
    (`src/acl/aclrt_impl/label.cpp:38, 51, 63-64, 77`): SetLabel's NULL label on an unbound
    stream (the runtime's 107005, BLD-09) and CreateLabelList's NULL array with num 0 (the
    runtime's 107000, RT-41) still answer 100000."""
    b = dev.b
    (label,) = _labels(dev, 1)
    expect.rc(b.set_label(None, dev.stream()), Err.INVALID_PARAM,
              "aclrtSetLabel(NULL, unbound stream)", clause="RT-43")
    expect.rc(b.destroy_label(None), Err.INVALID_PARAM, "aclrtDestroyLabel(NULL)",
              clause="RT-43")
    expect.rc(b.create_label_list(None, 0)[0], Err.INVALID_PARAM,
              "aclrtCreateLabelList(labels NULL, num 0)", clause="RT-43")
    rc, lst = b.create_label_list([label], 1, null_list=True)
    expect.rc(rc, Err.INVALID_PARAM, "aclrtCreateLabelList(labelList NULL)", clause="RT-43")
    expect.rc(b.destroy_label_list(None), Err.INVALID_PARAM, "aclrtDestroyLabelList(NULL)",
              clause="RT-43")
    rc, lst = b.create_label_list([label], 1)
    expect.ok(rc, "aclrtCreateLabelList after the refused calls (the label is in no list yet)")
    expect.ok(b.destroy_label_list(lst), "aclrtDestroyLabelList")


@pytest.mark.requires(Cap.BUILD, Cap.STREAM_SWITCH)
@pytest.mark.clause("ERR-33")
def test_acl_layer_checks_come_first(dev: Dev) -> None:
    """ERR-33: the ACL layer's checks answer 100000 before the runtime's: aclrtActiveStream
    with an ordinary (unbound) stream to start and a NULL issuing stream
    (`src/acl/aclrt_impl/stream.cpp:345-346`, before BLD-09's 107005); aclrtSwitchStream with
    a non-NULL falseStream, which is reserved (`:362-367`), and with a NULL trueStream and an
    invalid condition (before the runtime's 107000 for the condition,
    `api/impl/api_error.cc:4526-4533`)."""
    b = dev.b
    m = begin_build(dev)
    head = _bind(dev, m, ModelStreamFlag.HEAD)
    target = _bind(dev, m, ModelStreamFlag.DEFAULT)
    v = _device_value(dev, 0, 4)
    expect.rc(b.active_stream(dev.stream(), None), Err.INVALID_PARAM,
              "aclrtActiveStream(ordinary stream, stream NULL)", clause="ERR-33")
    expect.rc(b.switch_stream(v, Condition.EQUAL, v, CompareDataType.INT32, target, head, head),
              Err.INVALID_PARAM, "aclrtSwitchStream(falseStream not NULL)", clause="ERR-33")
    expect.rc(b.switch_stream(v, 9, v, CompareDataType.INT32, None, None, head),
              Err.INVALID_PARAM, "aclrtSwitchStream(trueStream NULL, condition 9)",
              clause="ERR-33")


@pytest.mark.requires(Cap.BUILD, Cap.STREAM_SWITCH, Cap.LABELS)
@pytest.mark.clause("BLD-09", "ERR-33")
def test_null_stream_arguments(dev: Dev) -> None:
    """ERR-33: a NULL stream handle to aclrtActiveStream, aclrtSwitchStream, aclrtSetLabel and
    aclrtSwitchLabelByIndex is refused by the ACL layer with 100000 (ACL_REQUIRES_NOT_NULL,
    `src/acl/aclrt_impl/stream.cpp:345-346, 362-367`, `label.cpp:38-39, 89-91`), before the
    runtime's bound-stream check (BLD-09); the other arguments here are valid. So is a NULL
    ptr or labelList of aclrtSwitchLabelByIndex on a bound stream, each alone."""
    b = dev.b
    m = begin_build(dev)
    head = _bind(dev, m, ModelStreamFlag.HEAD)
    target = _bind(dev, m, ModelStreamFlag.DEFAULT)
    v = _device_value(dev, 0, 4)
    expect.rc(b.active_stream(target, None), Err.INVALID_PARAM, "aclrtActiveStream(stream NULL)")
    expect.rc(b.active_stream(None, head), Err.INVALID_PARAM,
              "aclrtActiveStream(activeStream NULL)")
    expect.rc(b.switch_stream(v, Condition.EQUAL, v, CompareDataType.INT32, target, None, None),
              Err.INVALID_PARAM, "aclrtSwitchStream(stream NULL)")
    expect.rc(b.switch_stream(v, Condition.EQUAL, v, CompareDataType.INT32, None, None, head),
              Err.INVALID_PARAM, "aclrtSwitchStream(trueStream NULL)")
    rc, label = b.create_label()
    expect.ok(rc, "aclrtCreateLabel")
    dev.track("destroy_label", lambda: b.destroy_label(label))
    expect.rc(b.set_label(label, None), Err.INVALID_PARAM, "aclrtSetLabel(stream NULL)")
    rc, lst = b.create_label_list([label], 1)
    expect.ok(rc, "aclrtCreateLabelList")
    dev.track("destroy_label_list", lambda: b.destroy_label_list(lst))
    expect.rc(b.switch_label_by_index(v, 1, lst, None), Err.INVALID_PARAM,
              "aclrtSwitchLabelByIndex(stream NULL)")
    # each of ptr and labelList is checked on its own (label.cpp:89-90), the stream valid
    expect.rc(b.switch_label_by_index(None, 1, lst, head), Err.INVALID_PARAM,
              "aclrtSwitchLabelByIndex(ptr NULL)")
    expect.rc(b.switch_label_by_index(v, 1, None, head), Err.INVALID_PARAM,
              "aclrtSwitchLabelByIndex(labelList NULL)")
