"""Stream API (emulator ``engine.c``): aclrtCreateStream[WithConfig], aclrtDestroyStream,
aclrtSynchronizeStream[WithTimeout], aclrtStreamQuery."""

from __future__ import annotations

import ctypes
from typing import Any

from mdlri_conformance.backends.contract import UNWRITTEN, Err, StreamFlag, StreamStatus

from ..guard import NO_CTX_OUT, guarded
from ..limits import REFUSED
from ..streams import NOT_WITH_DEVICE_USE_ONLY, SYNC_NOOP_FLAGS, SimStream
from .checks import E_HANDLE, E_NULL, E_PARAM, OK, is_int


class StreamsApi:
    """User streams: creation (FLD-06 pool), destruction, sync and query (TMO)."""

    def _new_stream(self, flags: int, priority: int) -> SimStream:
        st = SimStream(flags, priority)
        self._streams.append(st)
        self.engine.attach(st.queue)
        return st

    @guarded(NO_CTX_OUT)
    def create_stream(self) -> tuple[int, Any]:
        """aclrtCreateStream; the stream-resource pool full -> 207008 (FLD-06, R1)."""
        if self._stream_refused():
            return REFUSED, UNWRITTEN
        return OK, self._new_stream(0, 0)

    @guarded(NO_CTX_OUT)
    def create_stream_with_config(self, priority: int, flag: int) -> tuple[int, Any]:
        """aclrtCreateStreamWithConfig: unknown flag bits give an ordinary stream (abi §3.2);
        DEVICE_USE_ONLY with another known flag -> 107000 (RT-24); the stream-resource pool
        full -> 207008 (FLD-06, R1)."""
        if not is_int(priority) or not is_int(flag) or priority < 0 or flag < 0:
            return E_PARAM, UNWRITTEN
        if flag & StreamFlag.DEVICE_USE_ONLY and flag & NOT_WITH_DEVICE_USE_ONLY:
            return E_PARAM, UNWRITTEN
        if self._stream_refused():
            return REFUSED, UNWRITTEN
        return OK, self._new_stream(int(flag), int(priority))

    @guarded()
    def destroy_stream(self, stream: Any) -> int:
        """aclrtDestroyStream: 107027 while capturing (CAP-21); waits for outstanding work
        (at most ``destroy_wait_s``; what is left then is discarded)."""
        if stream is None:
            return E_NULL
        rc, st = self._stream(stream)
        if rc:
            return rc
        if st.capturing:
            return int(Err.RT_STREAM_CAPTURED)
        self._wait_until(lambda: not st.queue.ops, self.destroy_wait_s)
        if not st.alive:
            return E_HANDLE
        self._discard_queue(st.queue)
        self.engine.detach(st.queue)
        st.alive = False
        self._streams.remove(st)
        return OK

    def _sync_checks(self, stream: Any) -> tuple[int, SimStream | None, bool]:
        """Common sync checks: returns (rc, stream, noop)."""
        rc, st = self._stream(stream)
        if rc:
            return rc, None, False
        if st.capturing:
            return int(Err.RT_STREAM_CAPTURED), None, False  # STAT-06
        return OK, st, bool(st.flags & SYNC_NOOP_FLAGS)  # TMO-04

    @guarded()
    def synchronize_stream(self, stream: Any) -> int:
        """aclrtSynchronizeStream: waits forever for the stream's queue to drain; returns a
        pending device error of the stream (507000 plain op, 507011 model execution)."""
        rc, st, noop = self._sync_checks(stream)
        if rc or noop:
            return rc
        self._wait_until(lambda: not st.queue.ops, None)
        return st.queue.take_error()

    @guarded()
    def synchronize_stream_with_timeout(self, stream: Any, timeout_ms: int) -> int:
        """aclrtSynchronizeStreamWithTimeout (TMO-01..04, TMO-07): < -1 -> 107000; 0 is one
        immediate check (the documented meaning, ``acl_rt.h:2817``; the real code's 107000 is
        TMO-08): 0 if the stream has drained, else 507046 at once; expiry -> 507046 with the work
        left queued (it completes later once unblocked). A pending device error of the stream
        (507000, 507011, 507015, 107020) is returned once the stream drains."""
        if not (type(timeout_ms) is int or is_int(timeout_ms)) or timeout_ms < -1:
            return E_PARAM
        # _sync_checks written out (every execution of the generated tier is synced here)
        if type(stream) is SimStream and stream.alive:
            st = stream  # what _stream answers for a live user stream, without the call
        else:
            rc, st = self._stream(stream)  # the stream's own rc first, as _stream
            if rc:
                return rc
        if st.session is not None:
            return int(Err.RT_STREAM_CAPTURED)  # STAT-06
        if st.flags & SYNC_NOOP_FLAGS:
            return OK  # TMO-04
        if timeout_ms == 0 and not self.has_fault("timeout-zero-waits"):
            self._kick()
            if st.queue.ops:
                return self._sync_expired()
            return st.queue.take_error()
        q = st.queue
        if not q.ops:
            # drained already: what waiting would return (the guard runs the device after)
            err, q.error = q.error, 0
            return err
        limit = None if timeout_ms in (-1, 0) else timeout_ms / 1000.0
        if limit is not None and self.has_fault("timeout-early"):
            limit /= 10
        if self.has_fault("timeout-ignored"):
            limit = None
        if not self._wait_until(lambda: not st.queue.ops, limit):
            return self._sync_expired()
        return st.queue.take_error()

    def _sync_expired(self) -> int:
        """The code of an expired timed stream sync: 507046 (TMO-03)."""
        if self.has_fault("stream-sync-timeout-code"):
            return int(Err.RT_EVENT_SYNC_TIMEOUT)
        return int(Err.RT_STREAM_SYNC_TIMEOUT)

    @guarded(NO_CTX_OUT)
    def stream_query(self, stream: Any) -> tuple[int, int]:
        """aclrtStreamQuery: COMPLETE when the queue is empty; 107027 while capturing."""
        if self.has_fault("crash-query"):
            ctypes.string_at(0)  # a real NULL read: SIGSEGV
        rc, st, _ = self._sync_checks(stream)
        if rc:
            return rc, UNWRITTEN
        if self.has_fault("hang-query-sync"):
            self._wait_until(lambda: not st.queue.ops, None)
        return OK, StreamStatus.NOT_READY if st.queue.ops else StreamStatus.COMPLETE
