"""The probes themselves (:data:`PROBES`, in the order they run), each short and
self-cleaning: whatever it creates is released before the next one runs (:mod:`.probe`
describes what each measures and how a finding changes the capabilities)."""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from mdlri_conformance.backends.contract import (
    NOT_SUPPORTED_CODES, Cap, Err, EventFlag, LaunchAttrId, MemcpyKind, MemLocationType,
    TaskParams, ValueWaitFlag, err_name,
)
from mdlri_conformance.backends.task_params import kernel_task_params
from mdlri_conformance.kernel import catalog

from .probe_session import (BLOCK_MS, CLEANUP_MS, RELEASE_MS, ROUND_TRIP, SEED_KERNEL, SYNC_MS,
                            Measurement, Probe, Session, Verdict, answer)


# ---------------------------------------------------------------------------------------------
# behaviour probes


def probe_data_movement(s: Session) -> tuple[Verdict, str]:
    """aclrtMemcpy H2D of [1..8] then D2H into zeros gives [1..8] back. The zeros left as
    they were: no data moves (ABSENT); other bytes: a WRONG answer."""
    addr = s.malloc(ROUND_TRIP.nbytes)
    s.h2d(addr, ROUND_TRIP)
    back = s.d2h(addr, ROUND_TRIP)
    if np.array_equal(back, ROUND_TRIP):
        return Verdict.PRESENT, "memcpy H2D then D2H round-trips the bytes"
    verdict = Verdict.ABSENT if not back.any() else Verdict.WRONG
    return verdict, (f"probe: memcpy H2D then D2H returned {back.tolist()} for "
                     f"{ROUND_TRIP.tolist()}")


def probe_kernel_exec(s: Session) -> tuple[Verdict, str]:
    """The seed kernel (output = input + 10) launched on a plain stream writes its output."""
    if Cap.DATA_MOVEMENT not in s.caps:
        return Verdict.UNKNOWN, ("probe: kernel execution is not measurable, data does not "
                                 "move (see data_movement)")
    stream = s.stream()
    inp = s.malloc(ROUND_TRIP.nbytes)
    out = s.malloc(ROUND_TRIP.nbytes)
    s.h2d(inp, ROUND_TRIP)
    sentinel = np.full_like(ROUND_TRIP, -1)
    s.h2d(out, sentinel)
    f = s.func(SEED_KERNEL)
    args = catalog.get(SEED_KERNEL).pack(input=inp, output=out)
    s.ok(s.b.launch_kernel_with_host_args(f, 1, stream, None, args, len(args)),
         f"aclrtLaunchKernelWithHostArgs({SEED_KERNEL})")
    s.ok(s.b.synchronize_stream_with_timeout(stream, SYNC_MS),
         "aclrtSynchronizeStreamWithTimeout after the launch")
    got = s.d2h(out, ROUND_TRIP)
    want = ROUND_TRIP + catalog.SEED_MAIN_BIAS
    if np.array_equal(got, want):
        return Verdict.PRESENT, f"kernel {SEED_KERNEL} writes its output"
    # the output as it was: the kernel ran nothing (ABSENT); anything else is a wrong output
    verdict = Verdict.ABSENT if np.array_equal(got, sentinel) else Verdict.WRONG
    return verdict, f"probe: kernel {SEED_KERNEL} wrote {got.tolist()}, expected {want.tolist()}"


def probe_blocking_wait(s: Session) -> tuple[Verdict, str]:
    """A captured aclrtValueWait(EQ 1) on a word set to 0 blocks its execution: a timed sync
    of BLOCK_MS returns 507046; a host write of 1 into the word (aclrtMemcpy H2D, how the
    specs release their waits) releases it. A sync that returns 0 at once (nothing blocks)
    or a not-supported code is ABSENT; any other code (e.g. the event-sync 507047) is a
    WRONG answer (TMO-03), never a lost capability."""
    run, side = s.stream(), s.stream()
    word = s.malloc(64)
    s.ok(s.b.value_write(word, 0, 0, side), "aclrtValueWrite(0) on a plain stream")
    s.ok(s.b.synchronize_stream_with_timeout(side, SYNC_MS), "aclrtSynchronizeStreamWithTimeout")
    s.capture(run, family=None)
    s.ok(s.b.value_wait(word, 1, ValueWaitFlag.EQ, run), "aclrtValueWait (captured)")
    model = s.end(run, family=None)
    s.ok(s.b.execute_async(model, run), "aclmdlRIExecuteAsync")
    rc = s.b.synchronize_stream_with_timeout(run, BLOCK_MS)
    host = Cap.DATA_MOVEMENT in s.caps
    released = _release(s, word, side, run, host)
    if rc != Err.RT_STREAM_SYNC_TIMEOUT:
        absent = rc == Err.SUCCESS or rc in NOT_SUPPORTED_CODES
        return (Verdict.ABSENT if absent else Verdict.WRONG), (
            f"probe: a captured aclrtValueWait on an unset word "
            f"{'did not block' if absent else 'was answered wrongly'}: "
            f"aclrtSynchronizeStreamWithTimeout({BLOCK_MS} ms) returned {err_name(rc)}, "
            f"expected {err_name(Err.RT_STREAM_SYNC_TIMEOUT)}")
    if not host:
        return Verdict.ABSENT, ("probe: a captured aclrtValueWait blocks, but the specs "
                                "release waits with a host write and data does not move "
                                "(see data_movement)")
    if released != Err.SUCCESS:
        # still expired: host writes do not reach the wait (ABSENT); any other code is wrong
        still = released == Err.RT_STREAM_SYNC_TIMEOUT
        return (Verdict.ABSENT if still else Verdict.WRONG), (
            f"probe: a captured aclrtValueWait blocks, but a host write of the word "
            f"(aclrtMemcpy H2D) did not release it: the sync returned {err_name(released)}")
    return Verdict.PRESENT, "a captured value wait on an unset word blocks until released"


def _release(s: Session, word: int, side: Any, run: Any, host: bool) -> int:
    """Write 1 into the word from the host (when ``host``) and drain the blocked stream: the
    sync rc. When that does not drain it, a value write from another stream unblocks it
    for the cleanup."""
    rc = int(Err.RT_STREAM_SYNC_TIMEOUT)
    if host:
        one = np.array([1], dtype=np.uint64)
        s.b.memcpy(word, 8, one, 8, MemcpyKind.HOST_TO_DEVICE)
        rc = int(s.b.synchronize_stream_with_timeout(run, RELEASE_MS))
    if rc != Err.SUCCESS:
        s.b.value_write(word, 1, 0, side)
        s.b.synchronize_stream_with_timeout(side, CLEANUP_MS)
        s.b.synchronize_stream_with_timeout(run, CLEANUP_MS)
    return rc


def probe_never_timeout(s: Session) -> tuple[Verdict, str]:
    """A kernel captured with launch attribute TIMEOUT 0 ("never") reads back TIMEOUT 0."""
    _, _, kernel, _ = s.tiny(never_timeout=True)
    rc, value = s.b.kernel_task_get_attribute(kernel, LaunchAttrId.TIMEOUT)
    s.ok(rc, "aclmdlRIKernelTaskGetAttribute(TIMEOUT)", family=Cap.NEVER_TIMEOUT)
    if value == 0:
        return Verdict.PRESENT, "TIMEOUT 0 (never) reads back 0"
    if isinstance(value, int) and 0 < value <= 0xFFFF:
        # without the TS feature "never" becomes a finite timeout, reported as such
        return Verdict.ABSENT, (f"probe: a kernel launched with TIMEOUT 0 (never) reports "
                                f"TIMEOUT {value!r}, not 0 (never-timeout needs TS firmware "
                                "support)")
    return Verdict.WRONG, (f"probe: a kernel launched with TIMEOUT 0 (never) reports TIMEOUT "
                           f"{value!r}, not a uint16_t number of seconds")


def probe_pageable_detection(s: Session) -> tuple[Verdict, str]:
    """aclrtPointerGetAttributes of a plain (malloc'd, numpy) host buffer reports
    UNREGISTERED: the only way the runtime finds pageable memory, and refuses its async copies
    (`api/impl/api_error.cc:2256-2259` after `:2610-2624`, `:2789-2855`). A driver that cannot
    tell (it reports another location, or its memory-attribute query fails for user memory,
    `runtime/driver/npu_driver_mem.cc:2040-2052`) leaves the capability ABSENT; this probe
    never copies, so it does not use the behaviour under test (MODE-13, MODE-14, FLD-03)."""
    fn = getattr(s.b, "pointer_get_attributes", None)
    if not callable(fn):
        return Verdict.ABSENT, "probe: the backend has no aclrtPointerGetAttributes"
    host = np.zeros(16, dtype=np.uint8)  # ordinary numpy memory: pageable
    rc, attrs = fn(host)
    if rc != Err.SUCCESS:
        return Verdict.ABSENT, (f"probe: pageable memory cannot be detected: "
                                f"aclrtPointerGetAttributes of a malloc'd host pointer "
                                f"returned {err_name(rc)}")
    kind = getattr(attrs, "location_type", None)
    if kind == MemLocationType.UNREGISTERED:
        return Verdict.PRESENT, "a malloc'd host pointer is UNREGISTERED (pageable)"
    name = MemLocationType(kind).name if kind in set(MemLocationType) else repr(kind)
    return Verdict.ABSENT, (f"probe: pageable memory cannot be detected: "
                            f"aclrtPointerGetAttributes reports a malloc'd host pointer as "
                            f"{name}, not UNREGISTERED")


def measure_execution(s: Session) -> tuple[Verdict, str]:
    """The seconds of a one-stream captured model's first and of its second
    aclmdlRIExecuteAsync + sync (``first_execution_s``, ``second_execution_s``). A runtime
    may make each model's first execution slow: the real one, over a driver that never
    advances the SQ tail, polls it for up to 5 s per stream (`feature/model/model.cc:1011-1022`,
    MAX_WAIT_TIME at `:46`); the generated tier sizes its examples from this."""
    stream = s.stream()
    s.capture(stream, family=None)
    if Cap.VALUE_TASKS in s.caps:
        word = s.malloc(64)
        s.ok(s.b.value_write(word, 1, 0, stream), "aclrtValueWrite (captured)")
    model = s.end(stream, family=None)
    for key in ("first_execution_s", "second_execution_s"):
        t0 = time.monotonic()
        s.ok(s.b.execute_async(model, stream), "aclmdlRIExecuteAsync")
        s.ok(s.b.synchronize_stream_with_timeout(stream, MEASURE_SYNC_MS),
             "aclrtSynchronizeStreamWithTimeout after the execution")
        s.timings[key] = round(time.monotonic() - t0, 4)
    return Verdict.MEASURED, (f"one-stream model: first execution "
                              f"{s.timings['first_execution_s']:.3f} s, second "
                              f"{s.timings['second_execution_s']:.3f} s")


# ---------------------------------------------------------------------------------------------
# family probes (a 207000 / 207019 answer removes the capability)


def probe_capture(s: Session) -> tuple[Verdict, str]:
    stream = s.stream()
    s.capture(stream)
    rc, _, _ = s.b.capture_get_info(stream)
    s.ok(rc, "aclmdlRICaptureGetInfo", family=Cap.CAPTURE)
    s.end(stream)
    return Verdict.PRESENT, "CaptureBegin/GetInfo/End answer"


def probe_kernels(s: Session) -> tuple[Verdict, str]:
    stream = s.stream()
    f = s.func(SEED_KERNEL, family=True)
    buf = s.malloc(4 * catalog.SEED_ELEMENTS)
    args = catalog.get(SEED_KERNEL).pack(input=buf, output=buf)
    return answer(s.b.launch_kernel_with_host_args(f, 1, stream, None, args, len(args)),
                   "aclrtLaunchKernelWithHostArgs")


def probe_value_tasks(s: Session) -> tuple[Verdict, str]:
    stream = s.stream()
    word = s.malloc(64)
    return answer(s.b.value_write(word, 0, 0, stream), "aclrtValueWrite")


def probe_listing(s: Session) -> tuple[Verdict, str]:
    s.tiny()
    return Verdict.PRESENT, "GetStreams/GetTasksByStream answer"


def probe_task_type(s: Session) -> tuple[Verdict, str]:
    _, _, kernel, _ = s.tiny()  # tiny() needs GetType to find the kernel task
    return answer(s.b.task_get_type(kernel)[0], "aclmdlRITaskGetType")


def probe_seq_id(s: Session) -> tuple[Verdict, str]:
    _, _, kernel, _ = s.tiny()
    return answer(s.b.task_get_seq_id(kernel)[0], "aclmdlRITaskGetSeqId")


def probe_get_params(s: Session) -> tuple[Verdict, str]:
    _, _, kernel, _ = s.tiny()
    return answer(s.b.task_get_params(kernel)[0], "aclmdlRITaskGetParams")


def _kernel_params(s: Session) -> TaskParams:
    buf = s.malloc(4 * catalog.SEED_ELEMENTS)
    args = catalog.get(SEED_KERNEL).pack(input=buf, output=buf)
    return kernel_task_params(s.func(SEED_KERNEL), args)


def probe_set_params(s: Session) -> tuple[Verdict, str]:
    _, _, kernel, _ = s.tiny()
    return answer(s.b.task_set_params(kernel, _kernel_params(s)), "aclmdlRITaskSetParams")


def probe_disable(s: Session) -> tuple[Verdict, str]:
    _, _, kernel, _ = s.tiny()
    return answer(s.b.task_disable(kernel), "aclmdlRITaskDisable")


def probe_update(s: Session) -> tuple[Verdict, str]:
    _, model, _, _ = s.tiny()
    return answer(s.b.update(model), "aclmdlRIUpdate")


def probe_sync_timeout(s: Session) -> tuple[Verdict, str]:
    stream = s.stream()
    return answer(s.b.synchronize_stream_with_timeout(stream, SYNC_MS),
                   "aclrtSynchronizeStreamWithTimeout")


def probe_task_groups(s: Session) -> tuple[Verdict, str]:
    stream = s.stream()
    s.capture(stream, family=None)
    rc = s.b.capture_task_grp_begin(stream)
    if rc == Err.SUCCESS:
        s.b.capture_task_grp_end(stream)
    return answer(rc, "aclmdlRICaptureTaskGrpBegin")


def probe_cond(s: Session) -> tuple[Verdict, str]:
    stream = s.stream()
    s.capture(stream, family=None)
    rc, _, parent = s.b.capture_get_info(stream)
    s.ok(rc, "aclmdlRICaptureGetInfo")
    return answer(s.b.cond_handle_create(parent, 0, 0)[0], "aclmdlRICondHandleCreate")


def probe_build(s: Session) -> tuple[Verdict, str]:
    rc, model = s.b.build_begin(0)
    if rc == Err.SUCCESS and model:
        s.model(model)
    return answer(rc, "aclmdlRIBuildBegin")


def probe_names(s: Session) -> tuple[Verdict, str]:
    _, model, _, _ = s.tiny()
    return answer(s.b.set_name(model, "mdlri-probe"), "aclmdlRISetName")


def probe_attributes(s: Session) -> tuple[Verdict, str]:
    _, _, kernel, _ = s.tiny()
    return answer(s.b.kernel_task_get_attribute(kernel, LaunchAttrId.TIMEOUT)[0],
                   "aclmdlRIKernelTaskGetAttribute")


def probe_labels(s: Session) -> tuple[Verdict, str]:
    rc, label = s.b.create_label()
    if rc == Err.SUCCESS and label:
        s.later(lambda: s.b.destroy_label(label))
    return answer(rc, "aclrtCreateLabel")


def probe_external_events(s: Session) -> tuple[Verdict, str]:
    stream = s.stream()
    rc, ev = s.b.create_event_ex_with_flag(EventFlag.SYNC)
    s.ok(rc, "aclrtCreateEventExWithFlag")
    s.later(lambda: s.b.destroy_event(ev))
    return answer(s.b.record_event_with_flag(ev, stream, 0), "aclrtRecordEventWithFlag")


_TINY = (Cap.CAPTURE, Cap.KERNELS, Cap.LISTING, Cap.TASK_TYPE)

#: every probe, in the order they run; later probes see the verdicts of earlier ones
PROBES: tuple[Probe, ...] = (
    Probe(Cap.DATA_MOVEMENT, "memory round trip", probe_data_movement),
    Probe(Cap.KERNEL_EXEC, "seed kernel output", probe_kernel_exec,
          needs=(Cap.KERNELS, Cap.SYNC_TIMEOUT)),
    Probe(Cap.CAPTURE, "capture", probe_capture, family=True),
    Probe(Cap.KERNELS, "kernel launch", probe_kernels, family=True),
    Probe(Cap.VALUE_TASKS, "value write", probe_value_tasks, family=True),
    Probe(Cap.SYNC_TIMEOUT, "timed sync", probe_sync_timeout, family=True),
    Probe(Cap.LISTING, "listing", probe_listing, needs=_TINY, family=True),
    Probe(Cap.TASK_TYPE, "task type", probe_task_type, needs=_TINY, family=True),
    Probe(Cap.SEQ_ID, "seq id", probe_seq_id, needs=_TINY, family=True),
    Probe(Cap.GET_PARAMS, "get params", probe_get_params, needs=_TINY, family=True),
    Probe(Cap.SET_PARAMS, "set params", probe_set_params, needs=_TINY, family=True),
    Probe(Cap.DISABLE, "disable", probe_disable, needs=_TINY, family=True),
    Probe(Cap.UPDATE, "update", probe_update, needs=_TINY, family=True),
    Probe(Cap.TASK_GROUPS, "task groups", probe_task_groups, needs=(Cap.CAPTURE,), family=True),
    Probe(Cap.COND, "cond", probe_cond, needs=(Cap.CAPTURE,), family=True),
    Probe(Cap.BUILD, "build", probe_build, family=True),
    Probe(Cap.NAMES, "names", probe_names, needs=_TINY, family=True),
    Probe(Cap.ATTRIBUTES, "attributes", probe_attributes, needs=_TINY, family=True),
    Probe(Cap.LABELS, "labels", probe_labels, family=True),
    Probe(Cap.EXTERNAL_EVENTS, "external events", probe_external_events, family=True),
    Probe(Cap.NEVER_TIMEOUT, "never timeout", probe_never_timeout,
          needs=(*_TINY, Cap.ATTRIBUTES)),
    Probe(Cap.BLOCKING_WAIT, "blocking value wait", probe_blocking_wait,
          needs=(Cap.CAPTURE, Cap.VALUE_TASKS, Cap.SYNC_TIMEOUT)),
    Probe(Cap.PAGEABLE_DETECTION, "pageable memory detection", probe_pageable_detection),
)

#: a timed sync of the execution measurement (ms): long enough for a slow first execution
MEASURE_SYNC_MS = 30_000

#: the figures measured after the probes (their keys land in ProbeReport.timings)
MEASUREMENTS: tuple[Measurement, ...] = (
    Measurement("execution", "first and second execution", measure_execution,
                needs=(Cap.CAPTURE, Cap.SYNC_TIMEOUT), deadline_s=40.0),
)
