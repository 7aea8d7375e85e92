"""Launch attributes (ATTR): the ``cfg`` of a kernel launch, stored per kernel task record.

A launch's :class:`~backends.contract.LaunchKernelCfg` is validated and kept as a dict
``{attr id: value}`` on the task's record (``TaskRecord.attrs``; ``None`` = no attributes).
SetParams builds a new record, so a SetParams with ``cfg=None`` resets the attributes
(SETP-08) and the query reflects SetParams at once (ATTR-06).

KernelTaskGetAttribute answers SCHEM_MODE, DYN_UBUF_SIZE, DATA_DUMP, TIMEOUT (seconds, uint16)
and TIMEOUT_US (``(low, high)`` µs) (ATTR-02/03). Without a timeout attribute the system default
op timeout :data:`DEFAULT_OP_TIMEOUT_S` is reported; 0 means "never" (ATTR-03). Without a
schedule mode the kernel's own (0, normal) is reported (ATTR-04).
"""

from __future__ import annotations

from typing import Any

from mdlri_conformance.backends.contract import LaunchAttr, LaunchAttrId, LaunchKernelCfg

#: the simulated system default op execution timeout (seconds), reported when none was set
DEFAULT_OP_TIMEOUT_S = 1800
#: attribute ids KernelTaskGetAttribute answers (ATTR-02)
QUERYABLE = frozenset({LaunchAttrId.SCHEM_MODE, LaunchAttrId.DYN_UBUF_SIZE,
                       LaunchAttrId.DATA_DUMP, LaunchAttrId.TIMEOUT, LaunchAttrId.TIMEOUT_US})
_U32 = 0xFFFF_FFFF


def _is_int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def parse_cfg(cfg: Any) -> tuple[bool, dict[int, Any] | None]:
    """(valid, attrs) for a launch cfg; ``None`` cfg is valid with no attributes."""
    if cfg is None:
        return True, None
    if not isinstance(cfg, LaunchKernelCfg):
        return False, None
    attrs: dict[int, Any] = {}
    known = {int(i) for i in LaunchAttrId}
    for a in cfg.attrs:
        if not isinstance(a, LaunchAttr) or not _is_int(a.id) or int(a.id) not in known:
            return False, None
        v = a.value
        if int(a.id) == LaunchAttrId.TIMEOUT_US:
            if not (isinstance(v, tuple) and len(v) == 2 and all(_is_int(x) for x in v)):
                return False, None
            v = (v[0] & _U32, v[1] & _U32)
        elif not _is_int(v):
            return False, None
        attrs[int(a.id)] = v
    if LaunchAttrId.TIMEOUT in attrs and LaunchAttrId.TIMEOUT_US in attrs:
        return False, None  # abi.md §4.6: timeoutUs cannot be combined with timeout
    return True, attrs


def launch_cfg_refused(cfg: Any) -> bool:
    """The kernel-launch cfg checks of the runtime's error decorator (RT-36,
    CheckKernelLaunchCfg, `api/impl/api_error.cc:950-1044`): a cfg whose attribute array is
    NULL (``LaunchKernelCfg([])``, which the C binding passes as attrs NULL), SCHEM_MODE 2 or
    more, BLOCK_TASK_PREFETCH or DATA_DUMP other than 0 or 1, ENABLE_PROFILING above 1 (each
    the uint8 the C union holds; the last of an id wins)."""
    if not isinstance(cfg, LaunchKernelCfg):
        return False
    if not cfg.attrs:
        return True
    last = {int(a.id): a.value for a in cfg.attrs
            if isinstance(a, LaunchAttr) and _is_int(a.id) and _is_int(a.value)}

    def u8(attr_id: int) -> int:
        return int(last.get(attr_id, 0)) & 0xFF

    return (u8(LaunchAttrId.SCHEM_MODE) >= 2
            or u8(LaunchAttrId.BLOCK_TASK_PREFETCH) not in (0, 1)
            or u8(LaunchAttrId.DATA_DUMP) not in (0, 1)
            or u8(LaunchAttrId.ENABLE_PROFILING) > 1)


def timeout_seconds(attrs: dict[int, Any] | None) -> float | None:
    """The op timeout a kernel task runs under (TMO-10): TIMEOUT seconds or TIMEOUT_US
    microseconds; 0 = never (None; the sim has Cap.NEVER_TIMEOUT); no attribute = the system
    default :data:`DEFAULT_OP_TIMEOUT_S`."""
    attrs = attrs or {}
    if LaunchAttrId.TIMEOUT in attrs:
        s = int(attrs[LaunchAttrId.TIMEOUT]) & 0xFFFF
        return None if s == 0 else float(s)
    if LaunchAttrId.TIMEOUT_US in attrs:
        lo, hi = attrs[LaunchAttrId.TIMEOUT_US]
        us = (int(hi) << 32) | int(lo)
        return None if us == 0 else us / 1_000_000
    return float(DEFAULT_OP_TIMEOUT_S)


def query(attrs: dict[int, Any] | None, attr_id: int) -> Any:
    """The value KernelTaskGetAttribute reports (``attr_id`` must be in :data:`QUERYABLE`)."""
    attrs = attrs or {}
    if attr_id == LaunchAttrId.SCHEM_MODE:
        return int(attrs.get(attr_id, 0)) & 0xFF
    if attr_id in (LaunchAttrId.DYN_UBUF_SIZE,):
        return int(attrs.get(attr_id, 0)) & _U32
    if attr_id == LaunchAttrId.DATA_DUMP:
        return int(attrs.get(attr_id, 0)) & 0xFF
    if LaunchAttrId.TIMEOUT in attrs:
        us = (int(attrs[LaunchAttrId.TIMEOUT]) & 0xFFFF) * 1_000_000
    elif LaunchAttrId.TIMEOUT_US in attrs:
        lo, hi = attrs[LaunchAttrId.TIMEOUT_US]
        us = (hi << 32) | lo
    else:
        us = DEFAULT_OP_TIMEOUT_S * 1_000_000
    if attr_id == LaunchAttrId.TIMEOUT:
        if LaunchAttrId.TIMEOUT in attrs:
            return int(attrs[LaunchAttrId.TIMEOUT]) & 0xFFFF
        return min(us // 1_000_000, 0xFFFF)
    return (us & _U32, (us >> 32) & _U32)
