"""HypoFuzz's crossover weights, computed in C: the same numbers, without a Python
generator step per behaviour.

Each time HypoFuzz splices two corpus examples (``CrossOverMutator``), it weighs every
fingerprint of the corpus by one over the count of its rarest behaviour, reading the count
of every behaviour of every fingerprint through a generator expression. A fingerprint holds
thousands of behaviours (an example's line arcs, :mod:`.fuzz_coverage`) and the corpus grows
over a campaign, so that walk took a fifth of a campaign's time after its first minute and
kept growing. :func:`install` replaces the method with one that walks the same counts through
``min(map(counts.__getitem__, fingerprint))``: the same minimum (the same ints), the same
weights, the same draws from the same random generator.
"""

from __future__ import annotations

from typing import Any


def crossover_weights(self: Any) -> list[float]:
    """``CrossOverMutator._get_weights``: ``1 / rarest behaviour count`` per fingerprint
    (1 for an empty one), normalised to sum 1."""
    count = self.corpus.behavior_counts.__getitem__
    weights = [1 / min(map(count, fingerprint)) if fingerprint else 1
               for fingerprint in self.corpus.fingerprints.keys()]
    total = sum(weights)
    return [x / total for x in weights]


def install() -> None:
    """Use :func:`crossover_weights` in this process (a fuzzing process only)."""
    from hypofuzz.mutator import CrossOverMutator
    CrossOverMutator._get_weights = crossover_weights  # type: ignore[method-assign]
