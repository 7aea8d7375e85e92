"""``--shard K/N`` (conformance.shard): the split is deterministic, disjoint and covering,
independent of the collection order, balanced by recorded durations; bad values are one line."""

from __future__ import annotations

import ast
import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from mdlri_conformance.conformance.framework.fleet import shard
from mdlri_conformance.conformance.framework.items import SPEC_DIR


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
    assert lines == [f"mdlri-conformance: error: --shard {value}: use K/N with 1 <= K <= N"], \
        res.stderr
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


# ---------------------------------------------------------------------------------------------
# generated specs: every shard runs a part of each @given spec, with its own example seed


def test_example_seed_and_share() -> None:
    seeds = {shard.example_seed("test_generated.py::t", k, n)
             for n in (2, 3) for k in range(1, n + 1)}
    assert len(seeds) == 5 and all(0 <= s < 2 ** 64 for s in seeds)
    assert shard.example_seed("a", 1, 3) == shard.example_seed("a", 1, 3) != shard.example_seed(
        "b", 1, 3)
    assert [shard.shard_examples(60, n) for n in (1, 2, 3, 7, 100)] == [60, 30, 20, 9, 1]


_DRAWS = '''
import os, pytest
from hypothesis import given, strategies as st

@pytest.mark.clause("CAP-01")
@given(x=st.integers(0, 10 ** 9))
def test_draws(x):
    with open(os.environ["DRAWS"], "a") as f:
        f.write(f"{x}\\n")
'''


def test_a_given_spec_runs_in_every_shard_with_its_own_seed(tmp_path: Path) -> None:
    """A @given spec (here a made-up one with a clause) draws ceil(60/3) = 20 examples per
    shard, other examples in each shard, the same ones on every run whatever the random
    order; unsharded it draws the ci profile's 60, as without shards."""
    (tmp_path / "test_draws.py").write_text(_DRAWS)

    def draws(name: str, *args: str) -> tuple[list[int], dict | None]:
        out = tmp_path / f"{name}.txt"
        res = subprocess.run([sys.executable, "-m", "pytest", "test_draws.py", "-q", "-n", "0",
                              "-p", "no:cacheprovider", "--report-dir", str(tmp_path / name),
                              *args], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                             env={**os.environ, "DRAWS": str(out)})
        assert res.returncode == 0, res.stdout + res.stderr
        info = tmp_path / name / "shard.json"
        return ([int(x) for x in out.read_text().split()],
                json.loads(info.read_text()) if info.is_file() else None)

    whole, none = draws("all", "-p", "no:randomly")
    assert len(whole) == 60 and none is None
    parts = [draws(f"s{k}", "--shard", f"{k}/3", "-p", "randomly", f"--randomly-seed={k}")
             for k in (1, 2, 3)]
    again, info = draws("again", "--shard", "2/3", "-p", "randomly", "--randomly-seed=9")
    assert again == parts[1][0]  # the same examples on every run
    nodeid = "test_draws.py::test_draws"
    seeds = [p[1]["generated"][nodeid]["seed"] for p in parts]
    assert len(set(seeds)) == 3 and info["generated"][nodeid]["seed"] == seeds[1]
    assert all(p[1]["generated"][nodeid]["max_examples"] == 20 for p in parts)
    assert all(len(p[0]) == 20 and p[1]["selected"] == [nodeid] for p in parts)
    assert len({tuple(p[0]) for p in parts} | {tuple(whole[:20])}) == 4  # other examples


def _given_specs(path: Path) -> set[str]:
    """``file::name`` of every function in ``path`` decorated with Hypothesis's ``@given``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {f"{path.name}::{node.name}" for node in tree.body
            if isinstance(node, ast.FunctionDef) and any(
                isinstance(d, ast.Call) and getattr(d.func, "id", "") == "given"
                for d in node.decorator_list)}


def test_real_given_specs_are_in_every_shard(tmp_path: Path) -> None:
    """The @given specs of test_generated.py are selected by every shard, each with its own
    seed (the same for any collection order); the case-file items are split as before."""
    given = _given_specs(SPEC_DIR / "test_generated.py")
    assert len(given) >= 10
    infos = {}
    for k, seed in ((1, 1), (1, 2), (2, 1), (3, 1)):
        res = subprocess.run([sys.executable, "-m", "pytest", str(SPEC_DIR / "test_generated.py"),
                              "--collect-only", "-q", "-p", "no:cacheprovider", "-p", "randomly",
                              f"--randomly-seed={seed}", "--shard", f"{k}/3",
                              "--report-dir", str(tmp_path / f"{k}-{seed}")],
                             capture_output=True, text=True, timeout=120)
        assert (tmp_path / f"{k}-{seed}" / "shard.json").is_file(), res.stdout + res.stderr
        infos[k, seed] = json.loads((tmp_path / f"{k}-{seed}" / "shard.json").read_text())
    gen = {(k, s): {shard.spec_key(n): v for n, v in i["generated"].items()}
           for (k, s), i in infos.items()}
    assert all(set(g) == given for g in gen.values())
    assert gen[1, 1] == gen[1, 2]
    for key in given:
        assert len({gen[k, 1][key]["seed"] for k in (1, 2, 3)}) == 3
        assert {gen[k, 1][key]["max_examples"] for k in (1, 2, 3)} == {20}
    split = [{shard.spec_key(n) for n in infos[k, 1]["selected"]} - given for k in (1, 2, 3)]
    assert not (split[0] & split[1] or split[0] & split[2] or split[1] & split[2])
    assert all(given <= {shard.spec_key(n) for n in i["selected"]} for i in infos.values())
