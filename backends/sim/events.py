"""User events: creation kinds, flags and what they allow (XS-04, XS-09, abi.md §3.4).

* ``aclrtCreateEvent`` and ``aclrtCreateEventWithFlag`` without EXTERNAL create **old-mode**
  events: recording one on a capturing stream returns 207000, and a capturing stream waiting on
  one returns 207000 (XS-04). ``aclrtCreateEvent`` events have a wait task (usable with
  StreamWaitEvent outside capture).
* ``aclrtCreateEventExWithFlag`` (and WithFlag + EXTERNAL) create **new-mode** events, the kind
  capture fork/join uses.
* An event whose flags lack SYNC has **no wait task** (XS-09): a record inside a capture
  returns 0 and records nothing; StreamWaitEvent and ResetEvent with it return 207000 (the
  error decorator's check, before the impl's 107000: RT-25, RT-19).
* On a stream bound to a built model, a record or wait of an aclrtCreateEvent or
  aclrtCreateEventExWithFlag event returns 207000 (RT-26); any use of an ACL_EVENT_DEVICE_USE_ONLY
  event returns 107000 (RT-27).
* **aclrtResetEvent** answers as the runtime: 207000 for an event without a wait task
  (`api/impl/api_error.cc:1760-1762`), for a new-mode (ExWithFlag) event on any stream
  (`api/impl/api_impl.cc:2210-2214`) and for an old-mode event on a capturing stream
  (`:2239-2243`); an EXTERNAL event is reset plainly. A user's reset never captures a task.

Each user event owns an :class:`~backends.sim.device.EventState` flag used outside capture.
While a capture uses it, ``binding`` names the capture model it belongs to (released at
CaptureEnd, XS-11); inside the model the event is represented by an internal
:class:`~backends.sim.model.ModelEvent` with its own flag.
"""

from __future__ import annotations

from typing import Any

from mdlri_conformance.backends.contract import EventFlag

from .device import EventState
from .handles import Handle

#: (aclrtCreateEventWithFlag's flag checks: api/events.py, _event_create_flag_ok, RT-15)
#: creation flags accepted by aclrtCreateEventExWithFlag
EX_ALLOWED = (EventFlag.SYNC | EventFlag.CAPTURE_STREAM_PROGRESS | EventFlag.TIME_LINE
              | EventFlag.IPC)


class SimEvent(Handle):
    """A user ``aclrtEvent``."""

    kind = "event"

    def __init__(self, flags: int, api: str) -> None:
        super().__init__()
        self.flags = int(flags)
        self.api = api  # "create" | "with_flag" | "ex"
        self.state = EventState()
        self.binding: Any = None  # the SimModel whose capture holds this event
        self.last_record: Any = None  # the RecordOp of the latest record on a plain stream
        self.in_model = False  # recorded on a stream bound to a built model

    @property
    def old_mode(self) -> bool:
        """Old-mode events cannot be recorded or waited on inside a capture (XS-04)."""
        return self.api == "create" or (self.api == "with_flag"
                                        and not self.flags & EventFlag.EXTERNAL)

    @property
    def rt_default_or_ex(self) -> bool:
        """The runtime's ``IsNewMode() || flag == RT_EVENT_DEFAULT`` (RT-26): an
        aclrtCreateEventExWithFlag event, or one whose runtime flag is DDSYNC | TIME_LINE |
        STREAM_MARK (0xE): aclrtCreateEvent, or aclrtCreateEventWithFlag(0xE)."""
        return self.api in ("create", "ex") or (self.api == "with_flag" and self.flags == 0xE)

    @property
    def has_wait_task(self) -> bool:
        """False for events whose flags lack SYNC (XS-09); aclrtCreateEvent events have one."""
        return self.api == "create" or bool(self.flags & EventFlag.SYNC)


def valid_flags(flag: Any, allowed: int) -> bool:
    """True if ``flag`` is an int made only of ``allowed`` bits."""
    return isinstance(flag, int) and flag >= 0 and not (flag & ~int(allowed))
