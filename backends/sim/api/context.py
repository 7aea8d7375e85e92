"""Device and context API (emulator ``core.c``): aclrtSetDevice, aclrtGetDevice,
aclrtGetCurrentContext.

The thread that creates the backend has an implicit context; any other thread must call
set_device first (abi.md §6.1, ERR-03; :mod:`backends.sim.guard`)."""

from __future__ import annotations

from typing import Any

from mdlri_conformance.backends.contract import UNWRITTEN, Err

from ..guard import NO_CTX, guarded
from ..handles import SimContext
from .checks import E_NULL, OK, is_int


def _null_out_first(a: dict) -> tuple[int, Any]:
    """The ACL layer's NULL-out check comes before the runtime's context check."""
    return (E_NULL if a["null_out"] else NO_CTX), UNWRITTEN


class ContextApi:
    """aclrtSetDevice, aclrtGetDevice, aclrtGetCurrentContext."""

    @guarded(needs_context=False)
    def set_device(self, device_id: int) -> int:
        """aclrtSetDevice: gives the calling thread a context; only ids < device_count exist."""
        if not is_int(device_id) or not 0 <= device_id < self.device_count:
            return int(Err.RT_INVALID_DEVICEID)
        self._tls.context = True
        self._tls.device = int(device_id)
        return OK

    @guarded(_null_out_first)
    def get_device(self, *, null_out: bool = False) -> tuple[int, Any]:
        """aclrtGetDevice: the calling thread's device id; NULL out -> 100000 (ACL layer,
        ``src/acl/aclrt_impl/device.cpp:131-141``); no context -> 107002."""
        if null_out:
            return E_NULL, UNWRITTEN
        return OK, int(self._tls.device)

    @guarded(_null_out_first)
    def get_current_context(self, *, null_out: bool = False) -> tuple[int, Any]:
        """aclrtGetCurrentContext: the primary context handle of the calling thread's device
        (one per device, the same object for every thread); NULL out -> 100000 (ACL layer,
        ``src/acl/aclrt_impl/context.cpp:74-89``); no context -> 107002."""
        if null_out:
            return E_NULL, UNWRITTEN
        dev = int(self._tls.device)
        ctx = self._contexts.get(dev)
        if ctx is None:
            ctx = self._contexts[dev] = SimContext(dev)
        return OK, ctx
