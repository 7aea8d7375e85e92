"""The oracle's model state machine (semantics.md §0.3): NONE, CAPTURE_ACTIVE, READY, UPDATING,
FAULT, with the return code of every host call on a model (SETP-01/02/03/10/13,
DIS-02/06/09, UPD-01..04, EXE-04/07, TMO-02, LIFE-02), and the task type each op's task
reports (TYPE-02). Part of the independent oracle (:mod:`conformance.engine.oracle`): it
imports only the case model and the backend contract's constants.
"""

from __future__ import annotations

import enum

from mdlri_conformance.backends.contract import Err, TaskType

from .graphs import Copy, Launch, Memset, Op, Record, ValueWait, ValueWrite, Wait

#: op kinds whose tasks have a user-visible type (memset tasks are DEFAULT, TYPE-02)
USER_VISIBLE = (Launch, Record, Wait, ValueWrite, ValueWait)
#: the types SetParams accepts (SETP-03)
SETTABLE_TYPES = frozenset({TaskType.KERNEL, TaskType.VALUE_WRITE, TaskType.VALUE_WAIT})


class UndefinedCase(Exception):
    """The case (or what its plan made of it) leaves defined behaviour; one-line message."""


class State(enum.Enum):
    """Model status (semantics.md §0.3). NONE: no model (never captured, or destroyed)."""

    NONE = "NONE"
    CAPTURE_ACTIVE = "CAPTURE_ACTIVE"
    READY = "READY"
    UPDATING = "UPDATING"
    FAULT = "FAULT"


class ModelState:
    """Expected return codes and transitions of one model's host calls.

    Every method returns the rc a conforming runtime gives in the current state and moves
    to the next state. The model is assumed idle (synchronised) whenever SetParams,
    Disable or Update is called: a running model is outside this machine (SETP-12).
    """

    def __init__(self, state: State = State.NONE) -> None:
        self.state = state

    def __repr__(self) -> str:
        return f"ModelState({self.state.name})"

    # -- capture ---------------------------------------------------------------------------
    def begin_capture(self) -> int:
        """CaptureBegin on an idle stream: NONE -> CAPTURE_ACTIVE (CAP-04)."""
        if self.state is not State.NONE:
            raise UndefinedCase(f"begin_capture with a model in {self.state.name}")
        self.state = State.CAPTURE_ACTIVE
        return Err.SUCCESS

    def end_capture(self) -> int:
        """CaptureEnd of a well-joined capture: CAPTURE_ACTIVE -> READY (CAP-04, XS-02)."""
        if self.state is not State.CAPTURE_ACTIVE:
            raise UndefinedCase(f"end_capture with a model in {self.state.name}")
        self.state = State.READY
        return Err.SUCCESS

    # -- SetParams / Disable / Update ------------------------------------------------------
    def _can_change(self) -> bool:
        """The preliminary state check of SetParams/Disable (SETP-10, SETP-11, SETP-13)."""
        return self.state in (State.READY, State.UPDATING)

    def set_params(self, kind: int, target: int = TaskType.KERNEL, running: bool = False) -> int:
        """TaskSetParams with ``params->type == kind`` on a task of type ``target``.

        CAPTURE_ACTIVE or FAULT, or an execution in flight (``running``): 107040, no change
        (SETP-13, SETP-10, SETP-12). A type other than
        KERNEL/VALUE_WRITE/VALUE_WAIT, KERNEL on a non-kernel task, or a value type on a
        DEFAULT task: 107000 and FAULT (SETP-03, SETP-04, SETP-07). Otherwise 0 and
        UPDATING (SETP-01).
        """
        if running or not self._can_change():
            return Err.RT_MODEL_UPDATE_FAILED
        ok = kind in SETTABLE_TYPES and (
            target == TaskType.KERNEL if kind == TaskType.KERNEL else target != TaskType.DEFAULT)
        if not ok:
            self.state = State.FAULT
            return Err.RT_PARAM_INVALID
        self.state = State.UPDATING
        return Err.SUCCESS

    def disable(self, is_default: bool = False, running: bool = False) -> int:
        """TaskDisable: 107040 unless READY/UPDATING and idle (DIS-09, SETP-12, TMO-06); a
        DEFAULT task gives 107000 and FAULT (DIS-06); otherwise 0 and UPDATING (DIS-02)."""
        if running or not self._can_change():
            return Err.RT_MODEL_UPDATE_FAILED
        if is_default:
            self.state = State.FAULT
            return Err.RT_PARAM_INVALID
        self.state = State.UPDATING
        return Err.SUCCESS

    def update(self) -> int:
        """Update: READY no-op 0 (UPD-01, UPD-03), UPDATING -> READY 0 (UPD-02), else
        107040 (UPD-04)."""
        if self.state is State.READY:
            return Err.SUCCESS
        if self.state is State.UPDATING:
            self.state = State.READY
            return Err.SUCCESS
        return Err.RT_MODEL_UPDATE_FAILED

    # -- execution -------------------------------------------------------------------------
    def execute(self) -> int:
        """ExecuteAsync: 0 when READY (EXE-03), 507011 when UPDATING or FAULT (SETP-02,
        DIS-02, EXE-07), 107026 while capturing (EXE-04)."""
        if self.state is State.READY:
            return Err.SUCCESS
        if self.state in (State.UPDATING, State.FAULT):
            return Err.RT_MODEL_EXECUTE
        if self.state is State.CAPTURE_ACTIVE:
            return Err.RT_MODEL_CAPTURED
        raise UndefinedCase("execute without a model")

    @staticmethod
    def sync(timeout_ms: int, blocked: bool = False) -> int:
        """SynchronizeStreamWithTimeout: 107000 for a timeout below -1 (TMO-02); for work
        that completes 0 (TMO-01); for work ``blocked`` until a later host step, 507046 once
        a positive timeout expires (TMO-01, TMO-03). A timeout of 0 is not modelled: the
        documentation's immediate check (TMO-07) and the code's 107000 (TMO-08) disagree;
        -1 on blocked work never returns."""
        if timeout_ms == 0:
            raise UndefinedCase("a sync timeout of 0: TMO-07 (documented) and TMO-08 (code) "
                                "disagree")
        if timeout_ms < -1:
            if blocked:
                raise UndefinedCase("a rejected sync of blocked work: its read-back would race")
            return Err.RT_PARAM_INVALID
        if blocked:
            if timeout_ms == -1:
                raise UndefinedCase("sync(-1) of an execution that only a later step releases")
            return Err.RT_STREAM_SYNC_TIMEOUT
        return Err.SUCCESS

    def destroy(self) -> int:
        """Destroy: 107026 while capturing (LIFE-02), else 0 and NONE (LIFE-01)."""
        if self.state is State.CAPTURE_ACTIVE:
            return Err.RT_MODEL_CAPTURED
        if self.state is State.NONE:
            raise UndefinedCase("destroy without a model (use after free, LIFE-06)")
        self.state = State.NONE
        return Err.SUCCESS


def task_type(op: Op) -> TaskType:
    """The task type GetType reports for an op's task (TYPE-02)."""
    return {Launch: TaskType.KERNEL, Record: TaskType.EVENT_RECORD, Wait: TaskType.EVENT_WAIT,
            ValueWrite: TaskType.VALUE_WRITE, ValueWait: TaskType.VALUE_WAIT,
            Memset: TaskType.DEFAULT, Copy: TaskType.DEFAULT}[type(op)]
