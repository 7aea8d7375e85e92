"""Task groups and task update (emulator ``taskgroups.c``): aclmdlRICaptureTaskGrpBegin,
aclmdlRICaptureTaskGrpEnd, aclmdlRICaptureTaskUpdateBegin, aclmdlRICaptureTaskUpdateEnd.

The rules a group imposes on other API calls are applied where those calls append or enqueue
(``SimBackend._append``: TG-04/05; ``SimBackend._enqueue`` and ExecuteAsync: TG-15), at
CaptureEnd (TG-07) and at launch in update mode (TG-10/13)."""

from __future__ import annotations

from typing import Any

from mdlri_conformance.backends.contract import UNWRITTEN, Err, TaskType

from ..guard import NO_CTX_OUT, guarded
from ..handles import live
from ..model import ModelStream, TaskRecord
from ..streams import SimStream
from ..taskgroups import PREFETCH_NOPS, TaskGroup, UpdateState
from .checks import E_GRP_STATUS, E_HANDLE, E_INTERNAL, E_NOT_CAPTURED, E_NULL, OK


class TaskGroupsApi:
    """Capture of a task group and its later update (TG)."""

    def _grp_stream(self, stream: Any) -> tuple[int, Any]:
        if stream is None:
            return E_NULL, None
        if isinstance(stream, ModelStream):
            return E_NOT_CAPTURED, None
        if not live(stream, SimStream):
            return E_HANDLE, None
        return OK, stream

    @guarded()
    def capture_task_grp_begin(self, stream: Any) -> int:
        """aclmdlRICaptureTaskGrpBegin (TG-01/02/03/06): 8 NOP tasks, then the group opens."""
        rc, st = self._grp_stream(stream)
        if rc:
            return rc
        if not st.capturing:
            return E_NOT_CAPTURED  # TG-02
        if self._open_group(st) is not None or st in self._upd:
            return E_GRP_STATUS  # TG-06
        for _ in range(PREFETCH_NOPS):  # TG-03
            self._append(st, TaskRecord(TaskType.DEFAULT, default_kind="nop"))
        g = TaskGroup(st.session, st)
        self._grp_open[st] = g
        self._groups.append(g)
        return OK

    @guarded(NO_CTX_OUT)
    def capture_task_grp_end(self, stream: Any, *, null_handle: bool = False) -> tuple[int, Any]:
        """aclmdlRICaptureTaskGrpEnd (TG-01/04/05/06/08): the handle is written on success only."""
        if stream is None or null_handle:
            return E_NULL, UNWRITTEN  # TG-18
        rc, st = self._grp_stream(stream)
        if rc:
            return rc, UNWRITTEN
        if not st.capturing:
            return E_NOT_CAPTURED, UNWRITTEN
        g = self._open_group(st)
        if g is None:
            return E_GRP_STATUS, UNWRITTEN  # TG-06
        g.open = False
        del self._grp_open[st]
        if g.error:
            return g.error, UNWRITTEN  # TG-04, TG-05, TG-08
        if st.session.invalidated:
            return int(Err.RT_STREAM_CAPTURE_INVALIDATED), UNWRITTEN
        return OK, g

    @guarded()
    def capture_task_update_begin(self, stream: Any, handle: Any) -> int:
        """aclmdlRICaptureTaskUpdateBegin (TG-10/11/12): the stream enters update mode. A model
        stream, internal or bound to a built model, is 107005 (TG-11: IsModelStream,
        `feature/aclgraph/api_error_aclgraph.cc:92-94`) and stays out of update mode."""
        if stream is None or handle is None:
            return E_NULL
        if isinstance(stream, ModelStream):
            return int(Err.RT_STREAM_MODEL)  # TG-11
        if not live(stream, SimStream):
            return E_HANDLE
        if stream in self._bound:
            return int(Err.RT_STREAM_MODEL)  # TG-11
        if not live(handle, TaskGroup) or handle.open or not handle.model.alive:
            return E_HANDLE  # LIFE-07: UB in the runtime
        if stream.capturing:
            return int(Err.RT_STREAM_CAPTURED)  # TG-11
        if stream in self._upd or handle.updating is not None:
            return E_GRP_STATUS  # TG-12
        self._upd[stream] = UpdateState(handle)
        handle.updating = stream
        return OK

    @guarded()
    def capture_task_update_end(self, stream: Any) -> int:
        """aclmdlRICaptureTaskUpdateEnd (TG-12/13/14): fewer launches than tasks -> 507000,
        the stream leaves update mode either way. A model stream, internal or bound, is 107005
        after the capturing 107027 and before the not-in-update-mode 107033 (RT-30,
        `feature/aclgraph/api_error_aclgraph.cc:103-109`)."""
        if stream is None:
            return E_NULL
        if isinstance(stream, ModelStream):
            return int(Err.RT_STREAM_MODEL)  # RT-30
        if not live(stream, SimStream):
            return E_HANDLE
        if stream.capturing:
            return int(Err.RT_STREAM_CAPTURED)
        if stream in self._bound:
            return int(Err.RT_STREAM_MODEL)  # RT-30
        u = self._upd.pop(stream, None)
        if u is None:
            return E_GRP_STATUS
        u.group.updating = None
        if u.index != len(u.group.tasks):  # counts only: an empty group's is 0 (TG-14)
            return E_INTERNAL  # TG-13, TG-14
        return OK
