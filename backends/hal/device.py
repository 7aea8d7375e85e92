"""A ctypes handle on ``libmdlri_hal.so``: the SQ/CQ driver entry points under their real
names (``include/mdlri_hal.h``) and the device's own registry and probes, for tests and tools
that drive the virtual device through its own interface.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from .sqe import CQE_SIZE, SQE_SIZE, Cqe

# drvError_t (pkg_inc/driver/ascend_hal_error.h)
DRV_ERROR_NONE, DRV_ERROR_INVALID_VALUE, DRV_ERROR_BUSY = 0, 3, 13
DRV_ERROR_NO_RESOURCES, DRV_ERROR_WAIT_TIMEOUT, DRV_ERROR_NOT_SUPPORT = 14, 16, 0xFFFE
# drvSqCqType_t, drvSqCqPropType_t (hal_pkg/trs_pkg.h:35-93)
DRV_NORMAL_TYPE, DRV_LOGIC_TYPE = 0, 2
PROP_SQ_STATUS, PROP_SQ_HEAD, PROP_SQ_TAIL, PROP_SQ_REG_BASE, PROP_SQ_DEPTH = 0, 1, 2, 5, 7
PROP_SQE_SIZE, PROP_CQE_SIZE = 13, 14
# allocation flags (ascend_hal_define.h:1093-1101, 1115)
FLAG_REUSE_CQ = 1 << 0
RES_SPECIFIED_ID = 1 << 1
# halMemAlloc's flag: device memory on device 0 (ascend_hal_define.h:704-723)
MEM_DEV = 1 << 10
# drvIdType_t (trs_pkg.h:177-187) and drvResourceType_t (ascend_hal_base.h:4239-4249)
DRV_STREAM_ID, DRV_EVENT_ID, DRV_MODEL_ID, DRV_NOTIFY_ID = 0, 1, 2, 3
DRV_RESOURCE_EVENT_ID, DRV_RESOURCE_SQ_ID = 1, 5
UMAX = 0xFFFFFFFF

U32 = ctypes.c_uint32


class SqCqInput(ctypes.Structure):
    """``struct halSqCqInputInfo`` (trs_pkg.h:45-63)."""

    _fields_ = [("type", ctypes.c_int), ("tsId", U32), ("sqeSize", U32), ("cqeSize", U32),
                ("sqeDepth", U32), ("cqeDepth", U32), ("grpId", U32), ("flag", U32),
                ("cqId", U32), ("sqId", U32), ("info", U32 * 5), ("ext_info_len", U32),
                ("ext_info", ctypes.c_void_p), ("res", U32 * 5)]


class SqCqOutput(ctypes.Structure):
    """``struct halSqCqOutputInfo`` (ascend_hal_define.h:1129-1135)."""

    _fields_ = [("sqId", U32), ("cqId", U32), ("queueVAddr", ctypes.c_ulonglong),
                ("flag", U32), ("res", U32 * 5)]


class SqCqFree(ctypes.Structure):
    """``struct halSqCqFreeInfo`` (trs_pkg.h:65-72)."""

    _fields_ = [("type", ctypes.c_int), ("tsId", U32), ("sqId", U32), ("cqId", U32),
                ("flag", U32), ("res", U32 * 8)]


class SqCqProp(ctypes.Structure):
    """``struct halSqCqQueryInfo`` / ``halSqCqConfigInfo`` (trs_pkg.h:99-115): same layout."""

    _fields_ = [("type", ctypes.c_int), ("tsId", U32), ("sqId", U32), ("cqId", U32),
                ("prop", ctypes.c_int), ("value", U32 * 8)]


class TaskSend(ctypes.Structure):
    """``struct halTaskSendInfo`` (trs_pkg.h:153-162)."""

    _fields_ = [("type", ctypes.c_int), ("tsId", U32), ("sqId", U32), ("timeout", ctypes.c_int32),
                ("sqe_addr", ctypes.c_void_p), ("sqe_num", U32), ("pos", U32), ("res", U32 * 8)]


class ReportRecv(ctypes.Structure):
    """``struct halReportRecvInfo`` (trs_pkg.h:164-175)."""

    _fields_ = [("type", ctypes.c_int), ("tsId", U32), ("cqId", U32),
                ("timeout", ctypes.c_int32), ("cqe_addr", ctypes.c_void_p), ("cqe_num", U32),
                ("report_cqe_num", U32), ("stream_id", U32), ("task_id", U32),
                ("res", U32 * 8)]


class ResourceIdInput(ctypes.Structure):
    """``struct halResourceIdInputInfo`` (trs_pkg.h:191-196)."""

    _fields_ = [("type", ctypes.c_int), ("tsId", U32), ("resourceId", U32), ("res", U32 * 8)]


class ResourceIdOutput(ctypes.Structure):
    """``struct halResourceIdOutputInfo`` (trs_pkg.h:198-201)."""

    _fields_ = [("resourceId", U32), ("res", U32 * 8)]


class ResourceInfo(ctypes.Structure):
    """``struct halResourceInfo`` (ascend_hal_base.h:4250-4254)."""

    _fields_ = [("capacity", U32), ("usedNum", U32), ("reserve", U32 * 2)]


@dataclass(frozen=True)
class Queue:
    """An allocated SQ and the CQ it reports to."""

    sq: int
    cq: int


class HalError(RuntimeError):
    """A driver call answered other than DRV_ERROR_NONE; ``code`` is its drvError_t."""

    def __init__(self, call: str, code: int) -> None:
        super().__init__(f"{call} returned drvError {code}")
        self.code = code


class HalDevice:
    """The virtual device behind ``libmdlri_hal.so`` (device 0, TS 0)."""

    def __init__(self, library: Path) -> None:
        self.lib = ctypes.CDLL(str(library))
        lib = self.lib
        for name, argtypes in (
            ("halSqCqAllocate", [U32, ctypes.POINTER(SqCqInput), ctypes.POINTER(SqCqOutput)]),
            ("halSqCqFree", [U32, ctypes.POINTER(SqCqFree)]),
            ("halSqTaskSend", [U32, ctypes.POINTER(TaskSend)]),
            ("halCqReportRecv", [U32, ctypes.POINTER(ReportRecv)]),
            ("halSqCqQuery", [U32, ctypes.POINTER(SqCqProp)]),
            ("halSqCqConfig", [U32, ctypes.POINTER(SqCqProp)]),
        ):
            fn = getattr(lib, name)
            fn.argtypes, fn.restype = argtypes, ctypes.c_int
        lib.halResourceIdAlloc.argtypes = [U32, ctypes.POINTER(ResourceIdInput),
                                           ctypes.POINTER(ResourceIdOutput)]
        lib.halResourceIdFree.argtypes = [U32, ctypes.POINTER(ResourceIdInput)]
        lib.halResourceInfoQuery.argtypes = [U32, U32, ctypes.c_int, ctypes.POINTER(ResourceInfo)]
        for name in ("halResourceIdAlloc", "halResourceIdFree", "halResourceInfoQuery"):
            getattr(lib, name).restype = ctypes.c_int
        lib.mdlri_hal_kernel_bind.argtypes = [ctypes.c_uint64, ctypes.c_char_p, ctypes.c_char_p]
        lib.mdlri_hal_kernel_bind.restype = ctypes.c_int
        for name in ("mdlri_hal_event_state", "mdlri_hal_notify_state"):
            getattr(lib, name).argtypes, getattr(lib, name).restype = [U32], ctypes.c_int
        lib.mdlri_hal_reset.argtypes, lib.mdlri_hal_reset.restype = [], None
        lib.halMemAlloc.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_uint64,
                                    ctypes.c_uint64]
        lib.halMemFree.argtypes = [ctypes.c_void_p]
        lib.halMemAlloc.restype = lib.halMemFree.restype = ctypes.c_int
        self._blocks: list[int] = []

    # ---- memory ----
    def malloc(self, nbytes: int) -> int:
        """Device memory (halMemAlloc, MEM_DEV): its address, zeroed; freed by :meth:`reset`."""
        ptr = ctypes.c_void_p()
        self._check("halMemAlloc", self.lib.halMemAlloc(ctypes.byref(ptr), nbytes, MEM_DEV))
        assert ptr.value is not None
        ctypes.memset(ptr.value, 0, nbytes)
        self._blocks.append(ptr.value)
        return ptr.value

    def put(self, data: bytes) -> int:
        """``data`` copied into new device memory: its address."""
        at = self.malloc(max(len(data), 1))
        ctypes.memmove(at, data, len(data))
        return at

    # ---- SQ/CQ ----
    def alloc(self, stream_id: int, *, depth: int = 1024, reuse_cq: int | None = None) -> Queue:
        """A normal SQ for ``stream_id`` (info[0]), with a CQ of its own or ``reuse_cq``."""
        inp = SqCqInput(type=DRV_NORMAL_TYPE, sqeSize=SQE_SIZE, cqeSize=12, sqeDepth=depth,
                        cqeDepth=1024)
        inp.info[0] = stream_id
        if reuse_cq is not None:
            inp.flag, inp.cqId = FLAG_REUSE_CQ, reuse_cq
        out = SqCqOutput()
        self._check("halSqCqAllocate", self.lib.halSqCqAllocate(0, inp, out))
        return Queue(out.sqId, out.cqId)

    def free(self, q: Queue) -> int:
        """halSqCqFree of a normal SQ (and its CQ); the drvError."""
        info = SqCqFree(type=DRV_NORMAL_TYPE, sqId=q.sq, cqId=q.cq)
        return int(self.lib.halSqCqFree(0, info))

    def send(self, sq: int, sqes: Sequence[bytes], *, timeout_ms: int = 0) -> tuple[int, int]:
        """halSqTaskSend of ``sqes`` in one call: (drvError, first position)."""
        blob = b"".join(sqes)
        if len(blob) != SQE_SIZE * len(sqes):
            raise ValueError("every SQE is 64 bytes")
        buf = ctypes.create_string_buffer(blob, len(blob))
        info = TaskSend(type=DRV_NORMAL_TYPE, sqId=sq, timeout=timeout_ms,
                        sqe_addr=ctypes.cast(buf, ctypes.c_void_p), sqe_num=len(sqes))
        rc = int(self.lib.halSqTaskSend(0, info))
        return rc, int(info.pos)

    def submit(self, sq: int, *sqes: bytes) -> int:
        """Send, raising :class:`HalError` unless accepted; the first position."""
        rc, pos = self.send(sq, sqes)
        self._check("halSqTaskSend", rc)
        return pos

    def recv(self, cq: int, *, timeout_ms: int, max_cqes: int = 16) -> tuple[int, list[Cqe]]:
        """halCqReportRecv: (drvError, the CQEs received)."""
        buf = ctypes.create_string_buffer(CQE_SIZE * max_cqes)
        info = ReportRecv(type=DRV_LOGIC_TYPE, cqId=cq, timeout=timeout_ms,
                          cqe_addr=ctypes.cast(buf, ctypes.c_void_p), cqe_num=max_cqes,
                          stream_id=UMAX, task_id=UMAX)
        rc = int(self.lib.halCqReportRecv(0, info))
        raw = buf.raw
        return rc, [Cqe.unpack(raw[i * CQE_SIZE:(i + 1) * CQE_SIZE])
                    for i in range(info.report_cqe_num)]

    def collect(self, cq: int, count: int, *, deadline_ms: int = 10000) -> list[Cqe]:
        """Receive until ``count`` CQEs came (each wait bounded by ``deadline_ms``)."""
        got: list[Cqe] = []
        while len(got) < count:
            rc, cqes = self.recv(cq, timeout_ms=deadline_ms, max_cqes=count - len(got))
            self._check("halCqReportRecv", rc)
            got.extend(cqes)
        return got

    def query(self, sq: int, prop: int) -> int:
        """halSqCqQuery's value[0] for ``prop``."""
        info = SqCqProp(type=DRV_NORMAL_TYPE, sqId=sq, prop=prop)
        self._check("halSqCqQuery", self.lib.halSqCqQuery(0, info))
        return int(info.value[0])

    def reg_base(self, sq: int) -> tuple[int, int]:
        """halSqCqQuery SQ_REG_BASE: (address of the SQ's registers, their size); tail at +0x8,
        head at +0x10, enable at +0x14 (npu_driver_res.cc:1198-1202,
        stars_base_cond_isa_define.hpp:16-19)."""
        info = SqCqProp(type=DRV_NORMAL_TYPE, sqId=sq, prop=PROP_SQ_REG_BASE)
        self._check("halSqCqQuery", self.lib.halSqCqQuery(0, info))
        return (int(info.value[0]) << 32) | int(info.value[1]), int(info.value[2])

    def config(self, sq: int, prop: int, value: int) -> int:
        """halSqCqConfig with value[0]; the drvError."""
        info = SqCqProp(type=DRV_NORMAL_TYPE, sqId=sq, prop=prop)
        info.value[0] = value
        return int(self.lib.halSqCqConfig(0, info))

    # ---- id resources ----
    def alloc_id(self, id_type: int, want: int | None = None) -> tuple[int, int]:
        """halResourceIdAlloc: (drvError, id); ``want`` asks for that id."""
        inp = ResourceIdInput(type=id_type)
        if want is not None:
            inp.resourceId = want
            inp.res[1] = RES_SPECIFIED_ID
        out = ResourceIdOutput()
        rc = int(self.lib.halResourceIdAlloc(0, inp, out))
        return rc, int(out.resourceId)

    def free_id(self, id_type: int, resource_id: int) -> int:
        """halResourceIdFree; the drvError."""
        return int(self.lib.halResourceIdFree(0, ResourceIdInput(type=id_type,
                                                                 resourceId=resource_id)))

    def resource_info(self, resource_type: int) -> tuple[int, int]:
        """halResourceInfoQuery: (capacity, used)."""
        info = ResourceInfo()
        self._check("halResourceInfoQuery", self.lib.halResourceInfoQuery(0, 0, resource_type,
                                                                          info))
        return int(info.capacity), int(info.usedNum)

    # ---- ours ----
    def bind_kernel(self, pc: int, library: Path, name: str) -> int:
        """mdlri_hal_kernel_bind: 0, or -1/-2/-3 (library, kernel, registry full)."""
        return int(self.lib.mdlri_hal_kernel_bind(pc, str(library).encode(), name.encode()))

    def event_state(self, event_id: int) -> int:
        """1 when the event is set."""
        return int(self.lib.mdlri_hal_event_state(event_id))

    def notify_state(self, notify_id: int) -> int:
        """1 when the notify is set."""
        return int(self.lib.mdlri_hal_notify_state(notify_id))

    def reset(self) -> None:
        """Stop and free everything (mdlri_hal_reset), and the memory :meth:`malloc` gave."""
        self.lib.mdlri_hal_reset()
        while self._blocks:
            self.lib.halMemFree(self._blocks.pop())

    @staticmethod
    def _check(call: str, rc: int) -> None:
        if rc != DRV_ERROR_NONE:
            raise HalError(call, rc)
