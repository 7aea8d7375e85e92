"""Capture API (emulator ``capture.c``): aclmdlRICaptureBegin, aclmdlRICaptureGetInfo,
aclmdlRICaptureThreadExchangeMode, aclmdlRICaptureEnd (with the end of a sub-model capture,
COND-08)."""

from __future__ import annotations

import threading
from typing import Any

from mdlri_conformance.backends.contract import (UNWRITTEN, CaptureMode, CaptureStatus, Err,
                                                 TaskType)

from ..capture import CaptureSession, joined_ok, unrecorded_event
from ..cond import SubModel
from ..guard import NO_CTX, NO_CTX_OUT, guarded
from ..handles import live
from ..limits import REFUSED
from ..model import ModelStatus, ModelStream, SimModel, TaskRecord
from ..streams import CAPTURE_FORBIDDEN_FLAGS, SimStream
from .checks import E_GRP_STATUS, E_HANDLE, E_NULL, E_PARAM, OK, is_int


def _exchange_no_ctx(a: dict) -> tuple[int, Any]:
    """The ACL layer's NULL check comes first; without a context ``*mode`` is kept."""
    return (E_NULL, UNWRITTEN) if a["mode"] is None else (NO_CTX, a["mode"])


class CaptureApi:
    """Capture sessions: begin, status, thread modes, end (CAP, XS, STAT, MODE)."""

    @guarded()
    def capture_begin(self, stream: Any, mode: int) -> int:
        """aclmdlRICaptureBegin (CAP-05/06/07/17/18/22): a new model with one internal stream.
        A stream bound to a built model -> 107005 (ERR-01)."""
        if stream is None:
            return E_NULL
        if isinstance(stream, ModelStream):
            if not is_int(mode) or mode not in (0, 1, 2):
                return E_PARAM
            return int(Err.RT_STREAM_MODEL)  # CAP-09: a model-bound stream
        if not live(stream, SimStream):
            return E_HANDLE
        if not is_int(mode) or mode not in (0, 1, 2):
            return E_PARAM
        if stream.flags & CAPTURE_FORBIDDEN_FLAGS:
            return int(Err.RT_INTERNAL_ERROR)  # CAP-18: the error decorator, before the impl
        if stream in self._bound:
            return int(Err.RT_STREAM_MODEL)  # ERR-01: stream bound to a model
        if stream.capturing:
            return int(Err.RT_STREAM_CAPTURED)
        if self._stream_refused():
            return REFUSED  # FLD-06 (R2): no model is created, the stream stays NONE
        model = SimModel()
        model.faults = self.faults
        sess = CaptureSession(model, stream, int(mode), threading.current_thread())
        model.session = sess
        sess.join(stream)
        self._sessions.append(sess)
        self._models.append(model)
        return OK

    @guarded((NO_CTX, UNWRITTEN, UNWRITTEN))
    def capture_get_info(self, stream: Any, *, null_status: bool = False,
                         null_model: bool = False) -> tuple[int, Any, Any]:
        """aclmdlRICaptureGetInfo (STAT-01/02/03/05)."""
        if stream is None or (null_status and null_model):
            return E_NULL, UNWRITTEN, UNWRITTEN
        if isinstance(stream, ModelStream):
            status, model = CaptureStatus.NONE, None
        elif not live(stream, SimStream):
            return E_HANDLE, UNWRITTEN, UNWRITTEN
        else:
            status = stream.capture_status
            model = stream.session.model if stream.capturing else None
        return (OK, UNWRITTEN if null_status else status, UNWRITTEN if null_model else model)

    @guarded(_exchange_no_ctx)
    def capture_thread_exchange_mode(self, mode: int | None) -> tuple[int, Any]:
        """aclmdlRICaptureThreadExchangeMode (MODE-05, MODE-09, MODE-10)."""
        if mode is None:
            return E_NULL, UNWRITTEN
        if not is_int(mode) or not 0 <= mode <= 2:
            return E_PARAM, mode
        return OK, CaptureMode(self._modes.exchange(int(mode)))

    @guarded(NO_CTX_OUT)
    def capture_end(self, stream: Any, *, null_model: bool = False) -> tuple[int, Any]:
        """aclmdlRICaptureEnd (CAP-04, CAP-10..16, XS-02/03/06/08, STAT-04/08); a sub-model
        capture ends in :meth:`_sub_capture_end` (COND-08). A stream of a model (an internal
        stream of a captured model, or a stream bound to a built model) is refused with 107005
        before the capture state is looked at (ERR-04: ApiImpl::StreamEndCapture,
        `feature/aclgraph/v100/api_impl_aclgraph.cc:56-58`, stm->Model_() != nullptr ->
        RT_ERROR_STREAM_MODEL). A stream whose flags forbid capture is refused with 507000
        before either (CAP-18: the error decorator's flag check precedes the impl)."""
        if stream is None:
            return E_NULL, UNWRITTEN
        if isinstance(stream, ModelStream):
            return int(Err.RT_STREAM_MODEL), UNWRITTEN
        if not live(stream, SimStream):
            return E_HANDLE, UNWRITTEN
        if stream.flags & CAPTURE_FORBIDDEN_FLAGS:
            return int(Err.RT_INTERNAL_ERROR), UNWRITTEN
        if stream in self._bound:
            return int(Err.RT_STREAM_MODEL), UNWRITTEN
        if not stream.capturing:
            return int(Err.RT_STREAM_NOT_CAPTURED), UNWRITTEN  # CAP-10
        sess: CaptureSession = stream.session
        model = sess.model
        if isinstance(model, SubModel):
            return self._sub_capture_end(stream, null_model)
        if null_model:
            return E_PARAM, UNWRITTEN  # CAP-12: capture kept
        if stream is not sess.origin and not self.has_fault("end-on-joined-stream"):
            return int(Err.RT_STREAM_CAPTURE_UNMATCHED), UNWRITTEN  # CAP-11
        if sess.mode != CaptureMode.RELAXED and threading.current_thread() != sess.thread \
                and not self.has_fault("wrong-thread-end-accepted"):
            return self._end_wrong_thread(sess), UNWRITTEN  # CAP-14
        rc = self._end_check(sess)
        if rc:
            self._close_session(sess)  # CAP-13
            self._free_model(model)
            return rc, None
        origin_ms = sess.streams[sess.origin]
        for me in model.internal_events:  # XS-08: one per captured record (XS-13), Q-04
            if self.has_fault("no-event-reset-at-end"):
                break
            model.append(origin_ms, TaskRecord(TaskType.EVENT_RESET, event=me,
                                               event_flag=me.flags))
        model.status = ModelStatus.READY
        if not model.faults:
            model.prepare_plan(self.engine)  # the task streams the executions will run
        self._close_session(sess)
        if self.has_fault("side-stream-stays-captured"):
            for us in sess.streams:
                if us is not sess.origin:
                    us.session = sess  # STAT-04 broken: still reports ACTIVE
        return OK, model

    def _sub_capture_end(self, st: SimStream, null_model: bool) -> tuple[int, Any]:
        """CaptureEnd of a sub-model capture (COND-08): the model argument may be NULL; a
        failed end empties the sub-model, which may then be captured again."""
        sess = st.session
        model = sess.model
        if st is not sess.origin:
            return int(Err.RT_STREAM_CAPTURE_UNMATCHED), UNWRITTEN
        if sess.mode != CaptureMode.RELAXED and threading.current_thread() != sess.thread:
            return self._end_wrong_thread(sess), UNWRITTEN
        out = UNWRITTEN if null_model else None
        rc = self._end_check(sess)
        if rc:  # the sub-model is emptied and can be captured again
            self._close_session(sess)
            model.streams.clear()
            model.events.clear()
            model.internal_events.clear()
            model.status = ModelStatus.READY
            model.captured = False
            return rc, out
        origin_ms = sess.streams[sess.origin]
        for me in model.internal_events:
            model.append(origin_ms, TaskRecord(TaskType.EVENT_RESET, event=me,
                                               event_flag=me.flags))
        model.status = ModelStatus.READY
        self._close_session(sess)
        return OK, (UNWRITTEN if null_model else model)

    def _end_wrong_thread(self, sess: CaptureSession) -> int:
        """CAP-14 / Q-05: every stream leaves capture; the model is kept, READY, not returned.
        The beginning thread's capture mode is released (MODE-03; the fault
        ``wrong-thread-end-leaks-mode`` releases it on the calling thread instead)."""
        if self.has_fault("wrong-thread-end-leaks-mode"):
            self._modes.leak(sess.thread, sess.mode, threading.current_thread())
        sess.model.status = ModelStatus.READY
        self._close_session(sess)
        return int(Err.RT_STREAM_CAPTURE_WRONG_THREAD)

    def _end_check(self, sess: CaptureSession) -> int:
        """The CaptureEnd checks after the status checks, in runtime order: a task group still
        open (TG-07, the group is closed), a sub-model still capturing (COND-09), model-level
        invalidation (STAT-08), unjoined streams (XS-02/03), unrecorded events (XS-06)."""
        open_groups = [g for g in self._grp_open.values() if g.open and g.session is sess]
        for g in open_groups:
            g.open = False
        if open_groups:
            return E_GRP_STATUS
        for other in self._sessions:
            if other is not sess and self._descends(other.model, sess.model):
                return int(Err.RT_SUB_ACLGRAPH_IS_CAPTURING)
        if sess.invalidated:
            return int(Err.RT_STREAM_CAPTURE_INVALIDATED)  # STAT-08
        if not joined_ok(sess, self.has_fault("join-by-user-event")) \
                and not self.has_fault("unjoined-end-accepted"):
            return int(Err.RT_STREAM_UNJOINED)  # XS-02, XS-03
        if unrecorded_event(sess.model):
            return int(Err.RT_CAPTURE_DEPENDENCY)  # XS-06
        return OK

    @staticmethod
    def _descends(model: Any, root: Any) -> bool:
        """Whether ``model`` is a sub-model (at any depth) of ``root``."""
        while isinstance(model, SubModel):
            model = model.parent
            if model is root:
                return True
        return False
