"""A stateful machine over executions held blocked, and what the host does meanwhile.

The model (:func:`conformance.specs._setups.gated_main`) waits on a device word (a captured
value wait for 1) before its kernel, so every execution stays in flight until the host writes 1.
The machine counts the executions in flight, releases them (write 1, a sync that returns 0, the
output checked, the word back to 0), and in between drives the calls a driver upgrade must not
change: timed syncs that expire, SetParams / Disable / Update / Destroy of the running model,
stream queries, timeout 0. Elapsed times are only ever checked as lower bounds; a call that
never returns is the watchdog's TIMEOUT.

Documented rules (:func:`test_exec_state_machine`): a sync with a positive timeout returns an
error no earlier than the timeout while the execution is blocked, and 0 once released
(TMO-01); SetParams of a running model returns 107040 (SETP-12); Destroy of a running model
waits for the execution to finish, then succeeds (LIFE-03); Update commits a SetParams and
ExecuteAsync between them returns 507011 (EXE-07, UPD-05).

The implementation machine (:func:`test_exec_state_machine_impl`) adds the expiry code 507046
(TMO-03), Disable of a running model (107040, TMO-06), aclrtStreamQuery (NOT_READY while
blocked, COMPLETE after, TMO-06), several executions in flight at once (EXE-15) and timeout 0
on blocked work: it returns at once, with 507046 (the header's "check immediately", TMO-07) or
107000 (the code, TMO-08); both are accepted, since the two disagree.
"""

from __future__ import annotations

import time
from typing import Any, ClassVar

import numpy as np
import pytest
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, precondition, rule

from mdlri_conformance.backends.contract import Cap, Err, StreamStatus
from mdlri_conformance.conformance import expect
from mdlri_conformance.conformance.engine.machine import run, tolerant
from mdlri_conformance.conformance.harness import Dev, release_later
from mdlri_conformance.conformance.specs._setups import gated_main

pytestmark = pytest.mark.requires(Cap.CAPTURE, Cap.KERNELS, Cap.VALUE_TASKS, Cap.BLOCKING_WAIT,
                                  Cap.SYNC_TIMEOUT, Cap.GET_PARAMS, Cap.SET_PARAMS, Cap.UPDATE,
                                  Cap.LISTING, Cap.THREADS)

X = np.arange(1, 9, dtype=np.int32)
STEPS = 15
BATCHES = 4
SYNC_MS = 5000
#: clock granularity allowance for the lower bound on elapsed time
SLACK_MS = 2
#: timed syncs on blocked work (ms): each is paid in full, and TMO-01 is the same lower bound
#: at any of them (a sync that gives up after a tenth of its timeout fails at 10)
TIMEOUTS = st.sampled_from((10, 20, 40))
#: how long after Destroy starts the host releases the blocked execution (LIFE-03): it only
#: has to outlast a Destroy that does not wait (it returns in well under 1 ms on the
#: simulator and the emulator), and every millisecond of it is paid on every call
RELEASE_AFTER_MS = 10


class ExecMachine(RuleBasedStateMachine):
    """Documented behaviour: TMO-01, SETP-12, LIFE-03, EXE-07, UPD-05."""

    backend: ClassVar[Any] = None
    IMPL: ClassVar[bool] = False

    def __init__(self) -> None:
        super().__init__()
        self.dev = Dev(self.backend)
        self.in_flight = 0
        self.updating = False
        self.model: Any = None
        try:
            self.stream = self.dev.stream()
        except BaseException:
            self.dev.close()
            raise

    @initialize()
    @tolerant
    def capture(self) -> None:
        """The gated model: value wait for 1, then fallback_main(X -> out)."""
        self._capture()

    def _capture(self) -> None:
        self.model, self.word, self.out = gated_main(self.dev, self.stream)
        (self.kernel,) = self.dev.kernel_tasks(self.model)
        self.in_flight, self.updating = 0, False
        #: the kernel's input now, and the one a SetParams left for Update
        self.current = self.pending = X

    # -- executions ------------------------------------------------------------------------
    @precondition(lambda self: self.IMPL or self.in_flight == 0)
    @rule()
    @tolerant
    def execute(self) -> None:
        """ExecuteAsync: held at the gate (0); 507011 while a SetParams waits for Update
        (EXE-07); a second one while one is in flight is accepted (EXE-15)."""
        rc = self.backend.execute_async(self.model, self.stream)
        if self.updating:
            expect.rc(rc, Err.RT_MODEL_EXECUTE, "aclmdlRIExecuteAsync while UPDATING",
                      clause="EXE-07")
            return
        expect.ok(rc, f"aclmdlRIExecuteAsync with {self.in_flight} in flight")
        self.in_flight += 1

    @precondition(lambda self: self.in_flight > 0)
    @rule()
    @tolerant
    def release(self) -> None:
        """The host writes 1: every execution in flight completes; a sync returns 0 and the
        output is the kernel's (TMO-01, EXE-02)."""
        self.dev.write64(self.word, 1)
        expect.ok(self.backend.synchronize_stream_with_timeout(self.stream, SYNC_MS),
                  "aclrtSynchronizeStreamWithTimeout after the release", clause="TMO-01")
        self.in_flight = 0
        expect.eq(self.dev.read(self.out), self.current + 10, "output after the release",
                  clause="UPD-05")
        self.dev.write64(self.word, 0)

    @rule(timeout=TIMEOUTS)
    @tolerant
    def sync(self, timeout: int) -> None:
        """A timed sync: blocked work makes it return an error (507046, TMO-03) no earlier
        than the timeout (TMO-01); with nothing in flight it returns 0."""
        t0 = time.monotonic()
        rc = self.backend.synchronize_stream_with_timeout(self.stream, timeout)
        elapsed = (time.monotonic() - t0) * 1000.0
        if self.in_flight == 0:
            expect.ok(rc, f"aclrtSynchronizeStreamWithTimeout({timeout}) with nothing in flight")
            return
        if self.IMPL:
            expect.rc(rc, Err.RT_STREAM_SYNC_TIMEOUT, f"aclrtSynchronizeStreamWithTimeout("
                      f"{timeout}) on blocked work", clause="TMO-03")
        else:
            expect.ne(rc, Err.SUCCESS, f"aclrtSynchronizeStreamWithTimeout({timeout}) on "
                      "blocked work", clause="TMO-01")
        expect.true(elapsed >= timeout - SLACK_MS, f"aclrtSynchronizeStreamWithTimeout("
                    f"{timeout}) on blocked work returned only after its timeout",
                    f">= {timeout} ms", f"{elapsed:.1f} ms", clause="TMO-01")

    # -- host-side changes ---------------------------------------------------------------------
    @rule(value=st.integers(-3, 3))
    @tolerant
    def set_params(self, value: int) -> None:
        """SetParams of the kernel to a new input: 107040 while an execution is in flight
        (SETP-12); else accepted, and it takes effect at Update (SETP-01)."""
        x2 = X * 4 + value
        params = self.dev.kernel_params("fallback_main", input=self.dev.buffer(x2),
                                        output=self.out)
        rc = self.backend.task_set_params(self.kernel, params)
        if self.in_flight:
            expect.rc(rc, Err.RT_MODEL_UPDATE_FAILED, "aclmdlRITaskSetParams of a running "
                      "model", clause="SETP-12")
            return
        expect.ok(rc, "aclmdlRITaskSetParams of an idle model")
        self.updating, self.pending = True, x2

    @precondition(lambda self: self.updating and self.in_flight == 0)
    @rule()
    @tolerant
    def update(self) -> None:
        """Update commits the SetParams: later executions use the new input (UPD-05)."""
        expect.ok(self.backend.update(self.model), "aclmdlRIUpdate", clause="UPD-05")
        self.updating, self.current = False, self.pending

    @precondition(lambda self: self.IMPL and self.in_flight > 0)
    @rule()
    @tolerant
    def disable(self) -> None:
        """Disable of a running model's task: 107040 (TMO-06)."""
        expect.rc(self.backend.task_disable(self.kernel), Err.RT_MODEL_UPDATE_FAILED,
                  "aclmdlRITaskDisable of a running model", clause="TMO-06")

    @precondition(lambda self: self.IMPL)
    @rule()
    @tolerant
    def query(self) -> None:
        """aclrtStreamQuery: NOT_READY at once while blocked, COMPLETE otherwise (TMO-06)."""
        rc, status = self.backend.stream_query(self.stream)
        expect.ok(rc, "aclrtStreamQuery")
        want = StreamStatus.NOT_READY if self.in_flight else StreamStatus.COMPLETE
        expect.eq(status, want, f"aclrtStreamQuery status with {self.in_flight} in flight",
                  clause="TMO-06")

    @precondition(lambda self: self.IMPL and self.in_flight > 0)
    @rule()
    @tolerant
    def sync_zero(self) -> None:
        """Timeout 0 on blocked work returns at once: 507046 (TMO-07) or 107000 (TMO-08)."""
        rc = self.backend.synchronize_stream_with_timeout(self.stream, 0)
        expect.rc(rc, (Err.RT_STREAM_SYNC_TIMEOUT, Err.RT_PARAM_INVALID),
                  "aclrtSynchronizeStreamWithTimeout(0) on blocked work", clause="TMO-07")

    @precondition(lambda self: self.in_flight > 0)
    @rule()
    @tolerant
    def destroy_running(self) -> None:
        """Destroy while an execution is blocked, the host releasing it RELEASE_AFTER_MS
        later: Destroy waits for it, then returns 0 (LIFE-03). A new model is captured."""
        timer, released = release_later(self.dev, self.word, RELEASE_AFTER_MS / 1000.0)
        timer.start()
        try:
            rc = self.dev.destroy(self.model)
            returned = time.monotonic()
        finally:
            timer.join()
        expect.ok(int(released.get("rc", -1)), "host release of the word from the timer "
                  "thread (setup)")
        expect.ok(rc, "aclmdlRIDestroy of a running model", clause="LIFE-03")
        expect.true(returned >= released["at"], "aclmdlRIDestroy returned only after the "
                    "blocked execution was released", "after the release",
                    f"{(released['at'] - returned) * 1000:.1f} ms before it", clause="LIFE-03")
        expect.ok(self.backend.synchronize_stream_with_timeout(self.stream, SYNC_MS),
                  "aclrtSynchronizeStreamWithTimeout after Destroy")
        self._capture()

    def teardown(self) -> None:
        """Release what is in flight, then free everything."""
        try:
            if self.model is not None:
                self.dev.write64(self.word, 1)
                self.backend.synchronize_stream_with_timeout(self.stream, 2000)
        except Exception:  # a failing backend: free what can be
            pass
        finally:
            self.dev.close()


class ExecImplMachine(ExecMachine):
    """Adds 507046, Disable and queries of a running model, EXE-15 and timeout 0."""

    IMPL: ClassVar[bool] = True


def _run(machine: type[ExecMachine], backend: Any, batch: int) -> None:
    machine.backend = backend
    run(machine, STEPS, batch, BATCHES)


@pytest.mark.clause("TMO-01", "SETP-12", "LIFE-03", "EXE-07", "UPD-05")
@pytest.mark.parametrize("batch", range(BATCHES))
def test_exec_state_machine(backend: Any, batch: int) -> None:
    """TMO-01, SETP-12, LIFE-03, EXE-07, UPD-05: blocked executions against timed syncs,
    SetParams, Update and Destroy of the running model."""
    _run(ExecMachine, backend, batch)


@pytest.mark.clause("TMO-03", "TMO-06", "TMO-07", "TMO-08", "EXE-15")
@pytest.mark.parametrize("batch", range(BATCHES))
def test_exec_state_machine_impl(backend: Any, batch: int) -> None:
    """TMO-03/06/07/08, EXE-15: expiry code, Disable and queries of a running model, several
    executions in flight, and timeout 0 on blocked work."""
    _run(ExecImplMachine, backend, batch)
