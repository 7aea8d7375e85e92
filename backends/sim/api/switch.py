"""Stream activation, stream switch and labels (emulator ``switch.c``): aclrtActiveStream,
aclrtSwitchStream, aclrtCreateLabel, aclrtDestroyLabel, aclrtSetLabel, aclrtCreateLabelList,
aclrtDestroyLabelList, aclrtSwitchLabelByIndex. What these tasks do when an execution runs them
is :mod:`backends.sim.switch`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mdlri_conformance.backends.contract import UNWRITTEN, CompareDataType, Condition, TaskType

from ..device import Op
from ..guard import NO_CTX_OUT, guarded
from ..handles import live
from ..model import ModelStream, TaskRecord
from ..streams import SimStream
from ..switch import (MAX_LABEL_IDS, MAX_LABELS, ActiveOp, Label, LabelList, LabelOp,
                      SwitchLabelOp, SwitchOp)
from .checks import E_HANDLE, E_INTERNAL, E_NULL, E_PARAM, E_STREAM_MODEL, OK, is_plain_int


def _destroy(handle: Any, cls: type) -> int:
    """Destroy a label or label list: NULL 100000, not a live ``cls`` 107017."""
    if handle is None:
        return E_NULL
    if not live(handle, cls):
        return E_HANDLE
    handle.alive = False
    return OK


class SwitchApi:
    """aclrtActiveStream, aclrtSwitchStream and the label API (Cap.STREAM_SWITCH, LABELS).

    Uses the build state of ``SimBackend`` (``_bound``: stream -> (built model, model stream))."""

    def _bound_stream(self, stream: Any, null_rc: int = E_NULL,
                      unbound_rc: int = E_PARAM) -> tuple[int, Any]:
        """(rc, (model, model stream)) of a bound stream; NULL ``null_rc`` (100000, ACL layer:
        ``src/acl/aclrt_impl/stream.cpp:345-346``, ``label.cpp:39, 91``), unbound ``unbound_rc``."""
        if stream is None:
            return null_rc, None
        if isinstance(stream, ModelStream):
            return E_PARAM, None
        if not live(stream, SimStream):
            return E_HANDLE, None
        b = self._bound.get(stream)
        if b is None:
            return unbound_rc, None
        if stream.capturing:
            return E_PARAM, None
        return OK, b

    @staticmethod
    def _stale(*streams: Any) -> bool:
        """Whether a stream handle is stale (the rts entry's validation, 107017)."""
        return any(not isinstance(x, ModelStream) and not live(x, SimStream) for x in streams)

    def _both_bound(self, target: Any, stream: Any, *, target_first: bool) -> tuple[int, Any]:
        """(rc, binding of ``stream``) for a task of ``stream`` that starts ``target``, both
        non-NULL live handles: the two bound checks (either not bound -> 107005, BLD-09) in the
        impl's order -- ``target_first`` for SwitchStream (`api/impl/api_impl.cc:5035-5042`),
        the issuing stream first for ActiveStream (`:5086-5091`); bound to different models
        107000."""
        for x in ((target, stream) if target_first else (stream, target)):
            rc, _ = self._bound_stream(x, unbound_rc=E_STREAM_MODEL)
            if rc:
                return rc, None
        t, b = self._bound[target], self._bound[stream]
        if t[0] is not b[0]:
            return E_PARAM, None
        return OK, b

    def _store(self, bound: tuple[Any, ModelStream], src: Callable[[], Op], trace: str) -> int:
        m, ms = bound
        m.append(ms, TaskRecord(TaskType.DEFAULT, default_kind="ext", src=src, trace=trace))
        return OK

    @guarded()
    def active_stream(self, active_stream: Any, stream: Any) -> int:
        """aclrtActiveStream: both streams bound to the same built model; ``stream`` or
        ``active_stream`` not bound to a model -> 107005 (BLD-09,
        ``api/impl/api_impl.cc:5086-5091``)."""
        if active_stream is None or stream is None:
            return E_NULL  # the ACL layer
        if self._stale(active_stream, stream):
            return E_HANDLE
        rc, b = self._both_bound(active_stream, stream, target_first=False)
        if rc:
            return rc
        return self._store(b, lambda t=active_stream: ActiveOp(t), "STREAM_ACTIVE")

    @guarded()
    def switch_stream(self, left_value: int | None, cond: int, right_value: int | None,
                      data_type: int, true_stream: Any, false_stream: Any, stream: Any) -> int:
        """aclrtSwitchStream in the runtime's order: the ACL layer's NULL left/right value,
        true stream and stream, and a non-NULL (reserved) false stream, all 100000
        (`src/acl/aclrt_impl/stream.cpp:362-367`); the handles; cond 0..5 and data type 0..1,
        107000 (`api/impl/api_error.cc:4526-4533`); then ``true_stream`` or ``stream`` not bound
        to a model -> 107005 (BLD-09, ``api/impl/api_impl.cc:5035-5041``)."""
        if left_value is None or right_value is None or true_stream is None or stream is None:
            return E_NULL
        if false_stream is not None:
            return E_NULL  # reserved: ACL_CHECK_INVALID_PARAM_NO_VALUE
        if self._stale(true_stream, stream):
            return E_HANDLE
        if not is_plain_int(left_value) or not is_plain_int(right_value):
            return E_PARAM
        if not is_plain_int(cond) or cond not in {int(c) for c in Condition}:
            return E_PARAM
        if not is_plain_int(data_type) or data_type not in {int(d) for d in CompareDataType}:
            return E_PARAM
        rc, b = self._both_bound(true_stream, stream, target_first=True)
        if rc:
            return rc
        return self._store(b, lambda: SwitchOp(int(left_value), int(cond), int(right_value),
                                               int(data_type), true_stream), "STREAM_SWITCH")

    # -- labels -------------------------------------------------------------------------------

    @guarded(NO_CTX_OUT)
    def create_label(self) -> tuple[int, Any]:
        """aclrtCreateLabel: an id of the runtime's one label allocator (``_labels``, the live
        labels of this simulated process); with all MAX_LABEL_IDS in use, 507000 and the label
        NULL (RT-40: RT_ERROR_LABEL_ID, ``core/src/launch/label.cc:34-57``; ``*label`` =
        nullptr, ``label_common.cc:36-37``)."""
        if len(self._labels) >= MAX_LABEL_IDS:
            return E_INTERNAL, None
        label = Label()
        self._labels.add(label)
        return OK, label

    @guarded()
    def destroy_label(self, label: Any) -> int:
        """aclrtDestroyLabel: frees the label's id (RT-40, ``~Label``, ``label.cc:93-98``)."""
        rc = _destroy(label, Label)
        if rc == OK:
            self._labels.discard(label)
        return rc

    @guarded()
    def set_label(self, label: Any, stream: Any) -> int:
        """aclrtSetLabel: on a bound stream (else 107005: Label::Set,
        ``core/src/launch/label.cc:153``); once per label (a label already set is
        RT_ERROR_LABEL_SET, 507000: RT-22, ``label.cc:167-168``, ``common/errcode_manage.cc:364``);
        of a label in a label list (else 507000, RT-38)."""
        if label is None:
            return E_NULL
        if not live(label, Label):
            return E_HANDLE
        rc, b = self._bound_stream(stream, unbound_rc=E_STREAM_MODEL)  # label.cc:153
        if rc:
            return rc
        if label.task is not None and label.task.alive:
            return E_INTERNAL
        if not label.listed:
            return E_INTERNAL  # RT-38: LABEL_PHY_ADDR_NULL (`core/src/launch/label.cc:170-174`)
        m, ms = b
        label.task = m.append(ms, TaskRecord(TaskType.DEFAULT, default_kind="ext", src=LabelOp,
                                             trace="LABEL_SET"))
        return OK

    @guarded(NO_CTX_OUT)
    def create_label_list(self, labels: list[Any] | None, num: int, *,
                          null_list: bool = False) -> tuple[int, Any]:
        """aclrtCreateLabelList: NULL labels or labelList 100000 (RT-43); ``num`` live labels,
        0 < num <= 65535, checked before the labels (RT-41); a label already in a list (this
        one included; aclrtDestroyLabelList does not free it) -> 507000 (RT-38)."""
        if labels is None or null_list:
            return E_NULL, UNWRITTEN
        if not is_plain_int(num) or not 0 < num <= MAX_LABELS:
            return E_PARAM, UNWRITTEN
        items = list(labels[:num])
        if len(items) < num or any(x is None for x in items):  # NULL slots past the array
            return E_NULL, UNWRITTEN
        if not all(live(x, Label) for x in items):
            return E_HANDLE, UNWRITTEN
        for x in items:  # one at a time: the labels before a refused one stay listed
            if x.listed:
                return E_INTERNAL, UNWRITTEN  # RT-38: SAME_LABELS_IN_SWITCH (label.cc:296-300)
            x.listed = True
        return OK, LabelList(items)

    @guarded()
    def destroy_label_list(self, label_list: Any) -> int:
        """aclrtDestroyLabelList (the labels stay)."""
        return _destroy(label_list, LabelList)

    @guarded()
    def switch_label_by_index(self, ptr: int | None, max_value: int, label_list: Any,
                              stream: Any) -> int:
        """aclrtSwitchLabelByIndex: a stream not bound to a model -> 107005 (BLD-09,
        ``api/impl/api_impl.cc:5513-5516``); ``max_value`` is not validated (any uint32, 0 and
        past the list included, ``core/src/launch/label_stars.cc:23-36``)."""
        if ptr is None or label_list is None:
            return E_NULL
        if not is_plain_int(ptr) or not is_plain_int(max_value) \
                or not 0 <= max_value <= 0xFFFF_FFFF:
            return E_PARAM
        if not live(label_list, LabelList):
            return E_HANDLE
        rc, b = self._bound_stream(stream, unbound_rc=E_STREAM_MODEL)
        if rc:
            return rc
        labels = list(label_list.labels)
        return self._store(b, lambda: SwitchLabelOp(int(ptr), int(max_value), labels),
                           "STREAM_LABEL_SWITCH_BY_INDEX")
