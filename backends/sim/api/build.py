"""Build path, synchronous execution and abort (emulator ``build.c``): aclmdlRIBuildBegin,
aclmdlRIBindStream, aclmdlRIEndTask, aclmdlRIBuildEnd, aclmdlRIUnbindStream, aclmdlRIExecute,
aclmdlRIAbort. The built model itself is :class:`backends.sim.build.BuiltModel`."""

from __future__ import annotations

from typing import Any

from mdlri_conformance.backends.contract import UNWRITTEN, Err, ModelStreamFlag, StreamFlag

from ..build import BuiltModel
from ..cond import SubModel
from ..device import Queue
from ..execution import ExecuteOp
from ..guard import NO_CTX_OUT, guarded
from ..handles import live
from ..model import ModelStatus, ModelStream, SimModel
from ..streams import SimStream
from ..switch import end_record
from .checks import (
    E_EXECUTE, E_HANDLE, E_INTERNAL, E_NOT_SUPPORT, E_NULL, E_PARAM, E_STREAM_MODEL, OK,
    is_plain_int,
)


class BuildApi:
    """Models built from bound PERSISTENT streams (BLD), Execute (EXE-10..13), Abort (ABT)."""

    def _built(self, model: Any) -> tuple[int, Any]:
        rc, m = self._model(model, E_NULL)
        if rc == OK and not isinstance(m, BuiltModel):
            return E_PARAM, None  # "ACL Graph mode is not supported"
        return rc, m

    @guarded(NO_CTX_OUT)
    def build_begin(self, flag: int, *, null_model: bool = False) -> tuple[int, Any]:
        """aclmdlRIBuildBegin (BLD-01)."""
        if null_model:
            return E_NULL, UNWRITTEN
        if not is_plain_int(flag) or flag != 0:
            return E_PARAM, UNWRITTEN
        m = BuiltModel()
        m.faults = self.faults
        self._models.append(m)
        return OK, m

    @guarded()
    def bind_stream(self, model: Any, stream: Any, flag: int) -> int:
        """aclmdlRIBindStream (BLD-02, BLD-08), in the source's order
        (``api/api_c_model.cc:72-96``, ``api/impl/api_error.cc:3895-3908``): flag HEAD or DEFAULT
        (107000); a stream that is not PERSISTENT 107000 whatever its capture state; already
        bound 107005; a captured model 107000; a capturing (PERSISTENT) stream 107027; then a
        FAST_LAUNCH stream 207000 (RT-23). The runtime's DEVICE_USE_ONLY refusal after the
        capture checks is unreachable: such a stream is never PERSISTENT (RT-24)."""
        if model is None:
            return E_NULL
        if not is_plain_int(flag) or flag not in (ModelStreamFlag.HEAD, ModelStreamFlag.DEFAULT):
            return E_PARAM
        if not live(model, SimModel):
            return E_HANDLE
        if stream is None:
            return E_NULL
        if isinstance(stream, ModelStream):
            return int(Err.RT_STREAM_MODEL)
        if not live(stream, SimStream):
            return E_HANDLE
        if not stream.flags & StreamFlag.PERSISTENT:
            return E_PARAM
        if stream in self._bound:
            return int(Err.RT_STREAM_MODEL)
        rc, m = self._built(model)
        if rc:
            return rc
        if stream.capturing:
            return int(Err.RT_STREAM_CAPTURED)
        if stream.flags & StreamFlag.FAST_LAUNCH:
            return int(Err.RT_FEATURE_NOT_SUPPORT)  # RT-23
        self._bound[stream] = (m, m.bind(stream, int(flag)))
        return OK

    def _built_and_bound(self, model: Any, stream: Any,
                         not_bound: int) -> tuple[int, Any, Any]:
        """(rc, built model, model stream) of ``stream`` bound to built ``model``: the model's
        checks first (:meth:`_built`), then the stream's: stale 107017, capturing 107027, then
        ``not_bound`` for a stream not bound to this model. A NULL stream is the context's
        default stream, which is never bound (910B: ``core/src/runtime.cc:6017-6024``)."""
        rc, m = self._built(model)
        if rc:
            return rc, None, None
        if stream is None:
            return not_bound, None, None
        if not live(stream, SimStream):
            return E_HANDLE, None, None
        if stream.capturing:
            return int(Err.RT_STREAM_CAPTURED), None, None
        b = self._bound.get(stream)
        if b is None or b[0] is not m:
            return not_bound, None, None
        return OK, m, b[1]

    @guarded()
    def end_task(self, model: Any, stream: Any) -> int:
        """aclmdlRIEndTask: the end-graph marker (a DEFAULT task) on a bound stream. A stream
        not bound to the model (NULL included) is 507000 (RT-32, STARS:
        ``core/src/context/context.cc:2110-2115``)."""
        rc, m, ms = self._built_and_bound(model, stream, E_INTERNAL)
        if rc:
            return rc
        m.append(ms, end_record())  # ends the execution when it runs (backends.sim.switch)
        m.has_end_task = True
        return OK

    @guarded()
    def build_end(self, model: Any, reserve: Any = None) -> int:
        """aclmdlRIBuildEnd (BLD-05): reserve must be NULL (100000); a model without a bound
        stream 107005 (``feature/model/model.cc:943-957``); none of its streams got EndTask
        507011 (EXE-12, STARS: ``model.cc:969-973``), the model stays in the build phase."""
        if model is None or reserve is not None:
            return E_NULL
        rc, m = self._built(model)
        if rc:
            return rc
        if not m.streams:
            return int(Err.RT_STREAM_MODEL)
        if not m.has_end_task:
            return E_EXECUTE
        m.build_ended = True
        return OK

    @guarded()
    def unbind_stream(self, model: Any, stream: Any) -> int:
        """aclmdlRIUnbindStream (BLD-07): the stream's stored tasks leave the model. A stream
        not bound to the model (NULL included) is 107005 (RT-33, Model::UnbindStream,
        ``feature/model/model.cc:604-608``)."""
        rc, m, ms = self._built_and_bound(model, stream, E_STREAM_MODEL)
        if rc:
            return rc
        del self._bound[stream]
        m.streams.remove(ms)
        ms.alive = False
        for t in ms.tasks:
            t.alive = False
        return OK

    @guarded()
    def execute(self, model: Any, timeout_ms: int) -> int:
        """aclmdlRIExecute (EXE-10..13): built models only, synchronous, -1 forever, >0 ms;
        expiry -> 507046 with the execution left running (Q-16). A sub-model is a capture
        model like any other: 107000 (EXE-10, ``api/impl/api_error.cc:4039-4041``; the
        decorator has no sub-model case). The handle is validated before the timeout (RT-35,
        ``api/api_c_model.cc:137`` before ``api/impl/api_error.cc:4033-4035``)."""
        if model is None:
            return E_NULL
        if not live(model, SimModel):
            return E_HANDLE
        if not is_plain_int(timeout_ms) or timeout_ms == 0 or timeout_ms < -1:
            return E_PARAM  # EXE-11
        if not isinstance(model, BuiltModel):
            return E_PARAM  # EXE-10
        if not model.has_end_task or model.status != ModelStatus.READY:
            return E_EXECUTE  # EXE-12
        model.running += 1

        def finished(ok: bool, m: SimModel = model) -> None:
            m.running -= 1

        q = Queue(f"execute-model#{model.id}", transient=True)
        op = ExecuteOp(model.execution_plan, finished)
        self._assign_defaults(model)
        self.engine.enqueue(q, op)
        limit = None if timeout_ms == -1 else timeout_ms / 1000.0
        if not self._wait_until(lambda: op.done, limit):
            return int(Err.RT_STREAM_SYNC_TIMEOUT)  # EXE-13
        return q.take_error()

    @guarded()
    def abort(self, model: Any) -> int:
        """aclmdlRIAbort (ABT-01..03, Q-17): executions of the model that have started are
        abandoned (their stream's next sync returns 507011); queued ones still run later."""
        if model is None:
            return E_PARAM  # ABT-03
        if not live(model, SimModel):
            return E_HANDLE
        if isinstance(model, SubModel):
            return E_NOT_SUPPORT
        for q in list(self.engine.queues):
            for op in list(q.ops):
                if isinstance(op, ExecuteOp) and op.queues is not None \
                        and getattr(op._start, "__self__", None) is model:
                    op.abandon(self.engine)
        return OK
