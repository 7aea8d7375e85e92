"""Runtime support calls around the models (RT-01..RT-06, clauses-runtime.toml): the device and
context of a thread, kernel-launch argument checks, aclrtValueWait flags, aclrtMemcpy with
ACL_MEMCPY_DEFAULT, and the event syncs of a thread without a context.

Every Model RI program makes these calls; the other specs use them only as set-up, where a
wrong answer would be hidden behind a helper or read as "not checked".
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest

from mdlri_conformance.backends.contract import (
    UNWRITTEN, Cap, CaptureMode, CaptureStatus, Err, EventFlag, EventRecordFlag, EventWaitFlag,
    MemcpyKind, ModelStreamFlag, StreamFlag, TaskType, ValueWaitFlag,
)
from mdlri_conformance.conformance import expect
from mdlri_conformance.conformance.framework import outcomes
from mdlri_conformance.conformance.harness import SENTINEL, SYNC_MS, Buf, Dev, in_thread
from mdlri_conformance.conformance.specs._setups import begin_build, persistent_stream

X = np.arange(1, 9, dtype=np.int32)
U64 = 0xFFFF_FFFF_FFFF_FFFF


def host_state(dev: Dev, method: str, api: str) -> Callable[..., Any]:
    """A HostStateBackend method of the backend; UNSUPPORTED without it."""
    fn = getattr(dev.b, method, None)
    if fn is None:
        raise outcomes.Unsupported(f"the backend has no {api} (HostStateBackend.{method})")
    return fn


# ---------------------------------------------------------------------------------------------
# RT-01, RT-02: device and context of a thread


@pytest.mark.clause("RT-01")
@pytest.mark.requires(Cap.THREADS)
def test_get_device_answers_the_set_device(dev: Dev) -> None:
    """RT-01: after aclrtSetDevice(0) aclrtGetDevice returns (0, 0), in the spec's thread and in
    a new thread; a thread that never set a device gets 107002 (`api/impl/api_impl.cc:
    3473-3495`), or 100000 for a NULL out-param, with or without a context: the ACL layer
    checks it first (`src/acl/aclrt_impl/device.cpp:134`)."""
    get_device = host_state(dev, "get_device", "aclrtGetDevice")
    rc, dev_id = get_device()
    expect.rc(rc, Err.SUCCESS, "aclrtGetDevice in the spec's thread")
    expect.eq(dev_id, 0, "device id in the spec's thread")
    rc, dev_id = in_thread(dev.b, get_device)
    expect.rc(rc, Err.SUCCESS, "aclrtGetDevice after aclrtSetDevice(0) in a new thread")
    expect.eq(dev_id, 0, "device id after aclrtSetDevice(0)")
    rc, _ = in_thread(dev.b, get_device, set_device=False)
    expect.rc(rc, Err.RT_CONTEXT_NULL, "aclrtGetDevice in a thread without aclrtSetDevice")
    rc, _ = in_thread(dev.b, lambda: get_device(null_out=True), set_device=False)
    expect.rc(rc, Err.INVALID_PARAM,
              "aclrtGetDevice(NULL) in a thread without a context (ACL check first)")
    rc, _ = get_device(null_out=True)
    expect.rc(rc, Err.INVALID_PARAM, "aclrtGetDevice(NULL) in the spec's thread")


@pytest.mark.clause("RT-02")
@pytest.mark.requires(Cap.THREADS)
def test_current_context_is_the_primary_context(dev: Dev) -> None:
    """RT-02: aclrtGetCurrentContext answers device 0's primary context: the same non-NULL
    handle in the spec's thread and in two new threads that called aclrtSetDevice(0)
    (`api/impl/api_impl.cc:3445-3468`, `:4193-4204`); a NULL out-param is 100000 even in a
    thread without a context (`src/acl/aclrt_impl/context.cpp:78`)."""
    get_ctx = host_state(dev, "get_current_context", "aclrtGetCurrentContext")
    handles = []
    for where, answer in (("the spec's thread", get_ctx()),
                          ("a new thread", in_thread(dev.b, get_ctx)),
                          ("a second new thread", in_thread(dev.b, get_ctx))):
        rc, ctx = answer
        expect.rc(rc, Err.SUCCESS, f"aclrtGetCurrentContext in {where}")
        expect.true(ctx is not None, f"context handle in {where}", "non-NULL", ctx)
        handles.append(ctx)
    expect.eq(handles[1], handles[0], "context of a new thread vs the spec's thread")
    expect.eq(handles[2], handles[1], "context of two new threads")
    rc, _ = in_thread(dev.b, lambda: get_ctx(null_out=True), set_device=False)
    expect.rc(rc, Err.INVALID_PARAM,
              "aclrtGetCurrentContext(NULL) in a thread without a context (ACL check first)")


# ---------------------------------------------------------------------------------------------
# RT-03: launch arguments


@pytest.mark.clause("RT-03")
@pytest.mark.requires(Cap.KERNELS)
@pytest.mark.parametrize("num_blocks,size_delta,what", [
    (0, 0, "numBlocks 0"),
    (1, None, "argsSize 0"),
])
def test_launch_rejects_zero_blocks_or_args(dev: Dev, num_blocks: int, size_delta: int | None,
                                            what: str) -> None:
    """RT-03: aclrtLaunchKernelWithHostArgs with numBlocks 0 or argsSize 0 returns 107000
    (`api/impl/api_error.cc:226`, `:1055`) and launches nothing: the output keeps its values."""
    s = dev.stream()
    out = dev.buffer(n=8)
    data = dev.args("fill", out=out, n=out.n, value=7)
    size = 0 if size_delta is None else len(data) + size_delta
    rc = dev.b.launch_kernel_with_host_args(dev.func("fill"), num_blocks, s, None, data, size)
    expect.rc(rc, Err.RT_PARAM_INVALID, f"aclrtLaunchKernelWithHostArgs with {what}")
    dev.sync(s)
    expect.eq(dev.read(out), np.full(8, -1, dtype=np.int32),
              f"output after the refused launch ({what})")


@pytest.mark.clause("RT-14")
@pytest.mark.requires(Cap.KERNELS)
@pytest.mark.parametrize("what", ["funcHandle NULL", "hostArgs NULL", "placeHolderArray NULL, num 1"])
def test_launch_rejects_null_arguments(dev: Dev, what: str) -> None:
    """RT-14: aclrtLaunchKernelWithHostArgs with a NULL funcHandle or hostArgs returns 100000
    (ACL layer, `src/acl/aclrt_impl/kernel.cpp:496-497`); a NULL placeHolderArray with
    placeHolderNum 1 returns 107000 (ApiErrorDecorator::CheckArgs,
    `api/impl/api_error.cc:246-248`). Nothing is launched: the output keeps its values."""
    s = dev.stream()
    out = dev.buffer(n=8)
    data = dev.args("fill", out=out, n=out.n, value=7)
    func = dev.func("fill")
    if what == "funcHandle NULL":
        rc = dev.b.launch_kernel_with_host_args(None, 1, s, None, data, len(data))
        want = Err.INVALID_PARAM
    elif what == "hostArgs NULL":
        rc = dev.b.launch_kernel_with_host_args(func, 1, s, None, None, len(data))
        want = Err.INVALID_PARAM
    else:
        rc = dev.b.launch_kernel_with_host_args(func, 1, s, None, data, len(data), None, 1)
        want = Err.RT_PARAM_INVALID
    expect.rc(rc, want, f"aclrtLaunchKernelWithHostArgs with {what}")
    dev.sync(s)
    expect.eq(dev.read(out), np.full(8, -1, dtype=np.int32),
              f"output after the refused launch ({what})")


# ---------------------------------------------------------------------------------------------
# RT-04: aclrtValueWait flags


#: per flag, a (word, value) pair whose condition holds, so the wait passes at once
_HOLDS = {
    ValueWaitFlag.GEQ: (5, 3),
    ValueWaitFlag.EQ: (9, 9),
    ValueWaitFlag.AND: (0b0110, 0b0100),
    ValueWaitFlag.NOR: (0, 0),          # ~(0 | 0) != 0
}


@pytest.mark.clause("RT-04")
@pytest.mark.requires(Cap.VALUE_TASKS, Cap.SYNC_TIMEOUT)
@pytest.mark.parametrize("flag", list(ValueWaitFlag))
def test_value_wait_accepts_each_flag(dev: Dev, flag: ValueWaitFlag) -> None:
    """RT-04: aclrtValueWait accepts each of GEQ, EQ, AND and NOR (0..3) and, with the condition
    already true, lets the stream go on (`api/impl/api_error.cc:7277-7280`): the wait and a
    value write after it both run."""
    word_value, value = _HOLDS[flag]
    s = dev.stream()
    word, marker = dev.buffer64(word_value), dev.buffer64(0)
    expect.rc(dev.b.value_wait(word, value, int(flag), s), Err.SUCCESS,
              f"aclrtValueWait(flag {flag.name})")
    expect.ok(dev.b.value_write(marker, 0x5A, 0, s), "aclrtValueWrite after the wait (setup)")
    expect.rc(dev.b.synchronize_stream_with_timeout(s, SYNC_MS), Err.SUCCESS,
              f"sync after a satisfied {flag.name} wait")
    expect.eq(dev.read64(marker), 0x5A, f"value written after the {flag.name} wait")


@pytest.mark.clause("RT-04")
@pytest.mark.requires(Cap.VALUE_TASKS)
@pytest.mark.parametrize("flag", [4, 5, 0xFFFF_FFFF])
def test_value_wait_rejects_other_flags(dev: Dev, flag: int) -> None:
    """RT-04: a flag past NOR (>= MEM_WAIT_VALUE_TYPE_MAX 4) returns 107000 and enqueues
    nothing: a value write after it runs (`api/impl/api_error.cc:7277-7280`)."""
    s = dev.stream()
    word, marker = dev.buffer64(0), dev.buffer64(0)
    expect.rc(dev.b.value_wait(word, 1, flag, s), Err.RT_PARAM_INVALID,
              f"aclrtValueWait(flag {flag})")
    expect.ok(dev.b.value_write(marker, 0x5A, 0, s), "aclrtValueWrite after the refusal (setup)")
    dev.sync(s)
    expect.eq(dev.read64(marker), 0x5A, "value written after the refused wait")


@pytest.mark.clause("RT-04", "TMO-03")
@pytest.mark.requires(Cap.VALUE_TASKS, Cap.SYNC_TIMEOUT, Cap.BLOCKING_WAIT)
def test_value_wait_nor_blocks_until_the_condition_holds(dev: Dev) -> None:
    """RT-04: NOR waits until ~(*addr | value) != 0: with every bit of the word set it blocks
    (a 100 ms sync returns 507046), and clearing the word releases it."""
    s = dev.stream()
    word, marker = dev.buffer64(U64), dev.buffer64(0)
    expect.ok(dev.b.value_wait(word, 0, int(ValueWaitFlag.NOR), s), "aclrtValueWait(NOR)")
    expect.ok(dev.b.value_write(marker, 0x5A, 0, s), "aclrtValueWrite after the wait (setup)")
    try:
        blocked_rc = dev.b.synchronize_stream_with_timeout(s, 100)
        early = dev.read64(marker)
    finally:
        dev.write64(word, 0)  # release the stream whatever happened
    expect.rc(blocked_rc, Err.RT_STREAM_SYNC_TIMEOUT, "sync while ~(word | 0) == 0")
    expect.eq(early, 0, "value write behind the blocked wait, before the release")
    dev.sync(s)
    expect.eq(dev.read64(marker), 0x5A, "value written once the NOR condition held")


@pytest.mark.clause("RT-13")
@pytest.mark.requires(Cap.VALUE_TASKS)
@pytest.mark.parametrize("flag", [1, 0xFFFF_FFFF])
def test_value_write_rejects_flags_other_than_zero(dev: Dev, flag: int) -> None:
    """RT-13: aclrtValueWrite with a flag other than 0 returns 107000 and writes nothing
    (ApiErrorDecorator::MemWriteValue, `api/impl/api_error.cc:7249-7254`); flag 0 writes."""
    s = dev.stream()
    word = dev.buffer64(0)
    expect.rc(dev.b.value_write(word, 0x5A, flag, s), Err.RT_PARAM_INVALID,
              f"aclrtValueWrite(flag {flag:#x})")
    dev.sync(s)
    expect.eq(dev.read64(word), 0, f"word after the refused aclrtValueWrite(flag {flag:#x})")
    expect.rc(dev.b.value_write(word, 0x5B, 0, s), Err.SUCCESS, "aclrtValueWrite(flag 0)")
    dev.sync(s)
    expect.eq(dev.read64(word), 0x5B, "word after aclrtValueWrite(flag 0)")


@pytest.mark.clause("RT-17")
@pytest.mark.requires(Cap.VALUE_TASKS, Cap.THREADS)
def test_value_write_and_wait_null_address(dev: Dev) -> None:
    """RT-17: aclrtValueWrite and aclrtValueWait with a NULL address return 100000
    (`src/acl/aclrt_impl/memory.cpp:1445`, `:1455`: ACL_REQUIRES_NOT_NULL_WITH_INPUT_REPORT),
    whatever the flag (the flag is the runtime's check) and in a thread without a context too;
    nothing is enqueued: a value write after them runs."""
    s = dev.stream()
    marker = dev.buffer64(0)
    expect.rc(dev.b.value_write(None, 1, 0, s), Err.INVALID_PARAM, "aclrtValueWrite(NULL)")
    expect.rc(dev.b.value_write(None, 1, 1, s), Err.INVALID_PARAM,
              "aclrtValueWrite(NULL, flag 1)")
    expect.rc(dev.b.value_wait(None, 1, int(ValueWaitFlag.EQ), s), Err.INVALID_PARAM,
              "aclrtValueWait(NULL)")
    expect.rc(dev.b.value_wait(None, 1, 4, s), Err.INVALID_PARAM, "aclrtValueWait(NULL, flag 4)")
    rcs = in_thread(dev.b, lambda: (dev.b.value_write(None, 1, 0, None),
                                    dev.b.value_wait(None, 1, 0, None)), set_device=False)
    expect.rc(rcs[0], Err.INVALID_PARAM, "aclrtValueWrite(NULL) without a context")
    expect.rc(rcs[1], Err.INVALID_PARAM, "aclrtValueWait(NULL) without a context")
    expect.ok(dev.b.value_write(marker, 0x5A, 0, s), "aclrtValueWrite after the refusals (setup)")
    dev.sync(s)
    expect.eq(dev.read64(marker), 0x5A, "value written after the refused calls")


# ---------------------------------------------------------------------------------------------
# RT-05: aclrtMemcpy with ACL_MEMCPY_DEFAULT


@pytest.mark.clause("RT-05")
@pytest.mark.requires(Cap.DATA_MOVEMENT)
def test_memcpy_default_kind_copies(dev: Dev) -> None:
    """RT-05: kind ACL_MEMCPY_DEFAULT (4) copies host -> device and device -> device (the
    direction from the pointers, `api/impl/api_error.cc:2768-2775`)."""
    a, c = dev.buffer(n=8), dev.buffer(n=8)
    expect.rc(dev.b.memcpy(a.addr, a.nbytes, X, X.nbytes, MemcpyKind.DEFAULT), Err.SUCCESS,
              "aclrtMemcpy host -> device, kind DEFAULT")
    expect.eq(dev.read(a), X, "device buffer after the DEFAULT host -> device copy")
    expect.rc(dev.b.memcpy(c.addr, c.nbytes, a.addr, a.nbytes, MemcpyKind.DEFAULT), Err.SUCCESS,
              "aclrtMemcpy device -> device, kind DEFAULT")
    expect.eq(dev.read(c), X, "device buffer after the DEFAULT device -> device copy")


@pytest.mark.clause("RT-05")
def test_memcpy_null_side(dev: Dev) -> None:
    """RT-05: a NULL destination or source returns 100000 (ACL layer,
    `src/acl/aclrt_impl/memory.cpp:657-658`), whatever the kind."""
    a = dev.buffer(n=8)
    expect.rc(dev.b.memcpy(None, a.nbytes, X, X.nbytes, MemcpyKind.HOST_TO_DEVICE),
              Err.INVALID_PARAM, "aclrtMemcpy(dst NULL)")
    host = np.zeros(8, dtype=np.int32)
    expect.rc(dev.b.memcpy(host, host.nbytes, None, host.nbytes, MemcpyKind.DEVICE_TO_HOST),
              Err.INVALID_PARAM, "aclrtMemcpy(src NULL)")


# ---------------------------------------------------------------------------------------------
# RT-07: allocation sizes


@pytest.mark.clause("RT-07")
def test_malloc_size_zero_is_refused(dev: Dev) -> None:
    """RT-07: aclrtMalloc and aclrtMallocHost of 0 bytes return 100000 and leave the out
    pointer unwritten; 1 byte is a valid allocation (`src/acl/aclrt_impl/memory.cpp:315, 584`:
    ACL_REQUIRES_POSITIVE_REPORT, `src/acl/common/log_inner.h:654-665`)."""
    rc, ptr = dev.b.malloc(0)
    expect.rc(rc, Err.INVALID_PARAM, "aclrtMalloc(size 0)")
    expect.eq(ptr, UNWRITTEN, "devPtr out-param of aclrtMalloc(size 0)")
    rc, host = dev.b.malloc_host(0)
    expect.rc(rc, Err.INVALID_PARAM, "aclrtMallocHost(size 0)")
    expect.eq(host, UNWRITTEN, "hostPtr out-param of aclrtMallocHost(size 0)")
    rc, ptr = dev.b.malloc(1)
    expect.rc(rc, Err.SUCCESS, "aclrtMalloc(size 1)")
    expect.true(ptr not in (None, UNWRITTEN), "devPtr of aclrtMalloc(size 1)", "non-NULL", ptr)
    expect.rc(dev.b.free(ptr), Err.SUCCESS, "aclrtFree of the 1-byte allocation")
    rc, host = dev.b.malloc_host(1)
    expect.rc(rc, Err.SUCCESS, "aclrtMallocHost(size 1)")
    expect.true(host is not None and host is not UNWRITTEN and len(host) == 1,
                "hostPtr of aclrtMallocHost(size 1)", "a 1-byte buffer", host)
    expect.rc(dev.b.free_host(host), Err.SUCCESS, "aclrtFreeHost of the 1-byte buffer")


@pytest.mark.clause("RT-16")
@pytest.mark.requires(Cap.THREADS)
def test_free_null_is_the_acl_layers_100000(dev: Dev) -> None:
    """RT-16: aclrtFree(NULL) and aclrtFreeHost(NULL) return 100000
    (`src/acl/aclrt_impl/memory.cpp:570`, `:621`: ACL_REQUIRES_NOT_NULL_WITH_INPUT_REPORT), the
    ACL layer's check, made before the runtime looks for a context: a thread that never called
    aclrtSetDevice gets 100000 too."""
    expect.rc(dev.b.free(None), Err.INVALID_PARAM, "aclrtFree(NULL)")
    expect.rc(dev.b.free_host(None), Err.INVALID_PARAM, "aclrtFreeHost(NULL)")
    rcs = in_thread(dev.b, lambda: (dev.b.free(None), dev.b.free_host(None)), set_device=False)
    expect.rc(rcs[0], Err.INVALID_PARAM, "aclrtFree(NULL) without a context")
    expect.rc(rcs[1], Err.INVALID_PARAM, "aclrtFreeHost(NULL) without a context")


# ---------------------------------------------------------------------------------------------
# RT-06: event syncs without a context


@pytest.mark.clause("RT-06", "TMO-02")
@pytest.mark.requires(Cap.THREADS, Cap.SYNC_TIMEOUT)
def test_event_sync_without_context_checks_arguments_first(dev: Dev) -> None:
    """RT-06: in a thread that never called aclrtSetDevice, aclrtSynchronizeEventWithTimeout
    answers 107000 for a timeout below -1 and 100000 for a NULL event, and
    aclrtSynchronizeEvent(NULL) 100000: the ACL layer's checks, which need no context
    (`src/acl/aclrt_impl/event.cpp:173-190`)."""
    sync_t = host_state(dev, "synchronize_event_with_timeout", "aclrtSynchronizeEventWithTimeout")
    sync = host_state(dev, "synchronize_event", "aclrtSynchronizeEvent")
    e = dev.event()
    rcs = in_thread(dev.b, lambda: (sync_t(e, -2), sync_t(None, -1), sync(None)),
                    set_device=False)
    expect.rc(rcs[0], Err.RT_PARAM_INVALID,
              "aclrtSynchronizeEventWithTimeout(event, -2), no context")
    expect.rc(rcs[1], Err.INVALID_PARAM, "aclrtSynchronizeEventWithTimeout(NULL, -1), no context")
    expect.rc(rcs[2], Err.INVALID_PARAM, "aclrtSynchronizeEvent(NULL), no context")


@pytest.mark.clause("RT-06")
def test_event_sync_null_event_with_context(dev: Dev) -> None:
    """RT-06: the ACL layer's NULL check answers in a thread with a context too:
    aclrtSynchronizeEvent(NULL) and aclrtSynchronizeEventWithTimeout(NULL, -1) return 100000
    (`src/acl/aclrt_impl/event.cpp:173-177`, `:184-190`: ACL_REQUIRES_NOT_NULL_WITH_INPUT_REPORT)."""
    sync_t = host_state(dev, "synchronize_event_with_timeout", "aclrtSynchronizeEventWithTimeout")
    sync = host_state(dev, "synchronize_event", "aclrtSynchronizeEvent")
    expect.rc(sync(None), Err.INVALID_PARAM, "aclrtSynchronizeEvent(NULL)")
    expect.rc(sync_t(None, -1), Err.INVALID_PARAM, "aclrtSynchronizeEventWithTimeout(NULL, -1)")


# ---------------------------------------------------------------------------------------------
# RT-08: aclrtSetDevice with a device id that does not exist


@pytest.mark.clause("RT-08")
@pytest.mark.requires(Cap.THREADS)
@pytest.mark.parametrize("device_id", [-1, 1 << 20])
def test_set_device_invalid_id(dev: Dev, device_id: int) -> None:
    """RT-08: aclrtSetDevice with an id outside [0, device count) returns 107001
    (ApiErrorDecorator::SetDevice, `api/impl/api_error.cc:3281-3294`: RT_ERROR_DEVICE_ID ->
    ACL_ERROR_RT_INVALID_DEVICEID, `core/src/common/errcode_manage.cc:39`) and gives the thread
    no context: its aclrtGetDevice still answers 107002."""
    get_device = host_state(dev, "get_device", "aclrtGetDevice")
    rc, (get_rc, _) = in_thread(dev.b, lambda: (dev.b.set_device(device_id), get_device()),
                                set_device=False)
    expect.rc(rc, Err.RT_INVALID_DEVICEID, f"aclrtSetDevice({device_id})")
    expect.rc(get_rc, Err.RT_CONTEXT_NULL, f"aclrtGetDevice after aclrtSetDevice({device_id})")


# ---------------------------------------------------------------------------------------------
# RT-09: aclrtMemset[Async] counts


@pytest.mark.clause("RT-09")
@pytest.mark.requires(Cap.DATA_MOVEMENT)
def test_memset_count_zero_and_past_max(dev: Dev) -> None:
    """RT-09: aclrtMemset and aclrtMemsetAsync with count 0 return 0 and write nothing
    (`src/acl/aclrt_impl/memory.cpp:670-679`, `:738-745`: count == 0 returns ACL_SUCCESS first);
    aclrtMemsetAsync with count > maxCount returns 107000 and writes nothing
    (ApiErrorDecorator::MemsetAsync, `api/impl/api_error.cc:3128-3136`)."""
    s = dev.stream()
    a = dev.buffer(n=8)
    expect.rc(dev.b.memset(a.addr, a.nbytes, 0x5A, 0), Err.SUCCESS, "aclrtMemset(count 0)")
    expect.rc(dev.b.memset_async(a.addr, a.nbytes, 0x5A, 0, s), Err.SUCCESS,
              "aclrtMemsetAsync(count 0)")
    expect.rc(dev.b.memset_async(a.addr, 8, 0x5A, 16, s), Err.RT_PARAM_INVALID,
              "aclrtMemsetAsync(maxCount 8, count 16)")
    dev.sync(s)
    expect.eq(dev.read(a), np.full(8, SENTINEL, dtype=np.int32),
              "buffer after the count-0 fills and the refused fill")


@pytest.mark.clause("RT-09")
def test_memset_null_with_a_count(dev: Dev) -> None:
    """RT-09: the NULL check of devPtr comes right after the count-0 test: aclrtMemset and
    aclrtMemsetAsync with a NULL devPtr and count 8 return 100000
    (ACL_REQUIRES_NOT_NULL_WITH_INPUT_REPORT, `src/acl/aclrt_impl/memory.cpp:678`, `:746`),
    where count 0 returns 0."""
    s = dev.stream()
    expect.rc(dev.b.memset(None, 8, 0x5A, 8), Err.INVALID_PARAM, "aclrtMemset(NULL, count 8)")
    expect.rc(dev.b.memset_async(None, 8, 0x5A, 8, s), Err.INVALID_PARAM,
              "aclrtMemsetAsync(NULL, count 8)")
    dev.sync(s)


def _target(t: Buf | None) -> tuple[int | None, int]:
    """(address, capacity) of a call's target buffer; (NULL, 0) for None."""
    return (None, 0) if t is None else (t.addr, t.nbytes)


def _count_zero_first(dev: Dev, name: str, sync: Callable[[Buf | None], int],
                      enqueue: Callable[[Buf | None, Any], int], out: Buf) -> None:
    """The count-0 observables of a synchronous call and its Async twin, each given the target
    buffer (None: NULL pointers) and the Async one a stream: 0 with NULL pointers, in a thread
    without a context too; 0 for the synchronous call in a GLOBAL capture, not 107030
    (MODE-13 is the runtime's check); 0 and no captured task for the Async call on the
    capturing stream: the model lists the same tasks, by type, as an empty capture's model
    (the runtime adds tasks of its own at CaptureEnd: with software SQ off, the end-graph
    NOTIFY_RECORD, a DEFAULT task, `feature/aclgraph/context_aclgraph.cc:610-612`; Q-02);
    ``out`` left untouched."""
    empty_stream = dev.stream()
    dev.begin(empty_stream, CaptureMode.GLOBAL)
    empty = [int(dev.type_of(t)) for t in dev.all_tasks(dev.end(empty_stream))]
    s = dev.stream()
    expect.rc(sync(None), Err.SUCCESS, f"aclrt{name}(NULL, count 0)")
    expect.rc(enqueue(None, s), Err.SUCCESS, f"aclrt{name}Async(NULL, count 0)")
    rcs = in_thread(dev.b, lambda: (sync(None), enqueue(None, None)), set_device=False)
    expect.rc(rcs[0], Err.SUCCESS, f"aclrt{name}(NULL, count 0) without a context")
    expect.rc(rcs[1], Err.SUCCESS, f"aclrt{name}Async(NULL, count 0) without a context")
    dev.begin(s, CaptureMode.GLOBAL)
    try:
        sync_rc = sync(out)
        async_rc = enqueue(out, s)
    finally:
        m = dev.end(s)
    expect.rc(sync_rc, Err.SUCCESS, f"aclrt{name}(count 0) during a GLOBAL capture")
    expect.rc(async_rc, Err.SUCCESS, f"aclrt{name}Async(count 0) on the capturing stream")
    expect.eq([int(dev.type_of(t)) for t in dev.all_tasks(m)], empty,
              f"task types listed after the count-0 aclrt{name}Async (an empty capture's)")
    dev.sync(s)
    expect.eq(dev.read(out), np.full(out.n, SENTINEL, dtype=np.int32),
              f"buffer after the count-0 aclrt{name} calls")


@pytest.mark.clause("RT-09", "MODE-13")
@pytest.mark.requires(Cap.DATA_MOVEMENT, Cap.THREADS, Cap.CAPTURE, Cap.LISTING)
def test_memset_count_zero_comes_before_every_check(dev: Dev) -> None:
    """RT-09: count 0 is aclrtMemset[Async]'s first test (`src/acl/aclrt_impl/memory.cpp:
    674-677`, `:742-745`, before the NULL check of devPtr and before the runtime): a NULL
    devPtr with count 0 returns 0, in a thread without a context too; aclrtMemset with count 0
    in a GLOBAL capture returns 0, not 107030 (MODE-13 is the runtime's check); and
    aclrtMemsetAsync with count 0 on a capturing stream returns 0 and captures no task."""
    b = dev.b
    _count_zero_first(
        dev, "Memset",
        lambda t: b.memset(*_target(t), 0x5A, 0),
        lambda t, st: b.memset_async(*_target(t), 0x5A, 0, st),
        dev.buffer(n=8))


@pytest.mark.clause("RT-18", "MODE-13")
@pytest.mark.requires(Cap.DATA_MOVEMENT, Cap.THREADS, Cap.CAPTURE, Cap.LISTING)
def test_memcpy_count_zero_comes_before_every_check(dev: Dev) -> None:
    """RT-18: count 0 is aclrtMemcpy[Async]'s first test (`src/acl/aclrt_impl/memory.cpp:
    653-656`, `:688-691`, before the NULL checks, the kind and the runtime): NULL pointers and
    an invalid kind with count 0 return 0, in a thread without a context too; aclrtMemcpy
    with count 0 in a GLOBAL capture returns 0, not 107030 (MODE-13 is the runtime's check);
    aclrtMemcpyAsync with count 0 on a capturing stream returns 0 and captures no task; and
    nothing is copied."""
    b = dev.b
    src, out = dev.buffer(list(range(1, 9))), dev.buffer(n=8)
    d2d = MemcpyKind.DEVICE_TO_DEVICE
    expect.rc(b.memcpy(out.addr, out.nbytes, src.addr, 0, 99), Err.SUCCESS,
              "aclrtMemcpy(count 0, kind 99)")
    _count_zero_first(
        dev, "Memcpy",
        lambda t: b.memcpy(*_target(t), None if t is None else src.addr, 0, d2d),
        lambda t, st: b.memcpy_async(*_target(t), None if t is None else src.addr, 0, d2d, st),
        out)


# ---------------------------------------------------------------------------------------------
# RT-45: memsets of every byte count, at every byte offset

#: the byte counts checked, odd and even, past 256
MEMSET_COUNTS = range(1, 262)
#: bytes of sentinel around each memset's bytes (the offset inside a region is count % 8)
MEMSET_GUARD = 8


def _memset_layout() -> tuple[list[tuple[int, int, int]], int]:
    """(count, start byte, value) of each memset in one buffer, and the buffer's size in
    bytes: each count gets a region of its own, starts ``count % 8`` bytes in (every byte
    offset mod 8) and has sentinel bytes after it; its value is never 0xFF (the sentinel)."""
    spots, at = [], 0
    for count in MEMSET_COUNTS:
        start = at + count % 8
        spots.append((count, start, (count * 37) % 254 + 1))
        at = start + count + MEMSET_GUARD
    return spots, (at + 3) // 4 * 4


@pytest.mark.clause("RT-45")
@pytest.mark.requires(Cap.DATA_MOVEMENT)
@pytest.mark.parametrize("how", [pytest.param("captured", marks=pytest.mark.requires(Cap.CAPTURE)),
                                 "async", "sync"])
def test_memset_sets_exactly_count_bytes(dev: Dev, how: str) -> None:
    """RT-45: aclrtMemsetAsync (captured and executed, or on a plain stream) and aclrtMemset
    set exactly ``count`` bytes from ``devPtr``, for every count from 1 to 261 at every byte
    offset mod 8, and no byte around them (count is in bytes,
    `docs/zh/api_ref/11-03_memory_copy_and_set.md:1014`). Every byte of the buffer is
    compared."""
    spots, nbytes = _memset_layout()
    buf = dev.buffer(n=nbytes // 4)
    want = np.full(nbytes, 0xFF, dtype=np.uint8)
    s = dev.stream()
    if how == "captured":
        dev.begin(s)
    for count, start, value in spots:
        want[start:start + count] = value
        if how == "sync":
            rc = dev.b.memset(buf.addr + start, count, value, count)
        else:
            rc = dev.b.memset_async(buf.addr + start, count, value, count, s)
        expect.ok(rc, f"aclrtMemset{'' if how == 'sync' else 'Async'}(count {count}, "
                  f"offset {start % 8})")
    if how == "captured":
        m = dev.end(s)
        expect.eq(np.frombuffer(dev.read_bytes(buf.addr, nbytes), dtype=np.uint8),
                  np.full(nbytes, 0xFF, dtype=np.uint8), "buffer bytes after CaptureEnd")
        dev.execute(m, s)
    else:
        dev.sync(s)
    got = np.frombuffer(dev.read_bytes(buf.addr, nbytes), dtype=np.uint8)
    for count, start, value in spots:
        lo, hi = start - count % 8, start + count + MEMSET_GUARD
        expect.eq(got[lo:hi].tolist(), want[lo:hi].tolist(),
                  f"bytes of the count-{count} memset at offset {start % 8} "
                  f"(with its sentinel bytes around)")
    expect.eq(got.tolist(), want.tolist(), "every byte of the buffer")


# ---------------------------------------------------------------------------------------------
# RT-20: aclrtMemcpy[Async] with count > destMax


@pytest.mark.clause("RT-20")
@pytest.mark.requires(Cap.DATA_MOVEMENT)
def test_memcpy_count_above_dest_max(dev: Dev) -> None:
    """RT-20: aclrtMemcpy and aclrtMemcpyAsync (on a stream that is not capturing) with count >
    destMax return 107000 (ApiErrorDecorator::MemCopySync, `api/impl/api_error.cc:2138-2139`;
    ApiErrorDecorator::MemcpyAsync, `:2184-2185`) and copy nothing; the destination keeps its
    contents after the stream is synchronized."""
    src, out = dev.buffer(X), dev.buffer(n=8)
    d2d = MemcpyKind.DEVICE_TO_DEVICE
    half = out.nbytes // 2
    expect.rc(dev.b.memcpy(out.addr, half, src.addr, src.nbytes, d2d), Err.RT_PARAM_INVALID,
              f"aclrtMemcpy(destMax {half}, count {src.nbytes})")
    s = dev.stream()
    expect.rc(dev.b.memcpy_async(out.addr, half, src.addr, src.nbytes, d2d, s),
              Err.RT_PARAM_INVALID, f"aclrtMemcpyAsync(destMax {half}, count {src.nbytes})")
    dev.sync(s)
    expect.eq(dev.read(out), np.full(8, SENTINEL, dtype=np.int32),
              "destination after the refused copies")


# ---------------------------------------------------------------------------------------------
# RT-21: aclrtMemcpy[Async] with a kind outside the enum


@pytest.mark.clause("RT-21")
@pytest.mark.requires(Cap.DATA_MOVEMENT, Cap.THREADS)
@pytest.mark.parametrize("kind", [6, 7, 99], ids=["inner-d2d", "inter-d2d", "99"])
def test_memcpy_kind_outside_the_enum(dev: Dev, kind: int) -> None:
    """RT-21: aclrtMemcpy and aclrtMemcpyAsync with a kind the ACL layer does not translate
    (MemcpyKindTranslate, `src/acl/aclrt_impl/memory.cpp:162-200`, called at :660 and :695)
    return 100000, with count > destMax too (the runtime's RT-20 check comes after it) and in
    a thread without a context (the ACL layer looks at none); nothing is copied."""
    b = dev.b
    src, out = dev.buffer(X), dev.buffer(n=8)
    n = src.nbytes
    s = dev.stream()
    expect.rc(b.memcpy(out.addr, n, src.addr, n, kind), Err.INVALID_PARAM,
              f"aclrtMemcpy(kind {kind})")
    expect.rc(b.memcpy_async(out.addr, n, src.addr, n, kind, s), Err.INVALID_PARAM,
              f"aclrtMemcpyAsync(kind {kind})")
    expect.rc(b.memcpy(out.addr, n // 2, src.addr, n, kind), Err.INVALID_PARAM,
              f"aclrtMemcpy(kind {kind}, count > destMax)")
    rcs = in_thread(b, lambda: (b.memcpy(out.addr, n, src.addr, n, kind),
                                b.memcpy_async(out.addr, n, src.addr, n, kind, None)),
                    set_device=False)
    expect.rc(rcs[0], Err.INVALID_PARAM, f"aclrtMemcpy(kind {kind}) without a context")
    expect.rc(rcs[1], Err.INVALID_PARAM, f"aclrtMemcpyAsync(kind {kind}) without a context")
    dev.sync(s)
    expect.eq(dev.read(out), np.full(8, SENTINEL, dtype=np.int32),
              "destination after the refused copies")


# ---------------------------------------------------------------------------------------------
# RT-31: aclrtMemcpy[Async] with dst == src


@pytest.mark.clause("RT-31")
@pytest.mark.requires(Cap.DATA_MOVEMENT, Cap.CAPTURE, Cap.LISTING)
def test_memcpy_async_onto_itself_issues_nothing(dev: Dev) -> None:
    """RT-31: aclrtMemcpyAsync D2D with dst == src returns 0 before any task is allocated
    (ApiErrorDecorator::MemcpyAsync, `api/impl/api_error.cc:2249-2251`): on a capturing stream
    the model gets no task for it (a capture of it and a copy between two buffers has as many
    DEFAULT tasks as a capture of that copy alone: a runtime without software SQ appends its
    end-graph task to both, `context_aclgraph.cc:610-612`), and on an ordinary stream the
    buffer keeps its contents."""
    d2d = MemcpyKind.DEVICE_TO_DEVICE
    a, b = dev.buffer(X), dev.buffer(n=8)
    s = dev.stream()
    dev.begin(s)
    expect.ok(dev.b.memcpy_async(b.addr, b.nbytes, a.addr, a.nbytes, d2d, s),
              "aclrtMemcpyAsync(b <- a) on the capturing stream (setup)")
    alone = len(dev.tasks_of_type(dev.end(s), TaskType.DEFAULT))
    expect.true(alone >= 1, "DEFAULT tasks of a capture of a copy b <- a (setup)")
    dev.begin(s)
    expect.ok(dev.b.memcpy_async(a.addr, a.nbytes, a.addr, a.nbytes, d2d, s),
              "aclrtMemcpyAsync(dst == src) on the capturing stream")
    expect.ok(dev.b.memcpy_async(b.addr, b.nbytes, a.addr, a.nbytes, d2d, s),
              "aclrtMemcpyAsync(b <- a) on the capturing stream (setup)")
    m = dev.end(s)
    expect.eq(len(dev.tasks_of_type(m, TaskType.DEFAULT)), alone,
              "DEFAULT tasks of a capture of a copy onto itself and a copy b <- a")
    expect.ok(dev.b.memcpy_async(a.addr, a.nbytes, a.addr, a.nbytes, d2d, s),
              "aclrtMemcpyAsync(dst == src) on an ordinary stream")
    dev.sync(s)
    expect.eq(dev.read(a), X, "buffer after the copy onto itself")


@pytest.mark.clause("RT-31", "MODE-13")
@pytest.mark.requires(Cap.DATA_MOVEMENT, Cap.CAPTURE)
def test_memcpy_onto_itself_comes_before_the_capture_mode(dev: Dev) -> None:
    """RT-31: aclrtMemcpy with dst == src returns 0 (ApiErrorDecorator::MemCopySync,
    `api/impl/api_error.cc:2144`) before ApiImpl::MemCopySync's capture-mode check
    (`api/impl/api_impl.cc:2757`): in a GLOBAL capture too, not 107030 (MODE-13); the buffer
    keeps its contents."""
    a = dev.buffer(X)
    d2d = MemcpyKind.DEVICE_TO_DEVICE
    expect.ok(dev.b.memcpy(a.addr, a.nbytes, a.addr, a.nbytes, d2d), "aclrtMemcpy(dst == src)")
    s = dev.stream()
    dev.begin(s, CaptureMode.GLOBAL)
    try:
        rc = dev.b.memcpy(a.addr, a.nbytes, a.addr, a.nbytes, d2d)
    finally:
        dev.end(s)
    expect.ok(rc, "aclrtMemcpy(dst == src) during a GLOBAL capture")
    expect.eq(dev.read(a), X, "buffer after the copies onto itself")


# ---------------------------------------------------------------------------------------------
# RT-10: the *WithFlag event calls with the DEFAULT flag


@pytest.mark.clause("RT-10")
@pytest.mark.requires(Cap.CROSS_STREAM, Cap.VALUE_TASKS)
@pytest.mark.parametrize("timeout", [0, 0xFFFF_FFFF])
def test_with_flag_default_is_the_plain_call(dev: Dev, timeout: int) -> None:
    """RT-10: aclrtRecordEventWithFlag(DEFAULT) is aclrtRecordEvent
    (`src/acl/aclrt_impl/event.cpp:96-110`) and aclrtStreamWaitEventWithFlag(DEFAULT) is
    aclrtStreamWaitEvent with a timeout: any uint32 is accepted, 0xFFFFFFFF meaning the
    runtime's default wait timeout (`src/acl/aclrt_impl/stream.cpp:239-256`,
    `api/api_c_stream.cc:389-434`). Both return 0 and the wait orders the work behind it."""
    s1, s2 = dev.stream(), dev.stream()
    e = dev.event()
    first, second = dev.buffer64(0), dev.buffer64(0)
    expect.ok(dev.b.value_write(first, 0x11, 0, s1), "aclrtValueWrite on s1 (setup)")
    expect.rc(dev.b.record_event_with_flag(e, s1, EventRecordFlag.DEFAULT), Err.SUCCESS,
              "aclrtRecordEventWithFlag(DEFAULT)")
    expect.rc(dev.b.stream_wait_event_with_flag(s2, e, timeout, EventWaitFlag.DEFAULT),
              Err.SUCCESS, f"aclrtStreamWaitEventWithFlag(timeout {timeout:#x}, DEFAULT)")
    expect.ok(dev.b.value_write(second, 0x22, 0, s2), "aclrtValueWrite on s2 (setup)")
    dev.sync(s2)
    dev.sync(s1)
    expect.eq((dev.read64(first), dev.read64(second)), (0x11, 0x22),
              "words written before the record and after the wait")


# ---------------------------------------------------------------------------------------------
# RT-11: aclrtMemcpyAsync with pageable host memory outside capture


@pytest.mark.clause("RT-11")
@pytest.mark.requires(Cap.DATA_MOVEMENT, Cap.PAGEABLE_DETECTION)
def test_pageable_memcpy_async_copies_before_it_returns(dev: Dev) -> None:
    """RT-11: aclrtMemcpyAsync host -> device from pageable host memory on a stream that is not
    capturing synchronizes the stream and copies before it returns
    (ApiErrorDecorator::MemcpyAsync, `api/impl/api_error.cc:2256-2270`: StreamSynchronize, then
    MemCopySync): the host buffer overwritten right after the call does not reach the device."""
    s = dev.stream()
    a = dev.buffer(n=8)
    host = X.copy()  # ordinary numpy memory: pageable
    expect.rc(dev.b.memcpy_async(a.addr, a.nbytes, host, host.nbytes,
                                 MemcpyKind.HOST_TO_DEVICE, s), Err.SUCCESS,
              "aclrtMemcpyAsync H2D from pageable memory")
    host[:] = -7
    dev.sync(s)
    expect.eq(dev.read(a), X, "device buffer: the host values at the call")


# ---------------------------------------------------------------------------------------------
# RT-12: event syncs the runtime refuses


def _event_syncs(dev: Dev) -> list[tuple[str, Callable[[Any], int]]]:
    sync_t = host_state(dev, "synchronize_event_with_timeout", "aclrtSynchronizeEventWithTimeout")
    sync = host_state(dev, "synchronize_event", "aclrtSynchronizeEvent")
    return [("aclrtSynchronizeEvent", sync),
            ("aclrtSynchronizeEventWithTimeout(-1)", lambda e: sync_t(e, -1))]


@pytest.mark.clause("RT-12")
def test_event_sync_of_an_external_event(dev: Dev) -> None:
    """RT-12: the sync of an aclrtCreateEventWithFlag(ACL_EVENT_EXTERNAL) event returns 207000
    (ApiErrorDecorator::EventSynchronize, `api/impl/api_error.cc:1776-1778`; rtEventSynchronize
    passes RT_ERROR_FEATURE_NOT_SUPPORT on as 207000, `api/api_c.cc:792`)."""
    syncs = _event_syncs(dev)
    rc, e = dev.b.create_event_with_flag(EventFlag.EXTERNAL)
    expect.ok(rc, "aclrtCreateEventWithFlag(EXTERNAL) (setup)")
    try:
        for what, sync in syncs:
            expect.rc(sync(e), Err.RT_FEATURE_NOT_SUPPORT, f"{what} of an EXTERNAL event")
    finally:
        dev.b.destroy_event(e)


@pytest.mark.clause("RT-12")
@pytest.mark.requires(Cap.CAPTURE, Cap.VALUE_TASKS)
def test_event_sync_of_a_capturing_event(dev: Dev) -> None:
    """RT-12: the sync of an event recorded in a capture that is still open returns 107028
    (RT_ERROR_EVENT_CAPTURED, `api/impl/api_error.cc:1779-1781`,
    `core/src/common/errcode_manage.cc:202`); the capture goes on and ends."""
    syncs = _event_syncs(dev)
    s = dev.stream()
    e = dev.event()
    word = dev.buffer64(0)
    dev.begin(s)
    expect.ok(dev.b.value_write(word, 1, 0, s), "aclrtValueWrite in the capture (setup)")
    expect.ok(dev.b.record_event(e, s), "aclrtRecordEvent in the capture (setup)")
    for what, sync in syncs:
        expect.rc(sync(e), Err.RT_EVENT_CAPTURED, f"{what} of an event of the open capture")
    dev.end(s)


@pytest.mark.clause("RT-12")
@pytest.mark.requires(Cap.BUILD, Cap.VALUE_TASKS)
def test_event_sync_of_a_record_in_a_built_model(dev: Dev) -> None:
    """RT-12: the sync of an event recorded on a stream bound to a built model (the record is a
    task of the model) returns 107000 (IsEventInModel, `api/impl/api_error.cc:1782-1784`). The
    event is an aclrtCreateEventWithFlag(SYNC) one: the other kinds cannot be recorded on a
    bound stream (RT-26)."""
    syncs = _event_syncs(dev)
    m = begin_build(dev)
    ps = persistent_stream(dev)
    e = _old_event(dev, EventFlag.SYNC)
    expect.ok(dev.b.bind_stream(m, ps, ModelStreamFlag.HEAD), "aclmdlRIBindStream (setup)")
    try:
        expect.ok(dev.b.record_event(e, ps), "aclrtRecordEvent on the bound stream (setup)")
        for what, sync in syncs:
            expect.rc(sync(e), Err.RT_PARAM_INVALID, f"{what} of a record stored in a built model")
    finally:
        dev.b.unbind_stream(m, ps)


# ---------------------------------------------------------------------------------------------
# RT-15: aclrtCreateEventWithFlag flags


@pytest.mark.clause("RT-15")
@pytest.mark.parametrize("flag", [0x40, 0x80, 0x100])
def test_create_event_with_flag_rejects_unknown_bits(dev: Dev, flag: int) -> None:
    """RT-15: aclrtCreateEventWithFlag with a bit above 0x3F returns 107000 and writes no event
    (ApiErrorDecorator::EventCreate, `api/impl/api_error.cc:1628-1636`: flag > RT_EVENT_FLAG_MAX,
    `core/inc/event/event.hpp:37-39`; the ACL layer passes the flag on unchanged,
    `src/acl/aclrt_impl/event.cpp`, aclrtCreateEventWithFlagImpl); EXTERNAL alone is created."""
    rc, e = dev.b.create_event_with_flag(flag)
    if rc == Err.SUCCESS:
        dev.b.destroy_event(e)
    expect.rc(rc, Err.RT_PARAM_INVALID, f"aclrtCreateEventWithFlag({flag:#x})")
    expect.eq(e, UNWRITTEN, f"event out-param of aclrtCreateEventWithFlag({flag:#x})")
    rc, e = dev.b.create_event_with_flag(EventFlag.EXTERNAL)
    expect.rc(rc, Err.SUCCESS, "aclrtCreateEventWithFlag(EXTERNAL)")
    expect.ok(dev.b.destroy_event(e), "aclrtDestroyEvent (setup)")


@pytest.mark.clause("RT-15")
@pytest.mark.parametrize("flag", [0, 0x10 | 0x1, 0x20 | 0x1, 0x20 | 0x8, 0x20 | 0x10])
def test_create_event_with_flag_rejects_no_bit_and_combined_sole_flags(dev: Dev,
                                                                       flag: int) -> None:
    """RT-15: aclrtCreateEventWithFlag with no bit of 0x3F (flag 0), or with 0x10 or EXTERNAL
    (0x20) combined with another bit, returns 107000 and writes no event
    (ApiErrorDecorator::EventCreate, `api/impl/api_error.cc:1632-1644`); SYNC, EXTERNAL alone
    and SYNC | TIME_LINE are created."""
    rc, e = dev.b.create_event_with_flag(flag)
    if rc == Err.SUCCESS:
        dev.b.destroy_event(e)
    expect.rc(rc, Err.RT_PARAM_INVALID, f"aclrtCreateEventWithFlag({flag:#x})")
    expect.eq(e, UNWRITTEN, f"event out-param of aclrtCreateEventWithFlag({flag:#x})")
    for ok_flag in (0x1, 0x20, 0x1 | 0x8):
        rc, e = dev.b.create_event_with_flag(ok_flag)
        expect.rc(rc, Err.SUCCESS, f"aclrtCreateEventWithFlag({ok_flag:#x})")
        expect.ok(dev.b.destroy_event(e), "aclrtDestroyEvent (setup)")


# ---------------------------------------------------------------------------------------------
# RT-19: aclrtResetEvent


def _old_event(dev: Dev, flag: int) -> Any:
    """An aclrtCreateEventWithFlag (old-mode) event, destroyed at the end of the spec."""
    rc, e = dev.b.create_event_with_flag(flag)
    expect.ok(rc, f"aclrtCreateEventWithFlag({flag:#x}) (setup)")
    dev.track("destroy_event", lambda: dev.b.destroy_event(e))
    return e


@pytest.mark.clause("RT-19")
@pytest.mark.parametrize("event", ["null", "time_line", "ex_sync"])
def test_reset_event_refusals_outside_capture(dev: Dev, event: str) -> None:
    """RT-19: aclrtResetEvent on a stream that is not capturing: a NULL event returns 100000
    (`src/acl/aclrt_impl/event.cpp:117`); an aclrtCreateEventWithFlag(TIME_LINE) event has no
    wait task (`core/inc/event/event.hpp:133-136`) and returns 207000
    (`api/impl/api_error.cc:1760-1762`); an aclrtCreateEventExWithFlag(SYNC) event (new mode)
    returns 207000 on any stream (`api/impl/api_impl.cc:2210-2214`)."""
    s = dev.stream()
    if event == "null":
        e, want = None, Err.INVALID_PARAM
    elif event == "time_line":
        e, want = _old_event(dev, EventFlag.TIME_LINE), Err.RT_FEATURE_NOT_SUPPORT
    else:
        e, want = dev.event(EventFlag.SYNC), Err.RT_FEATURE_NOT_SUPPORT
    expect.rc(dev.b.reset_event(e, s), want, f"aclrtResetEvent({event} event)")


@pytest.mark.clause("RT-19")
@pytest.mark.requires(Cap.CAPTURE)
def test_reset_event_old_mode_on_a_capturing_stream(dev: Dev) -> None:
    """RT-19: aclrtResetEvent of an aclrtCreateEventWithFlag(SYNC) event (old mode, with a wait
    task) on a capturing stream returns 207000: the event is not bound to a capture, the
    stream's capture model is capturing (Event::ToBeCaptured,
    `feature/aclgraph/event_capture.cc:183-196`; `api/impl/api_impl.cc:2239-2243`). The
    refusal leaves the capture ACTIVE and it ends with 0."""
    e = _old_event(dev, EventFlag.SYNC)
    s = dev.stream()
    dev.begin(s)
    expect.rc(dev.b.reset_event(e, s), Err.RT_FEATURE_NOT_SUPPORT,
              "aclrtResetEvent(old-mode SYNC event) on a capturing stream")
    st, _ = dev.capture_status(s, "after the refused reset")
    expect.eq(st, CaptureStatus.ACTIVE, "capture status after the refused reset")
    expect.ok(dev.end_rc(s)[0], "aclmdlRICaptureEnd after the refused reset")


@pytest.mark.clause("RT-19")
@pytest.mark.requires(Cap.SYNC_TIMEOUT, Cap.VALUE_TASKS, Cap.BLOCKING_WAIT)
def test_reset_event_old_mode_sync_resets_the_event(dev: Dev) -> None:
    """RT-19: aclrtResetEvent of an aclrtCreateEventWithFlag(SYNC) event on a stream that is not
    capturing returns 0 and resets the event in stream order (Event::Reset submits an
    EVENT_RESET task, `core/src/event/event.cc:764-792`; DOC 07_event_management.md L515,
    L534): after record, sync, reset, sync, a wait on another stream blocks (its sync with a
    100 ms timeout returns 507046 and the value write behind the wait has not run) until the
    event is recorded again."""
    e = _old_event(dev, EventFlag.SYNC)
    s1, s2 = dev.stream(), dev.stream()
    word = dev.buffer64(0)
    expect.ok(dev.b.record_event(e, s1), "aclrtRecordEvent (setup)")
    dev.sync(s1)
    expect.ok(dev.b.reset_event(e, s1), "aclrtResetEvent(old-mode SYNC event)")
    dev.sync(s1)
    expect.ok(dev.b.stream_wait_event(s2, e), "aclrtStreamWaitEvent after the reset")
    expect.ok(dev.b.value_write(word, 7, 0, s2), "aclrtValueWrite behind the wait (setup)")
    try:
        expect.rc(dev.b.synchronize_stream_with_timeout(s2, 100), Err.RT_STREAM_SYNC_TIMEOUT,
                  "aclrtSynchronizeStreamWithTimeout(100) of the stream waiting on the reset event")
        expect.eq(dev.read64(word), 0, "word behind the wait while the event is reset")
    finally:
        expect.ok(dev.b.record_event(e, s1), "aclrtRecordEvent (release)")
    dev.sync(s2)
    expect.eq(dev.read64(word), 7, "word behind the wait after the new record")


# ---------------------------------------------------------------------------------------------
# RT-24: stream flags that cannot be combined


@pytest.mark.clause("RT-24")
@pytest.mark.parametrize("other", [StreamFlag.FAST_LAUNCH, StreamFlag.FAST_SYNC,
                                   StreamFlag.PERSISTENT, StreamFlag.CPU_SCHEDULE],
                         ids=lambda f: f.name)
def test_device_use_only_goes_alone(dev: Dev, other: StreamFlag) -> None:
    """RT-24: aclrtCreateStreamWithConfig(DEVICE_USE_ONLY | another flag) returns 107000 and
    leaves the out-parameter unwritten (CheckStreamFlags, `api/impl/api_error.cc:1375-1381`);
    DEVICE_USE_ONLY alone creates a stream. (HUGE is left out: a chip without huge streams
    refuses it with 207000 first, `:1359-1364`.)"""
    rc, s = dev.b.create_stream_with_config(0, StreamFlag.DEVICE_USE_ONLY | other)
    if rc == Err.SUCCESS:
        dev.b.destroy_stream(s)
    expect.rc(rc, Err.RT_PARAM_INVALID,
              f"aclrtCreateStreamWithConfig(DEVICE_USE_ONLY | {other.name})", clause="RT-24")
    expect.eq(s, UNWRITTEN, "aclrtCreateStreamWithConfig stream out-parameter", clause="RT-24")
    dev.stream(StreamFlag.DEVICE_USE_ONLY)


# ---------------------------------------------------------------------------------------------
# RT-25 .. RT-27: record / wait / reset refusals before the capture logic


@pytest.mark.clause("RT-25")
@pytest.mark.parametrize("kind", ["with_flag", "ex"])
@pytest.mark.parametrize("capturing", [False, True], ids=["plain", "capturing"])
def test_wait_on_an_event_without_a_wait_task(dev: Dev, kind: str, capturing: bool) -> None:
    """RT-25: aclrtStreamWaitEvent of a TIME_LINE event (aclrtCreateEventWithFlag or
    aclrtCreateEventExWithFlag: no SYNC, EXTERNAL or IPC bit, so no wait task) returns 207000 on
    a plain stream and on a capturing one, whose capture goes on (ApiErrorDecorator::
    StreamWaitEvent, `api/impl/api_error.cc:1414-1416`, before the impl's 107000 that XS-09
    states)."""
    if kind == "ex":
        e = dev.event(EventFlag.TIME_LINE)
    else:
        e = _old_event(dev, EventFlag.TIME_LINE)
    s = dev.stream()
    if capturing:
        dev.begin(s)
    expect.rc(dev.b.stream_wait_event(s, e), Err.RT_FEATURE_NOT_SUPPORT,
              f"aclrtStreamWaitEvent of a {kind} TIME_LINE event", clause="RT-25")
    if capturing:
        st, _ = dev.capture_status(s, "after the refused wait")
        expect.eq(st, CaptureStatus.ACTIVE, "capture status after the refused wait",
                  clause="RT-25")
        dev.end(s)


@pytest.mark.clause("RT-26")
@pytest.mark.requires(Cap.BUILD)
@pytest.mark.parametrize("kind", ["create", "ex_sync", "with_flag_sync"])
def test_events_on_a_bound_stream(dev: Dev, kind: str) -> None:
    """RT-26: on a stream bound to a built model, aclrtRecordEvent and aclrtStreamWaitEvent of
    an aclrtCreateEvent event or an aclrtCreateEventExWithFlag event return 207000
    (ApiImpl::EventRecord / StreamWaitEvent, `api/impl/api_impl.cc:2145-2151, 1602-1608`:
    IsNewMode() or flag RT_EVENT_DEFAULT, on a model stream); an aclrtCreateEventWithFlag(SYNC)
    event is recorded and waited on (0)."""
    if kind == "create":
        rc, e = dev.b.create_event()
        expect.ok(rc, "aclrtCreateEvent (setup)")
        dev.track("destroy_event", lambda: dev.b.destroy_event(e))
        want = Err.RT_FEATURE_NOT_SUPPORT
    elif kind == "ex_sync":
        e, want = dev.event(EventFlag.SYNC), Err.RT_FEATURE_NOT_SUPPORT
    else:
        e, want = _old_event(dev, EventFlag.SYNC), Err.SUCCESS
    m = begin_build(dev)
    ps = persistent_stream(dev)
    expect.ok(dev.b.bind_stream(m, ps, ModelStreamFlag.HEAD), "aclmdlRIBindStream (setup)")
    try:
        expect.rc(dev.b.record_event(e, ps), want,
                  f"aclrtRecordEvent of a {kind} event on a bound stream", clause="RT-26")
        expect.rc(dev.b.stream_wait_event(ps, e), want,
                  f"aclrtStreamWaitEvent of a {kind} event on a bound stream", clause="RT-26")
    finally:
        dev.b.unbind_stream(m, ps)


@pytest.mark.clause("RT-27")
@pytest.mark.parametrize("call", ["record", "wait", "reset"])
def test_device_only_event_is_refused_on_the_host(dev: Dev, call: str) -> None:
    """RT-27: aclrtRecordEvent, aclrtStreamWaitEvent and aclrtResetEvent of an
    aclrtCreateEventWithFlag(ACL_EVENT_DEVICE_USE_ONLY) event return 107000 ("device-only events
    can be called only on the device": ApiErrorDecorator::EventRecord / StreamWaitEvent /
    EventReset, `api/impl/api_error.cc:1702-1708, 1404-1410, 1750-1756`, each before the
    others' checks). UNSUPPORTED where the firmware cannot create such an event (207000,
    `api/impl/api_impl.cc:2048-2055`)."""
    e = _old_event(dev, EventFlag.DEVICE_USE_ONLY)
    s = dev.stream()
    rc = {"record": lambda: dev.b.record_event(e, s),
          "wait": lambda: dev.b.stream_wait_event(s, e),
          "reset": lambda: dev.b.reset_event(e, s)}[call]()
    expect.rc(rc, Err.RT_PARAM_INVALID, f"aclrt{call.title()}Event of a device-only event",
              clause="RT-27")
