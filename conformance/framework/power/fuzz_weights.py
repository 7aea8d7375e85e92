"""HypoFuzz's crossover weights: the same numbers, found by set inclusion over count levels
instead of a walk over every behaviour of every fingerprint.

Each time HypoFuzz splices two corpus examples (``CrossOverMutator``), it weighs every
fingerprint of the corpus by one over the count of its rarest behaviour. A fingerprint holds
thousands of behaviours (an example's line arcs, :mod:`.fuzz_coverage`), and on a simulator
almost every example has a fingerprint of its own, so the corpus grows through a campaign:
reading every count of every fingerprint took a quarter of a campaign's time after its third
minute, and more after.

The rarest count of a fingerprint ``F`` is the highest count level ``v`` (a value some
behaviour's count takes) such that every behaviour of ``F`` has a count of at least ``v``,
that is ``F <= {b : count(b) >= v}``. Those level sets are nested, so a galloping then
binary search over the levels finds it with set inclusions, which stop at the first
behaviour outside the level. HypoFuzz resets every count to 1 whenever the corpus gains a
fingerprint, so the counts take few values and most fingerprints leave the second level at
once: a few behaviours looked at instead of all of them. The weights are the same floats
(the same integer minimum per fingerprint, the same normalisation), hence the same draws
from the same random generator.
"""

from __future__ import annotations

from bisect import bisect_left
from typing import Any, Callable, Collection, Mapping


def _rarest_counts(counts: Mapping[Any, int],
                   fingerprints: Collection[frozenset[Any]]) -> list[int]:
    """``min(counts[b] for b in F)`` for each non-empty ``F`` of ``fingerprints`` (0 for an
    empty one), by inclusion in the count level sets. Every behaviour of every ``F`` must
    have a count, as in HypoFuzz's corpus."""
    order = sorted(counts, key=counts.__getitem__)
    values = list(map(counts.__getitem__, order))
    levels = sorted(set(values))
    built: dict[int, frozenset[Any]] = {}

    def at_least(i: int) -> frozenset[Any]:
        """The behaviours whose count is at least ``levels[i]``."""
        got = built.get(i)
        if got is None:
            got = built[i] = frozenset(order[bisect_left(values, levels[i]):])
        return got

    top = len(levels) - 1
    rarest = []
    for fp in fingerprints:
        if not fp:
            rarest.append(0)
            continue
        # every behaviour of a fingerprint has a count (HypoFuzz's corpus invariant: the
        # counts' keys are the union of the fingerprints), so fp is within levels[0]
        lo, step = 0, 1  # fp is within levels[lo]; gallop up, then bisect
        while lo + step <= top and fp <= at_least(lo + step):
            lo += step
            step *= 2
        hi = min(lo + step, top + 1)  # fp is not within levels[hi] (or hi is past the top)
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if fp <= at_least(mid):
                lo = mid
            else:
                hi = mid
        rarest.append(levels[lo])
    return rarest


def crossover_weights(self: Any) -> list[float]:
    """``CrossOverMutator._get_weights``: ``1 / rarest behaviour count`` per fingerprint
    (1 for an empty one), normalised to sum 1."""
    weights = [1 / r if fp else 1 for fp, r in
               zip(self.corpus.fingerprints.keys(),
                   _rarest_counts(self.corpus.behavior_counts,
                                  self.corpus.fingerprints.keys()))]
    total = sum(weights)
    return [x / total for x in weights]


def install() -> Callable[[Any], list[float]]:
    """Use :func:`crossover_weights` in this process (a fuzzing process only); returns
    HypoFuzz's own method."""
    from hypofuzz.mutator import CrossOverMutator
    own = CrossOverMutator._get_weights
    CrossOverMutator._get_weights = crossover_weights  # type: ignore[method-assign]
    return own
