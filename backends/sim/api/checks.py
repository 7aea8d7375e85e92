"""Return codes and argument predicates shared by the simulator's API modules.

Two integer predicates, on purpose: the task-level API (streams, memory, events, kernels,
capture, listing, update, execute) accepts numpy integers wherever an int is expected, the
extended API (task groups, build, cond, names, callbacks, attributes, switch) accepts Python
ints only. Merging them would change what the extended API answers for a numpy integer.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mdlri_conformance.backends.contract import Err

OK = int(Err.SUCCESS)
E_NULL = int(Err.INVALID_PARAM)                   # 100000, ACL-layer NULL checks
E_PARAM = int(Err.RT_PARAM_INVALID)               # 107000
E_HANDLE = int(Err.RT_INVALID_HANDLE)             # 107017
E_NOT_SUPPORT = int(Err.RT_FEATURE_NOT_SUPPORT)   # 207000
E_INTERNAL = int(Err.RT_INTERNAL_ERROR)           # 507000
E_NOT_CAPTURED = int(Err.RT_STREAM_NOT_CAPTURED)  # 107029
E_GRP_STATUS = int(Err.STREAM_TASK_GROUP_STATUS)
E_EXECUTE = int(Err.RT_MODEL_EXECUTE)             # 507011
E_STREAM_MODEL = int(Err.RT_STREAM_MODEL)         # 107005


#: the types other than int found to be integer arguments (IntEnum members, numpy integers):
#: an instance of a proper subclass of int or np.integer is one, so the type decides
_INT_TYPES: set[type] = set()


def is_int(x: Any) -> bool:
    """An integer argument of the task-level API: int or numpy integer, not bool."""
    t = type(x)
    if t is int or t in _INT_TYPES:  # the common cases first (a bool's type is bool)
        return True
    if isinstance(x, (int, np.integer)) and not isinstance(x, bool):
        if x.__class__ is t and not issubclass(t, bool):  # an honest type: remember it
            _INT_TYPES.add(t)
        return True
    return False


def is_plain_int(x: Any) -> bool:
    """An integer argument of the extended API: a Python int, not bool."""
    return isinstance(x, int) and not isinstance(x, bool)


def host_bytes(data: Any) -> bytes | None:
    """Host argument bytes from bytes / bytearray / memoryview / numpy array, else None."""
    if isinstance(data, np.ndarray):
        return np.ascontiguousarray(data).tobytes()
    if isinstance(data, (bytes, bytearray, memoryview)):
        return bytes(data)
    return None
