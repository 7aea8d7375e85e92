"""Model execution and destruction (emulator ``model.c``): aclmdlRIExecuteAsync,
aclmdlRIDestroy."""

from __future__ import annotations

from typing import Any

from mdlri_conformance.backends.contract import Err

from ..build import BuiltModel
from ..cond import SubModel
from ..execution import ExecuteOp
from ..guard import guarded
from ..limits import RESOURCE_ALLOC_FAIL
from ..model import ModelStatus, SimModel
from ..streams import SYNC_NOOP_FLAGS, SimStream
from .checks import E_EXECUTE, E_HANDLE, E_NOT_SUPPORT, E_NULL, E_PARAM, OK


class ModelApi:
    """ExecuteAsync and Destroy of a model (EXE, LIFE)."""

    @guarded()
    def execute_async(self, model: Any, stream: Any) -> int:
        """aclmdlRIExecuteAsync (EXE-01..09, EXE-12, EXE-15, RT-28, RT-29). NULL stream =
        default stream (Q-08). An accepted execution writes the ASSIGN_DEFAULT cond values at
        once (COND-03).

        The order is the runtime's (RT-29): the NULL model (`src/acl/aclrt_impl/model_ri.cpp:30`)
        and the handles (`api/api_c.cc:1709-1710`); then ApiErrorDecorator::ModelExecute
        (`api/impl/api_error.cc:3994-4023`): a model stream 107000 (EXE-06), a capturing stream
        107027 (EXE-05), a sub-model 207000 (EXE-08); then the model's state: capturing 107026
        (EXE-04), not READY 507011 (EXE-07), a built model without EndTask (EXE-12) or before
        BuildEnd (RT-28, `feature/model/model.cc:1294-1307`) 507011; last, the model-execute
        task refused on a stream in task-update mode 507009 (TG-15,
        `core/src/stream/stream.cc:4747-4760`)."""
        if type(model) is SimModel and model.alive:
            m = model  # what _model answers for a live capture model, without the call
        else:
            rc, m = self._model(model, E_PARAM if model is None and self.has_fault(
                "execute-null-model-107000") else E_NULL)
            if rc:
                return rc
        if type(stream) is SimStream and stream.alive:
            st = stream  # what _stream answers for a live user stream, without the call
        else:
            rc, st = self._stream(stream)
            if rc == E_HANDLE and self.has_fault("execute-destroyed-stream-ok"):
                rc, st = self._stream(None)  # EXE-17 broken: a destroyed stream runs it anyway
            if rc:
                return rc  # an internal stream 107000 (EXE-06), a destroyed one 107017 (EXE-17)
        if st in self._bound:
            return E_PARAM  # a stream bound to a built model is a model stream too (EXE-06)
        if st.capturing and not self.has_fault("execute-on-capturing-stream"):
            return int(Err.RT_STREAM_CAPTURED)  # EXE-05
        if st.flags & SYNC_NOOP_FLAGS:
            return E_PARAM  # abi.md §5.3: execute on an ordinary stream
        if isinstance(m, SubModel):
            return E_NOT_SUPPORT  # EXE-08
        if m.status == ModelStatus.CAPTURE_ACTIVE:
            return int(Err.RT_MODEL_CAPTURED)  # EXE-04
        if m.status != ModelStatus.READY and not (
                m.status == ModelStatus.UPDATING and self.has_fault("execute-while-updating")):
            return int(Err.RT_MODEL_EXECUTE)  # SETP-02, EXE-07
        if isinstance(m, BuiltModel) and not (m.has_end_task and m.build_ended):
            return E_EXECUTE  # EXE-12, RT-28
        if st in self._upd:
            return int(Err.RT_TASK_TYPE_NOT_SUPPORT)  # TG-15
        limit = self.model_stream_limit
        if limit is not None and (self._subs or len(m.streams) > limit) \
                and self._model_streams_refused(m):
            return RESOURCE_ALLOC_FAIL  # FLD-08 (R4): nothing runs, the model stays READY
        m.running += 1
        # queued as SimBackend._enqueue queues it: its refusals (TG-15, a bound stream) are
        # the checks above
        self.engine.enqueue(st.queue, ExecuteOp(m.execution_plan, m.execution_finished))
        if self._conds:
            self._assign_defaults(m)  # COND-03
        return OK

    @guarded()
    def destroy(self, model: Any) -> int:
        """aclmdlRIDestroy (LIFE-01..04, LIFE-06): waits up to ``destroy_wait_s`` for running
        executions, then 107037; a sub-model 207000 (LIFE-05)."""
        rc, m = self._model(model, E_NULL)
        if rc:
            return OK if rc == E_HANDLE and self.has_fault("double-destroy-ok") else rc
        if isinstance(m, SubModel):
            return E_NOT_SUPPORT  # LIFE-05
        if m.session is not None:
            if not self.has_fault("destroy-capturing-model"):
                return int(Err.RT_MODEL_CAPTURED)  # LIFE-02
            self._close_session(m.session)
        if self.has_fault("destroy-no-wait"):
            pass  # LIFE-03 broken: an execution in flight runs on a freed model
        elif not self._wait_until(lambda: m.running == 0, self.destroy_wait_s):
            return int(Err.RT_MODEL_RUNNING)  # LIFE-03
        if not m.alive:
            return E_HANDLE  # destroyed by another thread meanwhile
        if self.has_fault("destroy-leaks-model"):
            m.invalidate_handles()  # LIFE-01 broken: memory and the live count stay
            return OK
        self._free_model(m)
        return OK
