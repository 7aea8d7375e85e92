"""Aborting a model: aclmdlRIAbort (ABT-01..ABT-03, ERR-21, Q-17, RT-34).

The device-side outcome of aborting a root captured model is undefined (Q-17): those specs
record what happens and assert only the return codes the catalog states.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from mdlri_conformance.backends.contract import Cap, CaptureStatus, Err
from mdlri_conformance.conformance import expect
from mdlri_conformance.conformance.harness import SENTINEL, Dev
from mdlri_conformance.conformance.specs._setups import gated_main, sub_model

pytestmark = pytest.mark.requires(Cap.ABORT, Cap.CAPTURE, Cap.KERNELS)

X = np.arange(1, 9, dtype=np.int32)


@pytest.mark.clause("ABT-01", "Q-17")
def test_abort_root_captured_model(dev: Dev, fingerprint: Any) -> None:
    """ABT-01: Abort of a root captured model is not rejected as captured: 0, or 207000 without model-abort support.

    API15 L1302-1304 documents Abort as unsupported for captured (ACL Graph) models; the code
    rejects only sub-models. Q-17: the outcome and re-executability are recorded.
    """
    s = dev.stream()
    x, out = dev.buffer(X), dev.buffer(n=8)
    dev.begin(s)
    dev.launch("fallback_main", s, input=x, output=out)
    model = dev.end(s)
    rc = dev.b.abort(model)
    fingerprint.record("Q-17:abort_idle", rc)
    expect.rc(rc, (Err.SUCCESS, Err.RT_FEATURE_NOT_SUPPORT), "aclmdlRIAbort of a captured model")
    fingerprint.record("Q-17:execute_after", dev.b.execute_async(model, s))
    fingerprint.record("Q-17:sync_after", dev.b.synchronize_stream_with_timeout(s, 2000))
    fingerprint.record("Q-17:output_after", dev.read(out).tolist())


@pytest.mark.clause("ABT-01", "RT-34")
def test_abort_capturing_model(dev: Dev) -> None:
    """ABT-01, RT-34: Abort of a model that is still capturing (the CaptureGetInfo handle) is
    not refused as captured: 0, UNSUPPORTED where it answers 207000 (no model-abort support,
    `api/impl/api_impl.cc:4510-4518`). The capture goes on: a launch after the Abort is
    captured, CaptureEnd returns 0 and the model runs both kernels."""
    s = dev.stream()
    x, mid, out = dev.buffer(X), dev.buffer(n=8), dev.buffer(n=8)
    dev.begin(s)
    dev.launch("fallback_main", s, input=x, output=mid)
    _, m = dev.capture_status(s, "(setup)")
    expect.ok(dev.b.abort(m), "aclmdlRIAbort of a capturing model", clause="RT-34")
    st, _ = dev.capture_status(s, "after the Abort")
    expect.eq(st, CaptureStatus.ACTIVE, "capture status after the Abort", clause="RT-34")
    dev.launch("fallback_main", s, input=mid, output=out)
    model = dev.end(s)
    dev.execute(model, s)
    expect.eq(dev.read(out), X + 20, "output of the model captured across the Abort")


@pytest.mark.clause("Q-17")
@pytest.mark.requires(Cap.VALUE_TASKS)
@pytest.mark.requires(Cap.BLOCKING_WAIT)
def test_abort_in_flight(dev: Dev, fingerprint: Any) -> None:
    """Q-17: Abort of a captured model blocked mid-execution (records rc, the sync and the output)."""
    s = dev.stream()
    model, gate, out = gated_main(dev, s)
    expect.ok(dev.b.execute_async(model, s), "aclmdlRIExecuteAsync (setup)")
    try:
        fingerprint.record("Q-17:abort_running", dev.b.abort(model))
    finally:
        dev.write64(gate, 1)
    fingerprint.record("Q-17:sync", dev.b.synchronize_stream_with_timeout(s, 2000))
    fingerprint.record("Q-17:output", dev.read(out).tolist())


@pytest.mark.clause("ABT-02")
@pytest.mark.requires(Cap.VALUE_TASKS)
@pytest.mark.requires(Cap.BLOCKING_WAIT)
def test_execute_again_after_abort(dev: Dev) -> None:
    """ABT-02: after Abort, another ExecuteAsync runs the model again to completion."""
    s = dev.stream()
    model, gate, out = gated_main(dev, s)
    expect.ok(dev.b.execute_async(model, s), "aclmdlRIExecuteAsync (setup)")
    try:
        expect.ok(dev.b.abort(model), "aclmdlRIAbort")
    finally:
        dev.write64(gate, 1)
    dev.b.synchronize_stream_with_timeout(s, 2000)  # the aborted run's outcome is Q-17
    dev.write(out, np.full(8, SENTINEL, dtype=np.int32))
    dev.execute(model, s)
    expect.eq(dev.read(out), X + 10, "output of the execution after Abort")


@pytest.mark.clause("ABT-03")
def test_abort_null(dev: Dev) -> None:
    """ABT-03: Abort(NULL) returns 107000 (no ACL-layer check)."""
    expect.rc(dev.b.abort(None), Err.RT_PARAM_INVALID, "aclmdlRIAbort(NULL)")


@pytest.mark.clause("ERR-21")
@pytest.mark.parametrize("which, expected", [
    pytest.param("null", Err.RT_PARAM_INVALID, id="null"),
    pytest.param("sub_model", Err.RT_FEATURE_NOT_SUPPORT, id="sub_model",
                 marks=pytest.mark.requires(Cap.COND)),
])
def test_err21_abort(dev: Dev, which: str, expected: int) -> None:
    """ERR-21: aclmdlRIAbort returns the error of its error-table cell."""
    rc = dev.b.abort(None) if which == "null" else dev.b.abort(sub_model(dev))
    expect.rc(rc, expected, "aclmdlRIAbort")
