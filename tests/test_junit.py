"""JUnit XML for CI readers (conformance.junit): result elements follow the outcome, each
testcase carries its clause ids, level, area and outcome as properties (xunit1) or one JSON
line (xunit2), and no value is a Python repr."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from mdlri_conformance.conformance.framework.verdicts import junit

SPECS = '''
import os, signal, time
import pytest
from mdlri_conformance.backends.contract import Cap, Err
from mdlri_conformance.conformance import expect

@pytest.fixture
def bad_teardown():
    yield
    raise RuntimeError("teardown boom")

@pytest.mark.clause("CAP-01")
def test_pass():
    expect.ok(0, "call")

@pytest.mark.clause("CAP-04")
def test_fail():
    expect.rc(107000, Err.SUCCESS, "aclmdlRICaptureEnd")

@pytest.mark.clause("CAP-03")
def test_xfail():
    expect.rc(107000, Err.SUCCESS, "aclmdlRICaptureBegin")

@pytest.mark.clause("CAP-02")
def test_xpass():
    expect.ok(0, "call")

@pytest.mark.clause("CAP-11")
def test_changed():
    expect.eq(3, 2, "*numTasks")

@pytest.mark.clause("LIST-05")
def test_changed_gated():
    expect.eq(3, 2, "*numTasks")

@pytest.mark.clause("Q-10")
def test_undefined(fingerprint):
    fingerprint.record("Q-10", {"ids": [0, 1], "mode": "relaxed"})

@pytest.mark.clause("CAP-05")
@pytest.mark.requires(Cap.KERNELS)
def test_unsupported_cap():
    pass

@pytest.mark.clause("CAP-05", "EXE-01")
def test_unsupported_207000():
    expect.ok(207000, "aclmdlRIGetStreams")

@pytest.mark.clause("CAP-01")
def test_error():
    raise RuntimeError("boom <&> \\x01")

@pytest.mark.clause("CAP-01")
def test_fail_then_teardown_error(bad_teardown):
    expect.rc(107000, Err.SUCCESS, "aclmdlRICaptureEnd")

@pytest.mark.clause("CAP-01")
def test_pass_then_teardown_error(bad_teardown):
    pass

@pytest.mark.clause("CAP-01")
def test_timeout():
    for _ in range(300):
        time.sleep(0.1)

@pytest.mark.clause("EXE-01")
def test_crash():
    os.kill(os.getpid(), signal.SIGSEGV)
'''

EXPECT = '''
gate_changed = ["LIST-*"]
[[expect]]
id = "CAP-03"
outcome = "FAIL"
reason = "known: begin answers 107000 here"
[[expect]]
id = "CAP-02"
outcome = "FAIL"
reason = "was broken"
'''


def _run(pytester: pytest.Pytester, family: str, *extra: str) -> ET.Element:
    pytester.makepyfile(test_specs=SPECS)
    (pytester.path / "exp.toml").write_text(EXPECT)
    xml = pytester.path / "junit.xml"
    pytester.runpytest("-p", "mdlri_conformance.conformance.framework.plugin",
                       "-p", "mdlri_conformance.conformance.framework.verdicts.junit",
                       "-p", "no:randomly",
                       "--backend", "tests.fakes:create_no_kernels",
                       "--report-dir", str(pytester.path / "out"),
                       "--expectations", str(pytester.path / "exp.toml"),
                       "--junitxml", str(xml), "-o", f"junit_family={family}",
                       "--spec-timeout", "1", *extra)
    return ET.parse(xml).getroot()  # well-formed XML, or this raises


def _cases(root: ET.Element) -> dict[str, list[ET.Element]]:
    out: dict[str, list[ET.Element]] = {}
    for tc in root.iter("testcase"):
        out.setdefault(tc.get("name", ""), []).append(tc)
    return out


def _props(tc: ET.Element) -> dict[str, str]:
    return {p.get("name", ""): p.get("value", "") for p in tc.iter("property")}


def _result(tc: ET.Element) -> list[tuple[str, str, str]]:
    return [(el.tag, el.get("type", ""), el.get("message", ""))
            for el in tc if el.tag in junit.RESULT_TAGS]


def test_xunit1_results_and_properties(pytester: pytest.Pytester) -> None:
    root = _run(pytester, "xunit1", "-n", "1")
    cases = _cases(root)
    one = {name: tcs[0] for name, tcs in cases.items()}
    assert _result(one["test_pass"]) == []
    props = _props(one["test_pass"])
    assert list(props)[:4] == ["clause", "level", "area", "outcome"]
    assert (props["clause"], props["level"], props["area"], props["outcome"]) == (
        "CAP-01", "documented", "specs", "PASS")
    assert json.loads(props["leaks"]) == {} and "changed" in json.loads(props["state"])
    assert props["needs"] == "[]"  # every row names its spec's needs, a PASS too
    kind, typ, msg = _result(one["test_fail"])[0]
    assert (kind, typ) == ("failure", "FAIL")
    assert msg.startswith("FAIL: [CAP-04] aclmdlRICaptureEnd rc: expected 0 (SUCCESS), observed "
                          "107000")
    assert "expect.rc" in one["test_fail"].find("failure").text  # pytest's traceback stays
    assert _result(one["test_xpass"])[0][:2] == ("failure", "XPASS")
    assert _result(one["test_changed_gated"])[0][:2] == ("failure", "CHANGED")
    assert _props(one["test_changed_gated"])["gated"] == "true"
    assert _result(one["test_changed"])[0][:2] == ("skipped", "CHANGED")
    assert _result(one["test_xfail"])[0][:2] == ("skipped", "XFAIL")
    assert "known: begin answers 107000 here" in _result(one["test_xfail"])[0][2]
    for name in ("test_unsupported_cap", "test_unsupported_207000"):
        kind, typ, msg = _result(one[name])[0]
        assert (kind, typ) == ("skipped", "UNSUPPORTED") and msg.startswith("UNSUPPORTED: ")
    assert _props(one["test_unsupported_cap"])["needs"] == '["kernels"]'
    assert _props(one["test_unsupported_207000"])["clause"] == "CAP-05,EXE-01"
    assert _result(one["test_error"])[0][:2] == ("error", "ERROR")
    assert "RuntimeError: boom <&> #x01" in _result(one["test_error"])[0][2]
    assert _result(one["test_timeout"])[0][:2] == ("error", "TIMEOUT")
    crash = _result(one["test_crash"])
    assert crash[0][:2] == ("error", "CRASH") and "SIGSEGV" in crash[0][2]
    assert "failed on setup" not in crash[0][2]
    assert _props(one["test_crash"])["clause"] == "EXE-01"
    assert _props(one["test_crash"])["outcome"] == "CRASH"
    fp = json.loads(_props(one["test_undefined"])["fingerprint"])
    assert fp == {"Q-10": {"ids": [0, 1], "mode": "relaxed"}}
    # a passing call with a teardown error: one testcase, the error named
    assert [r[:2] for r in _result(one["test_pass_then_teardown_error"])] == [("error", "ERROR")]
    assert _props(one["test_pass_then_teardown_error"])["outcome"] == "ERROR"
    # a failing call with a teardown error: pytest writes two testcases, each its own
    both = [r[:2] for tc in cases["test_fail_then_teardown_error"] for r in _result(tc)]
    assert both == [("failure", "FAIL"), ("error", "ERROR")]
    suite = root.find("testsuite")
    assert suite is not None
    stack = suite.find("properties/property[@name='stack']")  # the stack under test, named
    assert stack is not None and stack.get("value", "").startswith(
        "tests.fakes:create_no_kernels: "), ET.tostring(suite)[:300]
    n = {tag: sum(1 for _ in root.iter(tag)) for tag in junit.RESULT_TAGS}
    assert (suite.get("errors"), suite.get("failures"), suite.get("skipped")) == (
        str(n["error"]), str(n["failure"]), str(n["skipped"]))
    for tc in root.iter("testcase"):
        for name, value in _props(tc).items():
            assert not value.startswith(("{'", "['")), f"{name}: a Python repr: {value}"
            if value and value[0] in "{[":
                json.loads(value)


def test_xunit2_has_no_testcase_properties_and_a_json_line(pytester: pytest.Pytester) -> None:
    root = _run(pytester, "xunit2", "-n", "0", "-k", "not crash and not timeout")
    cases = {name: tcs[0] for name, tcs in _cases(root).items()}
    assert cases and not any(tc.find("properties") is not None for tc in root.iter("testcase"))
    for name, tc in cases.items():
        out = tc.find("system-out")
        assert out is not None and out.text and out.text.startswith("mdlri: "), name
        line = json.loads(out.text.splitlines()[0].removeprefix("mdlri: "))
        assert list(line)[:4] == ["clause", "level", "area", "outcome"]
    assert json.loads(cases["test_fail"].find("system-out").text.split("\n")[0][7:])[
        "outcome"] == "FAIL"
    fp = json.loads(cases["test_undefined"].find("system-out").text.split("\n")[0][7:])
    assert fp["fingerprint"] == {"Q-10": {"ids": [0, 1], "mode": "relaxed"}}  # nested JSON
    assert _result(cases["test_error"])[0][:2] == ("error", "ERROR")
    assert "file" not in cases["test_pass"].attrib  # xunit2's attributes only


def _tree(body: str) -> ET.Element:
    return ET.fromstring(f'<testsuites><testsuite errors="0" failures="9" skipped="0" '
                         f'tests="1">{body}</testsuite></testsuites>')


def test_an_unknown_element_order_keeps_pytests_elements() -> None:
    root = _tree('<testcase classname="specs.test_a" name="test_x">'
                 '<failure message="m">tb</failure><failure message="m2">tb2</failure>'
                 '</testcase>')
    info = {"outcome": "ERROR", "clauses": ["CAP-01"], "level": "documented",
            "area": "a", "message": "x"}
    done = junit.rewrite_tree(root, {"specs/test_a.py::test_x": junit.Case([info])}, "xunit1")
    tc = root.find(".//testcase")
    assert done == 1 and [el.get("message") for el in tc.iter("failure")] == ["m", "m2"]
    assert _props(tc)["outcome"] == "ERROR"
    assert root.find("testsuite").get("failures") == "2"


def test_params_and_prefix_name_the_same_testcase_as_pytest() -> None:
    assert junit.case_key("specs/test_a.py::test_x[1-b]") == ("specs.test_a", "test_x[1-b]")
    assert junit.case_key("specs/test_a.py::C::test_y", "pre") == ("pre.specs.test_a.C",
                                                                    "test_y")


@pytest.mark.parametrize("value,text", [
    ("CAP-01", "CAP-01"), (True, "true"), (3, "3"), (None, "null"),
    ({"b": [1, 2], "a": "x"}, '{"a":"x","b":[1,2]}'), (["kernels"], '["kernels"]'),
])
def test_property_values_are_strings_or_json(value: object, text: str) -> None:
    assert junit.property_value(value) == text


def test_xml_safe_replaces_what_xml_cannot_hold() -> None:
    assert junit.xml_safe("a\x00b\x1bc\td") == "a#x00b#x1Bc\td"


def test_kind_of_each_outcome() -> None:
    kinds = {o: junit.kind_of({"outcome": o}) for o in
             ("PASS", "FAIL", "XPASS", "ERROR", "TIMEOUT", "CRASH", "UNSUPPORTED", "SKIP",
              "XFAIL", "CHANGED")}
    assert kinds == {"PASS": None, "FAIL": "failure", "XPASS": "failure", "ERROR": "error",
                     "TIMEOUT": "error", "CRASH": "error", "UNSUPPORTED": "skipped",
                     "SKIP": "skipped", "XFAIL": "skipped", "CHANGED": "skipped"}
    assert junit.kind_of({"outcome": "CHANGED", "gated": True}) == "failure"
    assert junit.kind_of({"outcome": "UNSUPPORTED", "required": ["kernels"]}) == "failure"


def test_missing_or_broken_file_is_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "junit.xml"
    path.write_text("<testsuites><testsuite>")  # cut short
    rw = junit.JUnitRewriter(path, "xunit1", None)
    rw.cases["a.py::t"] = junit.Case([{"outcome": "PASS"}])
    rw.pytest_sessionfinish(None)  # type: ignore[arg-type]
    assert path.read_text() == "<testsuites><testsuite>"
