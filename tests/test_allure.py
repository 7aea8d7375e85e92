"""The Allure side of a run: labels and attachments in allure-results, the shipped Allure 3
config and pin, installing (npm) and generating the report. Offline: npm and allure are
fakes here; the real ones, and the pages in a browser, are checked by .ci/check_pages.py."""

from __future__ import annotations

import hashlib
import importlib.resources
import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from mdlri_conformance.conformance.framework.verdicts import (
    allure_labels, allure_status, allure_writes)
from mdlri_conformance.reports import allure
from mdlri_conformance.reports.allure import AllureError

SHIPPED = importlib.resources.files("mdlri_conformance.reports").joinpath("allure")

#: the top-level fields Allure 3 accepts in a config (core/dist/config.js validateConfig of
#: allure 3.18.0); any other field makes ``allure generate`` fail
ALLURE_CONFIG_FIELDS = {
    "name", "output", "open", "port", "hideLabels", "historyPath", "historyBaseUrl",
    "historyLimit", "resolutions", "plugins", "defaultLabels", "variables", "environment",
    "allowedEnvironments", "environments", "appendHistory", "qualityGate", "performance",
    "allureService", "categories", "globalAttachments", "resultsDir", "dump"}


def _write_exe(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


# ---------------------------------------------------------------------------------------------
# the shipped config and pin


def test_config_is_a_valid_allure3_config_grouping_by_area_and_clause() -> None:
    cfg = json.loads(SHIPPED.joinpath(allure.CONFIG_FILE).read_text())
    assert set(cfg) <= ALLURE_CONFIG_FIELDS
    awesome = cfg["plugins"]["awesome"]["options"]
    assert awesome["singleFile"] is True  # one index.html that opens from file://
    # the labels allure_labels sets: parentSuite = area, suite = the clause ids
    assert awesome["groupBy"] == ["parentSuite", "suite"]
    for rule in cfg["categories"]:  # Allure 3's canonical form: one matcher of status + label
        assert rule["name"] and set(rule) == {"name", "matchers"}
        assert set(rule["matchers"]["statuses"]) <= {"failed", "broken", "skipped"}
        assert set(rule["matchers"]["labels"]) == {allure_status.OUTCOME_LABEL}


def _category(cfg: dict, row: dict) -> str | None:
    """The first category of the shipped config a result of this row falls in (Allure 3
    takes the first that matches: core-api categories.js matchCategory)."""
    import re
    for rule in cfg["categories"]:
        m = rule["matchers"]
        if allure_status.status_of(row) in m["statuses"] and \
                re.search(m["labels"][allure_status.OUTCOME_LABEL], row["outcome"]):
            return rule["name"]
    return None


def test_each_outcome_has_its_allure_status_and_category() -> None:
    """Allure "failed" is what fails the gate, "broken" a CHANGED that does not, "skipped" an
    accepted XFAIL or a spec not judged; every outcome but PASS and SKIP has its category."""
    cfg = json.loads(SHIPPED.joinpath(allure.CONFIG_FILE).read_text())
    rows = {o: {"outcome": o} for o in ("PASS", "FAIL", "CHANGED", "XFAIL", "XPASS",
                                        "UNSUPPORTED", "ERROR", "TIMEOUT", "CRASH", "SKIP")}
    rows["CHANGED gated"] = {"outcome": "CHANGED", "gated": True}
    rows["UNSUPPORTED required"] = {"outcome": "UNSUPPORTED", "gated": True,
                                    "required": ["kernels"]}
    status = {k: allure_status.status_of(r) for k, r in rows.items()}
    assert status == {"PASS": "passed", "FAIL": "failed", "CHANGED": "broken",
                      "XFAIL": "skipped", "XPASS": "failed", "UNSUPPORTED": "skipped",
                      "ERROR": "failed", "TIMEOUT": "failed", "CRASH": "failed",
                      "SKIP": "skipped", "CHANGED gated": "failed",
                      "UNSUPPORTED required": "failed"}
    names = {k: _category(cfg, r) for k, r in rows.items()}
    assert names.pop("PASS") is None and names.pop("SKIP") is None
    assert all(names.values()), names
    assert names["CHANGED"].startswith("CHANGED: ") and "not gating" in names["CHANGED"]
    assert names["XFAIL"].startswith("XFAIL: ")
    assert len({names["CHANGED"], names["CHANGED gated"], names["ERROR"], names["FAIL"],
                names["XFAIL"], names["UNSUPPORTED"], names["UNSUPPORTED required"]}) == 7
    for key, name in names.items():
        assert ("fails the gate" in name) == (status[key] == "failed"), (key, name)


def test_apply_sets_status_label_tag_and_message_once() -> None:
    result = {"name": "t", "status": "skipped",
              "statusDetails": {"message": "XFAIL CHANGED [LIST-05] x\n\nAssertionError",
                                "trace": "tb"},
              "labels": [{"name": "nodeid", "value": "a.py::t"}, {"name": "tag", "value": "x"}]}
    row = {"nodeid": "a.py::t", "outcome": "CHANGED", "message": "[LIST-05] x"}
    assert allure_status.nodeid_of(result) == "a.py::t"
    assert allure_status.apply(result, row) is True
    assert result["status"] == "broken"
    assert result["statusDetails"] == {"message": "CHANGED: [LIST-05] x", "trace": "tb"}
    assert result["labels"] == [{"name": "nodeid", "value": "a.py::t"},
                                {"name": "tag", "value": "x"},
                                {"name": "outcome", "value": "CHANGED"},
                                {"name": "tag", "value": "CHANGED"}]
    assert allure_status.apply(result, row) is False  # a second pass changes nothing
    gated = dict(row, gated=True)
    assert allure_status.apply(result, gated) is True and result["status"] == "failed"
    assert result["statusDetails"]["message"] == "CHANGED (gated): [LIST-05] x"
    assert [lab["value"] for lab in result["labels"] if lab["name"] == "tag"] == ["x", "CHANGED"]


def test_rewrite_leaves_results_without_a_row_alone(tmp_path: Path) -> None:
    mine = {"name": "a", "status": "skipped", "labels": [{"name": "nodeid", "value": "a.py::a"}]}
    other = {"name": "b", "status": "skipped", "labels": [{"name": "nodeid", "value": "a.py::b"}]}
    bare = {"name": "c", "status": "failed", "labels": []}
    for name, r in (("1", mine), ("2", other), ("3", bare)):
        (tmp_path / f"{name}-result.json").write_text(json.dumps(r))
    (tmp_path / "4-result.json").write_text("{cut")
    before = {p.name: p.read_text() for p in tmp_path.iterdir()}
    rows = [{"nodeid": "a.py::a", "outcome": "XFAIL", "expected": "FAIL", "reason": "known"}]
    done = allure_status.rewrite(tmp_path, rows)
    assert done.changed == 1 and done.seen == {"a.py::a", "a.py::b"}
    got = json.loads((tmp_path / "1-result.json").read_text())
    assert got["status"] == "skipped"
    assert got["statusDetails"] == {"message": "XFAIL: expected FAIL: known"}
    for name in ("2-result.json", "3-result.json", "4-result.json"):
        assert (tmp_path / name).read_text() == before[name]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(before)  # no .tmp left


def test_package_pins_one_exact_allure3_version_with_a_lock() -> None:
    pkg = json.loads(SHIPPED.joinpath("package.json").read_text())
    lock = json.loads(SHIPPED.joinpath("package-lock.json").read_text())
    version = pkg["dependencies"]["allure"]
    assert version == allure.pinned_version()
    assert version.split(".")[0] == "3" and all(p.isdigit() for p in version.split("."))
    assert lock["lockfileVersion"] >= 2
    assert lock["packages"][""]["dependencies"] == pkg["dependencies"]
    entry = lock["packages"]["node_modules/allure"]
    assert entry["version"] == version and entry["integrity"].startswith("sha512-")


# ---------------------------------------------------------------------------------------------
# install (a fake npm)


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MDLRI_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def _fake_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, npm: str) -> None:
    bindir = tmp_path / "bin"
    _write_exe(bindir / "npm", npm)
    _write_exe(bindir / "node", "#!/bin/sh\nexit 0\n")
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}")


NPM_OK = """#!/bin/sh
test "$1" = ci || exit 9
mkdir -p node_modules/.bin
printf '#!/bin/sh\\n' > node_modules/.bin/allure
chmod +x node_modules/.bin/allure
echo "added 159 packages"
"""

NPM_ENOTCACHED = """#!/bin/sh
echo "npm error code ENOTCACHED" >&2
echo "npm error request to https://registry.npmjs.org/zip-stream/-/zip-stream-7.0.5.tgz \
failed: cache mode is 'only-if-cached' but no cached response is available." >&2
echo "npm error A complete log of this run can be found in: /root/.npm/_logs/x-debug-0.log" >&2
exit 1
"""


def test_install_copies_the_pin_runs_npm_ci_once(cache: Path, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    _fake_path(tmp_path, monkeypatch, NPM_OK)
    exe = allure.install(cache)
    where = cache / "allure"
    assert exe == where / "node_modules" / ".bin" / "allure"
    assert (where / "package-lock.json").read_bytes() == SHIPPED.joinpath(
        "package-lock.json").read_bytes()
    assert allure.installed(where)
    assert str(where) in capsys.readouterr().out
    _fake_path(tmp_path, monkeypatch, "#!/bin/sh\nexit 7\n")  # npm must not run again
    assert allure.install(cache) == exe


def test_install_reports_npms_error_in_one_line(cache: Path, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_path(tmp_path, monkeypatch, NPM_ENOTCACHED)
    with pytest.raises(AllureError) as err:
        allure.install(cache)
    msg = str(err.value)
    assert "\n" not in msg
    assert "npm ci" in msg and "ENOTCACHED: request to https://registry.npmjs.org/" in msg
    assert not allure.installed(cache / "allure")


@pytest.mark.parametrize("output, line", [
    ("npm error code E404\nnpm error 404 Not Found - GET https://registry.npmjs.org/nope - "
     "Not found\nnpm error 404\nnpm error 404  'nope@1.0.0' is not in this registry.\n",
     "E404: 404 Not Found - GET https://registry.npmjs.org/nope - Not found"),
    ("npm error code EAI_AGAIN\nnpm error syscall getaddrinfo\nnpm error errno EAI_AGAIN\n"
     "npm error request to https://registry.npmjs.org/a.tgz failed, reason: getaddrinfo "
     "EAI_AGAIN registry.npmjs.org\n",
     "EAI_AGAIN: request to https://registry.npmjs.org/a.tgz failed, reason: getaddrinfo "
     "EAI_AGAIN registry.npmjs.org"),
    ("npm ERR! code ENOTFOUND\nnpm ERR! network request failed\n",
     "ENOTFOUND: network request failed"),
    ("\x1b[31mnpm error\x1b[39m code EUSAGE\n\x1b[31mnpm error\x1b[39m\n"
     "\x1b[31mnpm error\x1b[39m The `npm ci` command can only install with an existing lock\n",
     "EUSAGE: The `npm ci` command can only install with an existing lock"),
    ("something else broke\n", "something else broke"),
])
def test_npm_error_is_code_and_first_message(output: str, line: str) -> None:
    assert allure.npm_error(output) == line


# ---------------------------------------------------------------------------------------------
# generate (a fake allure)

FAKE_ALLURE = """#!/bin/sh
# fake allure: generate RESULTS --config CFG --output OUT --name NAME
out=""; cfg=""
while [ $# -gt 0 ]; do
  case "$1" in --output) out="$2"; shift;; --config) cfg="$2"; shift;; esac; shift
done
test -f "$cfg" || { echo "no config $cfg" >&2; exit 3; }
test -e "$out" && { echo "stale $out still there" >&2; exit 4; }
mkdir -p "$out"
cat > "$out/index.html" <<'EOF'
<html><body><div id="app"></div>
    <script async src="https://www.googletagmanager.com/gtag/js?id=G-LNDJ3J7WT0"></script>
    <script>
        window.dataLayer = window.dataLayer || [];
        function gtag(){dataLayer.push(arguments);}
        gtag('js', new Date());
        gtag('config', 'G-LNDJ3J7WT0', {"report": "awesome"});
    </script>
<script>window.allureReportData = 1;</script></body></html>
EOF
"""


def _installed(cache: Path, script: str = FAKE_ALLURE) -> Path:
    where = cache / "allure"
    _write_exe(where / "node_modules" / ".bin" / "allure", script)
    lock = SHIPPED.joinpath("package-lock.json").read_bytes()
    (where / allure.STAMP).write_text(hashlib.sha256(lock).hexdigest() + "\n")
    return where


def _run_dir(tmp_path: Path) -> Path:
    run = tmp_path / "run"
    (run / "allure-results").mkdir(parents=True)
    (run / "summary.json").write_text(json.dumps({"backend": "sim"}))
    return run


def test_generate_refuses_without_install_in_one_line(cache: Path, tmp_path: Path) -> None:
    with pytest.raises(AllureError) as err:
        allure.generate(_run_dir(tmp_path), cache)
    assert str(err.value) == ("run `mdlri-conformance report --install-allure` first "
                              "(needs the npm registry once)")


def test_generate_asks_for_a_reinstall_when_the_pin_changed(cache: Path, tmp_path: Path) -> None:
    where = _installed(cache)
    (where / allure.STAMP).write_text("an older lock\n")
    with pytest.raises(AllureError, match=r"not the pinned 3\.\d+\.\d+: run .* again"):
        allure.generate(_run_dir(tmp_path), cache)


def test_generate_without_results_says_how_to_get_them(cache: Path, tmp_path: Path) -> None:
    with pytest.raises(AllureError, match="run with mdlri-conformance run --allure"):
        allure.generate(tmp_path, cache)


def test_rebuild_replaces_the_old_report(cache: Path, tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_path(tmp_path, monkeypatch, "#!/bin/sh\nexit 1\n")  # a node on PATH
    _installed(cache)
    run = _run_dir(tmp_path)
    old = run / "allure-report"
    (old / "data").mkdir(parents=True)
    (old / "data" / "stale.json").write_text("{}")
    (old / "app-old.js").write_text("")
    index = allure.generate(run, cache)
    assert index == old / "index.html"
    assert sorted(p.name for p in old.iterdir()) == ["index.html"]
    html = index.read_text()
    assert "googletagmanager" not in html and "gtag(" not in html  # no request of its own
    assert "window.allureReportData" in html


def test_generate_failure_is_allures_last_line(cache: Path, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_path(tmp_path, monkeypatch, "#!/bin/sh\nexit 1\n")
    _installed(cache, "#!/bin/sh\necho 'loading'\necho 'Error: bad results' >&2\nexit 1\n")
    with pytest.raises(AllureError, match=r"^allure generate failed: Error: bad results$"):
        allure.generate(_run_dir(tmp_path), cache)


# ---------------------------------------------------------------------------------------------
# labels and attachments in allure-results (a real pytest run with allure-pytest)

SPECS = '''
import pytest
from mdlri_conformance.backends.contract import Err
from mdlri_conformance.conformance import expect

@pytest.mark.clause("CAP-01")
def test_documented_pass():
    """Passes."""
    expect.ok(0, "call")

@pytest.mark.clause("CAP-04")
def test_documented_fail():
    """CaptureEnd must succeed."""
    expect.rc(107000, Err.SUCCESS, "aclmdlRICaptureEnd")

@pytest.mark.clause("LIST-05")
def test_implementation_fail():
    expect.eq(3, 2, "*numTasks")

@pytest.mark.clause("CAP-11")
def test_gated_change():
    expect.eq(3, 2, "*numTasks")

@pytest.mark.clause("CAP-03")
def test_accepted_failure():
    expect.rc(107000, Err.SUCCESS, "aclmdlRICaptureBegin")

@pytest.mark.clause("CAP-02")
def test_stale_expectation():
    expect.ok(0, "call")

@pytest.mark.clause("CAP-01")
def test_harness_error():
    raise RuntimeError("boom")
'''

#: CAP-03 accepted (XFAIL), CAP-02's failure accepted though it passes (XPASS), a CHANGED of
#: CAP-11 fails the gate; LIST-05's CHANGED does not
EXPECT = '''
gate_changed = ["CAP-11"]
[[expect]]
id = "CAP-03"
outcome = "FAIL"
reason = "known: begin answers 107000 here"
[[expect]]
id = "CAP-02"
outcome = "FAIL"
reason = "was broken"
'''


@pytest.fixture(scope="module", params=["0", "1"], ids=["n0", "xdist"])
def results(request: pytest.FixtureRequest,
            tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict]:
    """allure-results of a run of SPECS on the sim, by test name (one pytest subprocess), in
    one process (-n 0) and under xdist (-n 1: a worker writes the results, the controller
    records the rows and sets the statuses)."""
    import subprocess
    import sys
    base = tmp_path_factory.mktemp("allure-run")
    (base / "test_specs.py").write_text(SPECS)
    (base / "exp.toml").write_text(EXPECT)
    env = {k: v for k, v in os.environ.items()  # not the outer run's xdist / pytest state
           if k != allure_labels.CLAUSE_URL_VAR and not k.startswith(("PYTEST_", "MDLRI_"))}
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:randomly", "-p", "no:cacheprovider",
         "-p", "mdlri_conformance.conformance.framework.plugin", "--backend", "sim",
         "-n", request.param, "--expectations", str(base / "exp.toml"),
         "--report-dir", str(base / "out"), "--alluredir", str(base / "allure-results"),
         "-q", "test_specs.py"], cwd=base, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1, proc.stdout[-2000:] + proc.stderr[-2000:]
    out = {}
    for f in (base / "allure-results").glob("*-result.json"):
        r = json.loads(f.read_text())
        r["_dir"] = f.parent
        out[r["name"]] = r
    return out


def _labels(r: dict) -> dict[str, list[str]]:
    labels: dict[str, list[str]] = {}
    for lab in r["labels"]:
        labels.setdefault(lab["name"], []).append(lab["value"])
    return labels


def _attachment(r: dict, name: str) -> str | None:
    for a in r.get("attachments", []):
        if a["name"] == name:
            return (r["_dir"] / a["source"]).read_text()
    return None


def test_failing_spec_is_labelled_by_area_and_clause(results: dict[str, dict]) -> None:
    r = results["test_documented_fail"]
    labels = _labels(r)
    assert labels["feature"] == labels["parentSuite"] == ["specs"]  # the module's area
    assert labels["suite"] == labels["story"] == labels["clause"] == ["CAP-04"]
    assert labels["level"] == ["documented"] and labels["backend"] == ["sim"]
    assert "subSuite" not in labels  # not the Python package / module / class
    assert r["links"] == [{"type": "link", "url": "../clauses.html#CAP-04", "name": "CAP-04"}]
    assert r["description"].startswith("- **CAP-04** (documented): ")
    assert r["description"].endswith("CaptureEnd must succeed.")  # the spec's docstring


def test_allure_status_is_the_suites_outcome(results: dict[str, dict]) -> None:
    """CHANGED is "broken" with a CHANGED message, never "skipped" / "XFAIL CHANGED"; XFAIL is
    only the accepted failure; what fails the gate is "failed"."""
    want = {"test_documented_pass": ("passed", "PASS"),
            "test_documented_fail": ("failed", "FAIL"),
            "test_implementation_fail": ("broken", "CHANGED"),
            "test_gated_change": ("failed", "CHANGED"),
            "test_accepted_failure": ("skipped", "XFAIL"),
            "test_stale_expectation": ("failed", "XPASS"),
            "test_harness_error": ("failed", "ERROR")}
    assert set(results) == set(want)
    for name, (status, outcome) in want.items():
        r = results[name]
        labels = _labels(r)
        assert (r["status"], labels["outcome"]) == (status, [outcome]), name
        assert labels["nodeid"] == [f"test_specs.py::{name}"]
        assert (outcome in labels.get("tag", [])) == (outcome != "PASS")
    message = {name: (r.get("statusDetails") or {}).get("message", "")
               for name, r in results.items()}
    assert message["test_implementation_fail"] == "CHANGED: [LIST-05] *numTasks: expected 2, " \
                                                 "observed 3"
    assert message["test_gated_change"].startswith("CHANGED (gated): [CAP-11] *numTasks")
    assert message["test_accepted_failure"] == ("XFAIL: expected FAIL: known: begin answers "
                                                "107000 here")
    assert message["test_stale_expectation"].startswith("XPASS: expected FAIL (was broken)")
    assert message["test_harness_error"] == "ERROR: RuntimeError: boom"
    assert [n for n, m in message.items() if "XFAIL" in m] == ["test_accepted_failure"]
    trace = results["test_implementation_fail"]["statusDetails"]["trace"]
    assert "expect.eq(3, 2" in trace  # the traceback stays
    # the worker wrote the attachment before the expectations file was applied: rewritten
    accepted = _attachment(results["test_accepted_failure"], allure_labels.ATTACHMENT)
    assert accepted is not None and "outcome:  XFAIL (level documented" in accepted
    assert "expected: 0 (SUCCESS)\nobserved: 107000" in accepted


def test_every_failing_spec_gets_expected_vs_observed(results: dict[str, dict]) -> None:
    fail = _attachment(results["test_documented_fail"], allure_labels.ATTACHMENT)
    assert fail is not None
    assert fail.splitlines()[0] == ("[CAP-04] aclmdlRICaptureEnd rc: expected 0 (SUCCESS), "
                                    "observed 107000 (RT_PARAM_INVALID)")
    assert "outcome:  FAIL (level documented, area specs)" in fail
    assert "what:     aclmdlRICaptureEnd rc\n" in fail
    assert "expected: 0 (SUCCESS)\nobserved: 107000 (RT_PARAM_INVALID)\n" in fail
    changed = _attachment(results["test_implementation_fail"], allure_labels.ATTACHMENT)
    assert changed is not None and "outcome:  CHANGED" in changed
    assert "expected: 2\nobserved: 3\n" in changed
    error = _attachment(results["test_harness_error"], allure_labels.ATTACHMENT)
    assert error is not None and error.startswith("RuntimeError: boom\n")
    assert "outcome:  ERROR" in error
    assert _attachment(results["test_documented_pass"], allure_labels.ATTACHMENT) is None
    for r in results.values():  # once each, not also from the plugin's own call
        names = [a["name"] for a in r.get("attachments", [])]
        assert names.count(allure_labels.ATTACHMENT) <= 1


def test_divergence_attachment_has_details_and_replay() -> None:
    info = {"outcome": "CHANGED", "level": "implementation", "area": "generated",
            "clauses": ["LIST-08", "SEQ-03"],
            "message": "[LIST-08,SEQ-03] generated case, capture[-1] rc: expected 0, "
                       "observed 107025",
            "divergence": {"expected": "0", "observed": "107025",
                           "replay": "mdlri-conformance replay c.json --backend sim"}}
    text = allure_labels.expected_vs_observed(info)
    assert "what:     generated case, capture[-1] rc\n" in text
    assert "expected: 0\nobserved: 107025\n" in text
    assert text.endswith("replay:   mdlri-conformance replay c.json --backend sim\n")


def test_clause_url_is_the_runs_clauses_page_or_the_configured_one(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(allure_labels.CLAUSE_URL_VAR, raising=False)
    assert allure_labels.clause_url("SEQ-04") == "../clauses.html#SEQ-04"
    monkeypatch.setenv(allure_labels.CLAUSE_URL_VAR, "https://ci.example/r/clauses.html#{id}")
    assert allure_labels.clause_url("SEQ-04") == "https://ci.example/r/clauses.html#SEQ-04"


def test_a_row_without_a_result_gets_one(tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker that died in a spec (CRASH) never closed its Allure result: the recording
    process writes one from the row, labelled like the others, so the gate failure shows."""
    monkeypatch.delenv(allure_labels.CLAUSE_URL_VAR, raising=False)
    crash = {"nodeid": "conformance/specs/test_x.py::test_crash[a]", "outcome": "CRASH",
             "clauses": ["EXE-01", "CAP-04"], "area": "execute", "level": "documented",
             "backend": "sim", "message": "the worker died (signal 11, SIGSEGV)"}
    passed = {"nodeid": "conformance/specs/test_x.py::test_ok", "outcome": "PASS",
              "clauses": ["CAP-01"], "area": "capture", "level": "documented"}
    assert allure_labels.write_missing(tmp_path, [crash, passed],
                                       {"conformance/specs/test_x.py::test_ok"}) == 1
    (path,) = tmp_path.glob("*-result.json")
    r = json.loads(path.read_text())
    r["_dir"] = tmp_path
    assert (r["name"], r["status"]) == ("test_crash[a]", "failed")
    assert r["fullName"] == "conformance.specs.test_x#test_crash"
    assert r["statusDetails"]["message"] == "CRASH: the worker died (signal 11, SIGSEGV)"
    labels = _labels(r)
    assert labels["parentSuite"] == ["execute"] and labels["suite"] == ["EXE-01, CAP-04"]
    assert labels["clause"] == ["EXE-01", "CAP-04"] and labels["outcome"] == ["CRASH"]
    assert labels["nodeid"] == [crash["nodeid"]] and labels["tag"] == ["CRASH"]
    assert [link["url"] for link in r["links"]] == ["../clauses.html#EXE-01",
                                                    "../clauses.html#CAP-04"]
    assert r["description"].startswith("- **EXE-01** (")
    text = _attachment(r, allure_labels.ATTACHMENT)
    assert text is not None and "outcome:  CRASH" in text


def test_a_failed_allure_write_is_caught_and_leaves_no_tmp(tmp_path: Path) -> None:
    """A full disk under allure-pytest's own writers: the OSError stays in the guard (the worker
    goes on, the recording process writes the result or ends the run INCOMPLETE), and the
    half-written file is removed."""
    import errno

    import allure_commons

    class Full:
        @allure_commons.hookimpl
        def report_result(self, result: Any) -> None:
            (tmp_path / "x-result.json.tmp").write_text("{")
            raise OSError(errno.ENOSPC, "No space left on device")

    full, guard = Full(), allure_writes.LostWrites(tmp_path)
    allure_commons.plugin_manager.register(full)
    allure_commons.plugin_manager.register(guard)
    try:
        allure_commons.plugin_manager.hook.report_result(result=None)
    finally:
        allure_commons.plugin_manager.unregister(plugin=guard)
        allure_commons.plugin_manager.unregister(plugin=full)
    assert guard.error is not None and guard.error.errno == errno.ENOSPC
    assert not list(tmp_path.glob("*.tmp"))
