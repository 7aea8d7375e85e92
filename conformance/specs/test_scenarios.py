"""End-to-end scenarios from the CANN examples (scenarios.md): S6 ``0_model_task_fallback``."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from backends.contract import Cap
from conformance import expect
from conformance.scenarios import fallback

pytestmark = pytest.mark.requires(Cap.CAPTURE, Cap.KERNELS, Cap.LISTING, Cap.TASK_TYPE, Cap.SEQ_ID,
                                  Cap.GET_PARAMS, Cap.SET_PARAMS, Cap.DISABLE, Cap.UPDATE,
                                  Cap.SYNC_TIMEOUT)


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


@pytest.mark.clause("SEQ-01", "SEQ-07")
def test_model_task_fallback_seq_ids_match_example(backend: Any) -> None:
    """S6 with SEQ-01/SEQ-07: a fresh model's first two appended tasks get seq ids 0 and 1."""
    res = fallback.run_fallback(backend, lambda _line: None)
    expect.true(res.ok, "scenario run", "success", res.lines)
    expect.eq((res.main_seq, res.optional_seq), (0, 1), "selected seq ids")
