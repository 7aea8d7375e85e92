"""User streams: flags, their device queue and their capture status.

A user stream is in capture status NONE, ACTIVE or INVALIDATED (semantics.md §0.3). While it
captures (as the origin or as a stream joined through an event, XS-01), ``session`` names the
:class:`~backends.sim.capture.CaptureSession` and every async task issued on it is appended to its
internal model stream instead of being queued (CAP-01).
"""

from __future__ import annotations

from typing import Any

from mdlri_conformance.backends.contract import CaptureStatus, StreamFlag

from .device import Queue
from .handles import Handle

#: streams whose synchronize is a no-op (TMO-04) and that cannot execute a model (sim choice);
#: plain ints, so ``flags & MASK`` on the hot paths is an int operation, not an IntFlag one
SYNC_NOOP_FLAGS = int(StreamFlag.PERSISTENT | StreamFlag.DEVICE_USE_ONLY
                      | StreamFlag.CPU_SCHEDULE)
#: stream flags that cannot be captured (CAP-18): DEVICE_USE_ONLY maps to the runtime's
#: CP_PROCESS_USE and CPU_SCHEDULE to its CPU_SCHEDULE, the same bit as AICPU
CAPTURE_FORBIDDEN_FLAGS = int(StreamFlag.DEVICE_USE_ONLY | StreamFlag.CPU_SCHEDULE)
#: the flags DEVICE_USE_ONLY cannot be combined with (RT-24): CP_PROCESS_USE goes alone
NOT_WITH_DEVICE_USE_ONLY = int(StreamFlag.FAST_LAUNCH | StreamFlag.FAST_SYNC
                               | StreamFlag.PERSISTENT | StreamFlag.HUGE
                               | StreamFlag.CPU_SCHEDULE)


class SimStream(Handle):
    """A user ``aclrtStream`` (or the implicit default stream)."""

    kind = "stream"

    def __init__(self, flags: int = 0, priority: int = 0, default: bool = False) -> None:
        super().__init__()
        self.flags = int(flags)
        self.priority = int(priority)
        self.default = default
        self.queue = Queue("default-stream" if default else f"stream#{self.id}")
        self.session: Any = None  # CaptureSession while capturing
        self.invalidated = False  # allocation-style invalidation (STAT-05); never set by the sim

    @property
    def capture_status(self) -> CaptureStatus:
        if self.session is None:
            return CaptureStatus.NONE
        return CaptureStatus.INVALIDATED if self.invalidated else CaptureStatus.ACTIVE

    @property
    def capturing(self) -> bool:
        return self.session is not None

    def __repr__(self) -> str:
        if self.default:
            return "<sim default stream>"
        return super().__repr__()
