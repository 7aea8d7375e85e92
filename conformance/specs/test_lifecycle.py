"""Destroy and handle validity: aclmdlRIDestroy (LIFE-01..LIFE-04, LIFE-06, LIFE-08, Q-01).

Not tested here:

* LIFE-05 (sub-model handles): the contract has no AddCondTask.
* LIFE-07 (task and task-group handles are not validated): passing a stale or garbage task
  handle is undefined behaviour (a raw pointer, use-after-free on hardware); the catalog
  says "do not test", and there is nothing a backend must return.
* LIFE-09 .. LIFE-14 (destroy callbacks): the contract has no callback registration.
* LIFE-03, the 107037 branch: it needs a model blocked for more than ~10 s inside Destroy.
  The waiting half is checked here for a short model, and for a blocked one by the
  generated tier (``test_generated_destroy_while_blocked``: the execution is released from
  another thread while Destroy waits).

Specs about stale handles (LIFE-01, LIFE-06, LIFE-08) require Cap.HANDLE_VALIDATION: on real
hardware such a handle is use-after-free.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from mdlri_conformance.backends.contract import (
    Cap, CaptureMode, CaptureStatus, Err, EventRecordFlag, EventWaitFlag,
)
from mdlri_conformance.conformance import expect
from mdlri_conformance.conformance.harness import Buf, Dev

pytestmark = pytest.mark.requires(Cap.CAPTURE, Cap.KERNELS)

X = np.arange(1, 9, dtype=np.int32)


def main_model(dev: Dev, s: Any) -> tuple[Any, Buf]:
    """Capture fallback_main(x -> out) on ``s``; returns (model, out)."""
    x, out = dev.buffer(X), dev.buffer(n=8)
    dev.begin(s)
    dev.launch("fallback_main", s, input=x, output=out)
    return dev.end(s), out


@pytest.mark.clause("LIFE-01")
@pytest.mark.requires(Cap.HANDLE_VALIDATION, Cap.LISTING)
def test_destroyed_model_streams_are_invalid(dev: Dev, fingerprint: Any) -> None:
    """LIFE-01: after Destroy, GetTasksByStream on a stream from the model's GetStreams fails."""
    s = dev.stream()
    model, _ = main_model(dev, s)
    internal = dev.streams_of(model)
    expect.true(len(internal) >= 1, "GetStreams (setup)", ">= 1 stream", len(internal))
    expect.ok(dev.destroy(model), "aclmdlRIDestroy")
    rc, _, _ = dev.b.get_tasks_by_stream(internal[0], None)
    fingerprint.record("LIFE-01:rc", rc)
    expect.ne(rc, Err.SUCCESS, "aclmdlRIGetTasksByStream on a destroyed model's stream rc")


@pytest.mark.clause("LIFE-01")
def test_destroy_releases_the_model(dev: Dev) -> None:
    """LIFE-01: Destroy frees the model: the backend's live model count (where it can count,
    the simulator and the emulator) is back to what it was before the capture (kills the
    fault 'destroy-leaks-model')."""
    counts = getattr(dev.b, "live_counts", None)
    if counts is None:
        pytest.skip("UNSUPPORTED: the backend cannot count live models (no live_counts)")
    s = dev.stream()
    before = counts().models
    model, _ = main_model(dev, s)
    expect.eq(counts().models, before + 1, "live models after CaptureEnd (setup)")
    expect.ok(dev.destroy(model), "aclmdlRIDestroy")
    expect.eq(counts().models, before, "live models after aclmdlRIDestroy")


@pytest.mark.clause("LIFE-02")
def test_destroy_capturing_model(dev: Dev) -> None:
    """LIFE-02: Destroy on a model that is capturing returns 107026 and the capture goes on."""
    s = dev.stream()
    x, out = dev.buffer(X), dev.buffer(n=8)
    dev.begin(s)
    dev.launch("fallback_main", s, input=x, output=out)
    rc, _, capturing = dev.b.capture_get_info(s)
    expect.ok(rc, "aclmdlRICaptureGetInfo (setup)")
    expect.rc(dev.b.destroy(capturing), Err.RT_MODEL_CAPTURED, "aclmdlRIDestroy during capture")
    rc, status, _ = dev.b.capture_get_info(s)
    expect.ok(rc, "aclmdlRICaptureGetInfo")
    expect.eq(status, CaptureStatus.ACTIVE, "capture status after the refused Destroy")
    model = dev.end(s)
    dev.execute(model, s)
    expect.eq(dev.read(out), X + 10, "output of the model")


@pytest.mark.clause("LIFE-03")
def test_destroy_right_after_execute(dev: Dev) -> None:
    """LIFE-03: Destroy right after ExecuteAsync (no sync) returns 0 and the execution completes."""
    s = dev.stream()
    model, out = main_model(dev, s)
    expect.ok(dev.b.execute_async(model, s), "aclmdlRIExecuteAsync")
    expect.ok(dev.destroy(model), "aclmdlRIDestroy right after ExecuteAsync")
    expect.eq(dev.read(out), X + 10, "output when Destroy returned")
    dev.sync(s)


@pytest.mark.clause("LIFE-04")
def test_destroy_null(dev: Dev) -> None:
    """LIFE-04: Destroy(NULL) returns 100000."""
    expect.rc(dev.b.destroy(None), Err.INVALID_PARAM, "aclmdlRIDestroy(NULL)")


@pytest.mark.clause("LIFE-06")
@pytest.mark.requires(Cap.HANDLE_VALIDATION)
def test_double_destroy(dev: Dev, fingerprint: Any) -> None:
    """LIFE-06: a second Destroy of the same model returns 107017."""
    s = dev.stream()
    model, _ = main_model(dev, s)
    expect.ok(dev.destroy(model), "first aclmdlRIDestroy")
    rc = dev.b.destroy(model)
    fingerprint.record("Q-01", rc)
    expect.rc(rc, Err.RT_INVALID_HANDLE, "second aclmdlRIDestroy")


@pytest.mark.clause("LIFE-08")
@pytest.mark.requires(Cap.HANDLE_VALIDATION)
@pytest.mark.parametrize("api", ["capture_begin", "capture_get_info", "capture_end"])
def test_destroyed_stream_rejected(dev: Dev, api: str) -> None:
    """LIFE-08: a destroyed stream handle passed to a capture API returns 107017."""
    rc, s = dev.b.create_stream()
    expect.ok(rc, "aclrtCreateStream (setup)")
    expect.ok(dev.b.destroy_stream(s), "aclrtDestroyStream (setup)")
    if api == "capture_begin":
        rc = dev.b.capture_begin(s, CaptureMode.RELAXED)
    elif api == "capture_get_info":
        rc, _, _ = dev.b.capture_get_info(s)
    else:
        rc, _ = dev.b.capture_end(s)
    expect.rc(rc, Err.RT_INVALID_HANDLE, f"{api} on a destroyed stream")


@pytest.mark.clause("LIFE-08")
@pytest.mark.requires(Cap.HANDLE_VALIDATION, Cap.EXTERNAL_EVENTS)
@pytest.mark.parametrize("api", ["record_event_with_flag", "stream_wait_event_with_flag"])
def test_destroyed_stream_rejected_by_external_event_calls(dev: Dev, api: str) -> None:
    """LIFE-08: a destroyed stream handle passed to aclrtRecordEventWithFlag /
    aclrtStreamWaitEventWithFlag with the EXTERNAL flag returns 107017: the stream handle is
    validated before the call acts (RT_VALIDATE_AND_UNWRAP_OBJECT in rtEventRecordWithFlag,
    `api/api_c.cc:750-759`, and in rtStreamWaitEventWithFlag, `api/api_c_stream.cc:416-424`)."""
    rc, s = dev.b.create_stream()
    expect.ok(rc, "aclrtCreateStream (setup)")
    expect.ok(dev.b.destroy_stream(s), "aclrtDestroyStream (setup)")
    e = dev.event()
    if api == "record_event_with_flag":
        rc = dev.b.record_event_with_flag(e, s, EventRecordFlag.EXTERNAL)
    else:
        rc = dev.b.stream_wait_event_with_flag(s, e, 0, EventWaitFlag.EXTERNAL)
    expect.rc(rc, Err.RT_INVALID_HANDLE, f"{api}(EXTERNAL) on a destroyed stream")
