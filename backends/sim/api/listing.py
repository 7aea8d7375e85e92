"""Listing and task getters (emulator ``model.c``): aclmdlRIGetStreams,
aclmdlRIGetTasksByStream, aclmdlRITaskGetType, aclmdlRITaskGetSeqId, aclmdlRITaskGetParams."""

from __future__ import annotations

from typing import Any

from mdlri_conformance.backends.contract import (UNION_MEMBER_SIZE, UNION_SIZE, UNWRITTEN, Err,
                                                 EventRecordTaskParams, EventResetTaskParams,
                                                 EventWaitTaskParams, KernelTaskParams,
                                                 TaskParams, TaskType, ValueWaitTaskParams,
                                                 ValueWriteTaskParams)

from ..build import BuiltModel
from ..cond import SubModel
from ..external import external_flag, params_type
from ..guard import NO_CTX, NO_CTX_OUT, guarded
from ..handles import live
from ..model import ModelStream, Task, TaskRecord
from ..streams import SimStream
from .checks import E_HANDLE, E_NOT_SUPPORT, E_PARAM, OK, is_int


#: every task type by its value: GetType answers the member itself, looked up without an
#: enum call (``TaskType(value)``) on every listed task
_TYPES: dict[int, TaskType] = {int(t): t for t in TaskType}


def _task_type(value: int) -> TaskType:
    """``TaskType(value)`` through :data:`_TYPES`."""
    member = _TYPES.get(value)
    return TaskType(value) if member is None else member


def _listing_no_ctx(a: dict) -> tuple[int, list[Any] | None, Any]:
    cap = a["capacity"]
    return NO_CTX, (None if cap is None else [UNWRITTEN] * cap), UNWRITTEN


def _untouched(capacity: int | None) -> list[Any] | None:
    return None if capacity is None else [UNWRITTEN] * capacity


class ListingApi:
    """The two-phase listings (LIST) and the task getters (TYPE, SEQ, GETP)."""

    def _slots(self, items: list[Any], capacity: int | None, *,
               copy_back: bool = False) -> tuple[int, list[Any] | None, Any]:
        """The two-phase array convention (LIST-03/04/05).

        ``copy_back=False`` (GetTasksByStream, ``core/src/stream/stream.cc:5427-5447``): the
        tail past the count is set to NULL; a short array is filled and 107039 returned.
        ``copy_back=True`` (GetStreams, LIST-14, ``api/api_c_standard_soc.cc:1874-1881``): the
        public API lists into a private array and copies back only on success, so slots past
        the count stay untouched and a short array is not written at all (107039,
        ``*numStreams`` = capacity)."""
        count = len(items)
        if capacity is None:
            return OK, None, count
        if not is_int(capacity) or capacity < 0:
            raise ValueError(f"capacity must be None or a non-negative int, got {capacity!r}")
        slots: list[Any] = [UNWRITTEN] * capacity
        if capacity >= count:
            slots[:count] = items
            if not copy_back:
                slots[count:] = [None] * (capacity - count)
            return OK, slots, count
        if not copy_back or self.has_fault("no-107039"):
            slots[:capacity] = items[:capacity]
        if self.has_fault("listing-writes-past-capacity"):
            slots = list(items)
        if self.has_fault("no-107039"):
            return OK, slots, capacity
        return int(Err.RT_INSUFFICIENT_INPUT_ARRAY), slots, capacity

    def _getter_task(self, task: Any, null_out: bool, *, built_too: bool) -> tuple[int, Any]:
        """The checks of the task getters: NULL task or out 107000, stale 107017, a
        sub-model's task (and with ``built_too`` a built model's) 207000 (COND-10, BLD-06)."""
        if task is None or null_out:
            return E_PARAM, None
        # SimBackend._task and _task_refused written out: three getters run per listed task
        if not (isinstance(task, Task) and task.alive and task.model.alive):
            return E_HANDLE, None
        m = task.model
        if isinstance(m, SubModel) or (built_too and isinstance(m, BuiltModel)):
            return E_NOT_SUPPORT, None
        return OK, task

    @guarded(_listing_no_ctx)
    def get_streams(self, model: Any, capacity: int | None, *,
                    null_count: bool = False) -> tuple[int, list[Any] | None, Any]:
        """aclmdlRIGetStreams (LIST-01..06, LIST-11): internal streams, origin last; a built
        model's bound user streams (BLD-06); a sub-model 207000 (LIST-12)."""
        if model is None or null_count:
            return E_PARAM, _untouched(capacity), UNWRITTEN
        rc, m = self._model(model, E_PARAM)
        if rc:
            return rc, _untouched(capacity), UNWRITTEN
        if isinstance(m, SubModel):
            return E_NOT_SUPPORT, _untouched(capacity), UNWRITTEN  # LIST-12
        return self._slots(m.listed_streams(), capacity, copy_back=True)

    @guarded(_listing_no_ctx)
    def get_tasks_by_stream(self, stream: Any, capacity: int | None, *,
                            null_count: bool = False) -> tuple[int, list[Any] | None, Any]:
        """aclmdlRIGetTasksByStream (LIST-06/07/08/11): tasks in append order. A user stream
        bound to a built model lists its stored tasks (BLD-06); any other user stream, or an
        internal stream of a destroyed model, is "not a model stream" -> 107000; an internal
        stream of a sub-model 207000 (LIST-12)."""
        if stream is None or null_count:
            return E_PARAM, _untouched(capacity), UNWRITTEN
        if isinstance(stream, SimStream) and not stream.alive:
            return E_HANDLE, _untouched(capacity), UNWRITTEN
        if isinstance(stream, SimStream) and stream in self._bound:
            return self._slots(list(self._bound[stream][1].tasks), capacity)
        if not live(stream, ModelStream):
            return E_PARAM, _untouched(capacity), UNWRITTEN
        if isinstance(stream.model, SubModel):
            return E_NOT_SUPPORT, _untouched(capacity), UNWRITTEN  # LIST-12
        return self._slots(list(stream.tasks), capacity)

    @guarded(NO_CTX_OUT)
    def task_get_type(self, task: Any, *, null_out: bool = False) -> tuple[int, Any]:
        """aclmdlRITaskGetType (TYPE-02, TYPE-06, TYPE-07): the host-side type; a sub-model's
        task 207000 (COND-10)."""
        rc, t = self._getter_task(task, null_out, built_too=False)
        if rc:
            return rc, UNWRITTEN
        return OK, _task_type(t.host.type)

    @guarded(NO_CTX_OUT)
    def task_get_seq_id(self, task: Any, *, null_out: bool = False) -> tuple[int, Any]:
        """aclmdlRITaskGetSeqId (SEQ-01..08); a sub-model's or built model's task 207000
        (COND-10, BLD-06)."""
        rc, t = self._getter_task(task, null_out, built_too=True)
        if rc:
            return rc, UNWRITTEN
        return OK, t.seq_id

    @guarded(NO_CTX_OUT)
    def task_get_params(self, task: Any, *, null_out: bool = False) -> tuple[int, Any]:
        """aclmdlRITaskGetParams (GETP-01..07): DEFAULT -> 107000; zeroed then filled; a
        kernel's ``taskGrp`` is its live task group (TG-09); a sub-model's task 207000."""
        rc, t = self._getter_task(task, null_out, built_too=False)
        if rc:
            return rc, UNWRITTEN
        if t.host.type == TaskType.DEFAULT and t.host.default_kind in ("ext_record", "ext_wait"):
            return OK, _external_params(t.host)  # TYPE-04
        if t.host.type == TaskType.DEFAULT:
            return E_PARAM, UNWRITTEN
        p = _params_of(t.dev if self.has_fault("getparams-device-record") else t.host)
        if p.type == TaskType.KERNEL:
            g = getattr(t, "task_grp", None)
            p.task_grp = g if g is not None and g.alive else None  # TG-09
        return OK, p


def _external_params(rec: TaskRecord) -> TaskParams:
    """GetParams of an external record/wait placeholder: EVENT_RECORD / EVENT_WAIT with
    recordFlag / waitFlag EXTERNAL (TYPE-04)."""
    ttype = params_type(rec.default_kind)
    p = TaskParams(type=ttype, rsv0=(0, 0, 0), task_grp=None, rsv1=bytes(32),
                   union_tail=bytes(UNION_SIZE - UNION_MEMBER_SIZE[ttype]))
    ev, flag = rec.event.user_event, external_flag(rec.default_kind)
    if ttype == TaskType.EVENT_RECORD:
        p.event_record = EventRecordTaskParams(ev, rec.event_flag, flag)
    else:
        p.event_wait = EventWaitTaskParams(ev, rec.event_flag, flag)
    return p


def _params_of(rec: TaskRecord) -> TaskParams:
    """Build the zero-initialised aclmdlRITaskParams for a record (GETP-02..05)."""
    ttype = _task_type(rec.type)
    p = TaskParams(type=ttype, rsv0=(0, 0, 0), task_grp=None, rsv1=bytes(32),
                   union_tail=bytes(UNION_SIZE - UNION_MEMBER_SIZE[ttype]))
    if ttype == TaskType.KERNEL:
        p.op_info_ptr, p.op_info_size = rec.op_info_ptr, rec.op_info_size
        p.kernel = KernelTaskParams(func_handle=rec.func, cfg=None, args=rec.args_addr,
                                    is_host_args=0, args_size=rec.args_size,
                                    num_blocks=rec.num_blocks, rsv=(0,) * 10)
    elif ttype == TaskType.EVENT_RECORD:
        p.event_record = EventRecordTaskParams(rec.event, rec.event_flag, 0)
    elif ttype == TaskType.EVENT_WAIT:
        p.event_wait = EventWaitTaskParams(rec.event, rec.event_flag, 0)
    elif ttype == TaskType.EVENT_RESET:
        p.event_reset = EventResetTaskParams(rec.event, rec.event_flag, 0)
    elif ttype == TaskType.VALUE_WRITE:
        p.value_write = ValueWriteTaskParams(rec.dev_addr, rec.value)
    elif ttype == TaskType.VALUE_WAIT:
        p.value_wait = ValueWaitTaskParams(rec.dev_addr, rec.value, rec.flag)
    return p
