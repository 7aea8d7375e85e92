"""The end of a run: the summary and its artefacts (:mod:`.artefacts`), unused expectations
as an input error, the exit status mapped from the verdict, and the console's summary."""

from __future__ import annotations

from typing import Any

import pytest

from . import isolation, keys, rundir
from .fleet import shard
from .verdicts import verdict
from .verdicts.summary import (build_summary, fails_gate, format_table, merged_stack, probe_lines,
                               probe_summary)


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Write the report artefacts; unused expectations are an input error (exit 2 via CLI)."""
    state = session.config.stash.get(keys.state_key, None)
    if state is None:
        return
    from .verdicts.artefacts import write_all  # jinja2 and the templates: only when a run ends
    state.ended = state.write_error or {
        pytest.ExitCode.INTERRUPTED: "interrupted",
        pytest.ExitCode.INTERNAL_ERROR: "internal error"}.get(exitstatus, "complete")
    if state.jsonl is None and not state.results:
        return  # no spec was collected: not a conformance run, nothing to write
    if exitstatus == pytest.ExitCode.USAGE_ERROR and not state.results:
        state.jsonl.close()  # e.g. a bad -k expression, found after collection: no run
        state.jsonl = None
        rundir.discard(state.report_dir)
        return
    cited = {c for row in state.results for c in row["clauses"]}
    probe = probe_summary(state.probes) if state.probes else None
    state.summary = build_summary(state.results, cited, state.backend_name,
                                  collected=state.collected, ended=state.ended,
                                  selection=_selection(session.config), probe=probe,
                                  stack=merged_stack(state.stacks.values()))
    # how the specs were ordered (the seed that reproduces a random order), before the
    # artefacts are written so summary.md / index.html carry it too
    state.summary["order"] = isolation.order_info(session.config)
    state.summary["gate_mode"] = state.gate
    if probe is not None:
        state.summary["probe"] = probe
        rundir.write_json(state.report_dir / "probe.json", probe)
    write_all(state.report_dir, state.results, state.summary)
    exp = state.expectations
    opt = session.config.option
    complete = not any(getattr(opt, k, None) for k in ("keyword", "markexpr", "lf", "deselect")) \
        and not shard.active(session.config)
    if exp is not None and complete and state.results and exitstatus in (0, 1):
        unused = exp.unused(state.backend_version)
        if unused:
            state.expectation_errors = [f"{exp.path}:{e.line}: unused expectation for {e.id!r}"
                                        for e in unused]
            session.exitstatus = pytest.ExitCode.USAGE_ERROR
    final = state.summary["verdict"]["verdict"]
    if session.exitstatus == pytest.ExitCode.OK and final != verdict.PASS:
        # plain pytest keeps its own exit codes; mdlri-conformance maps the verdict (conformance/cli)
        session.exitstatus = {verdict.NOTHING_TESTED: pytest.ExitCode.NO_TESTS_COLLECTED,
                              verdict.INCOMPLETE: pytest.ExitCode.INTERRUPTED,
                              }.get(final, pytest.ExitCode.TESTS_FAILED)
    state.finish_status = True  # run.json's end record: written last (write_guard)


def _selection(config: pytest.Config) -> str:
    """The -k / -m expressions that selected the specs ('' when none)."""
    parts = [f"{flag} {val!r}" for flag, val in (("-k", config.getoption("keyword", "")),
                                                 ("-m", config.getoption("markexpr", "")))
             if val]
    if shard.selection_text(config):
        parts.append(shard.selection_text(config))
    return ", ".join(parts)


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    state = config.stash.get(keys.state_key, None)
    if state is None or not state.summary:
        return
    tr = terminalreporter
    tr.section("Model RI conformance")
    for line in format_table(state.summary):
        tr.write_line(line)
    bad = [r for r in state.results if fails_gate(r)]
    for r in bad[:20]:
        what = (f"UNSUPPORTED on required capability {', '.join(r['required'])}"
                if r.get("required") else r["outcome"])
        tr.write_line(_shorten(f"  {what:<8} {r['nodeid']}", 240 - len(r["message"]) - 2)
                      + f": {r['message']}"[:240])
    if len(bad) > 20:
        tr.write_line(f"  ... and {len(bad) - 20} more (divergences.json)")
    prefix = "mdlri-conformance: error:" if keys.under_cli(config) else "ERROR:"
    for err in state.expectation_errors:
        tr.write_line(f"{prefix} {err}", red=True)
    for line in probe_lines(state.summary.get("probe")):
        tr.write_line(line)
    if (state.report_dir / "summary.json").is_file():
        tr.write_line(f"results: {state.report_dir} (index.html, summary.md, divergences.json)")
    else:  # a full disk (write_guard)
        tr.write_line(f"results: {state.report_dir} (results.jsonl only: no room for the "
                      "reports; mdlri-conformance report DIR writes them)")


def _shorten(text: str, width: int) -> str:
    """``text`` cut in the middle to ``width`` (at least 40) characters: a message's end (e.g.
    the crash dump's file name) matters more than the middle of a node id."""
    width = max(width, 40)
    if len(text) <= width:
        return text
    half = (width - 3) // 2
    return text[:half] + "..." + text[len(text) - (width - 3 - half):]
