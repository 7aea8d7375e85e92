"""Conditional tasks and sub-models (emulator ``cond.c``): aclmdlRICondHandleCreate,
aclmdlRICondHandleGetCondPtr, aclmdlRIAddCondTask, aclmdlRICaptureToModelRIBegin. The end of a
sub-model capture is part of CaptureEnd (:mod:`.capture`); the device side is
:mod:`backends.sim.cond`."""

from __future__ import annotations

import threading
from typing import Any

from mdlri_conformance.backends.contract import (UNWRITTEN, CondTaskParams, CondTaskType, Err,
                                                 TaskType)

from ..build import BuiltModel
from ..capture import CaptureSession
from ..cond import CondHandle, CondOp, SubModel
from ..guard import NO_CTX, NO_CTX_OUT, ApiReturn, guarded
from ..handles import live
from ..model import ModelStatus, ModelStream, SimModel, TaskRecord
from ..streams import CAPTURE_FORBIDDEN_FLAGS, SimStream
from .checks import (E_HANDLE, E_NOT_CAPTURED, E_NOT_SUPPORT, E_NULL, E_PARAM, OK,
                     is_plain_int)


def _caller_slots(params: Any) -> list[Any] | None:
    """The caller's ``modelRIArray`` as the simulator models it: ``model_ri_array`` slots."""
    n = getattr(params, "model_ri_array", None)
    return None if n is None else [UNWRITTEN] * int(n)


class CondApi:
    """Cond handles, conditional tasks, sub-model capture (COND)."""

    def _assign_defaults(self, model: Any) -> None:
        """COND-03: ASSIGN_DEFAULT values written host-synchronously at execute time, for the
        handles a conditional task was captured with only: CaptureModel::
        InitAllSubCaptureModelCondTaskByDefValue walks condHandleTaskMap_ of the model and of
        every sub-model (`feature/aclgraph/capture_model.cc:286-306`), and a handle enters that
        map when its AddCondTask's task is captured (PostProcCaptureConditionTask ->
        StoreCondHandleTaskInfo, `core/src/task/task_info/cond_op/aclgraph_cond_task.cc:303`,
        `feature/aclgraph/capture_model.cc:1629-1644`). A handle never used keeps its value."""
        if not self._conds:
            return  # no cond handle anywhere (the common case)
        todo = [model]
        while todo:
            m = todo.pop()
            for h in self._conds.get(m, ()):
                if h.flag == 1 and h.alive and h.used:
                    self.mem.write_u64(h.addr, h.default)
            todo.extend(self._subs.get(m, ()))

    @guarded(NO_CTX_OUT)
    def cond_handle_create(self, model: Any, default_launch_value: int, flag: int, *,
                           null_handle: bool = False) -> tuple[int, Any]:
        """aclmdlRICondHandleCreate (COND-01/02): a capturing capture model; value 0. A flag
        above ASSIGN_DEFAULT is 107000 before a built model's 207000
        (`feature/aclgraph/api_error_aclgraph.cc:197-202`)."""
        if model is None or null_handle:
            return E_NULL, UNWRITTEN
        if not live(model, SimModel):
            return E_HANDLE, UNWRITTEN
        if not is_plain_int(flag) or not 0 <= flag <= 1 or not is_plain_int(default_launch_value):
            return E_PARAM, UNWRITTEN  # the decorator's flag check comes before the model type
        if isinstance(model, BuiltModel):
            return E_NOT_SUPPORT, UNWRITTEN
        if model.status != ModelStatus.CAPTURE_ACTIVE or model.session is None \
                or model.session.invalidated:
            return E_PARAM, UNWRITTEN
        addr = self.mem.alloc(8, "internal")
        model.internal_allocs.append(addr)
        self.mem.write_u64(addr, 0)  # COND-02
        h = CondHandle(model, addr, int(default_launch_value) & 0xFFFF_FFFF, int(flag))
        self._conds.setdefault(model, []).append(h)
        return OK, h

    @guarded(NO_CTX_OUT)
    def cond_handle_get_cond_ptr(self, handle: Any, *, null_out: bool = False) -> tuple[int, Any]:
        """aclmdlRICondHandleGetCondPtr (COND-04)."""
        if handle is None or null_out:
            return E_NULL, UNWRITTEN
        if not live(handle, CondHandle):
            return E_HANDLE, UNWRITTEN
        return OK, handle.addr

    @guarded(lambda a: (NO_CTX, _caller_slots(a["params"])))
    def add_cond_task(self, params: CondTaskParams, stream: Any,
                      flags: int) -> tuple[int, list[Any] | None]:
        """aclmdlRIAddCondTask (COND-05/06): fills min(array length, ``size``) slots of the
        caller's array with sub-model handles; a runtime-side failure sets every slot to NULL,
        an ACL-layer failure (NULL stream, 100000) leaves them untouched."""
        slots = _caller_slots(params)
        rc, subs = self._add_cond_task(params, stream, flags)
        if slots is None or rc == E_NULL:
            return rc, slots
        if rc:
            return rc, [None] * len(slots)
        for i in range(min(len(slots), len(subs))):
            slots[i] = subs[i]
        return OK, slots

    def _add_cond_task(self, p: Any, stream: Any, flags: int) -> tuple[int, list[Any]]:
        if stream is None:
            return E_NULL, []
        if not isinstance(p, CondTaskParams):
            return E_PARAM, []
        # the rts entry validates the stream and a non-NULL handle before the decorator's
        # argument checks (`api/api_c_standard_soc.cc:801`)
        if not isinstance(stream, ModelStream) and not live(stream, SimStream):
            return E_HANDLE, []
        if p.handle is not None and not live(p.handle, CondHandle):
            return E_HANDLE, []
        if p.handle is None or p.model_ri_array is None:
            return E_PARAM, []
        if not is_plain_int(flags) or flags != 0 or not is_plain_int(p.type) \
                or not 0 <= p.type <= 2:
            return E_PARAM, []
        size = p.size
        if p.handle.used:
            return E_PARAM, []
        if isinstance(stream, ModelStream) or not stream.capturing:
            return E_NOT_CAPTURED, []
        parent = p.handle.model
        if stream.session.model is not parent:
            return E_PARAM, []
        if not is_plain_int(size) or size < 1 or (p.type == CondTaskType.IF and size > 2) or \
                (p.type == CondTaskType.WHILE and size != 1):
            return E_PARAM, []  # the size comes last (`v100/api_impl_aclgraph.cc:268-271`)
        subs = [SubModel(parent, i) for i in range(int(size))]
        for s in subs:
            s.faults = self.faults
        h, ctype = p.handle, int(p.type)
        last = self.has_fault("switch-out-of-range-runs-last")
        try:
            self._append(stream, TaskRecord(TaskType.DEFAULT, default_kind="ext",
                                            src=lambda: CondOp(h, ctype, subs, last),
                                            trace="CONDITION_OP"))
        except ApiReturn as exc:  # a task-group refusal: the caller's slots become NULL too
            return exc.rc, []
        h.used = True
        self._subs.setdefault(parent, []).extend(subs)
        return OK, subs

    @guarded()
    def capture_to_model_ri_begin(self, stream: Any, model: Any, mode: int) -> int:
        """aclmdlRICaptureToModelRIBegin (COND-07): capture ``stream`` into a sub-model. The
        handles first, then the error decorator's order (`feature/aclgraph/api_error_aclgraph.cc:
        41-52`): the mode, a stream whose flags forbid capture 507000 (CAP-18), a model that is
        not a sub-model 107000."""
        if stream is None or model is None:
            return E_NULL
        if not live(model, SimModel):
            return E_HANDLE
        if not isinstance(stream, ModelStream) and not live(stream, SimStream):
            return E_HANDLE
        if not is_plain_int(mode) or mode not in (0, 1, 2):
            return E_PARAM
        if isinstance(stream, SimStream) and stream.flags & CAPTURE_FORBIDDEN_FLAGS:
            return int(Err.RT_INTERNAL_ERROR)  # CAP-18, before the sub-model check
        if not isinstance(model, SubModel):
            return E_PARAM
        if isinstance(stream, ModelStream):
            return int(Err.RT_STREAM_MODEL)
        if stream.capturing:
            return int(Err.RT_STREAM_CAPTURED)
        if stream in self._bound:
            return int(Err.RT_STREAM_MODEL)
        if model.captured or model.session is not None:
            return int(Err.RT_MODEL_CAPTURED)
        if self._stream_refused():
            return self._refusal()  # FLD-06 (R2): the sub-model's internal stream
        model.captured = True
        model.status = ModelStatus.CAPTURE_ACTIVE
        sess = CaptureSession(model, stream, int(mode), threading.current_thread())
        model.session = sess
        sess.join(stream)
        self._sessions.append(sess)
        return OK

