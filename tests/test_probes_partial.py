"""The harness, the runner and the scenarios on a partial runtime (tests.partial_runtime): a
read-back without data movement or kernel execution is UNSUPPORTED, the runner matches
listed tasks without GetParams or data movement and still fails a control-plane divergence, a
207000 / 207019 inside a scenario or a check is UNSUPPORTED, and the state machine goes on
without refused steps yet fails a real bug beside them. The probes themselves and the whole
suite on the stub-like runtime are tests/test_probes.py.
"""

from __future__ import annotations

from typing import Any, Iterator

import pytest

from mdlri_conformance.backends.contract import NOT_SUPPORTED_CODES, Err
from mdlri_conformance.conformance import expect
from mdlri_conformance.conformance.engine import divergence, oracle, runner
from mdlri_conformance.conformance.engine.graphs import Case, Launch
from mdlri_conformance.conformance.engine.machine import run
from mdlri_conformance.conformance.engine.steps import Execute, SetKernel, Sync, Update
from mdlri_conformance.conformance.framework import outcomes
from mdlri_conformance.conformance.harness import Dev
from mdlri_conformance.conformance.scenarios import fallback
from tests import partial_runtime as pr
from tests.probe_helpers import closing, live, run_probes  # noqa: F401 (closing: a fixture)


def test_readbacks_are_unsupported_without_data_movement(closing: list[Any]) -> None:
    b = pr.create_no_data()
    closing.append(b)
    run_probes(b)
    d = Dev(b)
    try:
        buf = d.buffer([1, 2, 3])
        word = d.buffer64(7)
        with pytest.raises(outcomes.Unsupported, match="needs data movement: probe: memcpy"):
            d.read(buf)
        with pytest.raises(outcomes.Unsupported, match="needs data movement"):
            d.read64(word)
        with pytest.raises(outcomes.Unsupported, match="needs data movement"):
            d.read_bytes(buf.addr, 4)
    finally:
        d.close()


def test_readbacks_after_a_kernel_need_kernel_execution(closing: list[Any]) -> None:
    b = pr.create_no_kernels()
    closing.append(b)
    run_probes(b)
    d = Dev(b)
    try:
        buf = d.buffer([1, 2, 3])
        assert d.read(buf).tolist() == [1, 2, 3]  # no kernel used: data moves, judged
        d.func("fallback_main")
        with pytest.raises(outcomes.Unsupported, match="after a kernel launch needs kernel "
                                                     "execution: probe: kernel fallback_main"):
            d.read(buf)
    finally:
        d.close()


def _seed_case() -> Case:
    x, sent = list(range(1, 9)), [-1] * 8
    return Case(streams=1, buffers=[x, sent, sent, list(range(21, 29))], words=[], events=0,
                ops=[Launch(0, "fallback_main", {"input": 0, "output": 1}),
                     Launch(0, "fallback_postprocess", {"input": 1, "output": 2})],
                plan=[Execute(1), Sync(5000), SetKernel(0, {"input": 3, "output": 1}),
                      Update(), Execute(1), Sync(5000)], name="seed")


def test_runner_lists_by_order_and_type_when_get_params_is_missing(closing: list[Any]) -> None:
    b = pr.create(gaps={"data", "update"})
    closing.append(b)
    run_probes(b)
    case = _seed_case()
    obs = runner.replay(b, case)
    exp = oracle.expected(case)
    listing = [o for o in obs if o.phase == "listing" and o.index == -1]
    assert listing == [o for o in exp if o.phase == "listing" and o.index == -1]
    assert obs.unsupported == "aclmdlRITaskSetParams returned 207000 (RT_FEATURE_NOT_SUPPORT)"
    div = divergence.compare(case, b.name, exp, obs,
                             keep=divergence.judgeable(b.capabilities, case))
    assert div is not None and div.unsupported.startswith("aclmdlRITaskSetParams")
    # the buffers are not judged without data movement; the return codes are
    kept = [o for o in obs if divergence.judgeable(b.capabilities, case)(o)]
    assert not any(o.phase == "sync" for o in kept)
    assert any(o.phase == "step" for o in kept)


def test_runner_matches_kernels_by_name_without_data_movement(closing: list[Any]) -> None:
    b = pr.create_no_data()
    closing.append(b)
    run_probes(b)
    case = _seed_case()
    obs = runner.replay(b, case)
    keep = divergence.judgeable(b.capabilities, case)
    assert obs.unsupported_at is None
    assert divergence.compare(case, b.name, oracle.expected(case), obs, keep=keep) is None


class _ExecuteRefused(pr.PartialSim):
    """The stub-like runtime with a real bug besides: ExecuteAsync of a READY model 107000."""

    def execute_async(self, model: Any, stream: Any) -> int:
        return int(Err.RT_PARAM_INVALID)


def test_runner_still_fails_a_control_plane_divergence(closing: list[Any]) -> None:
    """A wrong return code before the first 207000 is a divergence, not UNSUPPORTED."""
    b = _ExecuteRefused({"data", "kernels", "update"})
    closing.append(b)
    run_probes(b)
    case = _seed_case()
    obs = runner.replay(b, case)
    div = divergence.compare(case, b.name, oracle.expected(case), obs,
                         keep=divergence.judgeable(b.capabilities, case))
    assert div is not None and not div.unsupported
    assert div.difference.expected.key == ("step", 0, "rc")
    assert (div.difference.expected.value, div.difference.observed.value) == (
        [Err.SUCCESS], [Err.RT_PARAM_INVALID])


def test_a_207000_inside_a_scenario_is_unsupported(closing: list[Any]) -> None:
    b = pr.create_no_update()
    closing.append(b)
    lines: list[str] = []
    with pytest.raises(outcomes.Unsupported, match="aclmdlRITaskGetParams returned error code "
                                                 "207000"):
        fallback.run_fallback(b, lines.append)
    assert lines[-1] == "[ERROR]  Run the 0_model_task_fallback sample failed."
    assert live(b) == (0, 0, 0, 0)


def test_not_supported_codes_are_unsupported_in_every_check() -> None:
    for code in NOT_SUPPORTED_CODES:
        with pytest.raises(outcomes.Unsupported):
            expect.ok(code, "call")
        with pytest.raises(outcomes.Unsupported):
            expect.rc(code, (Err.SUCCESS, Err.RT_PARAM_INVALID), "call")
        expect.rc(code, code, "call")  # expected: an ordinary check
    assert not expect.not_supported([207000])


@pytest.fixture
def no_shrinking() -> Iterator[None]:
    """Hypothesis without the shrink phase (a failure is reported as found: fast)."""
    from hypothesis import Phase, settings
    previous = settings.get_current_profile_name()
    settings.register_profile("mdlri-probe-tests", parent=settings.get_profile(previous),
                              phases=[Phase.explicit, Phase.reuse, Phase.generate],
                              max_examples=30, database=None, derandomize=True)
    settings.load_profile("mdlri-probe-tests")
    yield
    settings.load_profile(previous)


def test_unsupported_steps_alone_make_the_state_machine_unsupported(
        closing: list[Any], no_shrinking: None) -> None:
    """SetParams answering 207019 (not caught by probing): the machine goes on without it
    and reports UNSUPPORTED, not ERROR (row 13 of the real-runtime findings)."""
    from mdlri_conformance.conformance.specs import test_stateful as machine
    b = pr.create_no_update_op()
    closing.append(b)
    with pytest.raises(outcomes.Unsupported, match="207019"):
        machine._run(machine.Machine, b, 0)


def test_a_real_failure_beside_unsupported_steps_still_fails(
        closing: list[Any], no_shrinking: None) -> None:
    """The same runtime with a real bug (a disabled task still runs, DIS-01) is FAIL."""
    from mdlri_conformance.conformance.specs import test_stateful as machine
    b = pr.create_no_update_op_running_disabled_tasks()
    closing.append(b)
    machine.Machine.backend = b
    with pytest.raises(outcomes.ConformanceFailure, match="after sync"):
        # one batch with all the profile's examples, and programs long enough to reach
        # Disable, a refused Update, Execute and Sync in one example
        run(machine.Machine, 50, 0, 1)
