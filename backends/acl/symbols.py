"""The lazy symbol table: every C function the binding calls, with restype and argtypes.

A symbol is looked up on first use, and only once (the backend's :class:`Prepared` asks for
all of them when it is built); many ``aclmdlRI*`` functions are experimental and absent from
older CANN builds (abi.md §7.14). A missing one is remembered with a one-line reason;
the backend then answers ``207000`` (RT_FEATURE_NOT_SUPPORT) carrying that reason, so the
dependent specs are UNSUPPORTED with it, never FAIL.

Types follow abi.md §7: handles ``c_void_p`` (never the default ``int``), enums ``c_int``,
``int32_t`` timeouts ``c_int32``, ``size_t`` ``c_size_t``, ``uint64_t`` ``c_uint64``; the
two string getters are ``c_char_p`` with empty argtypes.
"""

from __future__ import annotations

import ctypes
import threading
from ctypes import (POINTER, c_char_p, c_int, c_int32, c_size_t, c_uint32, c_uint64, c_void_p)
from typing import Any, Callable

from . import structs as S

_P = POINTER(c_void_p)
_ERR = c_int

#: C name -> (restype, argtypes)
SIGNATURES: dict[str, tuple[Any, list[Any]]] = {
    # init / device / info (abi.md §3.1)
    "aclInit": (_ERR, [c_char_p]),
    "aclFinalize": (_ERR, []),
    "aclrtSetDevice": (_ERR, [c_int32]),
    "aclrtResetDevice": (_ERR, [c_int32]),
    "aclrtGetDeviceCount": (_ERR, [POINTER(c_uint32)]),
    "aclrtGetDevice": (_ERR, [POINTER(c_int32)]),
    "aclrtGetCurrentContext": (_ERR, [_P]),
    "aclrtGetVersion": (_ERR, [POINTER(c_int32), POINTER(c_int32), POINTER(c_int32)]),
    "aclrtGetSocName": (c_char_p, []),
    "aclGetRecentErrMsg": (c_char_p, []),
    # streams (§3.2)
    "aclrtCreateStream": (_ERR, [_P]),
    "aclrtCreateStreamWithConfig": (_ERR, [_P, c_uint32, c_uint32]),
    "aclrtDestroyStream": (_ERR, [c_void_p]),
    "aclrtSynchronizeStream": (_ERR, [c_void_p]),
    "aclrtSynchronizeStreamWithTimeout": (_ERR, [c_void_p, c_int32]),
    "aclrtStreamQuery": (_ERR, [c_void_p, POINTER(c_int)]),
    # memory (§3.3)
    "aclrtMalloc": (_ERR, [_P, c_size_t, c_int]),
    "aclrtFree": (_ERR, [c_void_p]),
    "aclrtMallocHost": (_ERR, [_P, c_size_t]),
    "aclrtFreeHost": (_ERR, [c_void_p]),
    "aclrtMemcpy": (_ERR, [c_void_p, c_size_t, c_void_p, c_size_t, c_int]),
    "aclrtMemcpyAsync": (_ERR, [c_void_p, c_size_t, c_void_p, c_size_t, c_int, c_void_p]),
    "aclrtMemset": (_ERR, [c_void_p, c_size_t, c_int32, c_size_t]),
    "aclrtMemsetAsync": (_ERR, [c_void_p, c_size_t, c_int32, c_size_t, c_void_p]),
    "aclrtPointerGetAttributes": (_ERR, [c_void_p, POINTER(S.PtrAttributes)]),
    # events (§3.4)
    "aclrtCreateEvent": (_ERR, [_P]),
    "aclrtCreateEventWithFlag": (_ERR, [_P, c_uint32]),
    "aclrtCreateEventExWithFlag": (_ERR, [_P, c_uint32]),
    "aclrtDestroyEvent": (_ERR, [c_void_p]),
    "aclrtRecordEvent": (_ERR, [c_void_p, c_void_p]),
    "aclrtStreamWaitEvent": (_ERR, [c_void_p, c_void_p]),
    "aclrtResetEvent": (_ERR, [c_void_p, c_void_p]),
    "aclrtRecordEventWithFlag": (_ERR, [c_void_p, c_void_p, c_uint32]),
    "aclrtStreamWaitEventWithFlag": (_ERR, [c_void_p, c_void_p, c_uint32, c_uint32]),
    "aclrtSynchronizeEvent": (_ERR, [c_void_p]),
    "aclrtSynchronizeEventWithTimeout": (_ERR, [c_void_p, c_int32]),
    # value write / wait (§3.5)
    "aclrtValueWrite": (_ERR, [c_void_p, c_uint64, c_uint32, c_void_p]),
    "aclrtValueWait": (_ERR, [c_void_p, c_uint64, c_uint32, c_void_p]),
    # kernels (§3.6)
    "aclrtBinaryLoadFromFile": (_ERR, [c_char_p, POINTER(S.BinaryLoadOptions), _P]),
    "aclrtBinaryGetFunction": (_ERR, [c_void_p, c_char_p, _P]),
    "aclrtBinaryUnLoad": (_ERR, [c_void_p]),
    # kernel parameter layout (acl_rt.h:5773, 5787; KRN-02, KRN-03): size_t counts and offsets
    "aclrtFunctionGetParamCount": (_ERR, [c_void_p, POINTER(c_size_t)]),
    "aclrtFunctionGetParamInfo": (_ERR, [c_void_p, c_size_t, POINTER(c_size_t),
                                         POINTER(c_size_t)]),
    "aclrtLaunchKernelWithHostArgs": (_ERR, [c_void_p, c_uint32, c_void_p,
                                             POINTER(S.LaunchKernelCfg), c_void_p, c_size_t,
                                             POINTER(S.PlaceHolderInfo), c_size_t]),
    # capture (§2.1)
    "aclmdlRICaptureBegin": (_ERR, [c_void_p, c_int]),
    "aclmdlRICaptureGetInfo": (_ERR, [c_void_p, POINTER(c_int), _P]),
    "aclmdlRICaptureThreadExchangeMode": (_ERR, [POINTER(c_int)]),
    "aclmdlRICaptureEnd": (_ERR, [c_void_p, _P]),
    # introspection and update (§2.4)
    "aclmdlRIGetStreams": (_ERR, [c_void_p, _P, POINTER(c_uint32)]),
    "aclmdlRIGetTasksByStream": (_ERR, [c_void_p, _P, POINTER(c_uint32)]),
    "aclmdlRITaskGetType": (_ERR, [c_void_p, POINTER(c_int)]),
    "aclmdlRITaskGetSeqId": (_ERR, [c_void_p, POINTER(c_uint32)]),
    "aclmdlRITaskGetParams": (_ERR, [c_void_p, POINTER(S.TaskParams)]),
    "aclmdlRITaskSetParams": (_ERR, [c_void_p, POINTER(S.TaskParams)]),
    "aclmdlRITaskDisable": (_ERR, [c_void_p]),
    "aclmdlRIUpdate": (_ERR, [c_void_p]),
    # execute / lifetime (§2.3)
    "aclmdlRIExecuteAsync": (_ERR, [c_void_p, c_void_p]),
    "aclmdlRIDestroy": (_ERR, [c_void_p]),
    # task groups (§2.1)
    "aclmdlRICaptureTaskGrpBegin": (_ERR, [c_void_p]),
    "aclmdlRICaptureTaskGrpEnd": (_ERR, [c_void_p, _P]),
    "aclmdlRICaptureTaskUpdateBegin": (_ERR, [c_void_p, c_void_p]),
    "aclmdlRICaptureTaskUpdateEnd": (_ERR, [c_void_p]),
    # explicit build (§2.2) and synchronous execution (§2.3)
    "aclmdlRIBuildBegin": (_ERR, [_P, c_uint32]),
    "aclmdlRIBindStream": (_ERR, [c_void_p, c_void_p, c_uint32]),
    "aclmdlRIEndTask": (_ERR, [c_void_p, c_void_p]),
    "aclmdlRIBuildEnd": (_ERR, [c_void_p, c_void_p]),
    "aclmdlRIUnbindStream": (_ERR, [c_void_p, c_void_p]),
    "aclmdlRIExecute": (_ERR, [c_void_p, c_int32]),
    "aclmdlRIAbort": (_ERR, [c_void_p]),
    # names, ids, debug (§2.3)
    "aclmdlRISetName": (_ERR, [c_void_p, c_char_p]),
    "aclmdlRIGetName": (_ERR, [c_void_p, c_uint32, c_void_p]),
    "aclmdlRIGetId": (_ERR, [c_void_p, POINTER(c_uint32)]),
    "aclmdlRIDebugJsonPrint": (_ERR, [c_void_p, c_char_p, c_uint32]),
    "aclmdlRIDebugPrint": (_ERR, [c_void_p]),
    # destroy callbacks (§2.3; aclrtCallback = CFUNCTYPE(None, c_void_p), §7.12)
    "aclmdlRIDestroyRegisterCallback": (_ERR, [c_void_p, S.Callback, c_void_p]),
    "aclmdlRIDestroyUnregisterCallback": (_ERR, [c_void_p, S.Callback]),
    # kernel attributes (§2.4)
    "aclmdlRIKernelTaskGetAttribute": (_ERR, [c_void_p, c_int,
                                              POINTER(S.LaunchKernelAttrValue)]),
    # conditional tasks and sub-models (§2.5; the params struct by value, §7.9)
    "aclmdlRICondHandleCreate": (_ERR, [c_void_p, c_uint32, c_int, _P]),
    "aclmdlRICondHandleGetCondPtr": (_ERR, [c_void_p, _P]),
    "aclmdlRIAddCondTask": (_ERR, [S.CondTaskParams, c_void_p, c_uint32]),
    "aclmdlRICaptureToModelRIBegin": (_ERR, [c_void_p, c_void_p, c_int]),
    # stream activation / switch and labels on bound streams (api docs)
    "aclrtActiveStream": (_ERR, [c_void_p, c_void_p]),
    "aclrtSwitchStream": (_ERR, [c_void_p, c_int, c_void_p, c_int, c_void_p, c_void_p,
                                 c_void_p]),
    "aclrtCreateLabel": (_ERR, [_P]),
    "aclrtSetLabel": (_ERR, [c_void_p, c_void_p]),
    "aclrtDestroyLabel": (_ERR, [c_void_p]),
    "aclrtCreateLabelList": (_ERR, [_P, c_size_t, _P]),
    "aclrtDestroyLabelList": (_ERR, [c_void_p]),
    "aclrtSwitchLabelByIndex": (_ERR, [c_void_p, c_uint32, c_void_p, c_void_p]),
    # host ABI emulator extras (backends/acl/emulator)
    "mdlriEmuVersion": (c_char_p, []),
    "mdlriEmuLiveCounts": (_ERR, [POINTER(c_uint64)] * 4),
    "mdlriEmuLiveLabels": (_ERR, [POINTER(c_uint64)]),
    "mdlriEmuResourceLimits": (_ERR, [POINTER(c_uint32)] * 2),
}


class SymbolTable:
    """Resolves C functions of one library on first use; ``None`` for a missing one.

    A resolved function is prepared once: restype and argtypes set when it is first looked
    up, never again (:class:`Prepared` serves them to the binding as attributes)."""

    def __init__(self, lib: ctypes.CDLL | None, lib_desc: str, absent_reason: str = "") -> None:
        self.lib = lib
        self.lib_desc = lib_desc
        self.absent_reason = absent_reason
        self._cache: dict[str, Callable[..., Any] | None] = {}
        self._missing: dict[str, str] = {}
        self._lock = threading.Lock()

    def get(self, name: str) -> Callable[..., Any] | None:
        """The typed function, or None when the library lacks it (reason kept)."""
        try:
            return self._cache[name]
        except KeyError:
            pass
        with self._lock:
            if name in self._cache:
                return self._cache[name]
            fn = None
            if self.lib is None:
                self._missing[name] = self.absent_reason
            else:
                try:
                    fn = getattr(self.lib, name)
                except AttributeError:
                    self._missing[name] = f"symbol {name} not found in {self.lib_desc}"
                else:
                    restype, argtypes = SIGNATURES[name]
                    fn.restype = restype
                    fn.argtypes = argtypes
            self._cache[name] = fn
            return fn

    def has(self, name: str) -> bool:
        """Whether the library exports ``name``."""
        return self.get(name) is not None

    def reason(self, name: str) -> str | None:
        """Why ``name`` is unavailable (None when it is available)."""
        return None if self.get(name) is not None else self._missing.get(name)

    def missing(self) -> dict[str, str]:
        """Every symbol looked up so far that was missing, with its reason."""
        return dict(self._missing)


class Prepared:
    """The prepared functions of a :class:`SymbolTable` as attributes, for the binding's
    per-call path: ``prepared.aclrtFree`` is the typed function (None when the library lacks
    it), and a name outside :data:`SIGNATURES` is an AttributeError.

    Every name is resolved through the table when the backend is built (a ``dlsym`` each,
    restype and argtypes set then) and kept in the instance's ``__dict__``; the class holds no
    attribute of those names. That is what lets CPython specialise ``self._c.<name>`` into a
    hinted dict load: a class-level descriptor, or a ``__getattr__`` hook, leaves the lookup
    on the generic path, which cost a call of this binding more than its own checks."""

    def __init__(self, table: SymbolTable) -> None:
        self._table = table
        fns = self.__dict__
        for name in SIGNATURES:
            fns[name] = table.get(name)


class Closed:
    """:class:`Prepared` of a closed backend: every C function is refused (a harness fault)."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        raise RuntimeError(f"{name} called on a closed AclBackend")
