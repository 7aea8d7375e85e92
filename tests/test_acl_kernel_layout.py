"""The kernel argument layout end to end on the emulator (KRN-02): a layout the suite can
pack (MDLRI_EMU_PARAM_LAYOUT=wide) is followed by a whole run, one it cannot (drop-last)
stops the run before any spec with one line naming the kernel and the field, and
``doctor`` prints the comparison. Each case is a fresh process: the emulator reads the
variable once, at load."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

#: the first kernel's line of a refusal under --kernel-layout strict (two hidden parameters)
STRICT_LINE = ("mdlri-conformance: NOTHING TESTED: acl backend: kernel argument layout refused: "
               "fallback_main: the runtime reports 4 parameter(s), the catalog struct has 2: "
               "parameter 2 at offset 16 is not in the struct (--kernel-layout strict)")
ROOT = Path(__file__).resolve().parents[1]
CLI = [sys.executable, "-m", "mdlri_conformance.conformance.cli"]

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None,
                                reason="gcc is not installed: the acl emulator cannot be built")


def _cli(layout: str, *args: str, hidden: int = 0) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MDLRI_EMU_PARAM_LAYOUT": layout,
           "MDLRI_EMU_HIDDEN_PARAMS": str(hidden)}
    env.pop("MDLRI_KERNEL_LAYOUT", None)
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=600, cwd=ROOT,
                          env=env)


def test_a_wide_layout_is_followed_by_the_run(tmp_path: Path) -> None:
    """Every int32 in an 8-byte slot: the multi-block, layout and fallback specs pass, so the
    arguments were built from the reported layout (the C struct's bytes give wrong outputs
    there, tests/test_emulator_kernels.py)."""
    out = tmp_path / "wide"
    res = _cli("wide", "run", "--backend", "acl", "--acl-lib", "emulator", "-n", "0",
               "--report-dir", str(out), "-k", "test_kernels or fallback")
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-2000:]
    rows = [json.loads(ln) for ln in (out / "results.jsonl").read_text().splitlines()]
    assert rows and all(r["outcome"] == "PASS" for r in rows), \
        [(r["nodeid"], r["outcome"], r["message"]) for r in rows if r["outcome"] != "PASS"]
    assert any("test_reported_layout_is_the_packed_layout[affine]" in r["nodeid"] for r in rows)


def test_an_unfollowable_layout_stops_the_run_in_one_line(tmp_path: Path) -> None:
    """One parameter fewer than the struct: NOTHING TESTED (exit 3), one stderr line naming the
    kernel and the missing field, no traceback, no spec run."""
    out = tmp_path / "drop"
    res = _cli("drop-last", "run", "--backend", "acl", "--acl-lib", "emulator", "-n", "1",
               "--report-dir", str(out), "-k", "test_kernels")
    assert res.returncode == 3, res.stdout + res.stderr
    assert res.stdout == "" and "Traceback" not in res.stderr
    assert res.stderr.count("\n") == 1, res.stderr
    assert res.stderr.startswith(
        "mdlri-conformance: NOTHING TESTED: acl backend: kernel argument layout refused: "
        "fallback_main: the runtime reports 1 parameter(s), the catalog struct has 2: "
        "parameter 1 'output' (ptr) is not reported"), res.stderr
    assert not (out / "results.jsonl").exists()


@pytest.mark.parametrize("layout,rc,fragments", [
    ("natural", 0, ["(aclrtFunctionGetParamCount/Info vs kernel/catalog.py): 11 same",
                    "affine                same        x@0:8 y@8:8 n@16:4 a@20:4 b@24:4",
                    "status: ready"]),
    ("wide", 0, ["3 same, 8 follow",
                 "affine                follow      x@0:8 y@8:8 n@16:8 a@24:8 b@32:8  "
                 "(catalog struct: n@16:4 a@20:4 b@24:4)",
                 "the suite packs the arguments of the 'follow' kernels in the runtime's layout",
                 "status: ready"]),
    ("drop-last", 1, ["11 refuse",
                      "problem: kernel argument layout refused: fallback_main: the runtime "
                      "reports 1 parameter(s)", "status: UNSUPPORTED"]),
    ("none", 0, ["11 unreported", "does not have parameter information", "status: ready"]),
])
def test_doctor_prints_the_layout_comparison(layout: str, rc: int, fragments: list[str]) -> None:
    res = _cli(layout, "doctor", "--acl-lib", "emulator")
    assert res.returncode == rc, res.stdout + res.stderr
    for fragment in fragments:
        assert fragment in res.stdout, res.stdout


def test_hidden_trailing_parameters_are_followed_and_shown(tmp_path: Path) -> None:
    """The emulator reports two hidden trailing parameters per kernel (a compiler's workspace,
    tiling or sync address): the run goes on, the kernel specs pass with the arguments packed
    in the catalog's fields, and the run's probe findings name the hidden parameters."""
    out = tmp_path / "hidden"
    res = _cli("natural", "run", "--backend", "acl", "--acl-lib", "emulator", "-n", "0",
               "--report-dir", str(out), "-k", "test_kernels or fallback", hidden=2)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-2000:]
    rows = [json.loads(ln) for ln in (out / "results.jsonl").read_text().splitlines()]
    assert rows and all(r["outcome"] == "PASS" for r in rows), \
        [(r["nodeid"], r["outcome"], r["message"]) for r in rows if r["outcome"] != "PASS"]
    assert any("test_reported_layout_is_the_packed_layout[affine]" in r["nodeid"] for r in rows)
    summary = json.loads((out / "summary.json").read_text())
    found = [f for fs in summary["probe"]["findings"].values() for f in fs
             if f["probe"] == "kernel_layout"]
    assert len(found) == 11 and all(f["kept"] for f in found), found
    assert ("affine: 2 hidden trailing parameter(s) @32:8 @40:8 after the catalog fields, "
            "left to the runtime") in " ".join(f["reason"] for f in found)


def test_strict_kernel_layout_refuses_hidden_parameters_in_one_line(tmp_path: Path) -> None:
    """--kernel-layout strict keeps the refusal of a parameter count that differs: NOTHING
    TESTED (exit 3), one line, no spec run."""
    out = tmp_path / "strict"
    res = _cli("natural", "run", "--backend", "acl", "--acl-lib", "emulator", "-n", "1",
               "--kernel-layout", "strict", "--report-dir", str(out), "-k", "test_kernels",
               hidden=2)
    assert res.returncode == 3, res.stdout + res.stderr
    assert res.stdout == "" and res.stderr.count("\n") == 1, res.stderr
    assert res.stderr.startswith(STRICT_LINE), res.stderr
    assert not (out / "results.jsonl").exists()


@pytest.mark.parametrize("mode,rc,fragments", [
    ("follow", 0, ["11 follow",
                   "affine                follow      x@0:8 y@8:8 n@16:4 a@20:4 b@24:4  + 2 hidden "
                   "trailing parameter(s) @32:8 @40:8",
                   "hidden trailing parameters (a compiler's workspace, tiling or "
                   "synchronisation address) are left to the runtime", "status: ready"]),
    ("strict", 1, ["11 refuse", "problem: kernel argument layout refused: fallback_main: the "
                   "runtime reports 4 parameter(s)", "status: UNSUPPORTED"]),
])
def test_doctor_shows_hidden_trailing_parameters(mode: str, rc: int,
                                                 fragments: list[str]) -> None:
    res = _cli("natural", "doctor", "--acl-lib", "emulator", "--kernel-layout", mode, hidden=2)
    assert res.returncode == rc, res.stdout + res.stderr
    for fragment in fragments:
        assert fragment in res.stdout, res.stdout
