"""``mdlri-conformance deep``: bounded HypoFuzz campaigns report examples and branch figures,
find a planted bug and keep it as a case that replays; bad input is one line (exit 2)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest


def _cli(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mdlri_conformance.conformance.cli", *args],
                          capture_output=True, text=True, timeout=timeout)


def _campaign(out: Path) -> dict[str, Any]:
    return json.loads((out / "campaign.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("args, fragment", [
    (("deep", "--minutes", "0"), "use a positive number"),
    (("deep", "--seconds", "nan"), "use a positive number"),
    (("deep", "--minutes", "1", "--seconds", "5"), "not allowed with argument"),
    (("deep", "--backend", "nosuch"), "unknown backend 'nosuch'"),
    (("deep", "--fault", "no-such-fault"), "no-such-fault"),
    (("deep", "-k", "test_generated and ("), "-k 'test_generated and ('"),
])
def test_bad_input_is_one_line(args: tuple[str, ...], fragment: str) -> None:
    res = _cli(*args, timeout=120)
    assert res.returncode == 2, res.stderr
    assert fragment in res.stderr
    assert "Traceback" not in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1


def test_out_must_be_new_or_empty(tmp_path: Path) -> None:
    pytest.importorskip("hypofuzz", reason="the [deep] extra is not installed")
    (tmp_path / "old.txt").write_text("x")
    res = _cli("deep", "--seconds", "5", "--out", str(tmp_path), timeout=120)
    assert res.returncode == 2
    assert "not a new or empty folder" in res.stderr
    assert not (tmp_path / "campaign.json").exists()


def test_short_sim_campaign_reports_examples_and_branches(tmp_path: Path) -> None:
    """The generated listing spec and the state machine, a few seconds each: both executed
    examples, the rate is positive and the simulator's branches are a proper fraction."""
    pytest.importorskip("hypofuzz", reason="the [deep] extra is not installed")
    out = tmp_path / "c"
    res = _cli("deep", "--seconds", "10", "--out", str(out),
               "-k", "test_generated_listing or (test_model_ri_state_machine_impl and 0)")
    assert res.returncode == 0, res.stdout + res.stderr
    data = _campaign(out)
    assert data["verdict"] == "OK"
    kinds = {t["nodeid"].split("::")[-1]: t for t in data["targets"]}
    assert set(kinds) == {"test_generated_listing", "test_model_ri_state_machine_impl[0]"}
    assert kinds["test_model_ri_state_machine_impl[0]"]["kind"] == "state_machine"
    assert all(t["examples"] > 0 for t in data["targets"])
    assert data["examples"] == sum(t["examples"] for t in data["targets"])
    assert data["graphs_per_minute"] > 0
    sim = data["sim_branches"]
    assert 0 < sim["reached"] < sim["total"]
    assert sim["examples_replayed"] > 0
    assert data["emulator_branches"] is None  # the sim campaign runs no emulator
    assert data["failures"] == []
    assert "graphs explored per minute" in res.stdout
    assert "simulator branches reached" in res.stdout


def test_planted_fault_is_found_and_kept_as_a_replaying_case(tmp_path: Path) -> None:
    """A disabled task that still runs is found; its case file diverges when replayed with
    the fault and conforms without it (so it is a valid case of the generated tier)."""
    pytest.importorskip("hypofuzz", reason="the [deep] extra is not installed")
    out = tmp_path / "c"
    fault = "disabled-task-runs"
    res = _cli("deep", "--seconds", "60", "--out", str(out), "--fault", fault,
               "-k", "test_generated_results")
    assert res.returncode == 1, res.stdout + res.stderr
    data = _campaign(out)
    assert data["verdict"] == "FAILURES FOUND"
    [failure] = data["failures"]
    assert failure["kind"] == "failure" and failure["replays"] and failure["case_replays"]
    assert failure["reproduce"].startswith("@reproduce_failure(")
    case = Path(failure["kept_case"])
    assert case.parent == out / "cases"  # a planted bug's case stays with the campaign
    assert (out / failure["file"]).is_file()
    with_fault = _cli("replay", str(case), "--fault", fault, timeout=120)
    assert with_fault.returncode == 1, with_fault.stdout
    assert _cli("replay", str(case), timeout=120).returncode == 0


def test_nothing_selected_is_nothing_fuzzed(tmp_path: Path) -> None:
    pytest.importorskip("hypofuzz", reason="the [deep] extra is not installed")
    out = tmp_path / "c"
    res = _cli("deep", "--seconds", "5", "--out", str(out), "-k", "no_such_spec_name")
    assert res.returncode == 3, res.stdout + res.stderr
    assert _campaign(out)["verdict"] == "NOTHING FUZZED"


def test_acl_emulator_campaign_counts_emulator_branches(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """The acl backend on the emulator loads its gcov build: the C branches reached are
    counted from the counters the campaign's process left."""
    pytest.importorskip("hypofuzz", reason="the [deep] extra is not installed")
    monkeypatch.setenv("MDLRI_CACHE_DIR", str(tmp_path / "cache"))
    out = tmp_path / "c"
    res = _cli("deep", "--backend", "acl", "--acl-lib", "emulator", "--seconds", "8",
               "--out", str(out), "-k", "test_generated_listing")
    assert res.returncode == 0, res.stdout + res.stderr
    data = _campaign(out)
    emu = data["emulator_branches"]
    assert 0 < emu["reached"] < emu["total"]
    assert any(name.startswith("src/") for name in emu["files"])
    assert data["sim_branches"] is None
    assert list((out / "gcov").glob("*.gcda"))


def test_missing_extra_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    """Without the [deep] extra the command says what to install (exit 2), and runs nothing."""
    import importlib.util

    from mdlri_conformance.conformance import cli
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "hypofuzz" else real(name, *a))
    out = tmp_path / "c"
    assert cli.main(["deep", "--seconds", "5", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "pip install 'mdlri-conformance[deep]'" in err and "hypofuzz" in err
    assert not out.exists()


def test_one_batch_per_machine_is_fuzzed() -> None:
    """The batches of a machine spec differ only by their seed: the first selected one is a
    target, the others are listed as not fuzzed, naming it; other specs are untouched."""
    from types import SimpleNamespace
    from mdlri_conformance.conformance.framework.power.fuzz_session import _other_batch

    def item(name: str, batch: int | None) -> Any:
        nodeid = f"specs/test_m.py::{name}" + (f"[{batch}]" if batch is not None else "")
        callspec = SimpleNamespace(params={"batch": batch}) if batch is not None else None
        return SimpleNamespace(path="specs/test_m.py", originalname=name, name=name,
                               nodeid=nodeid, callspec=callspec)

    first: dict[str, str] = {}
    got = [_other_batch(item(n, b), first) for n, b in
           [("m", 2), ("m", 3), ("impl", 0), ("g", None), ("m", 0), ("impl", 1)]]
    assert got[0] is None and got[2] is None and got[3] is None
    assert got[1] == got[4] == "another batch of the machine fuzzed as m[2]"
    assert got[5] == "another batch of the machine fuzzed as impl[0]"


def test_shards_deal_every_fuzzable_spec_to_exactly_one_process() -> None:
    from mdlri_conformance.conformance.framework.power.fuzz_session import (
        _shard, fuzz_json, in_shard)
    for n in (1, 2, 3):
        owners = [[k for k in range(n) if in_shard(i, k, n)] for i in range(7)]
        assert all(len(o) == 1 for o in owners)
        assert {o[0] for o in owners} == set(range(n))  # every process gets a share
    assert fuzz_json(0, 1) == "fuzz.json" and fuzz_json(1, 2) == "fuzz-1.json"
    assert _shard("1/2") == (1, 2)
    import argparse
    for bad in ("2/2", "x", "-1/2", "1"):
        with pytest.raises(argparse.ArgumentTypeError):
            _shard(bad)


def test_processes_figures_merge_into_one_campaign(tmp_path: Path) -> None:
    """Several processes' fuzz files: targets together, the longest fuzzing time, a spec
    fuzzed by one process is not 'not fuzzed'; a process without figures makes it
    incomplete and says so; the rate is given for the campaign and per core."""
    from mdlri_conformance.conformance.framework.power import campaign
    plan = campaign.Plan(backend="sim", seconds=60, out=tmp_path, jobs=2)
    a = {"completed": True, "fuzz_seconds": 60.0, "notes": ["n"], "sim_branches": None,
         "targets": [{"nodeid": "s::a", "examples": 300, "behaviours": 9, "corpus": 3}],
         "not_fuzzed": {"s::b": "no Hypothesis test or state machine", "s::c": "skip"}}
    b = {"completed": True, "fuzz_seconds": 59.0, "notes": ["n"], "sim_branches": None,
         "targets": [{"nodeid": "s::b", "examples": 100, "behaviours": 4, "corpus": 2}],
         "not_fuzzed": {"s::c": "skip"}}
    merged = campaign._merge(plan, [a, b])
    assert merged["completed"] and merged["fuzz_seconds"] == 60.0 and merged["notes"] == ["n"]
    assert [t["nodeid"] for t in merged["targets"]] == ["s::a", "s::b"]
    assert merged["not_fuzzed"] == {"s::c": "skip"}
    result = campaign._figures(plan, merged, 70.0, False, 0)
    assert result["verdict"] == campaign.OK and result["examples"] == 400
    assert result["graphs_per_minute"] == 400.0 and result["cores"] == 2
    assert result["graphs_per_minute_per_core"] == 200.0
    assert any("400.0 (400 examples; 200.0 per core)" in ln
               for ln in campaign.summary_lines(result))
    (tmp_path / "session-1.log").write_text("boom\n")
    half = campaign._merge(plan, [a, None])
    assert not half["completed"]
    assert "fuzzing process 2 of 2 wrote no figures: boom" in half["notes"]
    assert campaign._figures(plan, half, 70.0, False, 1)["verdict"] == campaign.INCOMPLETE
    assert campaign._merge(plan, [None, None]) is None
