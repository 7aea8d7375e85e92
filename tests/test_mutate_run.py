"""``mutate`` end to end on a tiny selection: one simulator module, a few mutants, the
lifecycle specs only; the checkout itself is never changed."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from mdlri_conformance.conformance.framework.power.mutants import mutants_of
from mdlri_conformance.conformance.framework.power.mutation_run import (
    REPO, SIM, STATUSES, Sandbox, run_baseline, run_mutants)

SUBSET = "test_lifecycle"

# the coverage map needs coverage.py, the `mutate` extra (pip install -e '.[mutate]')
pytest.importorskip("coverage", reason="coverage.py (the 'mutate' extra) is not installed")


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_known_mutants_are_classified(tmp_path: Path) -> None:
    module = REPO / SIM / "api" / "memory.py"
    before = _digest(module)
    source = module.read_text()
    found = mutants_of(source, "api/memory.py")
    # malloc answering 107000 instead of success: every spec that allocates fails
    killable = next(m for m in found if m.function == "MemoryApi.malloc" and m.operator == "rc"
                    and m.original == "OK")
    # the NULL branch of free_host: no lifecycle spec frees a NULL host buffer
    unreached = next(m for m in found if m.function == "MemoryApi.free_host"
                     and m.operator == "rc" and m.original == "E_PARAM")
    box = Sandbox()
    try:
        base = run_baseline(box, tmp_path, SUBSET)
        assert base.passing and all(SUBSET in n for n in base.passing)
        assert base.covering(killable), "the coverage map names the specs that allocate"
        entries = run_mutants([killable, unreached], {"api/memory.py": source}, base, [box],
                              tmp_path / "runs", budget_s=None)
        # the sandbox got its original text back
        assert (box.sim / "api" / "memory.py").read_text() == source
    finally:
        box.remove()
    assert [e["status"] for e in entries] == ["killed", "unreached"], entries
    k = entries[0]
    assert k["kill"] in ("FAIL", "ERROR", "CHANGED", "CRASH") and SUBSET in k["killer"] and k["specs_run"] >= 1
    assert k["clauses"], "a killed mutant names the clauses of the specs covering it"
    assert entries[1]["specs_run"] == 0 and entries[1]["clauses"] == []
    assert _digest(module) == before


def test_command_on_a_sample_of_three(tmp_path: Path) -> None:
    out = tmp_path / "m"
    module = REPO / SIM / "api" / "context.py"
    before = _digest(module)
    proc = subprocess.run([sys.executable, "-m", "mdlri_conformance.conformance.cli", "mutate",
                           "--module", "api/context", "--sample", "3", "--seed", "2",
                           "-k", SUBSET, "-j", "1", "--out", str(out)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    doc = json.loads((out / "mutation.json").read_text())
    assert len(doc["mutants"]) == 3 and doc["modules"] == ["api/context.py"]
    for e in doc["mutants"]:
        assert e["status"] in STATUSES
        assert {"module", "line", "operator", "original", "mutated", "killer"} <= set(e)
    t = doc["summary"]["total"]
    assert t["mutants"] == 3 and t["killed"] + t["survived"] + t["unreached"] == 3
    assert "total" in proc.stdout and (out / "mutation.md").is_file()
    assert (out / "baseline" / "results.jsonl").is_file()
    assert _digest(module) == before
