"""The per-spec check of process-global runtime state (conformance.global_state; MODE-03,
MODE-05, MODE-09, MODE-11): what it reads, that a planted leak shows in the spec's row and
in the summary, and that "not checked" never reads as "unchanged"."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

import pytest

from mdlri_conformance.backends.contract import CaptureMode, Err
from mdlri_conformance.backends.sim import SimBackend
from mdlri_conformance.conformance.framework import global_state as gs
from mdlri_conformance.conformance.framework.verdicts.summary import build_summary, format_table

from .emulator import skip_unless_emulator
from .fakes import NullBackend


#: HOME as this process started: pytester points HOME at its temporary directory, and the
#: emulator is built into and loaded from a cache under HOME; loading a second copy of it from
#: another path into this process breaks later in-process users of the first
_HOME = os.environ.get("HOME", "")


def _emulator_or_skip(monkeypatch: pytest.MonkeyPatch | None = None) -> None:
    if monkeypatch is not None and _HOME:
        monkeypatch.setenv("HOME", _HOME)
    skip_unless_emulator()


def _wrong_thread_end(b: Any, mode: int) -> None:
    """Begin a capture here, end it from another thread (107038, CAP-14)."""
    rc, s = b.create_stream()
    assert rc == 0 and b.capture_begin(s, mode) == 0
    out: list[Any] = []

    def end() -> None:
        b.set_device(0)
        out.append(b.capture_end(s))

    t = threading.Thread(target=end)
    t.start()
    t.join(10)
    assert out and out[0][0] == Err.RT_STREAM_CAPTURE_WRONG_THREAD, out
    b.destroy_stream(s)


# -- what a reading shows ------------------------------------------------------------------


def test_a_fresh_sim_reads_every_aspect_at_its_initial_value() -> None:
    b = SimBackend()
    r = gs.read(b)
    assert r.not_checked == {}
    assert r.values["thread_capture_mode"] == gs.CLEAR
    assert r.values["context_capture_mode"] == gs.CLEAR
    assert r.values["exchange_mode"] == "GLOBAL"  # MODE-05 initial value
    assert r.values["device"] == 0 and r.values["open_captures"] == 0
    assert gs.read(b).values == r.values  # the check itself changes nothing
    assert b.live_counts().models == 0 and b.live_counts().streams == 0


def test_an_exchange_mode_left_behind_is_a_change_and_is_restored() -> None:
    b = SimBackend()
    baseline = gs.read(b)
    b.capture_thread_exchange_mode(CaptureMode.RELAXED)
    after = gs.read(b)
    assert gs.changes(baseline, after) == {
        "exchange_mode": {"before": "GLOBAL", "after": "RELAXED"}}
    assert gs.restore(b, baseline, after) == ["exchange_mode"]
    assert b.capture_thread_exchange_mode(CaptureMode.GLOBAL) == (0, CaptureMode.GLOBAL)


@pytest.mark.parametrize("mode", [CaptureMode.GLOBAL, CaptureMode.THREAD_LOCAL],
                         ids=lambda m: m.name)
def test_a_leaked_thread_capture_mode_is_seen(mode: CaptureMode) -> None:
    """The real runtime's wrong-thread CaptureEnd leak (findings row 3), as the sim fault:
    the beginning thread keeps the mode; one RELAXED-capture probe shows GLOBAL and
    THREAD_LOCAL alike, and nothing can put it back."""
    b = SimBackend(faults=["wrong-thread-end-leaks-mode"])
    baseline = gs.read(b)
    _wrong_thread_end(b, mode)
    after = gs.read(b)
    changed = gs.changes(baseline, after)
    assert list(changed) == ["thread_capture_mode"]
    assert changed["thread_capture_mode"]["after"].startswith("restricted: 107030")
    assert gs.restore(b, baseline, after) == []
    assert gs.changes(after, gs.read(b)) == {}  # reported once, against the spec that did it


def test_without_the_fault_a_wrong_thread_end_leaves_nothing() -> None:
    b = SimBackend()
    baseline = gs.read(b)
    _wrong_thread_end(b, CaptureMode.GLOBAL)
    assert gs.changes(baseline, gs.read(b)) == {}


def test_a_global_capture_left_open_in_another_thread_shows_in_the_context_mode() -> None:
    b = SimBackend()
    baseline = gs.read(b)
    ready = threading.Event()

    def capture() -> None:
        b.set_device(0)
        rc, s = b.create_stream()
        assert b.capture_begin(s, CaptureMode.GLOBAL) == 0
        ready.set()

    threading.Thread(target=capture).start()
    assert ready.wait(10)
    changed = gs.changes(baseline, gs.read(b))
    assert set(changed) == {"context_capture_mode", "open_captures"}
    assert changed["open_captures"] == {"before": 0, "after": 1}


class _TwoDevices(SimBackend):
    """The sim with a second device id for the calling thread (get/set only)."""

    _dev = 0

    def set_device(self, device_id: int) -> int:
        if device_id not in (0, 1):
            return int(Err.RT_INVALID_DEVICEID)
        self._dev = device_id
        return 0

    def get_device(self, *, null_out: bool = False) -> tuple[int, Any]:
        return 0, self._dev


def test_a_changed_device_is_seen_and_restored() -> None:
    b = _TwoDevices()
    baseline = gs.read(b)
    assert b.set_device(1) == 0
    after = gs.read(b)
    assert gs.changes(baseline, after) == {"device": {"before": 0, "after": 1}}
    assert gs.restore(b, baseline, after) == ["device"]
    assert after.values["device"] == 0 and gs.read(b).values["device"] == 0


class _NoHostState(SimBackend):
    get_device = None  # type: ignore[assignment]
    get_current_context = None  # type: ignore[assignment]


def test_what_a_backend_cannot_show_is_not_checked_not_unchanged() -> None:
    r = gs.read(_NoHostState())
    assert set(r.not_checked) == {"device", "context"}
    assert "HostStateBackend" in r.not_checked["device"]
    assert "device" not in r.values
    odd = gs.read(NullBackend())  # answers 0 to everything: nothing is readable
    assert odd.values == {} and set(odd.not_checked) == set(gs.ASPECTS)


def test_the_summary_tells_not_checked_from_none() -> None:
    base = {"outcome": "PASS", "area": "x", "clauses": []}
    unchecked = build_summary([dict(base, nodeid="a")], [], "sim")
    clean = build_summary([dict(base, nodeid="a", state={"changed": {}})], [], "sim")
    partial = build_summary([dict(base, nodeid="a", state={
        "changed": {"exchange_mode": {"before": "GLOBAL", "after": "RELAXED"}},
        "not_checked": {"device": "no get_device"}})], [], "sim")
    assert unchecked["state_changing_specs"] is None
    assert clean["state_changing_specs"] == 0
    assert partial["state_changing_specs"] == 1
    assert partial["state"]["changed"] == {"exchange_mode": 1}
    assert partial["state"]["not_checked"] == {"device": "no get_device"}
    lines = {s: "\n".join(format_table(x)) for s, x in
             (("unchecked", unchecked), ("clean", clean), ("partial", partial))}
    assert "process-global state: not checked" in lines["unchecked"]
    assert "no spec changed it (1 checked)" in lines["clean"]
    assert "state-changing specs: 1" in lines["partial"]
    assert "not checked on this backend: device" in lines["partial"]


# -- the check in a run: rows and summary ---------------------------------------------------

SPECS = '''
import threading
import pytest
from mdlri_conformance.backends.contract import CaptureMode

@pytest.mark.clause("MODE-05")
def test_a_leaves_exchange_relaxed(backend):
    backend.capture_thread_exchange_mode(CaptureMode.RELAXED)

@pytest.mark.clause("MODE-05")
def test_b_sees_the_exchange_mode_restored(backend):
    assert backend.capture_thread_exchange_mode(CaptureMode.GLOBAL) == (0, CaptureMode.GLOBAL)

@pytest.mark.clause("CAP-14")
def test_c_wrong_thread_end(backend):
    rc, s = backend.create_stream()
    backend.capture_begin(s, CaptureMode.GLOBAL)
    t = threading.Thread(target=lambda: (backend.set_device(0), backend.capture_end(s)))
    t.start(); t.join()
    backend.destroy_stream(s)

@pytest.mark.clause("MODE-03")
def test_d_after(backend):
    pass
'''


def _rows(out: Path) -> dict[str, dict[str, Any]]:
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    return {r["nodeid"].split("::")[-1]: r for r in rows}


def test_a_planted_leak_is_reported_in_the_row_and_the_summary(pytester: pytest.Pytester
                                                                ) -> None:
    pytester.makepyfile(test_state=SPECS)
    out = pytester.path / "out"
    res = pytester.runpytest("-p", "mdlri_conformance.conformance.framework.plugin", "-p", "no:randomly",
                             "--fault", "wrong-thread-end-leaks-mode", "--report-dir", str(out))
    rows = _rows(out)
    assert [r["outcome"] for r in rows.values()] == ["PASS"] * 4  # reported, not gated
    a, b, c, d = (rows[n]["state"] for n in sorted(rows))
    assert a["changed"] == {"exchange_mode": {"before": "GLOBAL", "after": "RELAXED"}}
    assert a["restored"] == ["exchange_mode"] and a["baseline"]["exchange_mode"] == "GLOBAL"
    assert b["changed"] == {}
    assert list(c["changed"]) == ["thread_capture_mode"]
    assert d["changed"] == {}  # the leak is the spec's that caused it, not every later one's
    summary = json.loads((out / "summary.json").read_text())
    assert summary["state_changing_specs"] == 2
    assert summary["state"]["changed"] == {"exchange_mode": 1, "thread_capture_mode": 1}
    assert summary["gate"] == "pass"
    res.stdout.fnmatch_lines(["*state-changing specs: 2*exchange_mode 1, thread_capture_mode 1*"])
    html = (out / "index.html").read_text()
    assert "thread_capture_mode clear -&gt; restricted: 107030" in html


def test_no_state_check_leaves_rows_without_state(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_state=SPECS)
    out = pytester.path / "out"
    res = pytester.runpytest("-p", "mdlri_conformance.conformance.framework.plugin", "-p", "no:randomly",
                             "--no-state-check", "-k", "test_d", "--report-dir", str(out))
    assert "state" not in _rows(out)["test_d_after"]
    assert json.loads((out / "summary.json").read_text())["state_changing_specs"] is None
    res.stdout.fnmatch_lines(["*process-global state: not checked*"])


def test_emulator_leak_is_reported_and_own_process_keeps_it_out(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    """acl + emulator with the real runtime's leak: a test-only spec that does a wrong-thread
    end in the run's process is reported; the catalog's own_process spec doing the same
    reports it from its own process, and a MODE-03 spec after it is unaffected."""
    _emulator_or_skip(monkeypatch)
    pytester.makepyfile(test_state=SPECS)
    specs = Path(__file__).resolve().parents[1] / "conformance" / "specs"
    out = pytester.path / "out"
    res = pytester.runpytest_subprocess(
        "-p", "mdlri_conformance.conformance.framework.plugin", "-p", "no:randomly", "--backend", "acl",
        "--acl-lib", "emulator", "--fault", "wrong-thread-end-leaks-mode",
        "--report-dir", str(out),
        f"{specs}/test_capture.py::test_cap14_end_from_wrong_thread",
        f"{specs}/test_capture_modes.py::test_mode03_thread_local_blocks_only_capturing_thread",
        "test_state.py::test_c_wrong_thread_end",  # last: it leaks this process's main thread
        timeout=240)
    rows = _rows(out)
    assert list(rows["test_c_wrong_thread_end"]["state"]["changed"]) == ["thread_capture_mode"]
    for mode in ("GLOBAL", "THREAD_LOCAL"):
        row = rows[f"test_cap14_end_from_wrong_thread[{mode}]"]
        assert row["own_process"] is True and row["outcome"] == "PASS"
        assert list(row["state"]["changed"]) == ["thread_capture_mode"]
    mode03 = rows["test_mode03_thread_local_blocks_only_capturing_thread"]
    assert "own_process" not in mode03
    summary = json.loads((out / "summary.json").read_text())
    assert summary["state_changing_specs"] == 3
    assert "open_captures" in summary["state"]["not_checked"]  # the emulator counts none
    assert res.ret == 0, res.stdout.str()[-2000:]
