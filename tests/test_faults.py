"""The fault catalogue: names, descriptions, validation, sim injection, options."""

from __future__ import annotations

import re

import pytest

import mdlri_conformance.backends.sim as sim
from mdlri_conformance.backends.contract import Err
from mdlri_conformance.backends.acl.emulator_faults import EMULATOR_FAULTS
from mdlri_conformance.backends.faults import FAULTS, ISOLATION_FAULTS, UnknownFault, check
from mdlri_conformance.conformance import cli
from mdlri_conformance.conformance.framework.backend_loader import BackendLoadError, backend_options

CLAUSE = re.compile(r"\((?:[A-Z]+-\d+|Q-\d+)(?:, (?:[A-Z]+-\d+|Q-\d+))*\)\.$")


def test_catalogue_has_30_named_faults_with_one_sentence_each() -> None:
    assert len(FAULTS) >= 30
    for name, text in FAULTS.items():
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", name), name
        assert text[0].isalpha() and text.count(". ") == 0, (name, text)
        assert CLAUSE.search(text), f"{name}: no clause id at the end: {text!r}"


def test_emulator_and_isolation_faults_are_catalogued() -> None:
    assert EMULATOR_FAULTS <= set(FAULTS)
    assert ISOLATION_FAULTS <= set(FAULTS)
    assert {"crash-query", "hang-query-sync"} <= EMULATOR_FAULTS


def test_check_accepts_lists_and_comma_strings_and_rejects_unknown() -> None:
    assert check(["no-107039", " seq-per-stream "]) == {"no-107039", "seq-per-stream"}
    assert check("no-107039,seq-per-stream") == {"no-107039", "seq-per-stream"}
    assert check(None) == frozenset()
    with pytest.raises(UnknownFault, match="unknown fault nope"):
        check(["nope"])
    with pytest.raises(UnknownFault):
        check(["seq-per-stream"], EMULATOR_FAULTS)


@pytest.mark.parametrize("name", sorted(FAULTS))
def test_every_fault_builds_a_simulator(name: str) -> None:
    b = sim.create(faults=[name])
    try:
        assert b.has_fault(name) and b.faults == {name}
    finally:
        b.close()


def test_unknown_fault_is_a_clear_error() -> None:
    with pytest.raises(UnknownFault, match="unknown fault bogus"):
        sim.create(faults=["bogus"])


def test_a_fault_changes_behaviour_and_the_default_does_not() -> None:
    for faults, expected in (((), Err.INVALID_PARAM), (["execute-null-model-107000"],
                                                       Err.RT_PARAM_INVALID)):
        b = sim.create(faults=faults)
        try:
            assert b.execute_async(None, None) == expected
        finally:
            b.close()


def test_backend_options_pass_faults() -> None:
    assert backend_options("sim", faults=["no-107039"]) == {"faults": ["no-107039"]}
    assert backend_options("sim") == {}
    opts = backend_options("acl", acl_lib="emulator", faults=["crash-query"])
    assert opts["faults"] == ["crash-query"]
    with pytest.raises(BackendLoadError, match="unknown fault"):
        backend_options("sim", faults=["bogus"])
    with pytest.raises(BackendLoadError, match="seq-per-stream: exists only on the simulator"):
        backend_options("acl", acl_lib="emulator", faults=["seq-per-stream"])
    with pytest.raises(BackendLoadError, match="unknown fault bogus.*not implemented by the acl"):
        backend_options("acl", acl_lib="emulator", faults=["bogus"])
    with pytest.raises(BackendLoadError, match="needs --acl-lib emulator"):
        backend_options("acl", acl_lib="/opt/lib", faults=["crash-query"])
    with pytest.raises(BackendLoadError, match="takes no injected faults"):
        backend_options("tests.fakes:create", faults=["crash-query"])


def test_cli_unknown_fault_is_a_one_line_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["run", "--fault", "bogus"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "unknown fault bogus" in err[0]
    assert cli.main(["faults", "--only", "bogus"]) == 2
    assert "unknown fault bogus" in capsys.readouterr().err


def test_cli_faults_list(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["faults", "--list"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == len(FAULTS)
    assert cli.main(["faults", "--list", "--backend", "acl"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == len(EMULATOR_FAULTS)


def test_pytest_unknown_fault_is_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_x="def test_x():\n    pass\n")
    res = pytester.runpytest("-p", "mdlri_conformance.conformance.framework.plugin", "--fault", "bogus",
                             "--report-dir", str(pytester.path / "out"))
    assert res.ret == pytest.ExitCode.USAGE_ERROR
    res.stderr.fnmatch_lines(["*--fault: unknown fault bogus*"])
