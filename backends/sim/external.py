"""External-event record/wait (aclrtRecordEventWithFlag / aclrtStreamWaitEventWithFlag with
ACL_EVENT_RECORD_EXTERNAL / ACL_EVENT_WAIT_EXTERNAL; XS-10, TYPE-03, TYPE-04, DIS-06).

* EXTERNAL record/wait is allowed only on a capturing stream (else 107029), at most once per
  event per graph (a second use returns 107000), and not inside a sub-graph (207000). An
  EXTERNAL wait needs timeout 0 (else 107000). The event is **not** bound to the capture.
* Inside the capture it appends a placeholder task: GetType reports DEFAULT (TYPE-03),
  GetParams reports EVENT_RECORD / EVENT_WAIT with recordFlag / waitFlag EXTERNAL (TYPE-04),
  and Disable fails like for every DEFAULT task (DIS-06).
* At each replay the placeholder records / waits on the **user** event's own flag, so a
  record or wait outside the graph (another stream or another model) synchronizes with it.
"""

from __future__ import annotations

from typing import Any

from mdlri_conformance.backends.contract import EventRecordFlag, EventWaitFlag, TaskType

from .build import UserEventRef

#: TaskRecord.default_kind of the placeholders (internal types 135 / 134)
EXT_RECORD = "ext_record"
EXT_WAIT = "ext_wait"
EXT_KINDS = (EXT_RECORD, EXT_WAIT)


class ExternalEventRef(UserEventRef):
    """The user event of an external record/wait placeholder (acts on the user's flag)."""

    def __init__(self, user_event: Any) -> None:
        super().__init__(user_event.state)
        self.user_event = user_event
        self.flags = int(user_event.flags)

    def __repr__(self) -> str:
        return "<sim external event ref>"


def params_type(kind: str) -> TaskType:
    """The type GetParams reports for a placeholder (TYPE-04)."""
    return TaskType.EVENT_RECORD if kind == EXT_RECORD else TaskType.EVENT_WAIT


def external_flag(kind: str) -> int:
    return int(EventRecordFlag.EXTERNAL if kind == EXT_RECORD else EventWaitFlag.EXTERNAL)
