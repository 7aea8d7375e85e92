"""CI runs the real ctypes binding: the whole conformance suite on ``--backend acl --acl-lib
emulator`` (the host ABI emulator, built with gcc on demand), and the seed fallback example
through ctypes prints the same lines as on the simulator."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None,
                                reason="gcc is not installed: the acl emulator cannot be built")

#: the four lines of the seed example that carry numbers (scenarios.md S6)
FALLBACK_LINES = (
    "[INFO]  Baseline path verified: main_first=11, optional_first=22.",
    "[INFO]  Selected fallback tasks: main_seq=0, optional_seq=1.",
    "[INFO]  Fallback path verified: main_first=31, optional_first=-1.",
    "[INFO]  Run the 0_model_task_fallback sample successfully.",
)


def test_conformance_suite_on_acl_emulator(tmp_path: Path) -> None:
    out = tmp_path / "acl-emulator"
    res = subprocess.run([sys.executable, "-m", "pytest", "conformance/specs",
                          "-p", "no:cacheprovider", "-q", "--backend", "acl",
                          "--acl-lib", "emulator", "--report-dir", str(out)],
                         capture_output=True, text=True, timeout=1800, cwd=ROOT)
    tail = res.stdout[-4000:] + res.stderr[-2000:]
    assert res.returncode == 0, tail
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert rows, "no spec recorded a result"
    bad = [f"{r['outcome']} {r['nodeid']}: {r['message']}" for r in rows
           if r["outcome"] in ("FAIL", "ERROR")]
    assert bad == [], "\n".join(bad)
    # the binding really ran: the emulator supports everything, so nothing is UNSUPPORTED
    # for want of a library
    assert not any("acl backend:" in r["message"] for r in rows), tail
    assert sum(r["outcome"] == "PASS" for r in rows) > len(rows) // 2


def _example(*backend: str) -> list[str]:
    res = subprocess.run([sys.executable, "-m", "mdlri_conformance.conformance.cli", "example", "fallback",
                          *backend], capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert res.returncode == 0, res.stdout + res.stderr
    return res.stdout.splitlines()


def test_fallback_example_through_ctypes_matches_sim() -> None:
    acl = _example("--backend", "acl", "--acl-lib", "emulator")
    sim = _example("--backend", "sim")
    for line in FALLBACK_LINES:
        assert line in acl, acl
    assert acl == sim


def test_doctor_on_the_emulator() -> None:
    res = subprocess.run([sys.executable, "-m", "mdlri_conformance.conformance.cli", "doctor", "--acl-lib",
                          "emulator"], capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert res.returncode == 0, res.stdout + res.stderr
    out = res.stdout
    for fragment in ("library: ", "version: ACL 1.", "soc: ", "devices: 1", "status: ready"):
        assert fragment in out, out


def test_run_with_a_bad_explicit_library_is_one_usage_line(tmp_path: Path) -> None:
    """A library named explicitly that does not exist is bad input: one line, exit 2."""
    res = subprocess.run([sys.executable, "-m", "mdlri_conformance.conformance.cli", "run", "--backend", "acl",
                          "--acl-lib", str(tmp_path / "nope.so")],
                         capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert res.returncode == 2 and res.stdout == "", res.stdout + res.stderr
    assert res.stderr == (f"mdlri-conformance: error: backend 'acl': --acl-lib "
                          f"{tmp_path / 'nope.so'}: no such file or directory\n")


