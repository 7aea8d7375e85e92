"""Differential runs: the same generated graphs on two backends (``--against B``).

Collected only when the run has ``--against`` (``mdlri-conformance run --backend A
--against B``). Each generated case is replayed on both backends through
:func:`conformance.engine.runner.replay`; the first differing observation is a divergence,
classified as a difference in return code, buffer contents, listing, seq ids or timing (a
sync that expired on one side only), recorded with the shrunk case, both observations and
the commands that replay it on each backend. Neither side is taken as right: the oracle-based
specs say which one conforms. Only what both backends can show is compared
(:func:`conformance.engine.divergence.judgeable` over the capabilities both kept after the
probes), and a difference at or after a call that answered 207000 / 207019 on either side
is UNSUPPORTED.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mdlri_conformance.backends.contract import Cap, Err
from mdlri_conformance.conformance import expect
from mdlri_conformance.conformance.engine import (case_facts, divergence, graphs, runner,
                                                  strategies, strategies_copies,
                                                  strategies_models)
from mdlri_conformance.conformance.engine.observe import Observation
from mdlri_conformance.conformance.framework import outcomes

pytestmark = pytest.mark.requires(
    Cap.CAPTURE, Cap.CROSS_STREAM, Cap.KERNELS, Cap.LISTING, Cap.TASK_TYPE, Cap.SEQ_ID,
    Cap.GET_PARAMS, Cap.SET_PARAMS, Cap.DISABLE, Cap.UPDATE, Cap.VALUE_TASKS, Cap.SYNC_TIMEOUT)


def classify(a: Observation | None, b: Observation | None) -> str:
    """The kind of a difference: return code, buffer contents, listing, seq ids or timing."""
    o = a or b
    if o is None:
        return "observations"
    if o.phase == "listing":
        return "seq ids" if o.what.endswith("seq ids") else "listing"
    if o.phase == "sync":
        return "buffer contents"
    values = [getattr(a, "value", None), getattr(b, "value", None)]
    if any(v == Err.RT_STREAM_SYNC_TIMEOUT for v in values):
        return "timing"
    return "return code"


def _differ(backend: Any, against: Any, config: pytest.Config, case: graphs.Case) -> None:
    __tracebackhide__ = True
    if case_facts.uses_pageable(case) and not all(
            Cap.PAGEABLE_DETECTION in x.capabilities for x in (backend, against)):
        raise outcomes.Unsupported("differential case: a pageable copy is refused only where "
                                   "the runtime tells pageable memory (pageable_detection)")
    a, b = runner.replay(backend, case), runner.replay(against, case)
    keep = divergence.judgeable(set(backend.capabilities) & set(against.capabilities), case)
    div = divergence.compare(case, backend.name, a, b, keep=keep)
    if div is None:
        return
    back = divergence.compare(case, against.name, b, a, keep=keep)
    why = div.unsupported or (back.unsupported if back else "")
    if why:
        raise outcomes.Unsupported(f"differential case: {why}")
    d = div.difference
    kind = classify(d.expected, d.observed)
    path = divergence.save_case(case, config.getoption("--report-dir", None))
    names = (config.getoption("--backend"), config.getoption("--against"))
    replay = " ; ".join(f"mdlri-conformance replay {path} --backend {n}" for n in names)
    where = d.expected or d.observed
    label = f"{where.phase}[{where.index}] {where.what}" if where else "observation"
    expect.diverge(f"differential ({kind}) {label}, {names[0]} vs {names[1]}",
                   d.expected.value if d.expected else "nothing",
                   d.observed.value if d.observed else "nothing",
                   case=case.to_dict(), replay=replay,
                   extra=f"{names[0]} vs {names[1]} differ ({kind}) at {d.describe()}\n"
                         f"  case: {case.to_json(indent=None)}\n  replay: {replay}")


@pytest.mark.clause("CAP-01", "XS-01", "SETP-01", "DIS-01", "UPD-05", "EXE-02")
@given(case=strategies.positive_cases())
def test_differential_positive(backend: Any, against_backend: Any, pytestconfig: pytest.Config,
                               case: graphs.Case) -> None:
    """Both backends show the same return codes, buffers, listing and seq-id properties."""
    _differ(backend, against_backend, pytestconfig, case)


@pytest.mark.clause("SETP-02", "SETP-03", "SETP-10", "DIS-06", "TMO-02", "EXE-07")
@given(case=strategies.negative_cases())
def test_differential_negative(backend: Any, against_backend: Any, pytestconfig: pytest.Config,
                               case: graphs.Case) -> None:
    """Both backends give the same error codes and FAULT behaviour on the negative plans."""
    _differ(backend, against_backend, pytestconfig, case)


@pytest.mark.clause("CAP-07", "EXE-01", "EXE-02", "UPD-05", "CAP-19", "MODE-14")
@given(case=st.one_of(strategies_models.shared_models(), strategies_copies.copy_cases(),
                      strategies_copies.pageable_copies()))
def test_differential_models_and_copies(backend: Any, against_backend: Any,
                                        pytestconfig: pytest.Config, case: graphs.Case) -> None:
    """Both backends agree on several models sharing buffers (captured in turn or together,
    executed in a drawn order) and on copies of every kind, pageable ones rejected."""
    _differ(backend, against_backend, pytestconfig, case)
