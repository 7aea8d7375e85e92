"""The deep campaign's per-example machinery: behaviours from coverage.py's C tracer
(power/fuzz_coverage.py) and lean observations while fuzzing (power/fuzz_observations.py)."""

from __future__ import annotations

import threading
from pathlib import Path

import hypothesis.core as core
import hypothesis.strategies._internal.utils as hyp_utils
from hypothesis.vendor.pretty import RepresentationPrinter

from mdlri_conformance.conformance.framework.power import fuzz_coverage, fuzz_observations


def _branchy(x: int) -> int:
    if x > 0:
        return 1
    return 2


HERE = [str(Path(__file__).resolve().parent)]


def test_arcs_are_the_examples_own_and_tell_branches_apart() -> None:
    col = fuzz_coverage.ArcCollector(HERE)
    with col:
        _branchy(1)
    positive = set(col.branches)
    with col:
        _branchy(-1)
    negative = set(col.branches)
    with col:
        _branchy(1)
    assert col.branches == positive, "the same example must give the same behaviours"
    assert positive and negative and positive != negative
    here = {name for name, _ in positive}
    assert __file__ in here, here
    with col:
        pass
    assert __file__ not in {name for name, _ in col.branches}, "arcs of an earlier use leak"


def test_threads_started_in_an_example_are_not_traced_and_the_hook_is_kept() -> None:
    col = fuzz_coverage.ArcCollector(HERE)
    before = threading.gettrace()
    with col:
        t = threading.Thread(target=_branchy, args=(1,))
        t.start()
        t.join()
        assert threading.gettrace() is before
    assert threading.gettrace() is before


def test_the_default_traces_the_suite_and_the_backend_wherever_installed() -> None:
    """The suite's own folders are named, so an installed suite (in site-packages, which
    coverage.py's default leaves out) still gives behaviours: the simulator's arcs are
    recorded, this test file's are not."""
    import mdlri_conformance.backends.sim as sim
    col = fuzz_coverage.ArcCollector()
    backend = sim.create()
    try:
        with col:
            _branchy(1)
            rc, stream = backend.create_stream()
            backend.synchronize_stream(stream)
    finally:
        backend.close()
    files = {name for name, _ in col.branches}
    sim_dir = str(Path(sim.__file__).resolve().parent)
    assert rc == 0 and any(f.startswith(sim_dir) for f in files), files
    assert __file__ not in files


def test_a_backend_from_outside_the_suite_is_traced_too() -> None:
    class Outside:
        pass
    Outside.__module__ = __name__  # a backend class defined in this tests folder
    dirs = fuzz_coverage.suite_sources(Outside())
    assert HERE[0] in dirs and len(dirs) == 4
    assert len(fuzz_coverage.suite_sources(None)) == 3


def test_lean_renders_nothing_inside_and_restores_after() -> None:
    printer, jsonable = core.RepresentationPrinter, hyp_utils.to_jsonable
    with fuzz_observations.lean():
        p = core.RepresentationPrinter()
        p.repr_call("f", (), {"case": list(range(5))})
        assert p.getvalue() == fuzz_observations.NOT_RENDERED
        assert hyp_utils.to_jsonable([1, 2], avoid_realization=False) == fuzz_observations.NOT_RENDERED
    assert core.RepresentationPrinter is printer is RepresentationPrinter
    assert hyp_utils.to_jsonable is jsonable and jsonable([1, 2], avoid_realization=False) == [1, 2]


def test_lean_restores_after_an_error() -> None:
    printer = core.RepresentationPrinter
    try:
        with fuzz_observations.lean():
            raise KeyError("x")
    except KeyError:
        pass
    assert core.RepresentationPrinter is printer


def test_crossover_weights_are_hypofuzz_own() -> None:
    import random
    from collections import Counter

    from hypofuzz.mutator import CrossOverMutator

    from mdlri_conformance.conformance.framework.power import fuzz_weights

    rng = random.Random(7)
    counts: Counter[object] = Counter({("f", i): rng.randint(1, 50) for i in range(300)})
    prints = {frozenset(rng.sample(sorted(counts), rng.randint(1, 40))): i for i in range(60)}
    prints[frozenset()] = -1

    class Corpus:
        behavior_counts = counts
        fingerprints = prints

    original = CrossOverMutator.__dict__["_get_weights"]
    if original is fuzz_weights.crossover_weights:  # installed earlier in this process
        import importlib

        import hypofuzz.mutator
        original = importlib.reload(hypofuzz.mutator).CrossOverMutator._get_weights
    m = CrossOverMutator(Corpus(), random.Random(0))  # type: ignore[arg-type]
    assert fuzz_weights.crossover_weights(m) == original(m)
    assert len(original(m)) == len(prints)


def _hypofuzz_weights() -> object:
    """HypoFuzz's own ``CrossOverMutator._get_weights``, even after ``install``."""
    from hypofuzz.mutator import CrossOverMutator

    from mdlri_conformance.conformance.framework.power import fuzz_weights
    original = CrossOverMutator.__dict__["_get_weights"]
    if original is fuzz_weights.crossover_weights:
        import importlib

        import hypofuzz.mutator
        original = importlib.reload(hypofuzz.mutator).CrossOverMutator._get_weights
    return original


from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@st.composite
def _corpora(draw: st.DrawFn) -> tuple[dict[object, int], list[frozenset[object]]]:
    """Behaviour counts over few or many levels (HypoFuzz resets them all to 1 on a new
    fingerprint, then adds 1 per example) and fingerprints over those behaviours, nested,
    overlapping or single."""
    n = draw(st.integers(1, 60))
    top = draw(st.sampled_from([1, 2, 3, 8, 1000]))
    counts = {("f", i): draw(st.integers(1, top)) for i in range(n)}
    names = sorted(counts)
    prints = draw(st.lists(st.frozensets(st.sampled_from(names), max_size=n), max_size=30))
    return counts, prints


@settings(max_examples=300, deadline=None)
@given(_corpora())
def test_rarest_counts_by_levels_are_the_walks(corpus: tuple[dict[object, int],
                                                            list[frozenset[object]]]) -> None:
    import random
    from collections import Counter

    from hypofuzz.mutator import CrossOverMutator

    from mdlri_conformance.conformance.framework.power import fuzz_weights
    counts, prints = corpus
    expected = [min(counts[b] for b in fp) if fp else 0 for fp in prints]
    assert fuzz_weights._rarest_counts(counts, prints) == expected
    if not prints:
        return

    class Corpus:
        behavior_counts = Counter(counts)
        fingerprints = dict.fromkeys(prints)

    m = CrossOverMutator(Corpus(), random.Random(0))  # type: ignore[arg-type]
    assert fuzz_weights.crossover_weights(m) == _hypofuzz_weights()(m)  # type: ignore[operator]

