"""Hypothesis strategies for cases of several models sharing buffers.

:func:`shared_models` draws 2 or 3 captured models (``Case.origins``) over the *same*
device buffers, words and pinned host buffers: each model is built by its own
:class:`~conformance.engine.strategies._Builder` (1-2 streams, fork/join through its own
events, XS-01, XS-02) over the shared resource lists, so a later model picks the buffers an
earlier one writes. The models' ops are merged in a drawn interleaving that keeps each
model's own order: either one capture after the other (what shrinking moves toward) or
a drawn interleaving that keeps several captures open at once (CAP-07). The plan
(:func:`conformance.engine.strategies.build_multi_plan`) changes tasks of any model,
updates every model it changed, and executes the models in a drawn order on one stream,
with or without a Sync between them, every model at least once (EXE-01, EXE-02, UPD-05),
so the oracle must carry memory from one model's execution to the next.

Value waits stay satisfied whatever ran before: a wait always follows a write of its word
in its own model (graphs.check rejects a wait that depends on another model's write).
"""

from __future__ import annotations

from typing import Sequence

from hypothesis import strategies as st

from . import graphs
from .graphs import Case, Op
from .strategies import KERNELS, _Builder, _build_items, _item_kinds, _multi_round, \
    build_multi_plan
from .strategies_plans import draw_rounds

#: drawn stream ids per model (1-2 streams each keeps listing and replay cheap)
_model_streams = 2


def merge(parts: Sequence[Sequence[Op]], picks: Sequence[int]) -> list[Op]:
    """Interleave the op lists ``parts`` keeping each one's order: the ``k``-th op taken
    comes from part ``picks[k]`` (or, when that part is used up or the pick is out of
    range, from the lowest part that has ops left)."""
    queues = [list(p) for p in parts]
    out: list[Op] = []
    total = sum(len(q) for q in queues)
    for k in range(total):
        m = picks[k] if k < len(picks) else 0
        if not 0 <= m < len(queues) or not queues[m]:
            m = next(i for i, q in enumerate(queues) if q)
        out.append(queues[m].pop(0))
    return out


@st.composite
def shared_models(draw: st.DrawFn, *, max_ops: int = 5, values: bool = True,
                  memsets: bool = True, kernels: Sequence[str] = KERNELS) -> Case:
    """A case of 2-3 models over shared buffers/words/host buffers, captured in turn or
    interleaved, with a plan that updates and executes them in a drawn order (EXE-01,
    EXE-02, UPD-05, CAP-07, CAP-19); ``graphs.check`` passes."""
    n = draw(st.integers(2, graphs.MAX_MODELS))
    buffers: list[list[int]] = []
    words: list[int] = []
    hosts: list[list[int]] = []
    parts: list[list[Op]] = []
    origins: list[int] = []
    base = events = 0
    kinds = _item_kinds(kernels, values, memsets, _model_streams)
    for _ in range(n):
        b = _Builder(buffers=buffers, words=words, hosts=hosts, base=base, events=events)
        _build_items(draw, b, kinds, max_ops)
        b.close()
        parts.append(b.ops)
        origins.append(base)
        base += len(b.stream_of)
        events = b.events
    total = sum(len(p) for p in parts)
    picks = (draw(st.lists(st.integers(0, n - 1), min_size=total, max_size=total))
             if draw(st.booleans()) else [])
    case = Case(streams=base, buffers=buffers, words=words, events=events,
                ops=merge(parts, picks), plan=[], origins=origins, hosts=hosts)
    rounds = draw_rounds(draw, _multi_round, 3)
    case.plan = build_multi_plan(case, rounds)
    case.name = "shared-models"
    return case

