"""Contradicting options are refused in one line (conformance.conflicts)."""

from __future__ import annotations

import argparse

import pytest

from mdlri_conformance.conformance import cli
from mdlri_conformance.conformance.framework import conflicts


def _ns(*argv: str) -> argparse.Namespace:
    ns = cli.build_parser().parse_args(["run", *argv])
    if ns.pytest_args[:1] == ["--"]:
        ns.pytest_args = ns.pytest_args[1:]
    return ns


@pytest.mark.parametrize("argv,starts", [
    (["-n", "1", "--", "-n", "0"], "-n after --: it is an option of mdlri-conformance run"),
    (["--", "-xn4"], "-n after --"),
    (["--", "--numprocesses=2"], "--numprocesses after --"),
    (["-k", "cap06", "--", "-k", "cap08"], "-k after --"),
    (["--", "--backend", "acl"], "--backend after --"),
    (["--", "--report-dir=/tmp/x"], "--report-dir after --"),
    (["--", "--profile", "dev"], "--profile after --"),
    (["--", "--junitxml", "/tmp/j.xml"], "--junitxml after --: run writes <report-dir>/junit.xml"),
    (["--", "--junit-xml=/tmp/j.xml"], "--junit-xml after --"),
    (["--", "--alluredir", "/tmp/a"], "--alluredir after --: give --allure"),
    (["--allure", "--", "--alluredir=/tmp/a"], "--alluredir after --: give --allure"),
    (["--", "--hypothesis-profile", "dev"], "--hypothesis-profile dev: the suite loads its own"),
    (["--", "--hypothesis-seed", "3"], "--hypothesis-seed 3 has no effect under --profile ci"),
    (["--", "--hypothesis-db", "/tmp/db"], "--hypothesis-db /tmp/db is unused under --profile ci"),
])
def test_run_refuses_what_would_silently_override(argv: list[str], starts: str) -> None:
    why = conflicts.check_args(_ns(*argv))
    assert why is not None and why.startswith(starts) and "\n" not in why


@pytest.mark.parametrize("argv", [
    [], ["--", "-x"], ["-k", "capture", "--", "-x", "-vv"], ["--", "-p", "no:randomly"],
    ["--", "-p", "randomly", "--randomly-seed=7"], ["--", "-rfE", "--tb", "long"],
    ["--", "-o", "junit_family=xunit2"], ["--", "-m", "-n"],  # -n is -m's value here
    ["--profile", "dev", "--", "--hypothesis-seed", "3"],
    ["--", "--hypothesis-db", "none"], ["--", "--hypothesis-verbosity", "verbose"],
])
def test_run_accepts_what_does_not_conflict(argv: list[str]) -> None:
    assert conflicts.check_args(_ns(*argv)) is None


def test_cli_refuses_in_one_line_before_running(capsys: pytest.CaptureFixture[str],
                                                tmp_path, monkeypatch: pytest.MonkeyPatch
                                                ) -> None:
    ran: list[list[str]] = []
    monkeypatch.setattr(pytest, "main", lambda args: ran.append(args) or 5)
    code = cli.main(["run", "--report-dir", str(tmp_path / "r"), "--", "--junitxml", "x.xml"])
    err = capsys.readouterr().err
    assert not ran, "run started pytest despite the conflict"
    assert code == 2 and err.count("\n") == 1
    assert err.startswith("mdlri-conformance: error: --junitxml after --")
    assert not (tmp_path / "r").exists()


def test_given_reads_pytests_spellings() -> None:
    assert conflicts.given(["-q", "-n", "4"], ("-n",)) == ("-n", "4")
    assert conflicts.given(["-n4"], ("-n",)) == ("-n", "4")
    assert conflicts.given(["-vn", "2"], ("-n",)) == ("-n", "2")
    assert conflicts.given(["--junitxml=a.xml"], ("--junitxml",)) == ("--junitxml", "a.xml")
    assert conflicts.given(["-p", "-n"], ("-n",)) is None  # a plugin name, not an option
    assert conflicts.given(["-rn"], ("-n",)) is None  # -r's value "n"
    assert conflicts.given(["--backends"], ("--backend",)) is None


@pytest.mark.parametrize("args,fragment", [
    (["--hypothesis-profile", "default"], "--hypothesis-profile default"),
    (["--hypothesis-seed", "5"], "--hypothesis-seed 5 has no effect"),
    (["--hypothesis-db", "/tmp/x-db"], "--hypothesis-db /tmp/x-db is unused"),
])
def test_pytest_level_check_raises_a_usage_error(pytester: pytest.Pytester, args: list[str],
                                                 fragment: str,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(conflicts.DB_ENV, raising=False)
    config = pytester.parseconfig("-p", "mdlri_conformance.conformance.framework.plugin", *args)
    with pytest.raises(pytest.UsageError, match="^" + fragment.replace("-", r"\-")):
        conflicts.check(config)


@pytest.mark.parametrize("args", [
    [], ["--profile", "dev", "--hypothesis-seed", "5"], ["--hypothesis-db", "none"],
    ["--profile", "deep", "--hypothesis-db", "/tmp/x-db"],
])
def test_pytest_level_check_accepts(pytester: pytest.Pytester, args: list[str],
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(conflicts.DB_ENV, raising=False)
    config = pytester.parseconfig("-p", "mdlri_conformance.conformance.framework.plugin", *args)
    conflicts.check(config)


def test_a_database_from_the_environment_is_not_a_choice(pytester: pytest.Pytester,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(conflicts.DB_ENV, "/tmp/env-db")
    config = pytester.parseconfig("-p", "mdlri_conformance.conformance.framework.plugin",
                                  "--hypothesis-db", "/tmp/env-db")
    conflicts.check(config)


def test_a_plain_pytest_run_refuses_before_hypothesis_fails(pytester: pytest.Pytester) -> None:
    """The plugin calls check() in pytest_cmdline_main: one ERROR line, no INTERNALERROR."""
    pytester.makepyfile(test_a="def test_a():\n    pass\n")
    res = pytester.runpytest_subprocess("-p", "no:randomly", "--hypothesis-profile", "dev",
                                        "--report-dir", str(pytester.path / "out"))
    assert "INTERNALERROR" not in res.stdout.str() + res.stderr.str()
    assert res.ret == pytest.ExitCode.USAGE_ERROR
    res.stderr.fnmatch_lines(["ERROR: --hypothesis-profile dev: the suite loads its own*"])
