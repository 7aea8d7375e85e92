"""Memory API (emulator ``memory.c``): aclrtMalloc/Free, aclrtMallocHost/FreeHost,
aclrtMemcpy[Async], aclrtMemset[Async]."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from mdlri_conformance.backends.contract import (
    UNWRITTEN, Err, MallocPolicy, MemcpyKind, MemLocationType, PtrAttributes, TaskType,
)

from ..device import MemcpyOp, MemsetOp, Op
from ..guard import NO_CTX, NO_CTX_OUT, guarded
from ..memory import as_bytes_view
from ..model import TaskRecord
from .checks import E_NULL, E_PARAM, OK, is_int


def _zero(count: Any) -> bool:
    """A count of 0: aclrtMemset[Async] (RT-09) and aclrtMemcpy[Async] (RT-18) return
    ACL_SUCCESS at once."""
    return is_int(count) and count == 0


#: aclrtMemcpyKind values the ACL layer translates (HOST_TO_HOST .. HOST_TO_BUF_TO_DEVICE)
_ACL_KINDS = range(6)
_HOST_TO_BUF_TO_DEVICE = 5


def _acl_copy_refused(dst: Any, src: Any, kind: Any) -> bool:
    """The ACL layer's refusal (100000) of aclrtMemcpy[Async] with a count other than 0,
    before the runtime and its context: a NULL pointer, or a kind outside the enum (RT-21:
    MemcpyKindTranslate, `src/acl/aclrt_impl/memory.cpp:162-200`, called at :660 and :695)."""
    return dst is None or src is None or not is_int(kind) or kind not in _ACL_KINDS


def _same_address(dst: Any, src: Any) -> bool:
    """dst and src are one address: equal device addresses, or one host buffer."""
    if is_int(dst) and is_int(src):
        return int(dst) == int(src)
    return isinstance(dst, np.ndarray) and dst is src


def _copy_without_context(a: dict[str, Any]) -> Any:
    if _zero(a["count"]):
        return OK  # RT-18
    return E_NULL if _acl_copy_refused(a["dst"], a["src"], a["kind"]) else NO_CTX


class MemoryApi:
    """Device and pinned host memory, copies and fills (MODE-01, MODE-13/14, CAP-19)."""

    @guarded(NO_CTX_OUT)
    def malloc(self, size: int, policy: int = MallocPolicy.HUGE_FIRST) -> tuple[int, int]:
        """aclrtMalloc: 64-byte aligned, not zeroed; size 0 -> 100000 (RT-07)."""
        if is_int(size) and size == 0:
            return E_NULL, UNWRITTEN
        if not is_int(size) or size < 0 or not is_int(policy) or policy < 0:
            return E_PARAM, UNWRITTEN
        return OK, self.mem.alloc(int(size), "user")

    @guarded(lambda a: E_NULL if a["dev_ptr"] is None else NO_CTX)
    def free(self, dev_ptr: int | None) -> int:
        """aclrtFree: NULL -> 100000, the ACL layer's check, before the context
        (`src/acl/aclrt_impl/memory.cpp:570`, RT-07); an address that is not a live allocation
        start -> 107000."""
        if dev_ptr is None:
            return E_NULL
        if not is_int(dev_ptr):
            return E_PARAM
        alloc = self.mem.find(int(dev_ptr))
        if alloc is None or alloc.base != dev_ptr or alloc.owner != "user":
            return E_PARAM
        self.mem.free(int(dev_ptr))
        return OK

    @guarded(NO_CTX_OUT)
    def malloc_host(self, size: int) -> tuple[int, np.ndarray | None]:
        """aclrtMallocHost: a pinned uint8 buffer; size 0 -> 100000 (RT-07)."""
        if is_int(size) and size == 0:
            return E_NULL, UNWRITTEN
        if not is_int(size) or size < 0:
            return E_PARAM, UNWRITTEN
        return OK, self.pinned.alloc(int(size))

    @guarded(lambda a: E_NULL if a["host"] is None else NO_CTX)
    def free_host(self, host: np.ndarray) -> int:
        """aclrtFreeHost: NULL -> 100000, the ACL layer's check, before the context
        (`src/acl/aclrt_impl/memory.cpp:621`, RT-07); only buffers from malloc_host (others
        -> 107000)."""
        if host is None:
            return E_NULL
        if not self.pinned.free(host):
            return E_PARAM
        return OK

    @guarded(needs_context=False)
    def pointer_get_attributes(self, ptr: Any, *,
                               null_out: bool = False) -> tuple[int, Any]:
        """aclrtPointerGetAttributes: NULL ptr or out -> 100000 (the ACL layer,
        `src/acl/aclrt_impl/memory.cpp:446-453`); a device address DEVICE, aclrtMallocHost
        memory HOST, any other host memory UNREGISTERED (a malloc'd pointer, as the driver
        reports it, `runtime/driver/npu_driver_mem.cc:2040-2085`); no context needed
        (`api/impl/api_impl.cc:3316-3326`)."""
        if ptr is None or null_out:
            return E_NULL, UNWRITTEN
        if isinstance(ptr, np.ndarray):
            kind = MemLocationType.HOST if self.pinned.is_pinned(ptr) \
                else MemLocationType.UNREGISTERED
        elif is_int(ptr) and self.mem.find(int(ptr)) is not None:
            kind = MemLocationType.DEVICE
        else:
            kind = MemLocationType.UNREGISTERED
        return OK, PtrAttributes(0, int(kind), 4096)

    def _run_now(self, make: Callable[[], Op]) -> int:
        """A synchronous copy or fill, an "unsafe" call (MODE-01): 107030 when the calling
        thread's capture mode blocks it (MODE-13), else done at once."""
        if self._unsafe_blocked():
            return int(Err.RT_CAPTURE_MODE_NOT_SUPPORT)
        make().step(self.engine, self.default_stream.queue)
        return OK

    def _endpoint(self, ptr: Any, count: int, writable: bool) -> tuple[int, Any]:
        """Validate one side of a copy: device range or host buffer of >= count bytes."""
        if is_int(ptr):
            if count and not self.mem.valid_range(int(ptr), count):
                return E_PARAM, None
            return OK, int(ptr)
        if isinstance(ptr, np.ndarray):
            flags = ptr.flags  # a new flags object on every access
            if not flags.c_contiguous or ptr.nbytes < count:
                return E_PARAM, None
            if writable and not flags.writeable:
                return E_PARAM, None
            return OK, as_bytes_view(ptr)
        if not writable and isinstance(ptr, (bytes, bytearray, memoryview)):
            view = np.frombuffer(bytes(ptr), dtype=np.uint8)
            return (OK, view) if view.size >= count else (E_PARAM, None)
        return E_PARAM, None

    def _check_copy(self, dst: Any, dest_max: int, src: Any, count: int,
                    kind: int) -> tuple[int, Any, Any, bool]:
        """Shared memcpy checks of a count other than 0 -> (rc, dst endpoint, src endpoint,
        involves pageable host). HOST_TO_BUF_TO_DEVICE, which the ACL layer passes on, is not
        modelled: 107000."""
        if _acl_copy_refused(dst, src, kind):
            return E_NULL, None, None, False
        if not (is_int(dest_max) and is_int(count)):
            return E_PARAM, None, None, False
        if count < 0 or dest_max < 0 or count > dest_max or kind == _HOST_TO_BUF_TO_DEVICE:
            return E_PARAM, None, None, False
        rc, d = self._endpoint(dst, int(count), True)
        if rc:
            return rc, None, None, False
        rc, s = self._endpoint(src, int(count), False)
        if rc:
            return rc, None, None, False
        pageable = ((isinstance(dst, np.ndarray) and not self.pinned.is_pinned(dst))
                    or (isinstance(src, np.ndarray) and not self.pinned.is_pinned(src))
                    or isinstance(src, (bytes, bytearray, memoryview)))
        return OK, d, s, pageable

    @guarded(_copy_without_context)
    def memcpy(self, dst: int | np.ndarray, dest_max: int, src: int | np.ndarray,
               count: int, kind: int) -> int:
        """aclrtMemcpy: synchronous and "unsafe" (MODE-01): 107030 when blocked (MODE-13).
        Count 0 returns 0 before any other check, the context's included
        (`src/acl/aclrt_impl/memory.cpp:653-656`, RT-18). dst == src with a count in
        (0, destMax] returns 0 and copies nothing, whatever the memory and the capture mode
        (RT-31: ApiErrorDecorator::MemCopySync, `api/impl/api_error.cc:2144`, before
        ApiImpl::MemCopySync's capture-mode check, `api/impl/api_impl.cc:2757`)."""
        if _zero(count):
            return OK
        if (not _acl_copy_refused(dst, src, kind) and _same_address(dst, src)
                and is_int(dest_max) and is_int(count) and 0 < count <= dest_max):
            return OK  # RT-31: before the location and capture-mode (MODE-13) checks
        rc, d, s, _ = self._check_copy(dst, dest_max, src, count, kind)
        if rc:
            return rc
        return self._run_now(lambda: MemcpyOp(d, s, int(count)))

    @guarded(_copy_without_context)
    def memcpy_async(self, dst: int | np.ndarray, dest_max: int, src: int | np.ndarray,
                     count: int, kind: int, stream: Any) -> int:
        """aclrtMemcpyAsync. Count 0 returns 0 before any other check and issues nothing
        (`src/acl/aclrt_impl/memory.cpp:688-691`, RT-18). Capturing stream: a DEFAULT task
        reading host memory at execution (CAP-19); pageable host memory -> 107000 (MODE-14).
        Non-capturing stream with pageable memory: done synchronously after the stream
        drains, "unsafe" -> 107041 (MODE-13). A DEVICE_TO_DEVICE copy with dst == src returns
        0 after the copy checks and issues nothing: no task captured, enqueued, stored on a
        bound stream or refused in task-update mode (RT-31: ApiErrorDecorator::MemcpyAsync,
        `api/impl/api_error.cc:2249-2251`, before any task is allocated)."""
        if _zero(count):
            return OK
        rc, d, s, pageable = self._check_copy(dst, dest_max, src, count, kind)
        if rc:
            return rc
        rc, st = self._stream(stream)
        if rc:
            return rc
        if kind == MemcpyKind.DEVICE_TO_DEVICE and _same_address(dst, src):
            return OK  # RT-31: no task, captured or enqueued
        if st.capturing:
            if pageable:
                return E_PARAM
            self._append(st, TaskRecord(TaskType.DEFAULT, default_kind="memcpy", dst=d, src=s,
                                        count=int(count)))
            return OK
        if pageable:
            if self._unsafe_blocked():
                return int(Err.RT_CAPTURE_MODE_BLOCK_ASYNC)
            op = self._enqueue(st, MemcpyOp(d, s, int(count)))
            self._wait_until(lambda: op.done, None)
            return OK
        self._enqueue(st, MemcpyOp(d, s, int(count)))
        return OK

    def _check_memset(self, dev_ptr: Any, max_count: int, value: int,
                      count: int) -> tuple[int, Any]:
        if dev_ptr is None:
            return E_NULL, None
        if not (is_int(max_count) and is_int(count) and is_int(value)):
            return E_PARAM, None
        if count < 0 or max_count < 0 or count > max_count:
            return E_PARAM, None
        return self._endpoint(dev_ptr, int(count), True)

    @guarded(lambda a: OK if _zero(a["count"]) else NO_CTX)
    def memset(self, dev_ptr: int, max_count: int, value: int, count: int) -> int:
        """aclrtMemset: synchronous and "unsafe" (MODE-01, MODE-13 -> 107030). Count 0 returns
        0 before any other check, the context's included: the ACL layer's first test
        (`src/acl/aclrt_impl/memory.cpp:674-677`, RT-09), so a NULL pointer or a blocking
        capture mode does not matter."""
        if _zero(count):
            return OK
        if dev_ptr is None:
            return E_NULL
        if self._unsafe_blocked():
            # the runtime's decorator has no count > maxCount check for the sync memset
            # (`api/impl/api_error.cc:3117-3126`): the capture mode (ApiImpl::MemSetSync,
            # `api/impl/api_impl.cc:3202-3212`) comes before the driver's size check (RT-37)
            return int(Err.RT_CAPTURE_MODE_NOT_SUPPORT)
        rc, d = self._check_memset(dev_ptr, max_count, value, count)
        if rc:
            return rc
        return self._run_now(lambda: MemsetOp(d, int(value), int(count)))

    @guarded(lambda a: OK if _zero(a["count"]) else NO_CTX)
    def memset_async(self, dev_ptr: int, max_count: int, value: int, count: int,
                     stream: Any) -> int:
        """aclrtMemsetAsync: captured as a DEFAULT task (TYPE-02). Count 0 returns 0 before any
        other check and issues nothing, not even on a capturing stream: the ACL layer's first
        test (`src/acl/aclrt_impl/memory.cpp:742-745`, RT-09)."""
        if _zero(count):
            return OK
        rc, d = self._check_memset(dev_ptr, max_count, value, count)
        if rc:
            return rc
        rc, st = self._stream(stream)
        if rc:
            return rc
        if st.capturing:
            n = int(count)
            if n % 2 and self.has_fault("memset-odd-count-short"):
                n -= 1  # RT-45 broken: the captured task fills 16-bit units
            self._append(st, TaskRecord(TaskType.DEFAULT, default_kind="memset", dst=d,
                                        fill=int(value), count=n))
        else:
            self._enqueue(st, MemsetOp(d, int(value), int(count)))
        return OK
