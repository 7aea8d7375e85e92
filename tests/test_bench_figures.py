"""bench/ reads figures written elsewhere: several kill matrices as one, deep campaigns."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))

import kill_times  # noqa: E402
import targets  # noqa: E402


def _matrix(faults: dict[str, float | None], wall: float = 10.0, **kw: object) -> dict:
    entries = [{"fault": f, "killed": t is not None, "time_to_kill_s": t,
                "shrunk_tasks": 2 if t is not None else None, "killers": [], "specs_run": 3}
               for f, t in faults.items()]
    from mdlri_conformance.conformance.framework.power.killmatrix import summarise
    return {"backend": "sim", "profile": "ci", "pytest_args": ["-k", "generated"],
            "spec_timeout_s": 30, "jobs": 2, "wall_s": wall, "faults": entries,
            "summary": summarise(entries), **kw}


def test_combine_recomputes_the_summary_over_every_fault() -> None:
    m = kill_times.combine([_matrix({"a": 1.0, "b": 9.0}), _matrix({"c": None}, wall=5.0)])
    s = m["summary"]
    assert (s["faults"], s["killed"], s["survivors"]) == (3, 2, ["c"])
    assert (s["median_time_to_kill_s"], s["max_time_to_kill_s"]) == (5.0, 9.0)
    assert m["wall_s"] == 15.0


def test_combine_refuses_matrices_that_do_not_compare() -> None:
    with pytest.raises(ValueError, match="spec_timeout_s"):
        kill_times.combine([_matrix({"a": 1.0}), _matrix({"b": 1.0}, spec_timeout_s=10)])
    with pytest.raises(ValueError, match="two matrices: a"):
        kill_times.combine([_matrix({"a": 1.0}), _matrix({"a": 2.0})])


def test_campaign_line_reports_graphs_per_minute(tmp_path: Path) -> None:
    (tmp_path / "campaign.json").write_text(json.dumps(
        {"backend": "acl", "acl_lib": "emulator", "graphs_per_minute": 812.5, "examples": 8125,
         "fuzz_seconds": 600.0, "verdict": "OK"}))
    line = targets.campaign_line(targets.read_campaign(tmp_path))
    assert line.startswith("deep profile on acl --acl-lib emulator: 812.5 graphs explored")
    assert "8125 examples in 600 s fuzzed on 1 core, 812.5 per core, OK" in line
    (tmp_path / "campaign.json").write_text(json.dumps(
        {"backend": "sim", "graphs_per_minute": 1600.0, "examples": 16000, "cores": 2,
         "graphs_per_minute_per_core": 800.0, "fuzz_seconds": 600.0, "verdict": "OK"}))
    line = targets.campaign_line(targets.read_campaign(tmp_path))
    assert "16000 examples in 600 s fuzzed on 2 cores, 800.0 per core, OK" in line
    (tmp_path / "campaign.json").write_text("{}")
    with pytest.raises(ValueError, match="not a campaign.json"):
        targets.read_campaign(tmp_path)


def test_target_line_names_the_bound_of_the_stack() -> None:
    cases = targets.TARGETS["cases_share"]
    assert cases.line(33.0, 41.0) == (
        "generated cases/s / Hypothesis ceiling for the generator's draws: 33.00 % vs >= 60 % "
        "-> NOT MET (generation at the ceiling, replay + oracle as measured: at most 41.00 %)")
    execution = targets.TARGETS["exec_over_floor"]
    assert execution.line(4.0, 2.5).endswith(
        "at the cheapest task's cost: at least 2.50x)")
    assert "NOT MET (the empty model's execution timed at the replay's own execute points" \
        in execution.line(4.0, 2.5)
    replay = targets.TARGETS["replay_over_floor"]
    assert replay.line(1.5).endswith("-> MET")
    assert replay.line(None).startswith(f"{replay.name}: NOT MEASURED")


def test_bounds_are_measured_on_the_simulator() -> None:
    import generated_rate
    import mdlri_conformance.backends.sim as sim

    assert generated_rate.hypothesis_ceiling(3, 5) > 0
    backend = sim.create()
    try:
        noop_s, exec_s, task_s = generated_rate._call_floors(backend, repeat=5)
    finally:
        backend.close()
    assert 0 < noop_s < exec_s
    assert 0 < task_s < exec_s  # a record or wait costs less than a whole empty execution


def test_share_bound_is_the_ceiling_over_ceiling_plus_replay_and_oracle() -> None:
    import generated_rate

    acc = {"ceiling_per_s": 1000.0, "cases": 100, "replay_s": 0.1, "oracle_s": 0.05}
    # 1 ms per case at the ceiling, 1.5 ms of replay + oracle: at most 40 %
    assert generated_rate._share_bound(acc) == pytest.approx(0.4)


def test_deep_speedup_compares_campaigns_of_the_same_backend_and_machine() -> None:
    new = {"backend": "sim", "cores": 2, "machine_cores": 2, "graphs_per_minute": 1800.0}
    old = {"backend": "sim", "cores": 2, "machine_cores": 2, "graphs_per_minute": 600.0}
    assert targets.deep_speedup(new, old) == 3.0
    assert targets.TARGETS["deep_speedup"].met(3.0) and not targets.TARGETS["deep_speedup"].met(2.9)
    # one process before -j, on the same machine: spreading over the cores is measured
    assert targets.deep_speedup(new, {"backend": "sim", "graphs_per_minute": 900.0}) == 2.0
    with pytest.raises(ValueError, match="core counts"):
        targets.deep_speedup(new, {**old, "machine_cores": 4})
    with pytest.raises(ValueError, match="backend"):
        targets.deep_speedup(new, {**old, "backend": "acl"})


def test_binding_target_names_the_floor_as_its_bound() -> None:
    binding = targets.TARGETS["binding_no_out"]
    line = binding.line(1.55, 1.32)
    assert "1.55x vs <= 1.5x -> NOT MET" in line and "floor" in line and "1.32x" in line
    assert binding.met(1.5) and not binding.met(1.51)
    assert "NOT MEASURED" in binding.line(None) and "--binding" in binding.line(None)


def test_kill_times_run_passes_first_kill_seed_and_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    from mdlri_conformance.conformance.framework.power import killmatrix
    seen: dict[str, object] = {}

    def run_matrix(faults: list[str], out: Path, **kw: object) -> dict[str, object]:
        seen.update(kw, faults=faults)
        return {}

    monkeypatch.setattr(killmatrix, "run_matrix", run_matrix)
    kill_times.run(only=["no-107039"], first_kill=True, seed=7, run_limit=60.0)
    assert seen["extra"] == ["-k", kill_times.GENERATED_TIER, "-x", "-p", "randomly",
                             "--randomly-seed=7"]
    assert seen["run_limit_s"] == 60.0 and seen["faults"] == ["no-107039"]
    kill_times.run(only=["no-107039"])
    assert seen["extra"] == ["-k", kill_times.GENERATED_TIER]
    assert seen["run_limit_s"] == killmatrix.RUN_LIMIT_S
