"""The backend contract: what every implementation of the Model RI API offers the specs.

One method per C function of the task-level API (and what the specs need around it),
named the snake_case of the C name with its ``aclmdlRI`` / ``aclrt`` / ``acl`` prefix
dropped, taking the C arguments in C order, and returning the ``aclError`` integer first
and the out-parameters after it::

    rc, model = b.capture_end(stream)
    rc, tasks, n = b.get_tasks_by_stream(stream, capacity)

API errors are return codes, never exceptions: the specs assert exact codes and what the
out-parameters hold on failure. Exceptions are for harness faults only.

Conventions shared by every backend:

* Handles (streams, events, models, tasks, task groups, binaries, functions) are opaque
  Python values compared with ``==``; ``None`` is NULL.
* Device memory is addressed by plain ``int`` 64-bit device addresses.
* Host memory is a numpy array (C-contiguous); counts are in bytes, as in C.
* An out-parameter the call did not write comes back as :data:`UNWRITTEN`. Every array
  out-parameter (``streams[]``, ``tasks[]``) is a list of ``capacity`` slots that the harness
  prefilled with :data:`UNWRITTEN` before the call, so "the tail was set to NULL" and
  "the tail was left alone" are distinguishable.
* A NULL out-pointer is requested with the ``null_*`` keyword of the method; the value
  returned in that position is then :data:`UNWRITTEN`.
* Kernel arguments are the packed bytes of the kernel's argument struct (see
  :mod:`kernel.catalog`), exactly what ``aclrtLaunchKernelWithHostArgs`` receives.

Values of every enum, flag and error code below come from ``acl_rt.h`` /
``rt_error_codes.h`` (see shared/ref/abi.md §4-§5).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np

# ---------------------------------------------------------------------------------------------
# Sentinels


class _Unwritten:
    """Marks an out-parameter (or an array slot) the backend left untouched."""

    _instance: "_Unwritten | None" = None

    def __new__(cls) -> "_Unwritten":
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "UNWRITTEN"

    def __bool__(self) -> bool:
        return False

    def __reduce__(self) -> str:
        return "UNWRITTEN"


UNWRITTEN: Any = _Unwritten()

# ---------------------------------------------------------------------------------------------
# Error codes (aclError)


class BackendConfigError(Exception):
    """A backend factory (or its ``preflight``) was given options it cannot use: a library
    path that names no runtime, a device the runtime does not have, a fault it cannot apply in
    this process. The message is one line; the suite reports it as an input error (exit 2).

    A backend that loads but cannot run (no runtime found by discovery, the emulator failed to
    build) does not raise: it reports ``unsupported_reason(None)`` and the run tests nothing."""


class Err(enum.IntEnum):
    """``aclError`` values used by the Model RI API (abi.md §5.1)."""

    SUCCESS = 0
    INVALID_PARAM = 100000          # ACL-layer NULL check
    UNINITIALIZE = 100001
    REPEAT_INITIALIZE = 100002
    RT_PARAM_INVALID = 107000       # runtime-layer check
    RT_INVALID_DEVICEID = 107001
    RT_CONTEXT_NULL = 107002
    RT_STREAM_CONTEXT = 107003
    RT_MODEL_CONTEXT = 107004
    RT_STREAM_MODEL = 107005
    RT_INVALID_HANDLE = 107017
    RT_WAIT_TIMEOUT = 107019
    RT_TASK_TIMEOUT = 107020        # a device-side task timeout (completion with the timeout bit)
    RT_CAPTURE_DEPENDENCY = 107024
    RT_STREAM_UNJOINED = 107025
    RT_MODEL_CAPTURED = 107026
    RT_STREAM_CAPTURED = 107027
    RT_EVENT_CAPTURED = 107028
    RT_STREAM_NOT_CAPTURED = 107029
    RT_CAPTURE_MODE_NOT_SUPPORT = 107030
    RT_STREAM_CAPTURE_IMPLICIT = 107031
    STREAM_CAPTURE_CONFLICT = 107032
    STREAM_TASK_GROUP_STATUS = 107033
    STREAM_TASK_GROUP_INTR = 107034
    RT_STREAM_CAPTURE_UNMATCHED = 107036
    RT_MODEL_RUNNING = 107037
    RT_STREAM_CAPTURE_WRONG_THREAD = 107038
    RT_INSUFFICIENT_INPUT_ARRAY = 107039
    RT_MODEL_UPDATE_FAILED = 107040
    RT_CAPTURE_MODE_BLOCK_ASYNC = 107041
    RT_SUB_ACLGRAPH_IS_CAPTURING = 107045
    RT_FEATURE_NOT_SUPPORT = 207000
    RT_MEMORY_ALLOCATION = 207001
    RT_RESOURCE_ALLOC_FAIL = 207005      # a driver "no resources" (SQ/CQ) refusal (FLD-06..08)
    RT_NO_STREAM_RESOURCE = 207008
    RT_NO_MODEL_RESOURCE = 207010
    RT_OVER_LIMIT = 207012
    RT_FEATURE_NOT_SUPPORT_UPDATE_OP = 207019   # driver/firmware cannot update this op
    RT_INTERNAL_ERROR = 507000
    RT_STREAM_TASK_FULL = 507002
    RT_TASK_TYPE_NOT_SUPPORT = 507009
    RT_MODEL_EXECUTE = 507011
    RT_AICORE_TIMEOUT = 507014
    RT_AICORE_EXCEPTION = 507015
    RT_STREAM_SYNC_TIMEOUT = 507046
    RT_EVENT_SYNC_TIMEOUT = 507047
    RT_STREAM_CAPTURE_INVALIDATED = 507903


def err_name(rc: int) -> str:
    """``107039`` -> ``"107039 (RT_INSUFFICIENT_INPUT_ARRAY)"``; unknown codes print bare.

    An rc carrying a ``detail`` string (the ``acl`` backend's ``aclGetRecentErrMsg`` text or
    missing-symbol reason) has it appended after a colon."""
    detail = getattr(rc, "detail", "")
    suffix = f": {detail}" if detail else ""
    try:
        return f"{int(rc)} ({Err(rc).name}){suffix}"
    except (ValueError, TypeError):
        return f"{int(rc) if isinstance(rc, int) else rc}{suffix}"


# ---------------------------------------------------------------------------------------------
# Enums (4-byte C enums)


class TaskType(enum.IntEnum):
    """``aclmdlRITaskType`` (TYPE-01)."""

    DEFAULT = 0
    KERNEL = 1
    EVENT_RECORD = 2
    EVENT_WAIT = 3
    EVENT_RESET = 4
    VALUE_WRITE = 5
    VALUE_WAIT = 6


class CaptureMode(enum.IntEnum):
    """``aclmdlRICaptureMode``."""

    GLOBAL = 0
    THREAD_LOCAL = 1
    RELAXED = 2


class CaptureStatus(enum.IntEnum):
    """``aclmdlRICaptureStatus``."""

    NONE = 0
    ACTIVE = 1
    INVALIDATED = 2


class MemcpyKind(enum.IntEnum):
    """``aclrtMemcpyKind``."""

    HOST_TO_HOST = 0
    HOST_TO_DEVICE = 1
    DEVICE_TO_HOST = 2
    DEVICE_TO_DEVICE = 3
    DEFAULT = 4


class MallocPolicy(enum.IntEnum):
    """``aclrtMemMallocPolicy`` (the values the suite uses)."""

    HUGE_FIRST = 0
    HUGE_ONLY = 1
    NORMAL_ONLY = 2


class StreamFlag(enum.IntFlag):
    """``ACL_STREAM_*`` flags of ``aclrtCreateStreamWithConfig``."""

    NONE = 0
    FAST_LAUNCH = 0x1
    FAST_SYNC = 0x2
    PERSISTENT = 0x4
    HUGE = 0x8
    CPU_SCHEDULE = 0x10
    DEVICE_USE_ONLY = 0x20


class EventFlag(enum.IntFlag):
    """``ACL_EVENT_*`` creation flags."""

    NONE = 0
    SYNC = 0x1
    CAPTURE_STREAM_PROGRESS = 0x2
    TIME_LINE = 0x8
    DEVICE_USE_ONLY = 0x10
    EXTERNAL = 0x20
    IPC = 0x40


class EventRecordFlag(enum.IntEnum):
    """``ACL_EVENT_RECORD_*`` (aclrtRecordEventWithFlag)."""

    DEFAULT = 0
    EXTERNAL = 1


class EventWaitFlag(enum.IntEnum):
    """``ACL_EVENT_WAIT_*`` (aclrtStreamWaitEventWithFlag)."""

    DEFAULT = 0
    EXTERNAL = 1


class ValueWaitFlag(enum.IntEnum):
    """``ACL_STREAM_WAIT_VALUE_*`` modes of ``aclrtValueWait``."""

    GEQ = 0
    EQ = 1
    AND = 2
    NOR = 3


class StreamStatus(enum.IntEnum):
    """``aclrtStreamStatus``."""

    COMPLETE = 0
    NOT_READY = 1


# Timeouts (ms) with special meaning for aclrtSynchronizeStreamWithTimeout (TMO-01).
WAIT_FOREVER = -1

# ---------------------------------------------------------------------------------------------
# Task parameters: a field-for-field mirror of aclmdlRITaskParams (abi.md §4.1-§4.4)


@dataclass
class KernelTaskParams:
    """``aclmdlRIKernelTaskParams`` (88 bytes).

    ``args`` is a device address (``int``) when ``is_host_args == 0`` and host bytes
    (``bytes``) when ``is_host_args == 1``; ``None`` is NULL.
    """

    func_handle: Any = None
    cfg: Any = None
    args: int | bytes | None = None
    is_host_args: int = 0
    args_size: int = 0
    num_blocks: int = 0
    rsv: tuple[int, ...] = (0,) * 10


@dataclass
class EventRecordTaskParams:
    """``aclmdlRIEventRecordTaskParams`` (16 bytes)."""

    event: Any = None
    event_flag: int = 0
    record_flag: int = 0


@dataclass
class EventWaitTaskParams:
    """``aclmdlRIEventWaitTaskParams`` (16 bytes)."""

    event: Any = None
    event_flag: int = 0
    wait_flag: int = 0


@dataclass
class EventResetTaskParams:
    """``aclmdlRIEventResetTaskParams`` (16 bytes)."""

    event: Any = None
    event_flag: int = 0
    reset_flag: int = 0


@dataclass
class ValueWriteTaskParams:
    """``aclmdlRIValueWriteTaskParams`` (16 bytes)."""

    dev_addr: int | None = None
    value: int = 0


@dataclass
class ValueWaitTaskParams:
    """``aclmdlRIValueWaitTaskParams`` (24 bytes)."""

    dev_addr: int | None = None
    value: int = 0
    flag: int = 0


UNION_MEMBER_SIZE = {
    TaskType.KERNEL: 88,
    TaskType.EVENT_RECORD: 16,
    TaskType.EVENT_WAIT: 16,
    TaskType.EVENT_RESET: 16,
    TaskType.VALUE_WRITE: 16,
    TaskType.VALUE_WAIT: 24,
}
UNION_SIZE = 128


@dataclass
class TaskParams:
    """``aclmdlRITaskParams`` (200 bytes, anonymous union at offset 72).

    Exactly one union member is meaningful, the one named by ``type``; the others stay
    ``None``. ``union_tail`` holds the union bytes past the active member (what GETP-02 says
    reads 0 after GetParams), ``rsv0``/``rsv1`` the reserved fields.
    """

    type: int = TaskType.DEFAULT
    rsv0: tuple[int, int, int] = (0, 0, 0)
    task_grp: Any = None
    op_info_ptr: Any = None
    op_info_size: int = 0
    rsv1: bytes = bytes(32)
    kernel: KernelTaskParams | None = None
    event_record: EventRecordTaskParams | None = None
    event_wait: EventWaitTaskParams | None = None
    event_reset: EventResetTaskParams | None = None
    value_write: ValueWriteTaskParams | None = None
    value_wait: ValueWaitTaskParams | None = None
    union_tail: bytes = b""

    def member(self) -> Any:
        """The union member selected by ``type`` (``None`` for DEFAULT or unknown types)."""
        return {
            TaskType.KERNEL: self.kernel,
            TaskType.EVENT_RECORD: self.event_record,
            TaskType.EVENT_WAIT: self.event_wait,
            TaskType.EVENT_RESET: self.event_reset,
            TaskType.VALUE_WRITE: self.value_write,
            TaskType.VALUE_WAIT: self.value_wait,
        }.get(self.type)


# ---------------------------------------------------------------------------------------------
# Capabilities


class Cap(str, enum.Enum):
    """What a backend may or may not implement. A spec needing an absent one is UNSUPPORTED."""

    CAPTURE = "capture"                  # CaptureBegin/End/GetInfo
    CAPTURE_MODES = "capture_modes"      # unsafe-call blocking per mode, ThreadExchangeMode
    CROSS_STREAM = "cross_stream"        # fork/join through events during capture
    LISTING = "listing"                  # GetStreams, GetTasksByStream
    TASK_TYPE = "task_type"
    SEQ_ID = "seq_id"
    GET_PARAMS = "get_params"
    SET_PARAMS = "set_params"
    DISABLE = "disable"
    UPDATE = "update"
    VALUE_TASKS = "value_tasks"          # aclrtValueWrite / aclrtValueWait
    KERNELS = "kernels"                  # binary load + launch with host args
    SYNC_TIMEOUT = "sync_timeout"        # aclrtSynchronizeStreamWithTimeout
    THREADS = "threads"                  # calls from several host threads
    HANDLE_VALIDATION = "handle_validation"  # stale handles -> 107017 (LIFE-06/08, Q-01)
    INTERNAL_TASKS = "internal_tasks"    # EVENT_RESET at CaptureEnd, NOP after Update (impl.)

    # what the runtime can show, measured by conformance.probe when the backend starts;
    # a backend may also leave them out of its declared capabilities
    DATA_MOVEMENT = "data_movement"      # memcpy H2D then D2H round-trips the bytes
    KERNEL_EXEC = "kernel_exec"          # a catalog kernel writes its output
    BLOCKING_WAIT = "blocking_wait"      # a captured value-wait on an unset word blocks
    # aclrtPointerGetAttributes tells a malloc'd host pointer (UNREGISTERED) from pinned and
    # device memory: the only way the runtime finds pageable memory, and refuses its async
    # copies (MODE-13, MODE-14, FLD-03; api_error.cc:2256-2259, 2610-2624, 2789-2855)
    PAGEABLE_DETECTION = "pageable_detection"

    # behaviours seen in the field that a backend must be able to provoke (FLD group,
    # conformance/specs/test_field.py); not in ALL_CAPS: a backend declares them explicitly.
    #
    # DEVICE_FAULTS: the catalog kernel ``trap_if`` (args {int32_t *flag}) raises an AI Core
    #   exception when flag[0] != 0 and does nothing otherwise (FLD-09 eager: 507015 once on the
    #   stream; FLD-10 in a replay: 507011 once on the execute stream). A host kernel library
    #   shows it with ``int trap_if__fault(const void *args, size_t args_size)``.
    # RESOURCE_LIMITS: stream resources can be exhausted on purpose. The FLD specs read two
    #   optional backend attributes with getattr:
    #     ``stream_limit: int`` -- how many streams (user + capture-internal) the backend hands
    #       out before refusing with 207008 / 207005; the bound of the specs' fill loop;
    #     ``model_stream_limit: int | None`` -- the software-SQ pool of one captured model at
    #       ExecuteAsync (207005 when a model has more streams, FLD-08); None: not modelled.
    DEVICE_FAULTS = "device_faults"      # a catalog kernel that raises an AI Core exception
    RESOURCE_LIMITS = "resource_limits"  # SQ/CQ/stream exhaustion can be provoked during capture

    # the rest of the Model RI API (see ExtendedBackend)
    TASK_GROUPS = "task_groups"          # CaptureTaskGrpBegin/End, CaptureTaskUpdateBegin/End
    BUILD = "build"                      # BuildBegin, BindStream, EndTask, BuildEnd, UnbindStream, Execute
    COND = "cond"                        # CondHandleCreate/GetCondPtr, AddCondTask, CaptureToModelRIBegin
    NAMES = "names"                      # SetName, GetName, GetId
    DEBUG_JSON = "debug_json"            # DebugJsonPrint
    DEBUG_PRINT = "debug_print"          # DebugPrint (deprecated in the header: may be absent)
    CALLBACKS = "callbacks"              # DestroyRegisterCallback / DestroyUnregisterCallback
    ATTRIBUTES = "attributes"            # launch attributes (cfg) + KernelTaskGetAttribute
    ABORT = "abort"                      # aclmdlRIAbort
    EXTERNAL_EVENTS = "external_events"  # aclrtRecordEventWithFlag / StreamWaitEventWithFlag (XS-10)
    NEVER_TIMEOUT = "never_timeout"      # launch TIMEOUT 0 means "never" (needs TS firmware support)
    STREAM_SWITCH = "stream_switch"      # aclrtActiveStream, aclrtSwitchStream (bound streams)
    LABELS = "labels"                    # aclrtCreateLabel/SetLabel/CreateLabelList/SwitchLabelByIndex


#: capabilities the probe measures at backend start (conformance.probe)
PROBED_CAPS: frozenset[Cap] = frozenset({Cap.DATA_MOVEMENT, Cap.KERNEL_EXEC, Cap.BLOCKING_WAIT,
                                         Cap.PAGEABLE_DETECTION})
#: feature-not-supported codes: met anywhere, they make a spec UNSUPPORTED (chip, driver or
#: firmware gate), never FAIL, ERROR or CHANGED
NOT_SUPPORTED_CODES: frozenset[int] = frozenset({Err.RT_FEATURE_NOT_SUPPORT,
                                                 Err.RT_FEATURE_NOT_SUPPORT_UPDATE_OP})

#: the extended capabilities (the rest of the Model RI API, :class:`ExtendedBackend`)
EXTENDED_CAPS: frozenset[Cap] = frozenset({
    Cap.TASK_GROUPS, Cap.BUILD, Cap.COND, Cap.NAMES, Cap.DEBUG_JSON, Cap.DEBUG_PRINT,
    Cap.CALLBACKS,
    Cap.ATTRIBUTES, Cap.ABORT, Cap.EXTERNAL_EVENTS, Cap.STREAM_SWITCH, Cap.LABELS,
    Cap.NEVER_TIMEOUT})
#: field behaviours a backend can provoke only with a mechanism of its own
FIELD_CAPS: frozenset[Cap] = frozenset({Cap.DEVICE_FAULTS, Cap.RESOURCE_LIMITS})
#: every capability of the task-level contract (:class:`Backend`)
ALL_CAPS: frozenset[Cap] = frozenset(Cap) - EXTENDED_CAPS - FIELD_CAPS

# ---------------------------------------------------------------------------------------------
# The protocol


@runtime_checkable
class Backend(Protocol):
    """One implementation of the Model RI API, as the specs see it.

    Methods are grouped as in acl_rt.h. Every method returns ``rc`` (``int``) first.
    """

    name: str
    #: the declared capabilities; the probes (conformance.framework.probe) replace them with
    #: the ones they measured. A backend may also set ``promised_capabilities``
    #: (frozenset[Cap], optional): those it guarantees to show (the simulator: all it
    #: declares); a probe that takes one away fails the gate instead of making it UNSUPPORTED.
    capabilities: frozenset[Cap]

    # -- identity and teardown ------------------------------------------------------------
    def version(self) -> str:
        """A free-form version string of the implementation (CANN version, simulator version)."""
        ...

    def kernel_binary_path(self) -> str:
        """Absolute path of the kernel binary that holds the catalog's kernels."""
        ...

    def close(self) -> None:
        """Release everything the backend holds (harness call, not an ACL function)."""
        ...

    # -- device --------------------------------------------------------------------------
    def set_device(self, device_id: int) -> int:
        """aclrtSetDevice: binds the device to the calling thread."""
        ...

    # -- streams -------------------------------------------------------------------------
    def create_stream(self) -> tuple[int, Any]:
        """aclrtCreateStream -> (rc, stream)."""
        ...

    def create_stream_with_config(self, priority: int, flag: int) -> tuple[int, Any]:
        """aclrtCreateStreamWithConfig -> (rc, stream)."""
        ...

    def destroy_stream(self, stream: Any) -> int:
        """aclrtDestroyStream."""
        ...

    def synchronize_stream(self, stream: Any) -> int:
        """aclrtSynchronizeStream: waits for all work on the stream."""
        ...

    def synchronize_stream_with_timeout(self, stream: Any, timeout_ms: int) -> int:
        """aclrtSynchronizeStreamWithTimeout: -1 forever, >0 ms, 507046 on expiry."""
        ...

    def stream_query(self, stream: Any) -> tuple[int, int]:
        """aclrtStreamQuery -> (rc, StreamStatus)."""
        ...

    # -- memory --------------------------------------------------------------------------
    def malloc(self, size: int, policy: int = MallocPolicy.HUGE_FIRST) -> tuple[int, int]:
        """aclrtMalloc -> (rc, device address)."""
        ...

    def free(self, dev_ptr: int | None) -> int:
        """aclrtFree."""
        ...

    def malloc_host(self, size: int) -> tuple[int, np.ndarray | None]:
        """aclrtMallocHost -> (rc, pinned host buffer as a uint8 numpy array)."""
        ...

    def free_host(self, host: np.ndarray) -> int:
        """aclrtFreeHost."""
        ...

    def memcpy(self, dst: int | np.ndarray, dest_max: int, src: int | np.ndarray,
               count: int, kind: int) -> int:
        """aclrtMemcpy (synchronous; an "unsafe" call under capture modes, MODE-01)."""
        ...

    def memcpy_async(self, dst: int | np.ndarray, dest_max: int, src: int | np.ndarray,
                     count: int, kind: int, stream: Any) -> int:
        """aclrtMemcpyAsync (captured on a capturing stream; host side must be pinned)."""
        ...

    def memset(self, dev_ptr: int, max_count: int, value: int, count: int) -> int:
        """aclrtMemset (synchronous; "unsafe")."""
        ...

    def memset_async(self, dev_ptr: int, max_count: int, value: int, count: int,
                     stream: Any) -> int:
        """aclrtMemsetAsync."""
        ...

    # -- events --------------------------------------------------------------------------
    def create_event(self) -> tuple[int, Any]:
        """aclrtCreateEvent (an "old-mode" event, XS-04)."""
        ...

    def create_event_with_flag(self, flag: int) -> tuple[int, Any]:
        """aclrtCreateEventWithFlag."""
        ...

    def create_event_ex_with_flag(self, flag: int) -> tuple[int, Any]:
        """aclrtCreateEventExWithFlag (the kind capture fork/join needs, with SYNC)."""
        ...

    def destroy_event(self, event: Any) -> int:
        """aclrtDestroyEvent."""
        ...

    def record_event(self, event: Any, stream: Any) -> int:
        """aclrtRecordEvent."""
        ...

    def stream_wait_event(self, stream: Any, event: Any) -> int:
        """aclrtStreamWaitEvent."""
        ...

    def reset_event(self, event: Any, stream: Any) -> int:
        """aclrtResetEvent."""
        ...

    def record_event_with_flag(self, event: Any, stream: Any, flag: int) -> int:
        """aclrtRecordEventWithFlag: flag ACL_EVENT_RECORD_DEFAULT 0 / EXTERNAL 1 (XS-10,
        TYPE-03; Cap.EXTERNAL_EVENTS)."""
        ...

    def stream_wait_event_with_flag(self, stream: Any, event: Any, timeout: int,
                                    flag: int) -> int:
        """aclrtStreamWaitEventWithFlag: uint32 timeout, flag ACL_EVENT_WAIT_DEFAULT 0 /
        EXTERNAL 1; with EXTERNAL the timeout must be 0 (XS-10; Cap.EXTERNAL_EVENTS)."""
        ...

    # -- value write / wait --------------------------------------------------------------
    def value_write(self, dev_addr: int | None, value: int, flag: int, stream: Any) -> int:
        """aclrtValueWrite: 64-bit store to device memory, in stream order."""
        ...

    def value_wait(self, dev_addr: int | None, value: int, flag: int, stream: Any) -> int:
        """aclrtValueWait: the stream blocks until the condition on *dev_addr holds."""
        ...

    # -- kernels -------------------------------------------------------------------------
    def binary_load_from_file(self, bin_path: str, options: Any = None) -> tuple[int, Any]:
        """aclrtBinaryLoadFromFile -> (rc, binary handle)."""
        ...

    def binary_get_function(self, bin_handle: Any, kernel_name: str) -> tuple[int, Any]:
        """aclrtBinaryGetFunction -> (rc, function handle)."""
        ...

    def binary_unload(self, bin_handle: Any) -> int:
        """aclrtBinaryUnLoad."""
        ...

    def launch_kernel_with_host_args(self, func_handle: Any, num_blocks: int, stream: Any,
                                     cfg: Any, host_args: bytes | None, args_size: int,
                                     placeholders: Any = None,
                                     placeholder_num: int = 0) -> int:
        """aclrtLaunchKernelWithHostArgs: the runtime copies ``host_args`` at the call."""
        ...

    # -- capture -------------------------------------------------------------------------
    def capture_begin(self, stream: Any, mode: int) -> int:
        """aclmdlRICaptureBegin."""
        ...

    def capture_get_info(self, stream: Any, *, null_status: bool = False,
                         null_model: bool = False) -> tuple[int, Any, Any]:
        """aclmdlRICaptureGetInfo -> (rc, status, model)."""
        ...

    def capture_thread_exchange_mode(self, mode: int | None) -> tuple[int, Any]:
        """aclmdlRICaptureThreadExchangeMode: in ``mode`` (None = NULL pointer), out the
        value left in ``*mode`` (the previous mode on success, the input on failure)."""
        ...

    def capture_end(self, stream: Any, *, null_model: bool = False) -> tuple[int, Any]:
        """aclmdlRICaptureEnd -> (rc, model) where model is UNWRITTEN when not written."""
        ...

    # -- introspection and update --------------------------------------------------------
    def get_streams(self, model: Any, capacity: int | None, *,
                    null_count: bool = False) -> tuple[int, list[Any] | None, Any]:
        """aclmdlRIGetStreams, two-phase: ``capacity=None`` passes streams=NULL.

        Returns (rc, slots, num): ``slots`` is None for the NULL array, else the
        ``capacity`` slots after the call; ``num`` is the value left in ``*numStreams``.
        """
        ...

    def get_tasks_by_stream(self, stream: Any, capacity: int | None, *,
                            null_count: bool = False) -> tuple[int, list[Any] | None, Any]:
        """aclmdlRIGetTasksByStream, same convention as :meth:`get_streams`."""
        ...

    def task_get_type(self, task: Any, *, null_out: bool = False) -> tuple[int, Any]:
        """aclmdlRITaskGetType -> (rc, TaskType value)."""
        ...

    def task_get_seq_id(self, task: Any, *, null_out: bool = False) -> tuple[int, Any]:
        """aclmdlRITaskGetSeqId -> (rc, id)."""
        ...

    def task_get_params(self, task: Any, *, null_out: bool = False) -> tuple[int, Any]:
        """aclmdlRITaskGetParams -> (rc, TaskParams)."""
        ...

    def task_set_params(self, task: Any, params: TaskParams | None) -> int:
        """aclmdlRITaskSetParams (deferred until :meth:`update`)."""
        ...

    def task_disable(self, task: Any) -> int:
        """aclmdlRITaskDisable (deferred until :meth:`update`)."""
        ...

    def update(self, model: Any) -> int:
        """aclmdlRIUpdate: commits pending SetParams/Disable."""
        ...

    # -- execute / destroy ---------------------------------------------------------------
    def execute_async(self, model: Any, stream: Any) -> int:
        """aclmdlRIExecuteAsync."""
        ...

    def destroy(self, model: Any) -> int:
        """aclmdlRIDestroy."""
        ...


# ---------------------------------------------------------------------------------------------
# The rest of the Model RI API: enums, structs and the extended protocol


class CondTaskType(enum.IntEnum):
    """``aclmdlRICondTaskType``."""

    IF = 0
    WHILE = 1
    SWITCH = 2


class CondHandleFlag(enum.IntEnum):
    """``aclmdlRICondHandleFlag`` (0 is also accepted: the user manages the value)."""

    NONE = 0
    ASSIGN_DEFAULT = 1


class ModelStreamFlag(enum.IntEnum):
    """``aclmdlRIBindStream`` flags (doc-only macros)."""

    HEAD = 0x00000000
    DEFAULT = 0x7FFFFFFF


class LaunchAttrId(enum.IntEnum):
    """``aclrtLaunchKernelAttrId``."""

    SCHEM_MODE = 1
    DYN_UBUF_SIZE = 2
    ENGINE_TYPE = 3
    BLOCKDIM_OFFSET = 4
    BLOCK_TASK_PREFETCH = 5
    DATA_DUMP = 6
    TIMEOUT = 7
    TIMEOUT_US = 8
    ENABLE_PROFILING = 9


class Condition(enum.IntEnum):
    """``aclrtCondition`` (aclrtSwitchStream): ``*left <cond> *right``."""

    EQUAL = 0
    NOT_EQUAL = 1
    GREATER = 2
    GREATER_OR_EQUAL = 3
    LESS = 4
    LESS_OR_EQUAL = 5


class CompareDataType(enum.IntEnum):
    """``aclrtCompareDataType`` (aclrtSwitchStream): the width of both compared values."""

    INT32 = 0
    INT64 = 1


DEBUG_JSON_SUMMARY = 0x0
DEBUG_JSON_VERBOSE = 0x1


@dataclass
class LaunchAttr:
    """One ``aclrtLaunchKernelAttr`` (20 bytes: id, then a 16-byte value union at 4).

    ``value`` is the integer of the member the id selects; for TIMEOUT_US it is
    ``(timeout_low, timeout_high)``.
    """

    id: int
    value: int | tuple[int, int] = 0


@dataclass
class LaunchKernelCfg:
    """``aclrtLaunchKernelCfg``: an array of launch attributes (``cfg`` of the launches)."""

    attrs: list[LaunchAttr] = field(default_factory=list)


@dataclass
class CondTaskParams:
    """``aclmdlRICondTaskParams`` (24 bytes, passed by value to AddCondTask).

    ``model_ri_array`` is the caller's array length (``None`` = NULL pointer); the runtime
    fills ``size`` sub-model handles into it.
    """

    handle: Any = None
    type: int = CondTaskType.IF
    size: int = 1
    model_ri_array: int | None = 1


@runtime_checkable
class ExtendedBackend(Protocol):
    """The rest of the Model RI API. A backend offering a group declares its Cap."""

    # -- task groups (TG) ---------------------------------------------------------------
    def capture_task_grp_begin(self, stream: Any) -> int:
        """aclmdlRICaptureTaskGrpBegin."""
        ...

    def capture_task_grp_end(self, stream: Any, *, null_handle: bool = False) -> tuple[int, Any]:
        """aclmdlRICaptureTaskGrpEnd -> (rc, task group); UNWRITTEN when not written (TG-08)."""
        ...

    def capture_task_update_begin(self, stream: Any, handle: Any) -> int:
        """aclmdlRICaptureTaskUpdateBegin."""
        ...

    def capture_task_update_end(self, stream: Any) -> int:
        """aclmdlRICaptureTaskUpdateEnd."""
        ...

    # -- explicit build (BLD) -----------------------------------------------------------
    def build_begin(self, flag: int, *, null_model: bool = False) -> tuple[int, Any]:
        """aclmdlRIBuildBegin(&model, flag) -> (rc, model)."""
        ...

    def bind_stream(self, model: Any, stream: Any, flag: int) -> int:
        """aclmdlRIBindStream."""
        ...

    def end_task(self, model: Any, stream: Any) -> int:
        """aclmdlRIEndTask."""
        ...

    def build_end(self, model: Any, reserve: Any = None) -> int:
        """aclmdlRIBuildEnd (reserve must be NULL)."""
        ...

    def unbind_stream(self, model: Any, stream: Any) -> int:
        """aclmdlRIUnbindStream."""
        ...

    def execute(self, model: Any, timeout_ms: int) -> int:
        """aclmdlRIExecute (synchronous; built models only, EXE-10..13)."""
        ...

    # -- conditional tasks and sub-models (COND) ----------------------------------------
    def cond_handle_create(self, model: Any, default_launch_value: int, flag: int, *,
                           null_handle: bool = False) -> tuple[int, Any]:
        """aclmdlRICondHandleCreate -> (rc, cond handle)."""
        ...

    def cond_handle_get_cond_ptr(self, handle: Any, *, null_out: bool = False) -> tuple[int, Any]:
        """aclmdlRICondHandleGetCondPtr -> (rc, device address of the 8-byte value)."""
        ...

    def add_cond_task(self, params: CondTaskParams, stream: Any,
                      flags: int) -> tuple[int, list[Any] | None]:
        """aclmdlRIAddCondTask -> (rc, the model_ri_array slots after the call)."""
        ...

    def capture_to_model_ri_begin(self, stream: Any, model: Any, mode: int) -> int:
        """aclmdlRICaptureToModelRIBegin (capture into a sub-model)."""
        ...

    # -- names, ids, debug (NAME, DBG) ----------------------------------------------------
    def set_name(self, model: Any, name: str | None) -> int:
        """aclmdlRISetName."""
        ...

    def get_name(self, model: Any, max_len: int, *, null_buf: bool = False) -> tuple[int, Any]:
        """aclmdlRIGetName -> (rc, the buffer's string up to its NUL, or UNWRITTEN)."""
        ...

    def get_id(self, model: Any, *, null_out: bool = False) -> tuple[int, Any]:
        """aclmdlRIGetId -> (rc, id)."""
        ...

    def debug_json_print(self, model: Any, path: str | None, flags: int) -> int:
        """aclmdlRIDebugJsonPrint."""
        ...

    def debug_print(self, model: Any) -> int:
        """aclmdlRIDebugPrint (deprecated): the model's streams and tasks to the log."""
        ...

    # -- destroy callbacks (LIFE-09..14) --------------------------------------------------
    def destroy_register_callback(self, model: Any, func: Any, user_data: Any) -> int:
        """aclmdlRIDestroyRegisterCallback: ``func(user_data)`` runs inside Destroy; ``func``
        is a Python callable (None = NULL); identity is the callable object."""
        ...

    def destroy_unregister_callback(self, model: Any, func: Any) -> int:
        """aclmdlRIDestroyUnregisterCallback."""
        ...

    # -- attributes, abort (ATTR, ABT) ----------------------------------------------------
    def kernel_task_get_attribute(self, task: Any, attr_id: int, *,
                                  null_out: bool = False) -> tuple[int, Any]:
        """aclmdlRIKernelTaskGetAttribute -> (rc, value as LaunchAttr.value)."""
        ...

    def abort(self, model: Any) -> int:
        """aclmdlRIAbort."""
        ...

    # -- stream activation and switch on bound streams (Cap.STREAM_SWITCH) --------------
    def active_stream(self, active_stream: Any, stream: Any) -> int:
        """aclrtActiveStream: a task on bound ``stream``; when it runs, bound ``active_stream``
        (bound with ACL_MODEL_STREAM_FLAG_DEFAULT) starts running in parallel."""
        ...

    def switch_stream(self, left_value: int | None, cond: int, right_value: int | None,
                      data_type: int, true_stream: Any, false_stream: Any, stream: Any) -> int:
        """aclrtSwitchStream: a task on bound ``stream``; when it runs it compares the device
        values ``*left_value <cond> *right_value`` (:class:`Condition`, signed, width
        :class:`CompareDataType`); when that holds ``true_stream`` is activated and the rest
        of ``stream`` stops. ``false_stream`` is reserved (NULL)."""
        ...

    # -- labels (Cap.LABELS) --------------------------------------------------------------
    def create_label(self) -> tuple[int, Any]:
        """aclrtCreateLabel -> (rc, label)."""
        ...

    def destroy_label(self, label: Any) -> int:
        """aclrtDestroyLabel."""
        ...

    def set_label(self, label: Any, stream: Any) -> int:
        """aclrtSetLabel: marks the current position of bound ``stream`` with ``label``."""
        ...

    def create_label_list(self, labels: list[Any] | None, num: int, *,
                          null_list: bool = False) -> tuple[int, Any]:
        """aclrtCreateLabelList(labels, num, &list) -> (rc, label list); num in (0, 65535].
        ``null_list``: pass NULL for the labelList out-parameter."""
        ...

    def destroy_label_list(self, label_list: Any) -> int:
        """aclrtDestroyLabelList."""
        ...

    def switch_label_by_index(self, ptr: int | None, max_value: int, label_list: Any,
                              stream: Any) -> int:
        """aclrtSwitchLabelByIndex: a task on bound ``stream``; when it runs it reads the
        uint32 index at ``ptr`` (an index past the last label selects the last one) and
        continues at that label's position; the rest of ``stream`` stops."""
        ...


@runtime_checkable
class HostStateBackend(Protocol):
    """Thread device/context queries and event syncs (every reference backend offers them;
    the per-spec global-state check and the event-sync timeout specs use them)."""

    def get_device(self, *, null_out: bool = False) -> tuple[int, Any]:
        """aclrtGetDevice -> (rc, device id of the calling thread)."""
        ...

    def get_current_context(self, *, null_out: bool = False) -> tuple[int, Any]:
        """aclrtGetCurrentContext -> (rc, context handle of the calling thread)."""
        ...

    def synchronize_event(self, event: Any) -> int:
        """aclrtSynchronizeEvent: wait for the event's last record to complete."""
        ...

    def synchronize_event_with_timeout(self, event: Any, timeout_ms: int) -> int:
        """aclrtSynchronizeEventWithTimeout: -1 waits forever; at the host deadline 507047."""
        ...


class MemLocationType(enum.IntEnum):
    """``aclrtMemLocationType`` (hicann/runtime @681ef76 ``acl_rt.h:314-320``)."""

    HOST = 0            # pinned host memory (aclrtMallocHost, registered)
    DEVICE = 1
    UNREGISTERED = 2    # host memory the runtime does not know: malloc'd, pageable
    MANAGED = 3
    HOST_NUMA = 4


@dataclass(frozen=True)
class PtrAttributes:
    """``aclrtPtrAttributes`` (``acl_rt.h:322-331``): ``aclrtMemLocation location`` (``id``,
    ``type``), ``pageSize``; the four reserved words are not modelled."""

    location_id: int
    location_type: int
    page_size: int


@runtime_checkable
class PointerAttributesBackend(Protocol):
    """``aclError aclrtPointerGetAttributes(const void *ptr, aclrtPtrAttributes *attributes)``
    (``acl_rt.h:2006``): where memory lives. The runtime asks the driver
    (``drvMemGetAttribute``, ``runtime/driver/npu_driver_mem.cc:2040-2085``): a malloc'd host
    pointer is UNREGISTERED, pinned host memory HOST, device memory DEVICE; the driver's own
    failure is returned as is. NULL ``ptr`` or ``attributes``: 100000 (ACL layer,
    ``acl/aclrt_impl/memory.cpp:446-453``). The probes use it to learn whether pageable memory
    can be told apart (:data:`Cap.PAGEABLE_DETECTION`)."""

    def pointer_get_attributes(self, ptr: Any, *,
                               null_out: bool = False) -> tuple[int, Any]:
        """aclrtPointerGetAttributes -> (rc, :class:`PtrAttributes`)."""
        ...


@runtime_checkable
class FunctionInfoBackend(Protocol):
    """Where a kernel function's parameters live in its argument bytes (KRN-02, KRN-03):
    ``aclrtFunctionGetParamCount(const void *func, size_t *paramCount)`` and
    ``aclrtFunctionGetParamInfo(const void *func, size_t paramIndex, size_t *paramOffset,
    size_t *paramSize)`` (hicann/runtime @681ef76 ``include/external/acl/acl_rt.h:5773,5787``;
    no struct: two ``size_t`` out-pointers). A backend without them answers 207000 or lacks
    the methods; the suite then packs the catalog's C structs.

    Codes (``src/acl/aclrt_impl/kernel.cpp:741-766``, ``src/runtime/api/impl/api_error.cc:
    7606-7636``, ``api_impl.cc:9322-9342``): NULL ``func`` or ``paramCount``, and
    ``paramOffset`` and ``paramSize`` both NULL, 100000 (ACL layer); a handle that is no live
    function 107017; a kernel without parameter information, or ``paramIndex`` >= the count,
    107000; either out-pointer alone may be NULL (the other is written)."""

    def function_get_param_count(self, func: Any, *, null_out: bool = False) -> tuple[int, Any]:
        """aclrtFunctionGetParamCount -> (rc, number of parameters)."""
        ...

    def function_get_param_info(self, func: Any, index: int, *, null_offset: bool = False,
                                null_size: bool = False) -> tuple[int, Any, Any]:
        """aclrtFunctionGetParamInfo -> (rc, byte offset, byte size) of parameter ``index``."""
        ...


# ---------------------------------------------------------------------------------------------
# Leak accounting (optional)


@dataclass
class LiveCounts:
    """Live resources a backend can count; used to report leaks per spec."""

    models: int = 0
    streams: int = 0
    events: int = 0
    allocations: int = 0
    #: aclrtCreateLabel labels alive (RT-40: their ids come from one process-wide allocator)
    labels: int = 0
    extra: dict[str, int] = field(default_factory=dict)
