"""``--shard K/N`` (conformance.shard): the split is deterministic, disjoint and covering,
independent of the collection order, balanced by recorded durations; bad values are one line."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

from mdlri_conformance.conformance import shard
from mdlri_conformance.conformance.items import SPEC_DIR


@pytest.mark.parametrize("text, expected", [("1/1", (1, 1)), ("2/3", (2, 3)), ("3/3", (3, 3)),
                                            (" 1/12 ", (1, 12))])
def test_parse_accepts_k_of_n(text: str, expected: tuple[int, int]) -> None:
    assert shard.parse(text) == expected


@pytest.mark.parametrize("text", ["0/3", "4/3", "1/0", "-1/2", "3", "a/b", "1/2/3", "", "1/"])
def test_parse_refuses_anything_else(text: str) -> None:
    with pytest.raises(shard.ShardError) as err:
        shard.parse(text)
    assert str(err.value) == f"--shard {text}: use K/N with 1 <= K <= N"


@pytest.mark.parametrize("value", ["0/3", "4/3", "two/3"])
def test_bad_shard_value_is_one_line_exit_2(tmp_path: Path, value: str) -> None:
    res = subprocess.run([sys.executable, "-m", "mdlri_conformance.conformance.cli", "run",
                          "--report-dir", str(tmp_path / "run"), "--shard", value, "-n", "0"],
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 2, res.stdout + res.stderr
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert lines == [f"ERROR: --shard {value}: use K/N with 1 <= K <= N"], res.stderr
    assert not (tmp_path / "run").exists()  # the run left nothing behind


@pytest.mark.parametrize("nodeid, key", [
    ("conformance/specs/test_x.py::t[a/b]", "test_x.py::t[a/b]"),
    ("wv/lib/python3.11/site-packages/mdlri_conformance/conformance/specs/test_x.py::t",
     "test_x.py::t"),
    ("test_x.py::C::t", "test_x.py::C::t"),
    ("tests/test_cli.py::test_help", "tests/test_cli.py::test_help"),
])
def test_spec_key_drops_the_location(nodeid: str, key: str) -> None:
    assert shard.spec_key(nodeid) == key


def test_assign_is_least_duration_heaviest_first() -> None:
    """pytest-split's rule: heaviest first, each to the lightest shard (ties: key, shard)."""
    durations = {"a": 5.0, "b": 4.0, "c": 3.0, "d": 3.0, "e": 1.0}
    groups, totals = shard.assign(durations, durations, 2)
    assert {k for k, g in groups.items() if g == 0} == {"a", "d"}
    assert {k for k, g in groups.items() if g == 1} == {"b", "c", "e"}
    assert totals == pytest.approx([8.0 + 2 * shard.SPEC_OVERHEAD_S,
                                    8.0 + 3 * shard.SPEC_OVERHEAD_S])


def test_assign_ignores_order_covers_every_key_once_and_balances() -> None:
    rng = random.Random(7)
    keys = [f"test_m{i % 9}.py::t{i}" for i in range(300)]
    durations = {k: rng.random() for k in keys[:250]}  # 50 without a recorded duration
    first, totals = shard.assign(keys, durations, 4)
    for _ in range(5):
        rng.shuffle(keys)
        assert shard.assign(keys, durations, 4) == (first, totals)
    assert set(first) == set(keys) and set(first.values()) == {0, 1, 2, 3}
    heaviest = max(durations.values()) + shard.SPEC_OVERHEAD_S
    assert max(totals) - min(totals) <= heaviest


def test_a_spec_without_a_duration_weighs_the_mean() -> None:
    groups, totals = shard.assign(["a", "b", "new"], {"a": 2.0, "b": 4.0}, 3)
    assert len(set(groups.values())) == 3
    assert sorted(totals) == pytest.approx([2.0 + shard.SPEC_OVERHEAD_S,
                                            3.0 + shard.SPEC_OVERHEAD_S,
                                            4.0 + shard.SPEC_OVERHEAD_S])


def test_shipped_durations_cover_the_specs() -> None:
    """The package's durations.json (read through importlib.resources) names spec keys."""
    durations, source = shard.load_durations(None)
    assert source == f"package {shard.DURATIONS_FILE}"
    assert len(durations) > 500
    assert all("/" not in k.split("::")[0] and k.startswith("test_") for k in durations)


def test_bad_durations_file_is_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "d.json"
    bad.write_text('{"x": "slow"}')
    with pytest.raises(shard.ShardError, match=r"expected an object of node id -> seconds"):
        shard.load_durations(bad)
    with pytest.raises(shard.ShardError, match=r"cannot read"):
        shard.load_durations(tmp_path / "none.json")


def test_durations_from_rows_keys_and_means() -> None:
    rows = [{"nodeid": "a/conformance/specs/test_x.py::t", "duration_s": 1.0},
            {"nodeid": "b/conformance/specs/test_x.py::t", "duration_s": 3.0}]
    assert shard.durations_from_rows(rows) == {"test_x.py::t": 2.0}


# ---------------------------------------------------------------------------------------------
# the split of the real specs (collection only: nothing runs)

_KEYWORD = "capture"


def _collect(report_dir: Path, *args: str) -> tuple[list[str], dict | None]:
    """Collect the specs matching -k capture (and this file's tests for 'shard 1 only');
    returns the collected node ids and shard.json."""
    res = subprocess.run([sys.executable, "-m", "pytest", str(SPEC_DIR), __file__,
                          "--collect-only", "-q", "-p", "no:cacheprovider",
                          "-k", f"{_KEYWORD} or test_parse_accepts",
                          "--report-dir", str(report_dir), *args],
                         capture_output=True, text=True, timeout=120)
    ids = [ln for ln in res.stdout.splitlines() if "::" in ln and " " not in ln]
    assert ids or "--shard" in args, res.stdout + res.stderr
    path = report_dir / "shard.json"
    return ids, json.loads(path.read_text()) if path.is_file() else None


def test_shards_are_disjoint_cover_and_ignore_the_random_order(tmp_path: Path) -> None:
    everything, none = _collect(tmp_path / "all", "-p", "no:randomly")
    assert none is None
    specs = {i for i in everything if "specs/" in i}
    others = set(everything) - specs
    assert len(specs) > 20 and others
    per_seed: dict[int, list[set[str]]] = {}
    for seed in (1, 2):
        per_seed[seed] = []
        for k in (1, 2, 3):
            ids, info = _collect(tmp_path / f"s{seed}-{k}", "-p", "randomly",
                                 f"--randomly-seed={seed}", "--shard", f"{k}/3")
            assert info is not None and (info["shard"], info["of"]) == (k, 3)
            assert set(info["selected"]) == {i for i in ids if "specs/" in i}
            assert info["specs_total"] == len(specs)
            # the project's own tests run once: in shard 1
            assert {i for i in ids if "specs/" not in i} == (others if k == 1 else set())
            per_seed[seed].append(set(info["selected"]))
    assert per_seed[1] == per_seed[2]  # the same split whatever the order
    one, two, three = per_seed[1]
    assert not (one & two or one & three or two & three)
    assert one | two | three == specs
    assert all(per_seed[1])
    run = json.loads((tmp_path / "s1-2" / "run.json").read_text())
    assert run["shard"] == {"shard": 2, "of": 3}
