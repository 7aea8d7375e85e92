"""AclBackend: the contract (backends/contract.py) over the real C ABI through ctypes.

One method per C function; every method returns the ``aclError`` first and its outs after it.
The conventions of the contract map onto C like this:

* handles are :class:`~backends.acl.convert.Handle` (NULL is ``None``); device addresses are
  ints; host memory is numpy (its data pointer is passed, the array kept alive while the
  runtime may still read it);
* out-parameters and array slots are prefilled with sentinels and read back as
  ``UNWRITTEN`` when the runtime left them alone; ``null_*`` keywords pass NULL pointers;
* a failing call's rc is an :class:`AclRc` (an ``int``) whose ``detail`` holds
  ``aclGetRecentErrMsg()``; a missing symbol answers ``207000`` with the reason as detail,
  which the suite reports as UNSUPPORTED with that reason.

The rest of the Model RI API (:class:`~backends.contract.ExtendedBackend`: task groups, build,
cond tasks, names, debug JSON, destroy callbacks, launch attributes, abort) uses the same
symbols on a real CANN library and on the emulator; each extended :class:`Cap` is declared
when its symbols are present. Launch configs (:class:`~backends.contract.LaunchKernelCfg`)
become 20-byte ``aclrtLaunchKernelAttr`` arrays, ``aclmdlRICondTaskParams`` is passed by
value, and a destroy callback is a ``CFUNCTYPE(None, c_void_p)`` thunk per Python callable
and model, kept alive until it is unregistered or the model is destroyed.
:class:`~backends.contract.HostStateBackend` (aclrtGetDevice, aclrtGetCurrentContext,
aclrtSynchronizeEvent[WithTimeout]) is implemented with the same symbols; a library without
them answers ``207000`` there like any missing symbol.

Per call, the binding does only what cannot be done at load (a call within a small factor of a
bare ctypes call). A method of one C function reads like this::

    def task_get_seq_id(self, task, *, null_out=False):
        fn = self._c.aclmdlRITaskGetSeqId          # prepared: restype/argtypes set once
        if fn is None:
            return self._missing("aclmdlRITaskGetSeqId"), UNWRITTEN
        out = c_uint32(U32_SENTINEL)               # a fresh out-parameter, prefilled
        rc = fn(as_ptr(task), out)                 # passed as is: ctypes takes its address
        v = out.value
        return (rc if rc == OK else self._rc(rc)), (UNWRITTEN if v == U32_SENTINEL else v)

``self._c`` (:class:`~.symbols.Prepared`) resolves every symbol when the backend is built and
keeps each as a plain instance attribute, which CPython specialises into a hinted dict load
(None when missing; after :meth:`close` every access raises). A
method without out-parameters converts its arguments into locals first (a
:class:`~.convert.Handle` by its ``ptr`` inline, anything else through ``as_ptr``), then looks
the function up, calls it and checks the rc in its own frame, with no helper frame per call
(``_call`` does the same for the few calls off the hot path). A scalar out-parameter
is a ctypes scalar made per call with its sentinel, handed to the function as is (for a
``POINTER(T)`` argument ctypes passes a ``T``'s address in C, cheaper than ``byref`` in
Python); being the call's own object, it needs no per-thread slot (the call releases the
GIL, so a shared slot would race). An enum out maps through the bound ``.get`` of a table
made at load (:func:`~.convert.out_map`), never the enum's constructor. Struct and array
outs are made per call too (their size or prefill differs per call).

Threads: the creating thread gets ``aclrtSetDevice(device)``; every other thread calls
:meth:`set_device` itself, as on real ACL (abi.md §6.1). ``set_device(i)`` binds physical
device ``device + i``, so the specs' ``set_device(0)`` means "this backend's device" under
``--devices`` too.
"""

from __future__ import annotations

import ctypes
import inspect
import os
import re
import threading
from ctypes import byref, c_int, c_int32, c_size_t, c_uint32, c_uint64, c_void_p
from pathlib import Path
from typing import Any, Callable

import numpy as np

from mdlri_conformance.backends.contract import (ALL_CAPS, EXTENDED_CAPS, FIELD_CAPS, UNWRITTEN, Cap,
                               CaptureMode, CaptureStatus, CondTaskParams, Err, LaunchKernelCfg,
                               LiveCounts, MallocPolicy, PtrAttributes, StreamStatus,
                               TaskParams, TaskType)

from mdlri_conformance.backends import kernel_layouts
from mdlri_conformance.kernel.layout import LayoutCheck, first_refusal, refusal_line

from . import driver
from . import structs as S
from .convert import (BYTE_SENTINEL, I32_SENTINEL, PTR_SENTINEL, U32_SENTINEL, Handle,
                      KeepAlive, attr_value_from_c, as_ptr, cfg_to_c, handle,
                      out_handle, out_map, out_size, out_u32, params_from_c, params_to_c,
                      sentinel_params, untouched)
from .symbols import Closed, Prepared, SymbolTable

OK = 0
UNSUPPORTED_RC = int(Err.RT_FEATURE_NOT_SUPPORT)
#: aclInit's "already initialised" (ignored)
REPEAT_INITIALIZE = int(Err.REPEAT_INITIALIZE)

#: capability -> the C functions it needs
CAP_SYMBOLS: dict[Cap, tuple[str, ...]] = {
    Cap.CAPTURE: ("aclmdlRICaptureBegin", "aclmdlRICaptureEnd", "aclmdlRICaptureGetInfo"),
    Cap.CAPTURE_MODES: ("aclmdlRICaptureThreadExchangeMode", "aclrtMemcpy", "aclrtMemset"),
    Cap.CROSS_STREAM: ("aclrtCreateEventExWithFlag", "aclrtRecordEvent",
                       "aclrtStreamWaitEvent"),
    Cap.LISTING: ("aclmdlRIGetStreams", "aclmdlRIGetTasksByStream"),
    Cap.TASK_TYPE: ("aclmdlRITaskGetType",),
    Cap.SEQ_ID: ("aclmdlRITaskGetSeqId",),
    Cap.GET_PARAMS: ("aclmdlRITaskGetParams",),
    Cap.SET_PARAMS: ("aclmdlRITaskSetParams",),
    Cap.DISABLE: ("aclmdlRITaskDisable",),
    Cap.UPDATE: ("aclmdlRIUpdate",),
    Cap.VALUE_TASKS: ("aclrtValueWrite", "aclrtValueWait"),
    Cap.KERNELS: ("aclrtBinaryLoadFromFile", "aclrtBinaryGetFunction",
                  "aclrtLaunchKernelWithHostArgs"),
    Cap.SYNC_TIMEOUT: ("aclrtSynchronizeStreamWithTimeout",),
    Cap.THREADS: ("aclrtSetDevice",),
    Cap.HANDLE_VALIDATION: (),
    Cap.INTERNAL_TASKS: (),
    # measured by conformance.probe when the backend starts
    Cap.DATA_MOVEMENT: ("aclrtMemcpy",),
    Cap.KERNEL_EXEC: ("aclrtBinaryLoadFromFile", "aclrtLaunchKernelWithHostArgs"),
    Cap.BLOCKING_WAIT: ("aclrtValueWait",),
    Cap.PAGEABLE_DETECTION: ("aclrtPointerGetAttributes", "aclrtMemcpyAsync"),
    # the rest of the Model RI API (ExtendedBackend)
    Cap.TASK_GROUPS: ("aclmdlRICaptureTaskGrpBegin", "aclmdlRICaptureTaskGrpEnd",
                      "aclmdlRICaptureTaskUpdateBegin", "aclmdlRICaptureTaskUpdateEnd"),
    Cap.BUILD: ("aclmdlRIBuildBegin", "aclmdlRIBindStream", "aclmdlRIEndTask",
                "aclmdlRIBuildEnd", "aclmdlRIUnbindStream", "aclmdlRIExecute"),
    Cap.COND: ("aclmdlRICondHandleCreate", "aclmdlRICondHandleGetCondPtr",
               "aclmdlRIAddCondTask", "aclmdlRICaptureToModelRIBegin"),
    Cap.NAMES: ("aclmdlRISetName", "aclmdlRIGetName", "aclmdlRIGetId"),
    Cap.DEBUG_JSON: ("aclmdlRIDebugJsonPrint",),
    Cap.DEBUG_PRINT: ("aclmdlRIDebugPrint",),
    Cap.CALLBACKS: ("aclmdlRIDestroyRegisterCallback", "aclmdlRIDestroyUnregisterCallback"),
    Cap.ATTRIBUTES: ("aclmdlRIKernelTaskGetAttribute", "aclrtLaunchKernelWithHostArgs"),
    Cap.ABORT: ("aclmdlRIAbort",),
    Cap.EXTERNAL_EVENTS: ("aclrtRecordEventWithFlag", "aclrtStreamWaitEventWithFlag"),
    Cap.STREAM_SWITCH: ("aclrtActiveStream", "aclrtSwitchStream", "aclmdlRIBuildBegin"),
    Cap.LABELS: ("aclrtCreateLabel", "aclrtSetLabel", "aclrtDestroyLabel",
                 "aclrtCreateLabelList", "aclrtDestroyLabelList", "aclrtSwitchLabelByIndex",
                 "aclmdlRIBuildBegin"),
    Cap.NEVER_TIMEOUT: ("aclmdlRIKernelTaskGetAttribute", "aclrtLaunchKernelWithHostArgs"),
}
#: the kernel parameter-layout functions (KRN-02): with both, the backend checks the layouts
LAYOUT_SYMBOLS = ("aclrtFunctionGetParamCount", "aclrtFunctionGetParamInfo")
#: left out on a real CANN library: stale handles are use-after-free there (abi.md §6.4),
#: internal task counts are implementation-specific
HARDWARE_EXCLUDED: dict[Cap, str] = {
    Cap.HANDLE_VALIDATION: "stale handles are use-after-free on real CANN (abi.md §6.4)",
    Cap.INTERNAL_TASKS: "runtime-internal task counts are implementation-specific",
}

_init_lock = threading.Lock()
_initialised: dict[str, int] = {}


class AclRc(int):
    """A non-zero ``aclError`` with the runtime's explanation in ``detail``."""

    detail: str = ""

    def __new__(cls, rc: int, detail: str = "") -> "AclRc":
        obj = super().__new__(cls, rc)
        obj.detail = detail
        return obj

    def __repr__(self) -> str:
        return f"{int(self)}" + (f" ({self.detail})" if self.detail else "")

    def __reduce__(self) -> Any:
        return (AclRc, (int(self), self.detail))


class AclBackend:
    """The ``acl`` backend. Build it with :func:`backends.acl.create`."""

    name = "acl"

    def __init__(self, lib: ctypes.CDLL | None, *, lib_path: Path | None = None,
                 device: int = 0, kernel_binary: str | None = None, emulator: bool = False,
                 unavailable: str = "") -> None:
        self.lib_path = lib_path
        self.device = int(device)
        self.emulator = emulator
        self._unavailable = unavailable
        self._kernel_binary = kernel_binary
        desc = str(lib_path) if lib_path else "the ACL library"
        self.sym = SymbolTable(lib, desc, unavailable)
        #: the prepared C functions (restype and argtypes set once, when it is built):
        #: ``self._c.aclrtFree`` is the function, None when the library lacks it; after
        #: :meth:`close` every access raises (:class:`~.symbols.Closed`)
        self._c: Any = Prepared(self.sym)
        self._tls = threading.local()
        self._keep: dict[int, KeepAlive] = {}      # task ptr -> SetParams buffers
        self._async_keep = KeepAlive()              # host arrays of async copies
        self._pinned: dict[int, np.ndarray] = {}
        #: (model ptr, id(func)) -> [CFUNCTYPE thunk, user-data slot, func]: kept alive until
        #: unregistered or the model is destroyed (abi.md §7.12)
        self._callbacks: dict[tuple[int, int], list[Any]] = {}
        self._lock = threading.Lock()
        self._cap_reasons: dict[Cap, str] = {}
        self._closed = False
        self.capabilities: frozenset[Cap] = frozenset()
        #: the kernels' parameter layouts as the runtime reported them (KRN-02; filled by
        #: check_kernel_layouts) and why they could not be read ('' when they could)
        self.kernel_layouts: list[LayoutCheck] = []
        self.kernel_layout_error = ""
        if lib is None:
            return
        self._init_runtime()
        self.capabilities = self._detect_capabilities() | self._field_capabilities()
        #: the emulator shows everything it declares (a probe that takes a capability away
        #: found a bug and fails the gate); a real runtime promises nothing: what its driver or
        #: firmware cannot show is UNSUPPORTED (conformance.framework.probe)
        self.promised_capabilities = self.capabilities if emulator else frozenset()
        if emulator:
            self.live_counts = self._live_counts

    # =========================================================================================
    # plumbing

    def _init_runtime(self) -> None:
        """aclInit once per process and library (100002 ignored), then bind this thread."""
        key = str(self.lib_path)
        with _init_lock:
            if key not in _initialised:
                fn = self.sym.get("aclInit")
                rc = fn(None) if fn else OK
                _initialised[key] = OK if rc == REPEAT_INITIALIZE else int(rc)
            rc = _initialised[key]
        if rc != OK:
            self._unavailable = f"aclInit failed with {rc}{self._detail_suffix()}"
            return
        rc = self.set_device(0)
        if rc != OK:
            self._unavailable = (f"aclrtSetDevice({self.device}) failed with "
                                 f"{int(rc)}{self._detail_suffix(rc)}")

    def _detail_suffix(self, rc: Any = None) -> str:
        detail = getattr(rc, "detail", "") or self._recent_error()
        return f": {detail}" if detail else ""

    def _detect_capabilities(self) -> frozenset[Cap]:
        if self._unavailable:
            return frozenset()
        caps: set[Cap] = set()
        for cap in ALL_CAPS | EXTENDED_CAPS:
            if not self.emulator and cap in HARDWARE_EXCLUDED:
                self._cap_reasons[cap] = HARDWARE_EXCLUDED[cap]
                continue
            missing = [n for n in CAP_SYMBOLS[cap] if not self.sym.has(n)]
            if missing:
                self._cap_reasons[cap] = self.sym.reason(missing[0]) or ""
                continue
            if cap == Cap.KERNELS and not self._kernel_path_ok():
                continue
            caps.add(cap)
        return frozenset(caps)

    def _field_capabilities(self) -> frozenset[Cap]:
        """FIELD_CAPS, declared for the emulator only: RESOURCE_LIMITS when it models a stream
        limit (sets ``stream_limit`` / ``model_stream_limit``, the attributes the FLD specs
        read), DEVICE_FAULTS when the kernel library has the trapping ``trap_if`` kernel. On a
        real CANN library provoking them disturbs the device, so they are not declared."""
        caps: set[Cap] = set()
        if self._unavailable:
            return frozenset()
        if not self.emulator:
            for cap in FIELD_CAPS:
                self._cap_reasons[cap] = (f"{cap.value} is only declared for the emulator "
                                          "(provoking it on a device is not opt-in yet)")
            return frozenset()
        fn = self.sym.get("mdlriEmuResourceLimits")
        streams, model_streams = c_uint32(0), c_uint32(0)
        if fn is not None:
            fn(byref(streams), byref(model_streams))
        if streams.value:
            self.stream_limit: int = streams.value
            self.model_stream_limit: int | None = model_streams.value or None
            caps.add(Cap.RESOURCE_LIMITS)
        else:
            self._cap_reasons[Cap.RESOURCE_LIMITS] = (
                "the emulator models no stream limit (MDLRI_EMU_STREAM_LIMIT=0)")
        if self._kernel_has("trap_if__fault") and "trap_if" in _catalog_names():
            caps.add(Cap.DEVICE_FAULTS)
        else:
            self._cap_reasons[Cap.DEVICE_FAULTS] = (
                "no trapping kernel: trap_if is missing from the kernel catalog or the host "
                "kernel library")
        return frozenset(caps)

    def check_kernel_layouts(self) -> None:
        """KRN-02, when the functions are loaded: with aclrtFunctionGetParamCount/Info
        exported and the kernel binary present, compare each catalog kernel's reported
        parameter layout with its C struct (:mod:`backends.kernel_layouts`). Layouts the suite
        can pack are followed: this process builds the argument bytes from them. One it cannot
        makes the backend unavailable with the line naming the kernel and the field, so the
        run tests nothing. The checks stay in :attr:`kernel_layouts`."""
        self.kernel_layouts, self.kernel_layout_error = [], ""
        if self._unavailable or Cap.KERNELS not in self.capabilities:
            return
        if not all(self.sym.has(n) for n in LAYOUT_SYMBOLS):
            return
        try:
            checks = kernel_layouts.check_binary(self, str(self._kernel_binary))
        except kernel_layouts.BinaryNotLoaded as exc:
            self.kernel_layout_error = str(exc)
            return
        self.kernel_layouts = checks
        refused = first_refusal(checks)
        if refused is not None:
            self._unavailable = refusal_line(refused)
            self.capabilities = frozenset()
            return
        kernel_layouts.install(checks)

    def _kernel_has(self, symbol: str) -> bool:
        """Whether the host kernel library exports ``symbol`` (emulator only)."""
        path = self._kernel_binary
        if not path or not os.path.isfile(path):
            return False
        try:
            return hasattr(ctypes.CDLL(path), symbol)
        except OSError:
            return False

    def _kernel_path_ok(self) -> bool:
        path = self._kernel_binary
        if not path:
            self._cap_reasons[Cap.KERNELS] = (
                "no kernel binary: build it with `mdlri-conformance kernels build`, or pass "
                "--kernel-binary PATH / MDLRI_KERNEL_BINARY")
            return False
        if not os.path.isfile(path):
            self._cap_reasons[Cap.KERNELS] = f"kernel binary {path} does not exist"
            return False
        return True

    def _recent_error(self) -> str:
        fn = self.sym.get("aclGetRecentErrMsg")
        if fn is None:
            return ""
        try:
            msg = fn()
        except Exception:  # the runtime's text is a courtesy, never a harness fault
            return ""
        return msg.decode(errors="replace").strip() if msg else ""

    def _rc(self, rc: int) -> int:
        """A call's rc: plain 0, or an AclRc carrying aclGetRecentErrMsg()."""
        if rc == OK:
            return OK
        return AclRc(rc, self._recent_error())

    def _fn(self, name: str) -> Callable[..., int] | None:
        """The prepared C function ``name`` (None when missing), for the shared helpers that
        take the name as an argument; a method of one C function reads ``self._c.<name>``."""
        return getattr(self._c, name)

    def _missing(self, name: str) -> AclRc:
        reason = self.sym.reason(name) or self._unavailable or f"{name} unavailable"
        return AclRc(UNSUPPORTED_RC, reason)

    def _call(self, name: str, *args: Any) -> int:
        """A call without out-parameters: ``return self._call("aclX", ...)``."""
        fn = getattr(self._c, name)
        if fn is None:
            return self._missing(name)
        rc = fn(*args)
        return self._rc(rc) if rc else rc  # OK is 0

    def _out_call(self, name: str, kind: str, *args: Any) -> tuple[int, Any]:
        """A call whose last argument is a ``void**`` out-parameter."""
        fn = getattr(self._c, name)
        if fn is None:
            return self._missing(name), UNWRITTEN
        out = c_void_p(PTR_SENTINEL)
        rc = fn(*args, out)
        return (rc if rc == OK else self._rc(rc)), out_handle(out.value, kind)

    # =========================================================================================
    # identity, extras, teardown

    def unsupported_reason(self, what: str | None = None) -> str | None:
        """Why something is unsupported here (None when it is supported).

        ``what`` None: the whole backend (no library, aclInit or SetDevice failed);
        a :class:`Cap` value: why that capability is absent; a C or contract method name:
        the missing-symbol reason."""
        if what is None:
            return self._unavailable or None
        if self._unavailable:
            return self._unavailable
        try:
            cap = Cap(what)
        except ValueError:
            cap = None
        if cap is not None:
            return None if cap in self.capabilities else self._cap_reasons.get(cap, "")
        c_name = what if what.startswith("acl") else _C_NAMES.get(what, what)
        return self.sym.reason(c_name) if c_name in _SIG_NAMES else None

    def version(self) -> str:
        """``ACL x.y.z (path)``, plus the emulator version for the emulator."""
        if self._unavailable and self.sym.lib is None:
            return f"unavailable: {self._unavailable}"
        return self._versions() + f" ({self.lib_path})"

    def stack(self) -> dict[str, str]:
        """The stack under test: ``runtime`` (the library's path), ``version`` and ``device``:
        the emulator's own device, or the driver library this process mapped (the virtual
        device or the NPU driver, :mod:`.driver`)."""
        if self._unavailable and self.sym.lib is None:
            return {"runtime": "unavailable", "version": "", "device": self._unavailable}
        emulated = self.sym.get("mdlriEmuVersion") is not None
        return {"runtime": str(self.lib_path), "version": self._versions(),
                "device": "the emulator's host device" if emulated
                else driver.describe(driver.mapped_driver())}

    def _versions(self) -> str:
        """``ACL x.y.z``, plus the emulator's version for the emulator."""
        parts = []
        fn = self.sym.get("aclrtGetVersion")
        if fn is not None:
            v = [c_int32(-1) for _ in range(3)]
            rc = fn(*[byref(x) for x in v])
            parts.append(f"ACL {'.'.join(str(x.value) for x in v)}" if rc == OK
                         else f"ACL version unknown (rc {rc})")
        emu = self.sym.get("mdlriEmuVersion")
        if emu is not None:
            raw = emu()
            parts.append(raw.decode(errors="replace") if raw else "mdlri-emu")
        return " + ".join(parts) or "ACL version unknown (no aclrtGetVersion)"

    def soc_name(self) -> str | None:
        """aclrtGetSocName() (None when absent or NULL)."""
        fn = self.sym.get("aclrtGetSocName")
        raw = fn() if fn else None
        return raw.decode(errors="replace") if raw else None

    def kernel_binary_path(self) -> str:
        """The kernel binary the specs load (emulator: the host kernel library)."""
        return str(self._kernel_binary or "")

    def _live_counts(self) -> LiveCounts:
        """Live resources the emulator counts (models, streams, events, allocations,
        labels)."""
        fn = self.sym.get("mdlriEmuLiveCounts")
        vals = [c_uint64(0) for _ in range(5)]
        if fn is not None:
            fn(*[byref(v) for v in vals[:4]])
        fn = self.sym.get("mdlriEmuLiveLabels")
        if fn is not None:
            fn(byref(vals[4]))
        return LiveCounts(models=vals[0].value, streams=vals[1].value, events=vals[2].value,
                          allocations=vals[3].value, labels=vals[4].value)

    def recent_error(self) -> str:
        """aclGetRecentErrMsg() of the calling thread (consumes it)."""
        return self._recent_error()

    def close(self) -> None:
        """Drop the keep-alive buffers and release this thread's device binding (never
        aclFinalize: it may not be called again in this process)."""
        if self._closed:
            return
        if self.sym.lib is not None and not self._unavailable:
            fn = self.sym.get("aclrtResetDevice")
            if fn is not None and getattr(self._tls, "device", None) is not None:
                fn(self._tls.device)
        self._closed = True
        self._c = Closed()
        self._keep.clear()
        self._async_keep.clear()
        self._pinned.clear()
        self._callbacks.clear()

    # =========================================================================================
    # device

    def set_device(self, device_id: int) -> int:
        """aclrtSetDevice(device + device_id) for the calling thread."""
        physical = self.device + int(device_id)
        rc = self._call("aclrtSetDevice", physical)
        if rc == OK:
            self._tls.device = physical
        return rc

    def get_device(self, *, null_out: bool = False) -> tuple[int, Any]:
        """aclrtGetDevice -> (rc, device id of the calling thread), as :meth:`set_device`
        numbers it (the physical id minus this backend's base device); 107002 when the thread
        has no current context (api_c_device.cc:93)."""
        fn = self._c.aclrtGetDevice
        if fn is None:
            return self._missing("aclrtGetDevice"), UNWRITTEN
        if null_out:
            return self._rc(fn(None)), UNWRITTEN
        dev = c_int32(U32_SENTINEL - (1 << 32))
        rc = self._rc(fn(dev))
        if dev.value == U32_SENTINEL - (1 << 32):
            return rc, UNWRITTEN
        return rc, dev.value - self.device

    def get_current_context(self, *, null_out: bool = False) -> tuple[int, Any]:
        """aclrtGetCurrentContext -> (rc, context handle of the calling thread)."""
        fn = self._c.aclrtGetCurrentContext
        if fn is None:
            return self._missing("aclrtGetCurrentContext"), UNWRITTEN
        if null_out:
            return self._rc(fn(None)), UNWRITTEN
        out = c_void_p(PTR_SENTINEL)
        rc = self._rc(fn(out))
        return rc, out_handle(out.value, "context")

    # =========================================================================================
    # streams

    def create_stream(self) -> tuple[int, Any]:
        """aclrtCreateStream -> (rc, stream)."""
        return self._out_call("aclrtCreateStream", "stream")

    def create_stream_with_config(self, priority: int, flag: int) -> tuple[int, Any]:
        """aclrtCreateStreamWithConfig -> (rc, stream)."""
        fn = self._c.aclrtCreateStreamWithConfig
        if fn is None:
            return self._missing("aclrtCreateStreamWithConfig"), UNWRITTEN
        out = c_void_p(PTR_SENTINEL)
        rc = self._rc(fn(out, int(priority) & 0xFFFFFFFF, int(flag) & 0xFFFFFFFF))
        return rc, out_handle(out.value, "stream")

    def destroy_stream(self, stream: Any) -> int:
        """aclrtDestroyStream."""
        a0 = stream.ptr if stream.__class__ is Handle else as_ptr(stream)
        fn = self._c.aclrtDestroyStream
        if fn is None:
            return self._missing("aclrtDestroyStream")
        rc = fn(a0)
        return self._rc(rc) if rc else rc  # OK is 0

    def synchronize_stream(self, stream: Any) -> int:
        """aclrtSynchronizeStream."""
        a0 = stream.ptr if stream.__class__ is Handle else as_ptr(stream)
        fn = self._c.aclrtSynchronizeStream
        if fn is None:
            return self._missing("aclrtSynchronizeStream")
        rc = fn(a0)
        return self._rc(rc) if rc else rc  # OK is 0

    def synchronize_stream_with_timeout(self, stream: Any, timeout_ms: int) -> int:
        """aclrtSynchronizeStreamWithTimeout (int32 timeout: -1 forever)."""
        a0 = stream.ptr if stream.__class__ is Handle else as_ptr(stream)
        a1 = int(timeout_ms)
        fn = self._c.aclrtSynchronizeStreamWithTimeout
        if fn is None:
            return self._missing("aclrtSynchronizeStreamWithTimeout")
        rc = fn(a0, a1)
        return self._rc(rc) if rc else rc  # OK is 0

    def stream_query(self, stream: Any) -> tuple[int, Any]:
        """aclrtStreamQuery -> (rc, StreamStatus)."""
        fn = self._c.aclrtStreamQuery
        if fn is None:
            return self._missing("aclrtStreamQuery"), UNWRITTEN
        a0 = stream.ptr if stream.__class__ is Handle else as_ptr(stream)
        out = c_int(I32_SENTINEL)
        rc = fn(a0, out)
        v = out.value
        return (rc if rc == OK else self._rc(rc)), _stream_status_out(v, v)

    # =========================================================================================
    # memory

    def malloc(self, size: int, policy: int = MallocPolicy.HUGE_FIRST) -> tuple[int, Any]:
        """aclrtMalloc -> (rc, device address)."""
        fn = self._c.aclrtMalloc
        if fn is None:
            return self._missing("aclrtMalloc"), UNWRITTEN
        out = c_void_p(PTR_SENTINEL)
        rc = fn(out, int(size), int(policy))
        if rc != OK:
            rc = self._rc(rc)
        v = out.value
        return rc, (UNWRITTEN if v == PTR_SENTINEL else v)

    def free(self, dev_ptr: int | None) -> int:
        """aclrtFree."""
        a0 = dev_ptr.ptr if dev_ptr.__class__ is Handle else as_ptr(dev_ptr)
        fn = self._c.aclrtFree
        if fn is None:
            return self._missing("aclrtFree")
        rc = fn(a0)
        return self._rc(rc) if rc else rc  # OK is 0

    def malloc_host(self, size: int) -> tuple[int, Any]:
        """aclrtMallocHost -> (rc, uint8 numpy array over the pinned memory)."""
        fn = self._c.aclrtMallocHost
        if fn is None:
            return self._missing("aclrtMallocHost"), UNWRITTEN
        out = c_void_p(PTR_SENTINEL)
        rc = self._rc(fn(out, int(size)))
        if out.value == PTR_SENTINEL:
            return rc, UNWRITTEN
        if not out.value:
            return rc, None
        arr = np.ctypeslib.as_array((ctypes.c_uint8 * int(size)).from_address(out.value))
        with self._lock:
            self._pinned[out.value] = arr
        return rc, arr

    def free_host(self, host: np.ndarray) -> int:
        """aclrtFreeHost (of an array from :meth:`malloc_host`, or a raw pointer)."""
        ptr = host.__array_interface__["data"][0] if isinstance(host, np.ndarray) \
            else as_ptr(host)
        rc = self._call("aclrtFreeHost", ptr)
        if rc == OK:
            with self._lock:
                self._pinned.pop(ptr, None)
        return rc

    @staticmethod
    def _mem_ptr(x: Any, nbytes: int = 0) -> int | None:
        """A memcpy endpoint: numpy host memory (its data pointer) or a device address.

        A host array smaller than what the runtime would touch is a harness fault
        (ValueError), never a host-memory overrun."""
        if isinstance(x, np.ndarray):
            if not x.flags.c_contiguous or x.nbytes < nbytes:
                raise ValueError(f"host array of {x.nbytes} bytes (contiguous: "
                                 f"{x.flags.c_contiguous}) for a {nbytes}-byte copy")
            return x.__array_interface__["data"][0]
        return as_ptr(x)

    def pointer_get_attributes(self, ptr: Any, *,
                               null_out: bool = False) -> tuple[int, Any]:
        """aclrtPointerGetAttributes -> (rc, contract.PtrAttributes); a numpy array is asked
        about by its data pointer."""
        fn = self._fn("aclrtPointerGetAttributes")
        if fn is None:
            return self._missing("aclrtPointerGetAttributes"), UNWRITTEN
        out = S.PtrAttributes()
        rc = self._rc(fn(self._mem_ptr(ptr), None if null_out else out))
        if null_out or rc != 0:
            return rc, UNWRITTEN
        return rc, PtrAttributes(int(out.location.id), int(out.location.type),
                                 int(out.pageSize))

    def memcpy(self, dst: Any, dest_max: int, src: Any, count: int, kind: int) -> int:
        """aclrtMemcpy (synchronous)."""
        n = min(int(count), int(dest_max))
        a0 = self._mem_ptr(dst, n)
        a1 = int(dest_max)
        a2 = self._mem_ptr(src, n)
        a3 = int(count)
        a4 = int(kind)
        fn = self._c.aclrtMemcpy
        if fn is None:
            return self._missing("aclrtMemcpy")
        rc = fn(a0, a1, a2, a3, a4)
        return self._rc(rc) if rc else rc  # OK is 0

    def memcpy_async(self, dst: Any, dest_max: int, src: Any, count: int, kind: int,
                     stream: Any) -> int:
        """aclrtMemcpyAsync; host arrays are kept alive (a captured copy reads them later)."""
        for x in (dst, src):
            if isinstance(x, np.ndarray):
                self._async_keep.append(x)
        n = min(int(count), int(dest_max))
        a0 = self._mem_ptr(dst, n)
        a1 = int(dest_max)
        a2 = self._mem_ptr(src, n)
        a3 = int(count)
        a4 = int(kind)
        a5 = stream.ptr if stream.__class__ is Handle else as_ptr(stream)
        fn = self._c.aclrtMemcpyAsync
        if fn is None:
            return self._missing("aclrtMemcpyAsync")
        rc = fn(a0, a1, a2, a3, a4, a5)
        return self._rc(rc) if rc else rc  # OK is 0

    def memset(self, dev_ptr: int, max_count: int, value: int, count: int) -> int:
        """aclrtMemset (synchronous)."""
        a0 = self._mem_ptr(dev_ptr)
        a1 = int(max_count)
        a2 = int(value)
        a3 = int(count)
        fn = self._c.aclrtMemset
        if fn is None:
            return self._missing("aclrtMemset")
        rc = fn(a0, a1, a2, a3)
        return self._rc(rc) if rc else rc  # OK is 0

    def memset_async(self, dev_ptr: int, max_count: int, value: int, count: int,
                     stream: Any) -> int:
        """aclrtMemsetAsync."""
        a0 = self._mem_ptr(dev_ptr)
        a1 = int(max_count)
        a2 = int(value)
        a3 = int(count)
        a4 = stream.ptr if stream.__class__ is Handle else as_ptr(stream)
        fn = self._c.aclrtMemsetAsync
        if fn is None:
            return self._missing("aclrtMemsetAsync")
        rc = fn(a0, a1, a2, a3, a4)
        return self._rc(rc) if rc else rc  # OK is 0

    # =========================================================================================
    # events

    def create_event(self) -> tuple[int, Any]:
        """aclrtCreateEvent -> (rc, event)."""
        return self._out_call("aclrtCreateEvent", "event")

    def _event_with(self, name: str, flag: int) -> tuple[int, Any]:
        fn = self._fn(name)
        if fn is None:
            return self._missing(name), UNWRITTEN
        out = c_void_p(PTR_SENTINEL)
        rc = fn(out, int(flag) & 0xFFFFFFFF)
        return (rc if rc == OK else self._rc(rc)), out_handle(out.value, "event")

    def create_event_with_flag(self, flag: int) -> tuple[int, Any]:
        """aclrtCreateEventWithFlag -> (rc, event)."""
        return self._event_with("aclrtCreateEventWithFlag", flag)

    def create_event_ex_with_flag(self, flag: int) -> tuple[int, Any]:
        """aclrtCreateEventExWithFlag -> (rc, event)."""
        return self._event_with("aclrtCreateEventExWithFlag", flag)

    def destroy_event(self, event: Any) -> int:
        """aclrtDestroyEvent."""
        a0 = event.ptr if event.__class__ is Handle else as_ptr(event)
        fn = self._c.aclrtDestroyEvent
        if fn is None:
            return self._missing("aclrtDestroyEvent")
        rc = fn(a0)
        return self._rc(rc) if rc else rc  # OK is 0

    def record_event(self, event: Any, stream: Any) -> int:
        """aclrtRecordEvent."""
        a0 = event.ptr if event.__class__ is Handle else as_ptr(event)
        a1 = stream.ptr if stream.__class__ is Handle else as_ptr(stream)
        fn = self._c.aclrtRecordEvent
        if fn is None:
            return self._missing("aclrtRecordEvent")
        rc = fn(a0, a1)
        return self._rc(rc) if rc else rc  # OK is 0

    def stream_wait_event(self, stream: Any, event: Any) -> int:
        """aclrtStreamWaitEvent."""
        a0 = stream.ptr if stream.__class__ is Handle else as_ptr(stream)
        a1 = event.ptr if event.__class__ is Handle else as_ptr(event)
        fn = self._c.aclrtStreamWaitEvent
        if fn is None:
            return self._missing("aclrtStreamWaitEvent")
        rc = fn(a0, a1)
        return self._rc(rc) if rc else rc  # OK is 0

    def reset_event(self, event: Any, stream: Any) -> int:
        """aclrtResetEvent."""
        a0 = event.ptr if event.__class__ is Handle else as_ptr(event)
        a1 = stream.ptr if stream.__class__ is Handle else as_ptr(stream)
        fn = self._c.aclrtResetEvent
        if fn is None:
            return self._missing("aclrtResetEvent")
        rc = fn(a0, a1)
        return self._rc(rc) if rc else rc  # OK is 0

    def record_event_with_flag(self, event: Any, stream: Any, flag: int) -> int:
        """aclrtRecordEventWithFlag (XS-10)."""
        a0 = event.ptr if event.__class__ is Handle else as_ptr(event)
        a1 = stream.ptr if stream.__class__ is Handle else as_ptr(stream)
        a2 = int(flag) & 0xFFFFFFFF
        fn = self._c.aclrtRecordEventWithFlag
        if fn is None:
            return self._missing("aclrtRecordEventWithFlag")
        rc = fn(a0, a1, a2)
        return self._rc(rc) if rc else rc  # OK is 0

    def stream_wait_event_with_flag(self, stream: Any, event: Any, timeout: int,
                                    flag: int) -> int:
        """aclrtStreamWaitEventWithFlag (XS-10; uint32 timeout)."""
        a0 = stream.ptr if stream.__class__ is Handle else as_ptr(stream)
        a1 = event.ptr if event.__class__ is Handle else as_ptr(event)
        a2 = int(timeout) & 0xFFFFFFFF
        a3 = int(flag) & 0xFFFFFFFF
        fn = self._c.aclrtStreamWaitEventWithFlag
        if fn is None:
            return self._missing("aclrtStreamWaitEventWithFlag")
        rc = fn(a0, a1, a2, a3)
        return self._rc(rc) if rc else rc  # OK is 0

    def synchronize_event(self, event: Any) -> int:
        """aclrtSynchronizeEvent: wait for the event's last record."""
        a0 = event.ptr if event.__class__ is Handle else as_ptr(event)
        fn = self._c.aclrtSynchronizeEvent
        if fn is None:
            return self._missing("aclrtSynchronizeEvent")
        rc = fn(a0)
        return self._rc(rc) if rc else rc  # OK is 0

    def synchronize_event_with_timeout(self, event: Any, timeout_ms: int) -> int:
        """aclrtSynchronizeEventWithTimeout (int32 timeout: -1 forever; 507047 at the host
        deadline)."""
        a0 = event.ptr if event.__class__ is Handle else as_ptr(event)
        a1 = int(timeout_ms)
        fn = self._c.aclrtSynchronizeEventWithTimeout
        if fn is None:
            return self._missing("aclrtSynchronizeEventWithTimeout")
        rc = fn(a0, a1)
        return self._rc(rc) if rc else rc  # OK is 0

    # =========================================================================================
    # value write / wait

    def value_write(self, dev_addr: int | None, value: int, flag: int, stream: Any) -> int:
        """aclrtValueWrite."""
        a0 = dev_addr.ptr if dev_addr.__class__ is Handle else as_ptr(dev_addr)
        a1 = int(value) & 0xFFFF_FFFF_FFFF_FFFF
        a2 = int(flag) & 0xFFFFFFFF
        a3 = stream.ptr if stream.__class__ is Handle else as_ptr(stream)
        fn = self._c.aclrtValueWrite
        if fn is None:
            return self._missing("aclrtValueWrite")
        rc = fn(a0, a1, a2, a3)
        return self._rc(rc) if rc else rc  # OK is 0

    def value_wait(self, dev_addr: int | None, value: int, flag: int, stream: Any) -> int:
        """aclrtValueWait."""
        a0 = dev_addr.ptr if dev_addr.__class__ is Handle else as_ptr(dev_addr)
        a1 = int(value) & 0xFFFF_FFFF_FFFF_FFFF
        a2 = int(flag) & 0xFFFFFFFF
        a3 = stream.ptr if stream.__class__ is Handle else as_ptr(stream)
        fn = self._c.aclrtValueWait
        if fn is None:
            return self._missing("aclrtValueWait")
        rc = fn(a0, a1, a2, a3)
        return self._rc(rc) if rc else rc  # OK is 0

    # =========================================================================================
    # kernels

    def binary_load_from_file(self, bin_path: str, options: Any = None) -> tuple[int, Any]:
        """aclrtBinaryLoadFromFile -> (rc, binary handle); ``options`` an
        :class:`~backends.acl.structs.BinaryLoadOptions` or None."""
        fn = self._c.aclrtBinaryLoadFromFile
        if fn is None:
            return self._missing("aclrtBinaryLoadFromFile"), UNWRITTEN
        path = os.fsencode(bin_path) if bin_path is not None else None
        out = c_void_p(PTR_SENTINEL)
        opts = byref(options) if options is not None else None
        rc = self._rc(fn(path, opts, out))
        return rc, out_handle(out.value, "binary")

    def binary_get_function(self, bin_handle: Any, kernel_name: str) -> tuple[int, Any]:
        """aclrtBinaryGetFunction -> (rc, function handle)."""
        fn = self._c.aclrtBinaryGetFunction
        if fn is None:
            return self._missing("aclrtBinaryGetFunction"), UNWRITTEN
        name = kernel_name.encode() if kernel_name is not None else None
        out = c_void_p(PTR_SENTINEL)
        rc = self._rc(fn(as_ptr(bin_handle), name, out))
        return rc, out_handle(out.value, "func")

    def binary_unload(self, bin_handle: Any) -> int:
        """aclrtBinaryUnLoad."""
        a0 = bin_handle.ptr if bin_handle.__class__ is Handle else as_ptr(bin_handle)
        fn = self._c.aclrtBinaryUnLoad
        if fn is None:
            return self._missing("aclrtBinaryUnLoad")
        rc = fn(a0)
        return self._rc(rc) if rc else rc  # OK is 0

    def function_get_param_count(self, func: Any, *,
                                 null_out: bool = False) -> tuple[int, Any]:
        """aclrtFunctionGetParamCount -> (rc, count); ``size_t`` out prefilled with a
        sentinel (FunctionInfoBackend)."""
        fn = self._c.aclrtFunctionGetParamCount
        if fn is None:
            return self._missing("aclrtFunctionGetParamCount"), UNWRITTEN
        if null_out:
            return self._rc(fn(as_ptr(func), None)), UNWRITTEN
        n = c_size_t(PTR_SENTINEL)
        rc = self._rc(fn(as_ptr(func), n))
        return rc, out_size(n.value)

    def function_get_param_info(self, func: Any, index: int, *, null_offset: bool = False,
                                null_size: bool = False) -> tuple[int, Any, Any]:
        """aclrtFunctionGetParamInfo -> (rc, offset, size); each ``size_t`` out prefilled
        with a sentinel, NULL when ``null_offset`` / ``null_size``."""
        fn = self._c.aclrtFunctionGetParamInfo
        if fn is None:
            return self._missing("aclrtFunctionGetParamInfo"), UNWRITTEN, UNWRITTEN
        off, size = c_size_t(PTR_SENTINEL), c_size_t(PTR_SENTINEL)
        rc = self._rc(fn(as_ptr(func), int(index) & 0xFFFF_FFFF_FFFF_FFFF,
                         None if null_offset else off, None if null_size else size))
        return (rc, UNWRITTEN if null_offset else out_size(off.value),
                UNWRITTEN if null_size else out_size(size.value))

    def launch_kernel_with_host_args(self, func_handle: Any, num_blocks: int, stream: Any,
                                     cfg: Any, host_args: bytes | None, args_size: int,
                                     placeholders: Any = None,
                                     placeholder_num: int = 0) -> int:
        """aclrtLaunchKernelWithHostArgs; the runtime copies ``host_args`` during the call
        (the buffer is zero-padded to ``args_size`` so a short one is never over-read)."""
        keep = KeepAlive()
        args = keep.buffer(host_args, args_size or 0)
        if isinstance(cfg, LaunchKernelCfg):
            cfg = cfg_to_c(cfg, keep)
        cfg_p = byref(cfg) if isinstance(cfg, S.LaunchKernelCfg) else cfg
        ph = placeholders if placeholders is None or not isinstance(placeholders, list) \
            else (S.PlaceHolderInfo * len(placeholders))(*placeholders)
        a0 = func_handle.ptr if func_handle.__class__ is Handle else as_ptr(func_handle)
        a1 = int(num_blocks) & 0xFFFFFFFF
        a2 = stream.ptr if stream.__class__ is Handle else as_ptr(stream)
        a5 = int(args_size)
        a7 = int(placeholder_num)
        fn = self._c.aclrtLaunchKernelWithHostArgs
        if fn is None:
            return self._missing("aclrtLaunchKernelWithHostArgs")
        rc = fn(a0, a1, a2, cfg_p, args, a5, ph, a7)
        return self._rc(rc) if rc else rc  # OK is 0

    # =========================================================================================
    # capture

    def capture_begin(self, stream: Any, mode: int) -> int:
        """aclmdlRICaptureBegin."""
        a0 = stream.ptr if stream.__class__ is Handle else as_ptr(stream)
        a1 = int(mode)
        fn = self._c.aclmdlRICaptureBegin
        if fn is None:
            return self._missing("aclmdlRICaptureBegin")
        rc = fn(a0, a1)
        return self._rc(rc) if rc else rc  # OK is 0

    def capture_get_info(self, stream: Any, *, null_status: bool = False,
                         null_model: bool = False) -> tuple[int, Any, Any]:
        """aclmdlRICaptureGetInfo -> (rc, status, model)."""
        fn = self._c.aclmdlRICaptureGetInfo
        if fn is None:
            return self._missing("aclmdlRICaptureGetInfo"), UNWRITTEN, UNWRITTEN
        a0 = stream.ptr if stream.__class__ is Handle else as_ptr(stream)
        st = None if null_status else c_int(I32_SENTINEL)
        model = None if null_model else c_void_p(PTR_SENTINEL)
        rc = fn(a0, st, model)
        if rc != OK:
            rc = self._rc(rc)
        status: Any = UNWRITTEN
        if st is not None:
            v = st.value
            status = _capture_status_out(v, v)
        m = UNWRITTEN if model is None else out_handle(model.value, "model")
        return rc, status, m

    def capture_thread_exchange_mode(self, mode: int | None) -> tuple[int, Any]:
        """aclmdlRICaptureThreadExchangeMode: in ``mode`` (None = NULL), out ``*mode``."""
        fn = self._c.aclmdlRICaptureThreadExchangeMode
        if fn is None:
            return self._missing("aclmdlRICaptureThreadExchangeMode"), UNWRITTEN
        if mode is None:
            return self._rc(fn(None)), UNWRITTEN
        m = c_int(int(mode))
        rc = self._rc(fn(m))
        return rc, _enum(CaptureMode, m.value)

    def capture_end(self, stream: Any, *, null_model: bool = False) -> tuple[int, Any]:
        """aclmdlRICaptureEnd -> (rc, model)."""
        fn = self._c.aclmdlRICaptureEnd
        if fn is None:
            return self._missing("aclmdlRICaptureEnd"), UNWRITTEN
        if null_model:
            return self._rc(fn(as_ptr(stream), None)), UNWRITTEN
        out = c_void_p(PTR_SENTINEL)
        rc = fn(as_ptr(stream), out)
        return (rc if rc == OK else self._rc(rc)), out_handle(out.value, "model")

    # =========================================================================================
    # introspection

    def _two_phase(self, name: str, target: Any, capacity: int | None, null_count: bool,
                   kind: str) -> tuple[int, list[Any] | None, Any]:
        """The GetStreams / GetTasksByStream convention (abi.md §6.2)."""
        if capacity is not None and (not isinstance(capacity, int) or capacity < 0):
            raise ValueError(f"capacity must be None or a non-negative int, got {capacity!r}")
        fn = self._fn(name)
        if fn is None:
            return (self._missing(name), None if capacity is None else [UNWRITTEN] * capacity,
                    UNWRITTEN)
        arr = None
        num = c_uint32(U32_SENTINEL if capacity is None else capacity)
        if capacity is not None:
            arr = (c_void_p * max(capacity, 1))(*([PTR_SENTINEL] * max(capacity, 1)))
        rc = fn(as_ptr(target), arr, None if null_count else num)
        if rc != OK:
            rc = self._rc(rc)
        slots = None if arr is None else [out_handle(arr[i], kind) for i in range(capacity)]
        if null_count:
            n: Any = UNWRITTEN
        elif capacity is None:
            n = out_u32(num.value)
        else:
            n = num.value
        return rc, slots, n

    def get_streams(self, model: Any, capacity: int | None, *,
                    null_count: bool = False) -> tuple[int, list[Any] | None, Any]:
        """aclmdlRIGetStreams (two-phase)."""
        return self._two_phase("aclmdlRIGetStreams", model, capacity, null_count, "stream")

    def get_tasks_by_stream(self, stream: Any, capacity: int | None, *,
                            null_count: bool = False) -> tuple[int, list[Any] | None, Any]:
        """aclmdlRIGetTasksByStream (two-phase)."""
        return self._two_phase("aclmdlRIGetTasksByStream", stream, capacity, null_count, "task")

    def task_get_type(self, task: Any, *, null_out: bool = False) -> tuple[int, Any]:
        """aclmdlRITaskGetType -> (rc, TaskType)."""
        fn = self._c.aclmdlRITaskGetType
        if fn is None:
            return self._missing("aclmdlRITaskGetType"), UNWRITTEN
        if null_out:
            return self._rc(fn(as_ptr(task), None)), UNWRITTEN
        a0 = task.ptr if task.__class__ is Handle else as_ptr(task)
        out = c_int(I32_SENTINEL)
        rc = fn(a0, out)
        v = out.value
        return (rc if rc == OK else self._rc(rc)), _task_type_out(v, v)

    def task_get_seq_id(self, task: Any, *, null_out: bool = False) -> tuple[int, Any]:
        """aclmdlRITaskGetSeqId -> (rc, id)."""
        fn = self._c.aclmdlRITaskGetSeqId
        if fn is None:
            return self._missing("aclmdlRITaskGetSeqId"), UNWRITTEN
        if null_out:
            return self._rc(fn(as_ptr(task), None)), UNWRITTEN
        a0 = task.ptr if task.__class__ is Handle else as_ptr(task)
        out = c_uint32(U32_SENTINEL)
        rc = fn(a0, out)
        v = out.value
        return (rc if rc == OK else self._rc(rc)), (UNWRITTEN if v == U32_SENTINEL else v)

    def task_get_params(self, task: Any, *, null_out: bool = False) -> tuple[int, Any]:
        """aclmdlRITaskGetParams -> (rc, TaskParams); the struct is prefilled with 0xA5 so
        what the runtime zeroes (reserved fields, union tail) is observable."""
        fn = self._c.aclmdlRITaskGetParams
        if fn is None:
            return self._missing("aclmdlRITaskGetParams"), UNWRITTEN
        if null_out:
            return self._rc(fn(as_ptr(task), None)), UNWRITTEN
        c = sentinel_params()
        rc = self._rc(fn(as_ptr(task), byref(c)))
        return rc, (UNWRITTEN if untouched(c) else params_from_c(c))

    def task_set_params(self, task: Any, params: TaskParams | None) -> int:
        """aclmdlRITaskSetParams; host buffers (host args, opInfo blob) stay alive with the
        task until the backend closes."""
        fn = self._c.aclmdlRITaskSetParams
        if fn is None:
            return self._missing("aclmdlRITaskSetParams")
        if params is None:
            return self._rc(fn(as_ptr(task), None))
        keep = KeepAlive()
        c = params_to_c(params, keep)
        rc = self._rc(fn(as_ptr(task), byref(c)))
        if keep:
            with self._lock:
                self._keep.setdefault(as_ptr(task) or 0, KeepAlive()).extend(keep)
        return rc

    def task_disable(self, task: Any) -> int:
        """aclmdlRITaskDisable."""
        a0 = task.ptr if task.__class__ is Handle else as_ptr(task)
        fn = self._c.aclmdlRITaskDisable
        if fn is None:
            return self._missing("aclmdlRITaskDisable")
        rc = fn(a0)
        return self._rc(rc) if rc else rc  # OK is 0

    def update(self, model: Any) -> int:
        """aclmdlRIUpdate."""
        a0 = model.ptr if model.__class__ is Handle else as_ptr(model)
        fn = self._c.aclmdlRIUpdate
        if fn is None:
            return self._missing("aclmdlRIUpdate")
        rc = fn(a0)
        return self._rc(rc) if rc else rc  # OK is 0

    # =========================================================================================
    # execute / destroy

    def execute_async(self, model: Any, stream: Any) -> int:
        """aclmdlRIExecuteAsync."""
        a0 = model.ptr if model.__class__ is Handle else as_ptr(model)
        a1 = stream.ptr if stream.__class__ is Handle else as_ptr(stream)
        fn = self._c.aclmdlRIExecuteAsync
        if fn is None:
            return self._missing("aclmdlRIExecuteAsync")
        rc = fn(a0, a1)
        return self._rc(rc) if rc else rc  # OK is 0

    def destroy(self, model: Any) -> int:
        """aclmdlRIDestroy (the model's destroy callbacks run inside it)."""
        rc = self._call("aclmdlRIDestroy", as_ptr(model))
        if rc == OK:
            self._drop_callbacks(as_ptr(model))
        return rc

    # =========================================================================================
    # ExtendedBackend: task groups (TG)

    def capture_task_grp_begin(self, stream: Any) -> int:
        """aclmdlRICaptureTaskGrpBegin."""
        a0 = stream.ptr if stream.__class__ is Handle else as_ptr(stream)
        fn = self._c.aclmdlRICaptureTaskGrpBegin
        if fn is None:
            return self._missing("aclmdlRICaptureTaskGrpBegin")
        rc = fn(a0)
        return self._rc(rc) if rc else rc  # OK is 0

    def capture_task_grp_end(self, stream: Any, *, null_handle: bool = False) -> tuple[int, Any]:
        """aclmdlRICaptureTaskGrpEnd -> (rc, task group); UNWRITTEN when not written."""
        fn = self._c.aclmdlRICaptureTaskGrpEnd
        if fn is None:
            return self._missing("aclmdlRICaptureTaskGrpEnd"), UNWRITTEN
        if null_handle:
            return self._rc(fn(as_ptr(stream), None)), UNWRITTEN
        out = c_void_p(PTR_SENTINEL)
        rc = self._rc(fn(as_ptr(stream), out))
        return rc, out_handle(out.value, "taskgrp")

    def capture_task_update_begin(self, stream: Any, handle: Any) -> int:
        """aclmdlRICaptureTaskUpdateBegin."""
        a0 = stream.ptr if stream.__class__ is Handle else as_ptr(stream)
        a1 = handle.ptr if handle.__class__ is Handle else as_ptr(handle)
        fn = self._c.aclmdlRICaptureTaskUpdateBegin
        if fn is None:
            return self._missing("aclmdlRICaptureTaskUpdateBegin")
        rc = fn(a0, a1)
        return self._rc(rc) if rc else rc  # OK is 0

    def capture_task_update_end(self, stream: Any) -> int:
        """aclmdlRICaptureTaskUpdateEnd."""
        a0 = stream.ptr if stream.__class__ is Handle else as_ptr(stream)
        fn = self._c.aclmdlRICaptureTaskUpdateEnd
        if fn is None:
            return self._missing("aclmdlRICaptureTaskUpdateEnd")
        rc = fn(a0)
        return self._rc(rc) if rc else rc  # OK is 0

    # =========================================================================================
    # ExtendedBackend: explicit build (BLD), synchronous execution, abort

    def build_begin(self, flag: int, *, null_model: bool = False) -> tuple[int, Any]:
        """aclmdlRIBuildBegin(&model, flag) -> (rc, model)."""
        fn = self._c.aclmdlRIBuildBegin
        if fn is None:
            return self._missing("aclmdlRIBuildBegin"), UNWRITTEN
        if null_model:
            return self._rc(fn(None, int(flag) & 0xFFFFFFFF)), UNWRITTEN
        out = c_void_p(PTR_SENTINEL)
        rc = self._rc(fn(out, int(flag) & 0xFFFFFFFF))
        return rc, out_handle(out.value, "model")

    def bind_stream(self, model: Any, stream: Any, flag: int) -> int:
        """aclmdlRIBindStream."""
        a0 = model.ptr if model.__class__ is Handle else as_ptr(model)
        a1 = stream.ptr if stream.__class__ is Handle else as_ptr(stream)
        a2 = int(flag) & 0xFFFFFFFF
        fn = self._c.aclmdlRIBindStream
        if fn is None:
            return self._missing("aclmdlRIBindStream")
        rc = fn(a0, a1, a2)
        return self._rc(rc) if rc else rc  # OK is 0

    def end_task(self, model: Any, stream: Any) -> int:
        """aclmdlRIEndTask."""
        a0 = model.ptr if model.__class__ is Handle else as_ptr(model)
        a1 = stream.ptr if stream.__class__ is Handle else as_ptr(stream)
        fn = self._c.aclmdlRIEndTask
        if fn is None:
            return self._missing("aclmdlRIEndTask")
        rc = fn(a0, a1)
        return self._rc(rc) if rc else rc  # OK is 0

    def build_end(self, model: Any, reserve: Any = None) -> int:
        """aclmdlRIBuildEnd (``reserve`` None = NULL; anything else a non-NULL pointer)."""
        keep = KeepAlive()
        try:
            res = as_ptr(reserve)
        except TypeError:
            res = keep.buffer(bytes(8))
        a0 = model.ptr if model.__class__ is Handle else as_ptr(model)
        fn = self._c.aclmdlRIBuildEnd
        if fn is None:
            return self._missing("aclmdlRIBuildEnd")
        rc = fn(a0, res)
        return self._rc(rc) if rc else rc  # OK is 0

    def unbind_stream(self, model: Any, stream: Any) -> int:
        """aclmdlRIUnbindStream."""
        a0 = model.ptr if model.__class__ is Handle else as_ptr(model)
        a1 = stream.ptr if stream.__class__ is Handle else as_ptr(stream)
        fn = self._c.aclmdlRIUnbindStream
        if fn is None:
            return self._missing("aclmdlRIUnbindStream")
        rc = fn(a0, a1)
        return self._rc(rc) if rc else rc  # OK is 0

    def execute(self, model: Any, timeout_ms: int) -> int:
        """aclmdlRIExecute (synchronous; int32 timeout in ms, -1 forever)."""
        t = int(timeout_ms)
        t = t if -(1 << 31) <= t < (1 << 31) else ((t & 0xFFFFFFFF) ^ 0x80000000) - 0x80000000
        a0 = model.ptr if model.__class__ is Handle else as_ptr(model)
        fn = self._c.aclmdlRIExecute
        if fn is None:
            return self._missing("aclmdlRIExecute")
        rc = fn(a0, t)
        return self._rc(rc) if rc else rc  # OK is 0

    def abort(self, model: Any) -> int:
        """aclmdlRIAbort."""
        a0 = model.ptr if model.__class__ is Handle else as_ptr(model)
        fn = self._c.aclmdlRIAbort
        if fn is None:
            return self._missing("aclmdlRIAbort")
        rc = fn(a0)
        return self._rc(rc) if rc else rc  # OK is 0

    # =========================================================================================
    # ExtendedBackend: stream activation / switch and labels on bound streams

    def active_stream(self, active_stream: Any, stream: Any) -> int:
        """aclrtActiveStream."""
        a0 = active_stream.ptr if active_stream.__class__ is Handle else as_ptr(active_stream)
        a1 = stream.ptr if stream.__class__ is Handle else as_ptr(stream)
        fn = self._c.aclrtActiveStream
        if fn is None:
            return self._missing("aclrtActiveStream")
        rc = fn(a0, a1)
        return self._rc(rc) if rc else rc  # OK is 0

    def switch_stream(self, left_value: int | None, cond: int, right_value: int | None,
                      data_type: int, true_stream: Any, false_stream: Any, stream: Any) -> int:
        """aclrtSwitchStream (device addresses as ints; enums as C ints)."""
        a0 = left_value.ptr if left_value.__class__ is Handle else as_ptr(left_value)
        a1 = int(cond)
        a2 = right_value.ptr if right_value.__class__ is Handle else as_ptr(right_value)
        a3 = int(data_type)
        a4 = true_stream.ptr if true_stream.__class__ is Handle else as_ptr(true_stream)
        a5 = false_stream.ptr if false_stream.__class__ is Handle else as_ptr(false_stream)
        a6 = stream.ptr if stream.__class__ is Handle else as_ptr(stream)
        fn = self._c.aclrtSwitchStream
        if fn is None:
            return self._missing("aclrtSwitchStream")
        rc = fn(a0, a1, a2, a3, a4, a5, a6)
        return self._rc(rc) if rc else rc  # OK is 0

    def create_label(self) -> tuple[int, Any]:
        """aclrtCreateLabel -> (rc, label)."""
        return self._out_call("aclrtCreateLabel", "label")

    def destroy_label(self, label: Any) -> int:
        """aclrtDestroyLabel."""
        a0 = label.ptr if label.__class__ is Handle else as_ptr(label)
        fn = self._c.aclrtDestroyLabel
        if fn is None:
            return self._missing("aclrtDestroyLabel")
        rc = fn(a0)
        return self._rc(rc) if rc else rc  # OK is 0

    def set_label(self, label: Any, stream: Any) -> int:
        """aclrtSetLabel."""
        a0 = label.ptr if label.__class__ is Handle else as_ptr(label)
        a1 = stream.ptr if stream.__class__ is Handle else as_ptr(stream)
        fn = self._c.aclrtSetLabel
        if fn is None:
            return self._missing("aclrtSetLabel")
        rc = fn(a0, a1)
        return self._rc(rc) if rc else rc  # OK is 0

    def create_label_list(self, labels: list[Any] | None, num: int, *,
                          null_list: bool = False) -> tuple[int, Any]:
        """aclrtCreateLabelList(labels, num, &list): ``labels`` None is NULL; the C array has
        max(num, len(labels)) slots, NULL past the given labels; ``null_list``: a NULL
        labelList."""
        fn = self._c.aclrtCreateLabelList
        if fn is None:
            return self._missing("aclrtCreateLabelList"), UNWRITTEN
        arr = None
        if labels is not None:
            n = max(int(num), len(labels), 1) if 0 <= int(num) <= 65536 else max(len(labels), 1)
            arr = (c_void_p * n)(*[as_ptr(x) for x in labels])
        out = c_void_p(PTR_SENTINEL)
        rc = self._rc(fn(arr, int(num) & 0xFFFFFFFFFFFFFFFF, None if null_list else out))
        return rc, UNWRITTEN if null_list else out_handle(out.value, "label-list")

    def destroy_label_list(self, label_list: Any) -> int:
        """aclrtDestroyLabelList."""
        a0 = label_list.ptr if label_list.__class__ is Handle else as_ptr(label_list)
        fn = self._c.aclrtDestroyLabelList
        if fn is None:
            return self._missing("aclrtDestroyLabelList")
        rc = fn(a0)
        return self._rc(rc) if rc else rc  # OK is 0

    def switch_label_by_index(self, ptr: int | None, max_value: int, label_list: Any,
                              stream: Any) -> int:
        """aclrtSwitchLabelByIndex."""
        a0 = ptr.ptr if ptr.__class__ is Handle else as_ptr(ptr)
        a1 = int(max_value) & 0xFFFFFFFF
        a2 = label_list.ptr if label_list.__class__ is Handle else as_ptr(label_list)
        a3 = stream.ptr if stream.__class__ is Handle else as_ptr(stream)
        fn = self._c.aclrtSwitchLabelByIndex
        if fn is None:
            return self._missing("aclrtSwitchLabelByIndex")
        rc = fn(a0, a1, a2, a3)
        return self._rc(rc) if rc else rc  # OK is 0

    # =========================================================================================
    # ExtendedBackend: conditional tasks and sub-models (COND)

    def cond_handle_create(self, model: Any, default_launch_value: int, flag: int, *,
                           null_handle: bool = False) -> tuple[int, Any]:
        """aclmdlRICondHandleCreate -> (rc, cond handle)."""
        fn = self._c.aclmdlRICondHandleCreate
        if fn is None:
            return self._missing("aclmdlRICondHandleCreate"), UNWRITTEN
        args = (as_ptr(model), int(default_launch_value) & 0xFFFFFFFF, int(flag) & 0xFFFFFFFF)
        if null_handle:
            return self._rc(fn(*args, None)), UNWRITTEN
        out = c_void_p(PTR_SENTINEL)
        rc = self._rc(fn(*args, out))
        return rc, out_handle(out.value, "cond")

    def cond_handle_get_cond_ptr(self, handle: Any, *, null_out: bool = False) -> tuple[int, Any]:
        """aclmdlRICondHandleGetCondPtr -> (rc, device address of the 8-byte value)."""
        fn = self._c.aclmdlRICondHandleGetCondPtr
        if fn is None:
            return self._missing("aclmdlRICondHandleGetCondPtr"), UNWRITTEN
        if null_out:
            return self._rc(fn(as_ptr(handle), None)), UNWRITTEN
        out = c_void_p(PTR_SENTINEL)
        rc = self._rc(fn(as_ptr(handle), out))
        if out.value == PTR_SENTINEL:
            return rc, UNWRITTEN
        return rc, out.value or None

    def add_cond_task(self, params: CondTaskParams, stream: Any,
                      flags: int) -> tuple[int, list[Any] | None]:
        """aclmdlRIAddCondTask(params by value) -> (rc, the model_ri_array slots after the
        call). The array has ``params.model_ri_array`` slots (None = NULL), prefilled with a
        sentinel; it is allocated large enough for ``size`` writes so the runtime never
        overruns it."""
        fn = self._c.aclmdlRIAddCondTask
        length = params.model_ri_array
        if fn is None:
            return (self._missing("aclmdlRIAddCondTask"),
                    None if length is None else [UNWRITTEN] * int(length))
        size = int(params.size) & 0xFFFFFFFF
        c = S.CondTaskParams()
        c.handle = as_ptr(params.handle)
        c.type = int(params.type) & 0xFFFFFFFF
        c.size = size
        arr = None
        if length is not None:
            n = max(int(length), min(size, 1 << 16), 1)
            arr = (c_void_p * n)(*([PTR_SENTINEL] * n))
            c.modelRIArray = ctypes.cast(arr, ctypes.POINTER(c_void_p))
        rc = self._rc(fn(c, as_ptr(stream), int(flags) & 0xFFFFFFFF))
        slots = None if arr is None else [out_handle(arr[i], "model")
                                          for i in range(int(length))]
        return rc, slots

    def capture_to_model_ri_begin(self, stream: Any, model: Any, mode: int) -> int:
        """aclmdlRICaptureToModelRIBegin."""
        a0 = stream.ptr if stream.__class__ is Handle else as_ptr(stream)
        a1 = model.ptr if model.__class__ is Handle else as_ptr(model)
        a2 = int(mode)
        fn = self._c.aclmdlRICaptureToModelRIBegin
        if fn is None:
            return self._missing("aclmdlRICaptureToModelRIBegin")
        rc = fn(a0, a1, a2)
        return self._rc(rc) if rc else rc  # OK is 0

    # =========================================================================================
    # ExtendedBackend: names, ids, debug (NAME, DBG)

    def set_name(self, model: Any, name: str | None) -> int:
        """aclmdlRISetName (UTF-8)."""
        raw = None if name is None else name.encode()
        a0 = model.ptr if model.__class__ is Handle else as_ptr(model)
        fn = self._c.aclmdlRISetName
        if fn is None:
            return self._missing("aclmdlRISetName")
        rc = fn(a0, raw)
        return self._rc(rc) if rc else rc  # OK is 0

    def get_name(self, model: Any, max_len: int, *, null_buf: bool = False) -> tuple[int, Any]:
        """aclmdlRIGetName -> (rc, the buffer's string up to its NUL, or UNWRITTEN). The
        ``max_len``-byte buffer is prefilled with a sentinel byte."""
        fn = self._c.aclmdlRIGetName
        if fn is None:
            return self._missing("aclmdlRIGetName"), UNWRITTEN
        n = int(max_len) & 0xFFFFFFFF
        if null_buf:
            return self._rc(fn(as_ptr(model), n, None)), UNWRITTEN
        size = max(min(n, 1 << 20), 1)
        buf = ctypes.create_string_buffer(bytes([BYTE_SENTINEL]) * size, size)
        rc = self._rc(fn(as_ptr(model), n, ctypes.addressof(buf)))
        raw = buf.raw
        if raw == bytes([BYTE_SENTINEL]) * size:
            return rc, UNWRITTEN
        return rc, raw.split(b"\0", 1)[0].decode(errors="replace")

    def get_id(self, model: Any, *, null_out: bool = False) -> tuple[int, Any]:
        """aclmdlRIGetId -> (rc, id)."""
        fn = self._c.aclmdlRIGetId
        if fn is None:
            return self._missing("aclmdlRIGetId"), UNWRITTEN
        if null_out:
            return self._rc(fn(as_ptr(model), None)), UNWRITTEN
        i = c_uint32(U32_SENTINEL)
        rc = self._rc(fn(as_ptr(model), i))
        return rc, out_u32(i.value)

    def debug_json_print(self, model: Any, path: str | None, flags: int) -> int:
        """aclmdlRIDebugJsonPrint."""
        raw = None if path is None else os.fsencode(path)
        a0 = model.ptr if model.__class__ is Handle else as_ptr(model)
        a2 = int(flags) & 0xFFFFFFFF
        fn = self._c.aclmdlRIDebugJsonPrint
        if fn is None:
            return self._missing("aclmdlRIDebugJsonPrint")
        rc = fn(a0, raw, a2)
        return self._rc(rc) if rc else rc  # OK is 0

    def debug_print(self, model: Any) -> int:
        """aclmdlRIDebugPrint."""
        a0 = model.ptr if model.__class__ is Handle else as_ptr(model)
        fn = self._c.aclmdlRIDebugPrint
        if fn is None:
            return self._missing("aclmdlRIDebugPrint")
        rc = fn(a0)
        return self._rc(rc) if rc else rc  # OK is 0

    # =========================================================================================
    # ExtendedBackend: destroy callbacks (LIFE-09..14)

    def _thunk(self, model: Any, func: Any) -> list[Any]:
        """The kept ``[thunk, slot, func]`` of ``func`` on ``model`` (a new, unkept one when
        there is none): one C function pointer per Python callable and model."""
        key = (as_ptr(model) or 0, id(func))
        with self._lock:
            entry = self._callbacks.get(key)
        if entry is not None:
            return entry
        slot: dict[str, Any] = {"data": None}

        def trampoline(_user_data: Any, func: Any = func, slot: dict[str, Any] = slot) -> None:
            func(slot["data"])

        return [S.Callback(trampoline), slot, func]

    def _drop_callbacks(self, model_ptr: int | None) -> None:
        with self._lock:
            for key in [k for k in self._callbacks if k[0] == (model_ptr or 0)]:
                del self._callbacks[key]

    def destroy_register_callback(self, model: Any, func: Any, user_data: Any) -> int:
        """aclmdlRIDestroyRegisterCallback: ``func(user_data)`` runs inside Destroy; the C
        callback is a CFUNCTYPE(None, c_void_p) thunk kept alive until unregistered or the
        model is destroyed; identity is the Python callable (None = NULL)."""
        fn = self._c.aclmdlRIDestroyRegisterCallback
        if fn is None:
            return self._missing("aclmdlRIDestroyRegisterCallback")
        ud = user_data if isinstance(user_data, int) and not isinstance(user_data, bool) \
            else None
        if func is None:
            return self._rc(fn(as_ptr(model), S.Callback(), ud))  # NULL function pointer
        entry = self._thunk(model, func)
        rc = self._rc(fn(as_ptr(model), entry[0], ud))
        if rc == OK:
            entry[1]["data"] = user_data
            with self._lock:
                self._callbacks[(as_ptr(model) or 0, id(func))] = entry
        return rc

    def destroy_unregister_callback(self, model: Any, func: Any) -> int:
        """aclmdlRIDestroyUnregisterCallback (by the Python callable)."""
        fn = self._c.aclmdlRIDestroyUnregisterCallback
        if fn is None:
            return self._missing("aclmdlRIDestroyUnregisterCallback")
        if func is None:
            return self._rc(fn(as_ptr(model), S.Callback()))  # NULL function pointer
        entry = self._thunk(model, func)
        rc = self._rc(fn(as_ptr(model), entry[0]))
        if rc == OK:
            with self._lock:
                self._callbacks.pop((as_ptr(model) or 0, id(func)), None)
        return rc

    # =========================================================================================
    # ExtendedBackend: kernel attributes (ATTR)

    def kernel_task_get_attribute(self, task: Any, attr_id: int, *,
                                  null_out: bool = False) -> tuple[int, Any]:
        """aclmdlRIKernelTaskGetAttribute -> (rc, value as LaunchAttr.value); the 16-byte
        value union is prefilled with a sentinel."""
        fn = self._c.aclmdlRIKernelTaskGetAttribute
        if fn is None:
            return self._missing("aclmdlRIKernelTaskGetAttribute"), UNWRITTEN
        if null_out:
            return self._rc(fn(as_ptr(task), int(attr_id), None)), UNWRITTEN
        v = S.LaunchKernelAttrValue()
        ctypes.memset(ctypes.addressof(v), BYTE_SENTINEL, ctypes.sizeof(v))
        rc = self._rc(fn(as_ptr(task), int(attr_id), byref(v)))
        if untouched(v):
            return rc, UNWRITTEN
        return rc, attr_value_from_c(attr_id, v)


def _catalog_names() -> frozenset[str]:
    """The kernel catalog's names (kernel/catalog.py)."""
    from mdlri_conformance.kernel import catalog

    return frozenset(catalog.KERNELS)


#: raw enum out-parameter (a ``c_int``) -> the contract's value, made at load (out_map)
#: bound ``.get`` of each table: ``_task_type_out(v, v)`` (an unknown value stays the raw int)
_task_type_out = out_map(TaskType, I32_SENTINEL).get
_stream_status_out = out_map(StreamStatus, I32_SENTINEL).get
_capture_status_out = out_map(CaptureStatus, I32_SENTINEL).get


def _enum(cls: Any, value: Any) -> Any:
    """``cls(value)`` when it is a known enumerator, else the raw value (or UNWRITTEN)."""
    if value is UNWRITTEN:
        return value
    try:
        return cls(value)
    except ValueError:
        return value


#: contract method -> C function (for unsupported_reason(method_name))
def _c_names() -> dict[str, str]:
    """Method name -> the C function it wraps: the first ``"acl..."`` literal or
    ``self._c.acl...`` attribute in the method's own source that names a bound symbol (read
    from the code, so it cannot drift from it)."""
    names: dict[str, str] = {}
    for name, fn in vars(AclBackend).items():
        if name.startswith("_") or not callable(fn):
            continue
        try:
            src = inspect.getsource(fn)
        except (OSError, TypeError):  # no source (a frozen or stripped install)
            continue
        found = [lit for lit in re.findall(r'(?:"|self\._c\.)(acl\w+)', src)
                 if lit in _SIGNATURES]
        if found:
            names[name] = found[0]
    return names



from .symbols import SIGNATURES as _SIGNATURES  # noqa: E402

_SIG_NAMES = frozenset(_SIGNATURES)
#: method name -> C function name (for unsupported_reason(method))
_C_NAMES: dict[str, str] = _c_names()

__all__ = ["AclBackend", "AclRc", "Handle", "handle"]
