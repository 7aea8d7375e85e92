"""The simulator's prepared kernel bodies (backends.sim.fastkernels) compute exactly what the
catalog bodies compute (KRN-01): the same int32 results, wrapping like C, on every argument
set including operands that alias or partly overlap, and none is prepared for a range
outside one live allocation."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from mdlri_conformance.backends.sim import fastkernels
from mdlri_conformance.backends.sim.memory import DeviceMemorySpace
from mdlri_conformance.kernel import catalog

KERNELS = ("fallback_main", "fallback_postprocess", "affine", "add", "accumulate", "fill",
           "copy")
WORDS = 24  # int32 words per allocation


def _memory(seed: int) -> tuple[DeviceMemorySpace, list[int]]:
    mem = DeviceMemorySpace()
    bases = [mem.alloc(4 * WORDS) for _ in range(2)]
    rng = np.random.default_rng(seed)
    for b in bases:
        mem.write(b, rng.integers(-2**31, 2**31, WORDS, dtype=np.int64).astype("<i4")
                  .view(np.uint8))
    return mem, bases


def _snapshot(mem: DeviceMemorySpace, bases: list[int]) -> list[bytes]:
    return [mem.read_bytes(b, 4 * WORDS) for b in bases]


@settings(max_examples=300, deadline=None)
@given(kernel=st.sampled_from(KERNELS), seed=st.integers(0, 2**16),
       ptrs=st.lists(st.tuples(st.integers(0, 1), st.integers(0, WORDS - 1)), min_size=3,
                     max_size=3),
       n=st.integers(1, 12), scalars=st.lists(st.integers(-2**31, 2**31 - 1), min_size=3,
                                                max_size=3))
def test_prepared_bodies_match_the_catalog(kernel: str, seed: int,
                                           ptrs: list[tuple[int, int]], n: int,
                                           scalars: list[int]) -> None:
    spec = catalog.get(kernel)
    mem, bases = _memory(seed)
    ref, _ = _memory(seed)
    args: dict[str, int] = {}
    p, s = iter(ptrs), iter(scalars)
    for f in spec.fields:
        if f.kind == "ptr":
            alloc, word = next(p)
            args[f.name] = bases[alloc] + 4 * word
        else:
            args[f.name] = n if f.name == "n" else next(s)
    body = fastkernels.prepare(kernel, mem, args)
    fits = all(w + (catalog.SEED_ELEMENTS if kernel.startswith("fallback") else n) <= WORDS
               for _, w in ptrs[:sum(f.kind == "ptr" for f in spec.fields)])
    if not fits:
        assert body is None, f"{kernel} {args}: prepared a body for a range past the allocation"
        return
    assert body is not None, f"{kernel} {args}: no prepared body for an in-range argument set"
    body()
    body()  # twice: a prepared body keeps no state of its own
    spec.body(ref, args)
    spec.body(ref, args)
    assert _snapshot(mem, bases) == _snapshot(ref, bases), \
        f"{kernel} {args}: prepared body and catalog body disagree"


def test_no_prepared_body_for_a_freed_buffer_or_an_empty_count() -> None:
    mem, bases = _memory(1)
    args = {"out": bases[0], "n": 4, "value": 3}
    assert fastkernels.prepare("fill", mem, {**args, "n": 0}) is None
    layout = mem.layout
    mem.free(bases[0])
    assert mem.layout != layout, "freeing an allocation must change the layout"
    assert fastkernels.prepare("fill", mem, args) is None
