"""The runner on the simulator, the divergence message and the replay command."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from mdlri_conformance.conformance.engine import (divergence, graphs, oracle, oracle_listing,
                                                  runner, signature, validation)
from mdlri_conformance.conformance.engine.graphs import Case, Launch, Memset, Record, Wait
from mdlri_conformance.conformance.engine.observe import Observation, first_difference
from mdlri_conformance.conformance.engine.steps import Disable, Execute, SetKernel, Sync, Update

CASES = Path(__file__).resolve().parent.parent / "conformance" / "cases"
SENT = [-1] * 8
X = list(range(1, 9))
BACKUP = list(range(21, 29))


def seed_case() -> Case:
    return Case(streams=1, buffers=[X, SENT, SENT, BACKUP], words=[], events=0,
                ops=[Launch(0, "fallback_main", {"input": 0, "output": 1}),
                     Launch(0, "fallback_postprocess", {"input": 1, "output": 2})],
                plan=[Execute(1), Sync(5000), SetKernel(0, {"input": 3, "output": 1}),
                      Disable(1), Update(), Execute(1), Sync(5000)], name="seed")


def test_seed_case_observations(sim_backend: Any) -> None:
    obs = runner.replay(sim_backend, seed_case())
    seq = {"unique": True, "increasing": True, "stable": True}
    main = [x + 10 for x in X]
    assert obs == [
        Observation("capture", -1, "rc", 0),
        Observation("listing", -1, "stream 0 ops", [0, 1]),
        Observation("listing", -1, "seq ids", seq),
        Observation("listing", -1, "stream order", [0]),
        Observation("listing", -1, "short streams", oracle_listing.SHORT_STREAMS),
        Observation("listing", -1, "short tasks", oracle_listing.SHORT_TASKS),
        Observation("step", 0, "rc", [0]),
        Observation("step", 1, "rc", 0),
        Observation("sync", 1, "buffer 0", X),
        Observation("sync", 1, "buffer 1", main),
        Observation("sync", 1, "buffer 2", [2 * v for v in main]),
        Observation("sync", 1, "buffer 3", BACKUP),
        Observation("step", 2, "rc", 0),
        Observation("step", 3, "rc", 0),
        Observation("step", 4, "rc", 0),
        Observation("listing", 4, "stream 0 ops", [0]),
        Observation("listing", 4, "seq ids", seq),
        Observation("step", 5, "rc", [0]),
        Observation("step", 6, "rc", 0),
        Observation("sync", 6, "buffer 0", X),
        Observation("sync", 6, "buffer 1", [x + 10 for x in BACKUP]),
        Observation("sync", 6, "buffer 2", [2 * v for v in main]),
        Observation("sync", 6, "buffer 3", BACKUP),
    ]
    assert first_difference(oracle.expected(seed_case()), obs) is None


def test_negative_disable_of_memset_faults(sim_backend: Any) -> None:
    case = Case(streams=1, buffers=[SENT, SENT], words=[], events=0,
                ops=[Memset(0, 1, 0), Launch(0, "fill", {"out": 0, "n": 8, "value": 4})],
                plan=[Disable(0), Update(), Execute(2), Sync(5000)])
    obs = runner.replay(sim_backend, case)
    steps = [o.value for o in obs if o.phase == "step"]
    assert steps == [107000, 107040, [507011, 507011], 0]
    assert first_difference(oracle.expected(case), obs) is None


def test_memset_on_a_side_stream_twin_is_mapped(sim_backend: Any) -> None:
    """Two side streams list the same user-visible tasks (wait, record); only one holds the
    memset. The runner assigns the internal stream with the DEFAULT task to the user stream
    with the memset, so Disable reaches the memset's task (107000 and FAULT, DIS-06), not a
    NULL handle."""
    case = Case(streams=3, buffers=[SENT], words=[], events=4,
                ops=[Launch(0, "fill", {"out": 0, "n": 8, "value": 0}), Record(0, 0), Wait(1, 0),
                     Record(1, 1), Wait(0, 1), Record(0, 2), Wait(2, 2), Memset(2, 0, 0),
                     Record(2, 3), Wait(0, 3)],
                plan=[Disable(7), Execute(1), Sync(5000)])
    validation.check(case)
    obs = runner.replay(sim_backend, case)
    assert [o.value for o in obs if o.phase == "step"] == [107000, [507011], 0]
    assert first_difference(oracle.expected(case), obs) is None


def test_capture_failure_observations(sim_backend: Any) -> None:
    unjoined = Case(streams=2, buffers=[SENT], words=[], events=1,
                    ops=[Record(0, 0), Wait(1, 0), Launch(1, "fill", {"out": 0, "n": 8,
                                                                       "value": 4})],
                    plan=[Execute(1), Sync(5000)])
    assert runner.replay(sim_backend, unjoined) == [
        Observation("capture", -1, "rc", 107025),          # XS-02
        Observation("capture", -1, "model", "NULL"),       # CAP-13
        Observation("capture", -1, "statuses", [0, 0])]    # every stream out of capture
    unjoined.plan = []
    assert first_difference(oracle.expected(unjoined), runner.replay(sim_backend, unjoined)) \
        is None
    # cleanup left the backend usable (capture ended, streams and buffers released)
    assert first_difference(oracle.expected(seed_case()),
                            runner.replay(sim_backend, seed_case())) is None


@pytest.mark.parametrize("path", sorted(CASES.glob("*.json")), ids=lambda p: p.stem)
def test_kept_cases_conform_on_the_simulator(sim_backend: Any, path: Path) -> None:
    case = graphs.from_json(path.read_text())
    validation.check(case)
    assert first_difference(oracle.expected(case), runner.replay(sim_backend, case)) is None


def test_divergence_message_writes_the_case(tmp_path: Path) -> None:
    case = seed_case()
    exp = oracle.expected(case)
    obs = list(exp)
    at = [o.key for o in exp].index(("sync", 1, "buffer 0"))
    obs[at] = Observation("sync", 1, "buffer 0", [0] * 8)
    div = divergence.compare(case, "sim", exp, obs)
    assert div is not None
    msg = divergence.divergence_message(div, tmp_path)
    lines = msg.splitlines()
    assert f"observation {at}: sync[1] buffer 0" in lines[0]
    assert lines[1].startswith("  expected: sync[1] buffer 0 = [1, 2")
    assert lines[2].startswith("  observed: sync[1] buffer 0 = [0, 0")
    assert f"mdlri-conformance replay {div.path} --backend sim" in lines[-1]
    assert div.path is not None and div.path.parent == tmp_path / "cases"
    assert graphs.from_json(div.path.read_text()) == case
    assert divergence.compare(case, "sim", exp, exp) is None


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mdlri_conformance.conformance.cli", *args],
                          capture_output=True, text=True, timeout=120)


def test_replay_cli_good_file_exits_0(tmp_path: Path) -> None:
    path = tmp_path / "seed.json"
    path.write_text(seed_case().to_json())
    res = _cli("replay", str(path), "--backend", "sim")
    assert res.returncode == 0, res.stdout + res.stderr
    assert res.stdout.startswith("conforms")


@pytest.mark.parametrize("content", ["{", "[]", json.dumps({"streams": 9, "buffers": [],
                                                             "ops": []}), None])
def test_replay_cli_bad_file_exits_2_with_one_line(tmp_path: Path, content: str | None) -> None:
    path = tmp_path / "bad.json"
    if content is not None:
        path.write_text(content)
    res = _cli("replay", str(path))
    assert res.returncode == 2
    assert len(res.stderr.strip().splitlines()) == 1
    assert "Traceback" not in res.stderr
    assert res.stdout == ""


@pytest.mark.parametrize("path", sorted(CASES.glob("*.json")), ids=lambda p: p.stem)
def test_listing_matches_by_order_and_type_without_get_params(path: Path) -> None:
    """Without GetParams (207000) and without data movement the capture listing still maps
    every user-visible task to its op: by internal stream alignment on types alone."""
    from mdlri_conformance.conformance.framework import probe
    from tests.partial_runtime import PartialSim
    b = PartialSim({"data", "update"})
    try:
        probe.apply(b, probe.run_probes(b))
        case = graphs.from_json(path.read_text())
        obs = runner.replay(b, case)
        first = [o for o in obs if o.phase == "listing" and o.index == -1]
        assert first == [o for o in oracle.expected(case)
                         if o.phase == "listing" and o.index == -1]
    finally:
        probe.forget(b)
        b.close()


def test_coarse_signatures() -> None:
    sig = ("kernel", "copy", b"\x01\x02")
    assert signature.coarse(sig, "full") == sig
    assert signature.coarse(sig, "no-args") == ("kernel", "copy")
    assert signature.coarse(sig, "type") == ("kernel",)
    assert signature.coarse(("value_write", 64, 3), "no-args") == ("value_write", 64, 3)
    assert signature.coarse(None, "type") is None
