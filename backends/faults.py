"""The fault catalogue: named, plausible runtime bugs a backend can be built with, to measure
what the suite catches (``--fault``, the kill matrix).

Each entry is one sentence saying which real bug it stands for and the clause it breaks. The
simulator implements every fault of :data:`FAULTS`: ``SimBackend(faults=[...])`` (``--backend
sim --fault NAME``) injects them through small hooks guarded by ``self.has_fault(NAME)``; the
normal path is unchanged when no fault is set. The host ABI emulator implements the subset
:data:`backends.acl.emulator_faults.EMULATOR_FAULTS`.

``crash-query`` and ``hang-query-sync`` are isolation faults: the first really segfaults
(a NULL read), the second really blocks; the suite must report CRASH / TIMEOUT for the specs
that reach them and carry on (see :mod:`conformance.isolation`).
"""

from __future__ import annotations

from typing import Iterable

#: name -> the real bug it stands for (one sentence, with the clause it breaks)
FAULTS: dict[str, str] = {
    # -- deferred update (SETP / DIS / UPD) --------------------------------------------------
    "setparams-without-update":
        "SetParams writes the device record at once and leaves the model READY, so "
        "executions use new parameters without aclmdlRIUpdate (SETP-01, SETP-02).",
    "update-first-stream-only":
        "Update commits pending SetParams/Disable only on the first internal stream of a "
        "multi-stream model (UPD-05).",
    "disabled-task-runs":
        "A disabled task leaves the listing at Update but is still executed (DIS-01).",
    "disabled-task-listed":
        "A disabled task stops executing after Update but is still listed by "
        "GetTasksByStream (DIS-05).",
    "value-write-old-value":
        "After SetParams and Update a value-write task still stores its old value "
        "(SETP-07, UPD-05).",
    "no-nop-for-emptied-stream":
        "Update leaves an internal stream whose tasks were all disabled empty instead of "
        "appending a NOP (DIS-07).",
    "getparams-device-record":
        "GetParams between SetParams and Update reports the old device-side record "
        "(GETP-06).",
    "handles-renewed-by-update":
        "Update replaces the surviving tasks' handles, so handles listed before Update go "
        "stale (SEQ-05, Q-23).",
    "setparams-while-running":
        "SetParams/Disable are accepted while an execution of the model is in flight "
        "(SETP-12).",
    "disable-default-accepted":
        "Disabling a DEFAULT (memcpy/memset) task is accepted instead of 107000 + FAULT "
        "(DIS-06).",
    "bad-type-no-fault":
        "A SetParams rejected for its type returns 107000 but leaves the model usable "
        "instead of FAULT (SETP-10).",
    "fault-not-sticky":
        "aclmdlRIUpdate on a FAULT model succeeds and returns it to READY (UPD-04).",
    "execute-while-updating":
        "ExecuteAsync is accepted while the model is UPDATING and runs the old records "
        "(EXE-07).",
    # -- seq ids and listing (SEQ / LIST) ----------------------------------------------------
    "seq-renumbered-after-update":
        "Update renumbers the surviving tasks' seq ids densely from 0 (SEQ-05).",
    "seq-per-stream":
        "Seq ids are counted per internal stream instead of per model (SEQ-04).",
    "listing-writes-past-capacity":
        "The two-phase listing with a too-small array writes every entry, past the "
        "capacity it was given (LIST-05).",
    "no-107039":
        "A too-small listing array returns success instead of 107039 (LIST-05).",
    "getstreams-origin-first":
        "GetStreams lists the internal streams in attachment order, origin first "
        "(LIST-02).",
    # -- capture (CAP / XS / STAT / MODE) ----------------------------------------------------
    "capture-executes":
        "Captured tasks are recorded and also executed at capture time (CAP-01).",
    "end-on-joined-stream":
        "CaptureEnd on a joined (non-origin) stream is accepted and ends the capture "
        "(CAP-11).",
    "unjoined-end-accepted":
        "CaptureEnd accepts a capture whose side stream never joined back (XS-02).",
    "no-event-reset-at-end":
        "CaptureEnd does not append the EVENT_RESET tasks of the captured events "
        "(XS-08).",
    "side-stream-stays-captured":
        "After CaptureEnd a joined side stream still reports capture status ACTIVE "
        "(STAT-04).",
    "wrong-thread-end-accepted":
        "CaptureEnd from another thread of a GLOBAL capture is accepted (CAP-14).",
    "capture-mode-ignored":
        "Capture modes are ignored: synchronous memcpy/memset are never blocked during a "
        "capture (MODE-02, MODE-03).",
    "wrong-thread-end-leaks-mode":
        "CaptureEnd from the wrong thread (107038) ends the capture but releases the capture "
        "mode on the calling thread, so the beginning thread's GLOBAL mode stays in force for "
        "the rest of the process, the real-runtime bug of context_aclgraph.cc:529-531 and "
        "inner_thread_local.cpp:203-215 (MODE-03).",
    "destroy-capturing-model":
        "aclmdlRIDestroy of a model whose capture is still open succeeds (LIFE-02).",
    # -- execution, events, timeouts (EXE / XS / TMO) ----------------------------------------
    "event-wait-no-wait":
        "An event wait does not wait for its record, so cross-stream order is lost "
        "(XS-01, EXE-02).",
    "second-exec-skips-first-task":
        "Every execution after the first skips the origin stream's first task (EXE-02).",
    "execute-on-capturing-stream":
        "ExecuteAsync on a stream that is capturing is accepted instead of 107027 "
        "(EXE-05).",
    "timeout-ignored":
        "aclrtSynchronizeStreamWithTimeout ignores its timeout and waits forever "
        "(TMO-01, TMO-03).",
    "timeout-early":
        "aclrtSynchronizeStreamWithTimeout gives up after a tenth of its timeout "
        "(TMO-01).",
    "whole-kernel-per-block":
        "Every block of a multi-block launch runs the whole kernel as if it were the only "
        "block, so a read-modify-write kernel such as accumulate applies numBlocks times "
        "(KRN-01).",
    "timeout-zero-waits":
        "A sync timeout of 0 is taken as 'wait forever' instead of one immediate check "
        "(TMO-07).",
    # -- handles, lifetime, ACL-layer checks (LIFE / ERR) ------------------------------------
    "execute-null-model-107000":
        "ExecuteAsync with a NULL model returns the runtime's 107000 instead of the "
        "ACL-layer 100000 (EXE-09).",
    "double-destroy-ok":
        "Destroying an already destroyed model returns success instead of 107017 "
        "(LIFE-06, Q-01).",
    "destroy-leaks-model":
        "aclmdlRIDestroy returns success but keeps the model and its memory alive "
        "(LIFE-01).",
    "destroy-no-wait":
        "aclmdlRIDestroy of a model with an execution in flight frees it at once instead of "
        "waiting for the execution to end (LIFE-03).",
    # -- isolation: real crash / real hang ---------------------------------------------------
    "crash-query":
        "aclrtStreamQuery dereferences a NULL completion record and segfaults (TMO-05).",
    "hang-query-sync":
        "aclrtStreamQuery waits for the stream to drain, so querying a blocked stream "
        "never returns (TMO-05).",
    # -- capability probes: a wrong answer must fail the gate, not remove a capability -------
    "stream-sync-timeout-code":
        "An expired aclrtSynchronizeStreamWithTimeout returns the event-sync code 507047 "
        "instead of 507046 (TMO-03).",
    # -- escaped classes (XS / COND / DBG / RT / EXE / DIS / SEQ) ----------------------------
    "join-by-user-event":
        "CaptureEnd's join check matches a side stream's last record to the waits by the "
        "user's event handle, so a side stream that records the event again after the "
        "origin's wait passes instead of 107025 (XS-15, XS-13).",
    "switch-out-of-range-runs-last":
        "A SWITCH task whose value is at or past its branch count runs its last branch "
        "instead of none (COND-13).",
    "debug-json-hides-pending-disabled":
        "DebugJsonPrint leaves out a task disabled since the last Update, which the "
        "runtime still traces until Update removes it (DBG-06).",
    "debug-json-keeps-disabled":
        "DebugJsonPrint after Update still traces the tasks that Update removed "
        "(DBG-06).",
    "memset-odd-count-short":
        "A memset with an odd byte count sets one byte less, as if the device filled "
        "16-bit units (RT-45).",
    "execute-destroyed-stream-ok":
        "ExecuteAsync onto a destroyed stream returns 0 and runs the model on the default "
        "stream instead of 107017 (EXE-17).",
    "getstreams-drops-emptied-stream":
        "After an Update that emptied a stream by Disable, GetStreams leaves that stream "
        "out (DIS-11).",
    "seq-new-on-convert":
        "Update gives a task that SetParams converted to another type a new seq id "
        "(SEQ-05).",
}

#: faults that really crash or hang a process (need worker isolation to be survivable)
ISOLATION_FAULTS: frozenset[str] = frozenset({"crash-query", "hang-query-sync",
                                              "timeout-ignored", "timeout-zero-waits"})

class UnknownFault(ValueError):
    """A fault name that is not in the catalogue (a one-line usage error)."""


def check(names: Iterable[str] | str | None, known: Iterable[str] | None = None) -> frozenset[str]:
    """The fault names as a frozenset; raise :class:`UnknownFault` for a name not in
    ``known`` (default: the whole catalogue). A string is split on commas."""
    if names is None:
        return frozenset()
    if isinstance(names, str):
        names = [n for n in names.split(",")]
    chosen = frozenset(n.strip() for n in names if n and n.strip())
    pool = set(FAULTS if known is None else known)
    bad = sorted(chosen - pool)
    if bad:
        raise UnknownFault(f"unknown fault{'s' if len(bad) > 1 else ''} {', '.join(bad)}; "
                           "see `mdlri-conformance faults --list`")
    return chosen


__all__ = ["FAULTS", "ISOLATION_FAULTS", "UnknownFault", "check"]
