"""End-to-end scenarios from the CANN examples (scenarios.md) and the runtime guide's pipeline.

One spec per scenario, each ``requires`` the capabilities its scenario uses (so a backend
without them reports UNSUPPORTED): S1 ``0_simple_model``, S2 ``1_model_update``, S3
``2_model_switch``, S4 ``3_cond_model``, S5 ``4_model_sync_external``, S6
``0_model_task_fallback``, S7 ``5_reusable_buffer_reset``, S8 ``label/0_simple_label``, the
copy/compute/copy ``pipeline``. Every scenario moves its inputs and reads its outputs
(``Cap.DATA_MOVEMENT``), those with kernels judge their output (``Cap.KERNEL_EXEC``), and
those whose graph waits for the host or another graph to release it need that wait to block
(``Cap.BLOCKING_WAIT``). A step answering 207000 / 207019 makes the scenario UNSUPPORTED
(conformance.scenarios._common.reports_unsupported).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from mdlri_conformance.backends.contract import Cap, CaptureMode, CondHandleFlag
from mdlri_conformance.conformance import expect
from mdlri_conformance.conformance.scenarios import (buffer_reset, cond_model, fallback,
                                                     model_switch, model_sync_external,
                                                     model_update, needs, pipeline,
                                                     simple_label, simple_model)

#: what the fallback scenario needs (conformance.scenarios.needs)
_FALLBACK_CAPS = needs(fallback)


@pytest.mark.requires(*_FALLBACK_CAPS)
@pytest.mark.clause("CAP-01", "DIS-01", "UPD-05", "SETP-09", "EXE-02", "TMO-01")
def test_model_task_fallback(backend: Any) -> None:
    """S6: baseline 11/22, selected seq 0 < 1, fallback 31/-1 after SetParams + Disable + Update."""
    lines: list[str] = []
    res = fallback.run_fallback(backend, lines.append)
    expect.true(res.ok, "scenario run", "success", "\n".join(lines))
    expect.eq(res.baseline_main, fallback.PRIMARY + 10, "baseline main output")
    expect.eq(res.baseline_optional, (fallback.PRIMARY + 10) * 2, "baseline optional output")
    expect.eq(res.fallback_main, fallback.BACKUP + 10, "fallback main output (backup input)")
    expect.eq(res.fallback_optional, np.full(8, -1), "fallback optional output (sentinel)")
    expect.true(res.main_seq < res.optional_seq, "main seq < optional seq",
                "main < optional", (res.main_seq, res.optional_seq))
    expect.eq(lines[1:4], [
        "[INFO]  Baseline path verified: main_first=11, optional_first=22.",
        f"[INFO]  Selected fallback tasks: main_seq={res.main_seq}, optional_seq={res.optional_seq}.",
        "[INFO]  Fallback path verified: main_first=31, optional_first=-1.",
    ], "printed lines")


@pytest.mark.requires(*_FALLBACK_CAPS)
@pytest.mark.clause("SEQ-01", "SEQ-07")
def test_model_task_fallback_seq_ids_match_example(backend: Any) -> None:
    """S6 with SEQ-01/SEQ-07: a fresh model's first two appended tasks get seq ids 0 and 1."""
    res = fallback.run_fallback(backend, lambda _line: None)
    expect.true(res.ok, "scenario run", "success", res.lines)
    expect.eq((res.main_seq, res.optional_seq), (0, 1), "selected seq ids")


@pytest.mark.requires(*needs(pipeline))
@pytest.mark.clause("CAP-01", "CAP-19", "MODE-14", "XS-01", "XS-02", "EXE-02", "EXE-03",
                    "LIST-01", "LIST-08", "DIS-01")
def test_pipeline(backend: Any) -> None:
    """Runtime guide pipeline: h2d / compute / d2h streams, double-buffered, one model;
    every one of 16 batches is 3x+7 of its input; with one copy kernel disabled, that
    batch repeats the output of the batch two earlier (same slot) and the others stay right."""
    lines: list[str] = []
    res = pipeline.run_pipeline(backend, lines.append)
    expect.true(res.ok, "scenario run", "success", "\n".join(lines))
    expect.eq(res.stream_count, 3, "model streams (h2d, compute, d2h)")
    expect.eq(len(res.outputs), pipeline.BATCHES, "batches read back")
    for g, (x, out) in enumerate(zip(res.inputs, res.outputs)):
        expect.eq(x, pipeline.batch_input(g), f"batch {g} input")
        expect.eq(out, pipeline.compute(x), f"batch {g} output")
    expect.eq(len(res.stale_outputs), pipeline.STALE_REPLAYS * pipeline.PER_REPLAY,
              "batches read back after the disable")
    want = pipeline.stale_expected(res.stale_inputs)
    for k, (out, w) in enumerate(zip(res.stale_outputs, want)):
        expect.eq(out, w, f"batch {pipeline.BATCHES + k} output after the disable")
    for k in range(pipeline.DISABLED_POSITION, len(res.stale_outputs), pipeline.PER_REPLAY):
        fresh = pipeline.compute(res.stale_inputs[k])
        expect.true(not np.array_equal(res.stale_outputs[k], fresh),
                    f"batch {pipeline.BATCHES + k} (disabled copy) is stale", "stale", fresh)
    expect.eq(res.lines[-1], "[INFO]  Run the pipeline sample successfully.", "last line")


@pytest.mark.requires(*needs(buffer_reset))
@pytest.mark.clause("CAP-01", "MODE-01", "MODE-02", "LIST-03", "EXE-01")
def test_reusable_buffer_reset(backend: Any) -> None:
    """S7: 0xA5 prefill (not captured), a GLOBAL-mode captured async memset, a manifest of
    one stream and at least one task (2 on CANN 9.2.0), all 4096 bytes zero after Execute."""
    lines: list[str] = []
    res = buffer_reset.run_buffer_reset(backend, lines.append)
    expect.true(res.ok, "scenario run", "success", "\n".join(lines))
    expect.eq(res.prepared, np.full(4096, 0xA5, dtype=np.uint8), "prepared buffer")
    expect.eq(res.stream_count, 1, "manifest streams")
    expect.true(res.task_count >= 1, "manifest tasks", ">= 1", res.task_count)
    expect.eq(res.reset, np.zeros(4096, dtype=np.uint8), "buffer after Execute")
    expect.eq(lines, [
        "[INFO]  Start to run 5_reusable_buffer_reset sample.",
        "[INFO]  Prepared 4096-byte reusable buffer with pattern 0xA5.",
        f"[INFO]  Model RI manifest: streams=1, tasks={res.task_count}.",
        "[INFO]  Verified 4096-byte reusable buffer reset to zero.",
        "[INFO]  Run the 5_reusable_buffer_reset sample successfully.",
    ], "printed lines")


@pytest.mark.requires(*needs(simple_model))
@pytest.mark.clause("CAP-01", "MODE-02", "MODE-05", "MODE-06", "EXE-02")
def test_simple_model(backend: Any) -> None:
    """S1: GLOBAL capture of a pinned H2D copy and two float32 operators, a RELAXED eager
    sync copy in between (not captured), four runs each printing 6.4000 ... 20.4000; the
    debug JSON (when the backend has Cap.DEBUG_JSON) is written."""
    lines: list[str] = []
    res = simple_model.run_simple_model(backend, lines.append)
    expect.true(res.ok, "scenario run", "success", "\n".join(lines))
    expect.eq(res.exchanged, (CaptureMode.GLOBAL, CaptureMode.RELAXED),
              "ThreadExchangeMode previous modes")
    expect.eq(res.other_during_capture, simple_model.OTHER,
              "otherDevice during the capture (eager RELAXED aclrtMemcpy)")
    if Cap.DEBUG_JSON in backend.capabilities:
        expect.eq(res.debug_json, (0, True), "aclmdlRIDebugJsonPrint rc, file written")
    want = simple_model.expected_out()
    for i, out in enumerate(res.outputs):
        expect.eq(out, want, f"out after run {i + 1}")
    row = "[INFO]  The vector data is: " + "".join(
        f"{v:.4f}  " for v in (6.4, 8.4, 10.4, 12.4, 14.4, 16.4, 18.4, 20.4))
    expect.eq(lines, [x for i in range(1, 5)
                      for x in (f"[INFO]  execute model, loop count: {i}.", row)], "printed lines")


@pytest.mark.requires(*needs(cond_model))
@pytest.mark.clause("COND-03", "COND-06", "COND-11", "COND-12")
def test_cond_model(backend: Any) -> None:
    """S4: IF / WHILE / SWITCH sub-models. With ASSIGN_DEFAULT (default 0, the example) the
    host's condition writes are overwritten at launch: IF 1.25... twice, WHILE's body never
    runs (dst keeps the -1 sentinel), SWITCH 1.5... for every case. With flag 0 the host's
    value selects: IF 2,4,... then 1.25...; WHILE one pass 1.5...; SWITCH 1.5 / 2,4 / 1.25."""
    for flag in (CondHandleFlag.ASSIGN_DEFAULT, CondHandleFlag.NONE):
        lines: list[str] = []
        res = cond_model.run_cond_model(backend, lines.append, flag)
        expect.true(res.ok, f"scenario run (flag {int(flag)})", "success", "\n".join(lines))
        for test, want in cond_model.expected(flag).items():
            got = res.outputs[test]
            expect.eq(len(got), len(want), f"{test} runs (flag {int(flag)})")
            for i, (g, w) in enumerate(zip(got, want)):
                expect.eq(g, w, f"{test} run {i + 1} dst (flag {int(flag)})")
        if flag == CondHandleFlag.ASSIGN_DEFAULT:
            quarter = "[INFO]  The vector data is: " + "".join(
                f"{v:.4f}  " for v in cond_model.body(0.5))
            expect.eq(lines[:6], [
                "[INFO]  ========== IF condition ==========",
                "[INFO]  IF true branch result:", quarter,
                "[INFO]  IF false branch result:", quarter,
                "[INFO]  IF condition PASSED",
            ], "printed IF lines")
            expect.eq(lines[-1], "[INFO]  ========== All tests PASSED ==========", "last line")


@pytest.mark.requires(*needs(model_update))
@pytest.mark.clause("TG-01", "TG-10", "TG-11", "MODE-04", "EXE-02")
def test_model_update(backend: Any) -> None:
    """S2: the model waits on an ACL_EVENT_EXTERNAL event (captured wait + reset) that the host
    records on the update stream; run 1 gives 5.4 ... 12.4, and after the task group is
    re-issued with updateAlpha 2.2 on a non-capturing stream, run 2 gives 7.6 ... 14.6."""
    lines: list[str] = []
    res = model_update.run_model_update(backend, lines.append)
    expect.true(res.ok, "scenario run", "success", "\n".join(lines))
    expect.true(res.group_handle is not None, "aclmdlRICaptureTaskGrpEnd handle", "non-NULL",
                res.group_handle)
    expect.eq(res.outputs[0], model_update.expected_out(model_update.ALPHA), "out after run 1")
    expect.eq(res.outputs[1], model_update.expected_out(model_update.UPDATE_ALPHA),
              "out after run 2 (updated group)")

    def row(first: float) -> str:
        return "[INFO]  The vector data is: " + "".join(f"{first + k:.4f}  " for k in range(8))

    expect.eq(lines, [
        "[INFO]  Execute model, loop count: 1.", row(5.4),
        "[INFO]  Execute model, loop count: 2.", "[INFO]  Update alpha value of aclnnAdd",
        row(7.6),
    ], "printed lines")


@pytest.mark.requires(*needs(model_sync_external))
@pytest.mark.clause("XS-10", "CAP-01", "EXE-02")
def test_model_sync_external(backend: Any) -> None:
    """S5: external wait in a graph released by a stream record, an external record in a graph
    releasing a stream wait, and graph 1's external record releasing graph 2's external wait
    each copy 1..8 intact and print ``Check result success.``."""
    lines: list[str] = []
    res = model_sync_external.run_model_sync_external(backend, lines.append)
    expect.true(res.ok, "scenario run", "success", "\n".join(lines))
    for i, out in enumerate(res.outputs):
        expect.eq(out, model_sync_external.HOST_SRC, f"hostDst of sub-scenario {i + 1}")
    expect.eq(len(res.outputs), 3, "sub-scenarios checked")
    expect.eq(lines, model_sync_external.EXPECTED_LINES, "printed lines")


def _rows(values: list[float]) -> list[str]:
    return ["[INFO]  The vector data is: " + "".join(f"{v:.4f}  " for v in [x] * 8)
            for x in values]


@pytest.mark.requires(*needs(model_switch))
@pytest.mark.clause("BLD-02", "BLD-03", "EXE-01")
def test_model_switch(backend: Any) -> None:
    """S3: a model built over five PERSISTENT streams (HEAD stream1, DEFAULT stream2..4 and
    endStream). Run 1 (selector 1): the first aclrtSwitchStream goes to stream3, so out1 = 3.4,
    out3 = 5.4 and out2 keeps its prefill (the example prints 0.0000); run 2 (selector 2): the
    second switch goes to stream4, which activates stream2: out2 = 4.4, out3 still 5.4."""
    lines: list[str] = []
    res = model_switch.run_model_switch(backend, lines.append)
    expect.true(res.ok, "scenario run", "success", "\n".join(lines))
    want = model_switch.expected_outputs(0.0)
    expect.eq(len(res.outputs), 2, "runs read back")
    for run, (got, exp) in enumerate(zip(res.outputs, want), start=1):
        for k, (g, w) in enumerate(zip(got, exp), start=1):
            expect.eq(g, w, f"out{k} after run {run}")
    r1, r2 = _rows([3.4, 0.0, 5.4]), _rows([3.4, 4.4, 5.4])
    expect.eq(lines, [x for k in range(3) for x in (f"[INFO]  After executing, print data{k + 1}.",
                                                    r1[k])]
              + [x for k in range(3) for x in (f"[INFO]  After second execution, print "
                                               f"data{k + 1}.", r2[k])], "printed lines")


@pytest.mark.requires(*needs(model_switch))
@pytest.mark.clause("BLD-03", "EXE-01")
def test_model_switch_streams_not_activated_leave_outputs(backend: Any) -> None:
    """S3 with a -1 sentinel: a DEFAULT stream that no switch or activation reached does not
    run, so its output keeps the sentinel (out2 after run 1) or the previous run's value."""
    res = model_switch.run_model_switch(backend, lambda _line: None, sentinel=-1.0)
    expect.true(res.ok, "scenario run", "success", res.lines)
    for run, (got, exp) in enumerate(zip(res.outputs, model_switch.expected_outputs(-1.0)),
                                     start=1):
        for k, (g, w) in enumerate(zip(got, exp), start=1):
            expect.eq(g, w, f"out{k} after run {run} (sentinel -1)")


@pytest.mark.requires(*needs(simple_label))
@pytest.mark.clause("BLD-02", "BLD-03", "EXE-01")
def test_simple_label(backend: Any) -> None:
    """S8: a built model on one PERSISTENT HEAD stream that switches to label 1 of a two-label
    list by a device index; the exact 18 lines of the example."""
    lines: list[str] = []
    res = simple_label.run_simple_label(backend, lines.append)
    expect.true(res.ok, "scenario run", "success", "\n".join(lines))
    expect.eq(lines, ["[INFO]  " + x for x in (
        "ACL initialized.", "Device 0 selected.", "Context created on device 0.",
        "Persistent label stream created.", "Execute stream created.",
        "Model runtime instance build started.",
        "Persistent label stream bound to the model runtime instance.",
        "Allocated device memory for branch index.", "Copied branch index 1 from host to device.",
        "Created label 0.", "Created label 1.", "Created label list with 2 labels.",
        "Submitted switch-label task with branch index 1.",
        "Set label 0 on the persistent stream.", "Set label 1 on the persistent stream.",
        "Model runtime instance build finished.",
        "Switch label executed successfully with branch index 1.",
        "Run the simple_label sample successfully.")], "printed lines")
