"""Conversions between contract values and ctypes: handles, sentinels, task params, host memory.

* Handles are :class:`Handle` objects around the C pointer, interned per pointer so the same
  C handle is the same Python object (``is`` and ``==`` both hold), and NULL is ``None``.
* Out-parameters and array slots are prefilled with a sentinel before the call; a slot still
  holding it afterwards was not written (:data:`~backends.contract.UNWRITTEN`).
* :func:`params_to_c` / :func:`params_from_c` map :class:`backends.contract.TaskParams` to and
  from ``aclmdlRITaskParams``, reserved fields and the union bytes past the member included.
"""

from __future__ import annotations

import ctypes
import threading
import weakref
from typing import Any

import numpy as np

from mdlri_conformance.backends.contract import (UNION_MEMBER_SIZE, UNION_SIZE, UNWRITTEN, EventRecordTaskParams,
                               EventResetTaskParams, EventWaitTaskParams, KernelTaskParams,
                               LaunchAttr, LaunchAttrId, LaunchKernelCfg, TaskParams, TaskType,
                               ValueWaitTaskParams, ValueWriteTaskParams)

from . import structs as S

#: prefill of pointer out-params and array slots: non-canonical on x86_64 and aarch64, so no
#: runtime ever returns it as a real pointer
PTR_SENTINEL = 0xDEAD_BEEF_0BAD_F00D
#: prefill of 32-bit out-params (enums, counts, ids)
U32_SENTINEL = 0xA5A5_A5A5
#: prefill byte of out-structs (aclmdlRITaskParams for GetParams)
BYTE_SENTINEL = 0xA5
U32 = 0xFFFF_FFFF
U64 = 0xFFFF_FFFF_FFFF_FFFF


class Handle:
    """An opaque C handle (``void*``); equal when the pointers are equal."""

    __slots__ = ("ptr", "kind", "__weakref__")

    def __init__(self, ptr: int, kind: str) -> None:
        self.ptr = ptr
        self.kind = kind

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Handle):
            return self.ptr == other.ptr
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.ptr)

    def __int__(self) -> int:
        return self.ptr

    def __repr__(self) -> str:
        return f"<acl {self.kind} 0x{self.ptr:x}>"


_handles: "weakref.WeakValueDictionary[int, Handle]" = weakref.WeakValueDictionary()
_handles_lock = threading.Lock()


def handle(ptr: int | None, kind: str) -> Handle | None:
    """The interned handle of a C pointer (None for NULL)."""
    if not ptr:
        return None
    with _handles_lock:
        h = _handles.get(ptr)
        if h is None:
            h = Handle(ptr, kind)
            _handles[ptr] = h
        return h


def out_handle(ptr: int | None, kind: str) -> Any:
    """An out-parameter pointer: UNWRITTEN if it still holds the sentinel."""
    if ptr == PTR_SENTINEL:
        return UNWRITTEN
    return handle(ptr, kind)


def out_size(value: int) -> Any:
    """A ``size_t`` out-parameter prefilled with :data:`PTR_SENTINEL`: UNWRITTEN if it still
    holds it."""
    return UNWRITTEN if value == PTR_SENTINEL else value


def out_u32(value: int) -> Any:
    """A 32-bit out-parameter: UNWRITTEN if it still holds the sentinel."""
    return UNWRITTEN if (value & U32) == U32_SENTINEL else value


def as_ptr(value: Any) -> int | None:
    """A handle, device address or NULL as a C pointer value (None is NULL)."""
    if value.__class__ is Handle:  # the common case first: one type test per call
        return value.ptr
    if value is None:
        return None
    if isinstance(value, Handle):
        return value.ptr
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return int(value) & U64 or None
    if isinstance(value, np.ndarray):
        return value.ctypes.data
    raise TypeError(f"not a handle or address: {value!r}")


def out_map(enum_cls: Any, sentinel: int) -> dict[int, Any]:
    """Raw out-parameter value -> what the contract returns, made once at load: each
    enumerator of ``enum_cls`` to its member, ``sentinel`` (the prefill as the out's C type
    reads it back) to UNWRITTEN; look up with ``.get(v, v)`` so an unknown value stays the
    raw int (what ``enum_cls(v)`` falling back to ``v`` gives)."""
    table: dict[int, Any] = {int(m): m for m in enum_cls}
    table[sentinel] = UNWRITTEN
    return table


#: :data:`U32_SENTINEL` as a signed ``c_int`` out reads it back
I32_SENTINEL = U32_SENTINEL - (1 << 32)


class KeepAlive(list):
    """Host buffers that must outlive a call (or the model that recorded their address)."""

    def buffer(self, data: Any, min_size: int = 0) -> int | None:
        """The address of ``data`` (bytes-like or numpy) kept alive; ints pass through."""
        if data is None:
            return None
        if isinstance(data, np.ndarray):
            arr = np.ascontiguousarray(data)
            self.append(arr)
            return arr.ctypes.data
        if isinstance(data, (bytes, bytearray, memoryview)):
            raw = bytes(data)
            buf = ctypes.create_string_buffer(raw, max(len(raw), int(min_size), 1))
            self.append(buf)
            return ctypes.addressof(buf)
        if isinstance(data, ctypes.Structure):
            self.append(data)
            return ctypes.addressof(data)
        return as_ptr(data)


# ---------------------------------------------------------------------------------------------
# task params


def _set_bytes(arr: Any, data: Any) -> None:
    raw = bytes(data)[:len(arr)]
    ctypes.memmove(arr, raw, len(raw))


def _size(ttype: int) -> int:
    try:
        return UNION_MEMBER_SIZE[TaskType(ttype)]
    except (ValueError, KeyError):
        return 0


def params_to_c(p: TaskParams, keep: KeepAlive) -> S.TaskParams:
    """``aclmdlRITaskParams`` for SetParams: every field of ``p``; only the member named by
    ``type`` is written into the union, after the ``union_tail`` bytes past it."""
    c = S.TaskParams()
    c.type = int(p.type) & U32 if int(p.type) >= 0 else int(p.type)
    for i, v in enumerate(tuple(p.rsv0)[:3]):
        c.rsv0[i] = int(v) & U32
    c.taskGrp = as_ptr(p.task_grp)
    c.opInfoPtr = keep.buffer(p.op_info_ptr)
    c.opInfoSize = int(p.op_info_size or 0) & U64
    _set_bytes(c.rsv1, p.rsv1 or b"")
    size = _size(p.type)
    tail = bytes(p.union_tail or b"")[:UNION_SIZE - size]
    ctypes.memmove(ctypes.addressof(c.u) + size, tail, len(tail))
    member = p.member()
    if member is None:
        return c
    if isinstance(member, KernelTaskParams):
        k = c.kernelTaskParams
        k.funcHandle = as_ptr(member.func_handle)
        k.cfg = keep.buffer(cfg_to_c(member.cfg, keep) if isinstance(member.cfg, LaunchKernelCfg)
                            else member.cfg)
        k.args = keep.buffer(member.args, member.args_size or 0)
        k.isHostArgs = int(member.is_host_args) & U32
        k.argsSize = int(member.args_size) & U64
        k.numBlocks = int(member.num_blocks) & U32
        for i, v in enumerate(tuple(member.rsv)[:10]):
            k.rsv[i] = int(v) & U32
    elif isinstance(member, (EventRecordTaskParams, EventWaitTaskParams, EventResetTaskParams)):
        e = getattr(c, S.UNION_MEMBER[int(p.type)])
        e.event = as_ptr(member.event)
        e.eventFlag = int(member.event_flag) & U32
        third = {EventRecordTaskParams: ("recordFlag", "record_flag"),
                 EventWaitTaskParams: ("waitFlag", "wait_flag"),
                 EventResetTaskParams: ("resetFlag", "reset_flag")}[type(member)]
        setattr(e, third[0], int(getattr(member, third[1])) & U32)
    elif isinstance(member, ValueWaitTaskParams):
        v = c.valueWaitTaskParams
        v.devAddr, v.value, v.flag = as_ptr(member.dev_addr), int(member.value) & U64, \
            int(member.flag) & U32
    elif isinstance(member, ValueWriteTaskParams):
        v = c.valueWriteTaskParams
        v.devAddr, v.value = as_ptr(member.dev_addr), int(member.value) & U64
    return c


def params_from_c(c: S.TaskParams) -> TaskParams:
    """A :class:`TaskParams` holding every field of a C ``aclmdlRITaskParams``."""
    raw = c.type & U32
    try:
        ttype: int = TaskType(raw)
    except ValueError:
        ttype = raw
    size = _size(ttype)
    union = bytes(c.u.rsv2)
    p = TaskParams(type=ttype, rsv0=tuple(c.rsv0), task_grp=handle(c.taskGrp, "taskgrp"),
                   op_info_ptr=c.opInfoPtr or None, op_info_size=c.opInfoSize,
                   rsv1=bytes(c.rsv1), union_tail=union[size:])
    if ttype == TaskType.KERNEL:
        k = c.kernelTaskParams
        p.kernel = KernelTaskParams(func_handle=handle(k.funcHandle, "func"), cfg=k.cfg or None,
                                    args=k.args or None, is_host_args=k.isHostArgs,
                                    args_size=k.argsSize, num_blocks=k.numBlocks,
                                    rsv=tuple(k.rsv))
    elif ttype == TaskType.EVENT_RECORD:
        e = c.eventRecordTaskParams
        p.event_record = EventRecordTaskParams(handle(e.event, "event"), e.eventFlag,
                                               e.recordFlag)
    elif ttype == TaskType.EVENT_WAIT:
        e = c.eventWaitTaskParams
        p.event_wait = EventWaitTaskParams(handle(e.event, "event"), e.eventFlag, e.waitFlag)
    elif ttype == TaskType.EVENT_RESET:
        e = c.eventResetTaskParams
        p.event_reset = EventResetTaskParams(handle(e.event, "event"), e.eventFlag, e.resetFlag)
    elif ttype == TaskType.VALUE_WRITE:
        v = c.valueWriteTaskParams
        p.value_write = ValueWriteTaskParams(v.devAddr or None, v.value)
    elif ttype == TaskType.VALUE_WAIT:
        w = c.valueWaitTaskParams
        p.value_wait = ValueWaitTaskParams(w.devAddr or None, w.value, w.flag)
    return p


def sentinel_params() -> S.TaskParams:
    """An ``aclmdlRITaskParams`` whose every byte is :data:`BYTE_SENTINEL`."""
    c = S.TaskParams()
    ctypes.memset(ctypes.addressof(c), BYTE_SENTINEL, ctypes.sizeof(c))
    return c


def untouched(c: ctypes.Structure) -> bool:
    """Whether an out-struct prefilled by :func:`sentinel_params` was left alone."""
    return bytes(c) == bytes([BYTE_SENTINEL]) * ctypes.sizeof(c)


# ---------------------------------------------------------------------------------------------
# launch attributes (abi.md §4.6)

#: aclrtLaunchKernelAttrValue member per attribute id (TIMEOUT_US is the two-field struct)
ATTR_MEMBER: dict[int, tuple[str, int]] = {
    LaunchAttrId.SCHEM_MODE: ("schemMode", 0xFF),
    LaunchAttrId.DYN_UBUF_SIZE: ("dynUBufSize", U32),
    LaunchAttrId.ENGINE_TYPE: ("engineType", U32),
    LaunchAttrId.BLOCKDIM_OFFSET: ("blockDimOffset", U32),
    LaunchAttrId.BLOCK_TASK_PREFETCH: ("isBlockTaskPrefetch", 0xFF),
    LaunchAttrId.DATA_DUMP: ("isDataDump", 0xFF),
    LaunchAttrId.TIMEOUT: ("timeout", 0xFFFF),
    LaunchAttrId.ENABLE_PROFILING: ("enableProfiling", 0xFF),
}


def attr_value_to_c(attr_id: int, value: Any, out: S.LaunchKernelAttrValue) -> None:
    """Write ``value`` (a :class:`LaunchAttr` value) into the union member ``attr_id`` selects;
    the rest of the 16 bytes stays 0. An unknown id writes ``rsv[0]``."""
    if int(attr_id) == LaunchAttrId.TIMEOUT_US:
        low, high = value if isinstance(value, tuple) else (int(value) & U32, int(value) >> 32)
        out.timeoutUs.timeoutLow, out.timeoutUs.timeoutHigh = int(low) & U32, int(high) & U32
        return
    member = ATTR_MEMBER.get(int(attr_id))
    if member is None:
        out.rsv[0] = int(value if not isinstance(value, tuple) else value[0]) & U32
    else:
        setattr(out, member[0], int(value) & member[1])


def attr_value_from_c(attr_id: int, v: S.LaunchKernelAttrValue) -> Any:
    """The :class:`LaunchAttr` value of the member ``attr_id`` selects."""
    if int(attr_id) == LaunchAttrId.TIMEOUT_US:
        return (v.timeoutUs.timeoutLow, v.timeoutUs.timeoutHigh)
    member = ATTR_MEMBER.get(int(attr_id))
    return getattr(v, member[0]) if member else v.rsv[0]


def cfg_to_c(cfg: LaunchKernelCfg, keep: KeepAlive) -> S.LaunchKernelCfg:
    """An ``aclrtLaunchKernelCfg`` over a kept-alive array of 20-byte attributes."""
    attrs: list[LaunchAttr] = list(cfg.attrs)
    arr = (S.LaunchKernelAttr * max(len(attrs), 1))()
    for i, a in enumerate(attrs):
        arr[i].id = int(a.id) & U32
        attr_value_to_c(a.id, a.value, arr[i].value)
    keep.append(arr)
    c = S.LaunchKernelCfg()
    c.attrs = ctypes.cast(arr, ctypes.POINTER(S.LaunchKernelAttr)) if attrs else None
    c.numAttrs = len(attrs)
    keep.append(c)
    return c
