"""Hypothesis strategies for task graphs that stay inside defined behaviour.

Every :class:`~conformance.engine.graphs.Case` drawn from :func:`cases` passes
:func:`conformance.engine.validation.check`: streams fork from the origin (or from a stream that
already joined) through an event record/wait pair (XS-01) and join back to the origin with a
record the origin waits on (XS-02); no two unordered ops touch a buffer or word with a write; value
waits (any flag: GEQ, EQ, AND, NOR, abi.md §3.5) are satisfied by an ordered value write, whose
values reach the 64-bit edges. Blocked executions and the capture-end negatives have their
own modules (:mod:`conformance.engine.strategies_blocked`,
:mod:`conformance.engine.strategies_capture`). Plans (:mod:`conformance.engine.strategies_plans`,
re-exported here) only use SetParams and Disable in the ways the documented clauses define
(SETP-01, DIS-01, UPD-05), always Update before Execute, Sync (5000 ms) after every Execute,
and end with Execute + Sync (EXE-02).

Negative strategies (:func:`negative_cases`) add exactly one out-of-contract step whose
outcome is an error code: execute while UPDATING (SETP-02, EXE-07), disable a DEFAULT task
(DIS-06), SetParams with a type it rejects (SETP-03, SETP-10), sync with timeout 0 (TMO-02).

Generation is driven by small abstract "items" (a kernel launch, a value write/wait, a memset,
an event edge) drawn with ``st.lists``, two integers each, and interpreted by a builder
(:mod:`conformance.engine.strategies_build`) that repairs them into a race-free program (a
buffer that would race is replaced by a fresh one). Deleting items
deletes ops, and every integer choice shrinks toward the origin stream and existing buffers,
so counterexamples shrink to few tasks and streams.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, replace
from typing import Any, Callable, Sequence

from hypothesis import strategies as st

from . import graphs
from .graphs import Case, Launch, Memset
from .steps import Disable, Execute, SetBadType, Step, Sync, Update
from .strategies_build import (BAD_TYPES, EDGE_VALUES, KERNELS, N, NUM_BLOCKS, SEED_PAIR,
                               SYNC_MS, _Builder, _Digits, satisfied_value, zigzag)
from .strategies_plans import (_multi_round, _round, build_multi_plan, build_plan, draw_plan,
                               mod_item, plans_for)

__all__ = ["BAD_TYPES", "EDGE_VALUES", "FAR", "KERNELS", "N", "NEAR_DISTANCES", "NUM_BLOCKS",
           "SEED_PAIR", "SYNC_MS", "WAIT_FLAGS", "build_multi_plan", "build_plan", "cases",
           "distances", "draw_case", "draw_plan", "mod_item", "negative_cases", "plans_for",
           "positive_cases",
           "satisfied_value", "zigzag", "_Builder", "_Digits", "_multi_round", "_round"]


# ---------------------------------------------------------------------------------------------
# item strategies
#
# An item is a few small integer draws: a head (the item's kind, its drawn stream and the
# parent its stream forks from on first use) and one to three parts holding the kind's
# other fields, each read by place value (:class:`_Digits`). One draw per field made a case
# cost ~47 choices and the generator ran at a third of Hypothesis's rate for as many
# draws; packed, a launch costs 5 choices (with the list's own) instead of 11, and the
# other kinds 2-4. The first item, always a launch on a stream forked from the origin,
# draws no parent; a value wait's distance is one of four near ones or, half the time, a
# far one drawn after the part (as :data:`distances` draws it). A launch draws every
# operand field whatever its kernel: drawing only its kernel's operands saved a choice a
# launch but left bench/shrink_sizes.py's seq-renumbered-after-update at 5 ops in 19 of 20
# seeds, where the fixed layout reaches 2 ops in about a third. A part never spans more
# than 256 values: Hypothesis draws a wider integer from a distribution weighted toward
# small values, which would leave its high places (a kernel, a plan step's kind) at 0 most
# of the time; up to 256 the draw is about uniform. Every field still shrinks toward 0,
# and deleting an item deletes its op, so counterexamples shrink as before.

_pick = st.integers(0, 3)
_scalars = st.tuples(st.integers(-3, 3), st.integers(-9, 9))

PARENTS, PICKS = 4, 4
#: affine's scalar a in -3..3, every other scalar in -9..9 (shrinking toward 0)
SCALAR_A, SCALAR_B = 3, 9
#: the widest part an item is drawn in (see above)
MAX_PART = 256
#: value-wait flags, EQ first (shrinking moves toward it): EQ 1, GEQ 0, AND 2, NOR 3
WAIT_FLAGS: tuple[int, ...] = (1, 0, 2, 3)
#: distances between a wait's value and the word: near-equal pairs first, then the far edge
NEAR_DISTANCES: tuple[int, ...] = (0, 1, 2, (1 << 63) - 1)
#: any distance in the signed 64-bit range (drawn apart: too wide for a packed part)
far_distances = st.integers(0, (1 << 63) - 1)
distances = st.one_of(st.sampled_from(NEAR_DISTANCES), far_distances)
#: a value wait's distance selector: one of NEAR_DISTANCES (half the time, as the first
#: branch of :data:`distances`) or FAR, a draw of :data:`far_distances` after the part
FAR = -1
DISTANCE_PICKS: tuple[int, ...] = (*NEAR_DISTANCES, *(FAR,) * len(NEAR_DISTANCES))
#: a value write's values: 0..50, then the 64-bit edges
WRITE_VALUES: tuple[int, ...] = (*range(51), *EDGE_VALUES)


def _decode_launch(kernels: tuple[str, ...], s: int, parent: int, d: _Digits
                   ) -> tuple[Any, ...]:
    kernel = kernels[d.take(len(kernels))]
    blocks = NUM_BLOCKS[d.take(len(NUM_BLOCKS))]
    picks = (d.take(PICKS), d.take(PICKS), d.take(PICKS))
    scalars = (zigzag(d.take(2 * SCALAR_A + 1)), zigzag(d.take(2 * SCALAR_B + 1)))
    return ("launch", kernel, s, parent, picks, scalars, blocks)


def _decode_join(_k: tuple[str, ...], s: int, parent: int, d: _Digits) -> tuple[Any, ...]:
    return ("join", s, parent, bool(d.take(2)))


def _decode_edge(_k: tuple[str, ...], s: int, parent: int, d: _Digits) -> tuple[Any, ...]:
    return ("event_edge", s, d.rest, parent)  # the destination stream: the whole part


def _decode_write(_k: tuple[str, ...], s: int, parent: int, d: _Digits) -> tuple[Any, ...]:
    value = WRITE_VALUES[d.take(len(WRITE_VALUES))]
    return ("value_write", s, parent, d.take(PICKS), value)


def _decode_wait(_k: tuple[str, ...], s: int, parent: int, d: _Digits) -> tuple[Any, ...]:
    flag = WAIT_FLAGS[d.take(len(WAIT_FLAGS))]
    pick = d.take(PICKS)
    return ("value_wait", s, parent, pick, flag, DISTANCE_PICKS[d.take(len(DISTANCE_PICKS))])


def _decode_memset(_k: tuple[str, ...], s: int, parent: int, d: _Digits) -> tuple[Any, ...]:
    spanned, offset = d.take(2), d.take(4 * N)
    count, byte, pick = 1 + d.take(4 * N), d.take(2), d.take(PICKS)
    return ("memset", s, parent, pick, byte, (offset, count) if spanned else None)


def _decode_copy(_k: tuple[str, ...], s: int, parent: int, d: _Digits) -> tuple[Any, ...]:
    kind = graphs.COPY_KINDS[d.take(len(graphs.COPY_KINDS))]
    dst = d.take(PICKS)
    return ("copy", s, parent, d.take(PICKS), dst, kind)


_DECODERS: dict[str, tuple[Callable[..., tuple[Any, ...]],
                           Callable[[int, int], tuple[int, ...]]]] = {
    # kind: (decoder, the radix of each part for k kernels and s drawn stream ids; a
    # decoder reads the parts' digits in this order, lowest part first)
    "launch": (_decode_launch, lambda k, s: (k * len(NUM_BLOCKS), PICKS ** 3,
                                             (2 * SCALAR_A + 1) * (2 * SCALAR_B + 1))),
    "join": (_decode_join, lambda k, s: (2,)),
    "event_edge": (_decode_edge, lambda k, s: (s,)),
    "value_write": (_decode_write, lambda k, s: (len(WRITE_VALUES) * PICKS,)),
    "value_wait": (_decode_wait, lambda k, s: (len(WAIT_FLAGS) * PICKS * len(DISTANCE_PICKS),)),
    "memset": (_decode_memset, lambda k, s: (2 * 4 * N, 4 * N * 2 * PICKS)),
    "copy": (_decode_copy, lambda k, s: (len(graphs.COPY_KINDS) * PICKS * PICKS,)),
}


@dataclass(frozen=True)
class _Items:
    """The item kinds a generator draws (launch first: shrinking moves toward it), over
    ``streams`` drawn stream ids: the head's strategy, and per kind its decoder and the
    strategy and radix of each of its parts."""

    kernels: tuple[str, ...]
    kinds: tuple[str, ...]
    streams: int
    head: st.SearchStrategy[int]
    #: the first item's head: its drawn stream
    first: st.SearchStrategy[int]
    parts: tuple[tuple[Callable[..., tuple[Any, ...]],
                       tuple[tuple[st.SearchStrategy[int], int], ...]], ...]

    def draw(self, draw: st.DrawFn, head: int) -> tuple[Any, ...]:
        """The builder item (the tuple its method reads) of a drawn head, drawing the parts
        of its kind (and a value wait's far distance)."""
        h = _Digits(head)
        parent = h.take(PARENTS)
        s = h.take(self.streams)
        return self._decode(draw, h.take(len(self.kinds)), s, parent)

    def draw_first(self, draw: st.DrawFn) -> tuple[Any, ...]:
        """The first item, a launch: its drawn stream alone in its head (a first item forks
        its stream from the origin whatever its parent, so it draws none), then its parts.
        The stream stays a draw of its own: packed with the kernel, shrinking could not
        move it to the origin without changing the kernel."""
        return self._decode(draw, 0, draw(self.first), 0)

    def _decode(self, draw: st.DrawFn, k: int, s: int, parent: int) -> tuple[Any, ...]:
        """Draw the parts of kind ``k`` and decode the item (a value wait's far distance
        is drawn after its part)."""
        decoder, parts = self.parts[k]
        value, scale = 0, 1
        for strategy, radix in parts:
            value += draw(strategy) * scale
            scale *= radix
        item = decoder(self.kernels, s, parent, _Digits(value))
        if item[0] == "value_wait" and item[-1] == FAR:
            item = (*item[:-1], draw(far_distances))
        return item


def _item_kinds(kernels: Sequence[str], values: bool, memsets: bool,
                streams: int = graphs.MAX_STREAMS) -> _Items:
    """The item kinds and their draws for these arguments, built once per argument set
    (building and validating strategies on every draw was a fifth of the generation time)."""
    return _items_cached(tuple(kernels), values, memsets, streams)


@functools.lru_cache(maxsize=None)
def _integers(radix: int) -> st.SearchStrategy[int]:
    return st.integers(0, radix - 1)


@functools.lru_cache(maxsize=None)
def _items_cached(kernels: tuple[str, ...], values: bool, memsets: bool,
                  streams: int) -> _Items:
    kinds = ["launch", "join", "event_edge"]
    if values:
        kinds += ["value_write", "value_wait"]
    if memsets:
        kinds += ["memset", "copy"]
    parts = []
    for kind in kinds:
        decoder, radices = _DECODERS[kind]
        rs = radices(len(kernels), streams)
        assert all(r <= MAX_PART for r in rs), (kind, rs)
        parts.append((decoder, tuple((_integers(r), r) for r in rs)))
    head = len(kinds) * streams * PARENTS
    assert head <= MAX_PART
    return _Items(kernels, tuple(kinds), streams, _integers(head), _integers(streams),
                  tuple(parts))


@functools.lru_cache(maxsize=None)
def _item(items: _Items, first: bool) -> st.SearchStrategy[tuple[Any, ...]]:
    """One item (``first``: a launch, :meth:`_Items.draw_first`)."""
    if first:
        @st.composite
        def first_item(draw: st.DrawFn) -> tuple[Any, ...]:
            return items.draw_first(draw)
        return first_item()

    @st.composite
    def item(draw: st.DrawFn) -> tuple[Any, ...]:
        return items.draw(draw, draw(items.head))
    return item()


@functools.lru_cache(maxsize=None)
def _item_lists(items: _Items, max_size: int) -> st.SearchStrategy[list[tuple[Any, ...]]]:
    return st.lists(_item(items, False), max_size=max_size)


def _build_items(draw: st.DrawFn, b: _Builder, items: _Items, max_ops: int) -> None:
    """Draw a launch and up to ``max_ops - 1`` more items and interpret them into ``b``."""
    for item in [draw(_item(items, True)), *draw(_item_lists(items, max_ops - 1))]:
        getattr(b, item[0])(item)


def draw_case(draw: st.DrawFn, *, max_ops: int = 8, values: bool = True, memsets: bool = True,
              kernels: Sequence[str] = KERNELS) -> Case:
    """:func:`cases` as a function of ``draw`` (no strategy object made per draw)."""
    b = _Builder()
    _build_items(draw, b, _item_kinds(kernels, values, memsets), max_ops)
    return b.finish()


@st.composite
def cases(draw: st.DrawFn, *, max_ops: int = 8, values: bool = True, memsets: bool = True,
          kernels: Sequence[str] = KERNELS) -> Case:
    """A captured program (no plan yet) inside defined behaviour (validation.check passes).

    At least one kernel launch; 1-4 streams; ``max_ops`` abstract items (each item is one op
    plus the fork of its stream the first time a stream is used). ``memsets`` also allows
    copies of every capturable kind (device to device, pinned host to device, device to
    pinned host; memsets and copies are DEFAULT tasks).
    """
    return draw_case(draw, max_ops=max_ops, values=values, memsets=memsets, kernels=kernels)

@st.composite
def positive_cases(draw: st.DrawFn, **kw: Any) -> Case:
    """A case with a defined plan; ``validation.check`` passes (SETP-01, DIS-01, UPD-05, EXE-02)."""
    case = draw_case(draw, **kw)
    case.plan = draw_plan(draw, case)
    case.name = "generated"
    return case


# ---------------------------------------------------------------------------------------------
# negative plans


def _first_mod_round(plan: list[Step]) -> int | None:
    for i, s in enumerate(plan):
        if isinstance(s, Update):
            return i
    return None


@st.composite
def execute_while_updating(draw: st.DrawFn, **kw: Any) -> Case:
    """Execute between a SetParams/Disable and Update: 507011, nothing runs (SETP-02,
    DIS-02, EXE-07); the model stays UPDATING and the later Update commits."""
    case = draw(positive_cases(**kw))
    at = _first_mod_round(case.plan)
    if at is None:
        launch = min(i for i, op in enumerate(case.ops) if isinstance(op, Launch))
        case.plan = [Disable(launch), Update(), Execute(1), Sync(SYNC_MS), *case.plan]
        at = 1
    times = draw(st.integers(1, 2))
    case.plan[at:at] = [Execute(times), Sync(SYNC_MS)]
    case.name = "execute-while-updating"
    return case


def _with_memset(case: Case) -> int:
    """The index of a memset op, adding one on a fresh buffer at the start if needed."""
    for i, op in enumerate(case.ops):
        if isinstance(op, Memset):
            return i
    b = len(case.buffers)
    case.buffers.append([graphs.SENTINEL] * N)
    case.ops.insert(0, Memset(0, b, 0))
    case.plan = [replace(s, op=s.op + 1) if hasattr(s, "op") else s for s in case.plan]
    return 0


def _insert_at_round(draw: st.DrawFn, case: Case, step: Step) -> None:
    """Insert ``step`` at the start of a drawn round (after a Sync, or at the plan start)."""
    starts = [0] + [i + 1 for i, s in enumerate(case.plan[:-1]) if isinstance(s, Sync)]
    at = starts[draw(st.integers(0, len(starts) - 1))]
    case.plan.insert(at, step)


@st.composite
def disable_default(draw: st.DrawFn, **kw: Any) -> Case:
    """Disable of a memset (DEFAULT) task: 107000 and FAULT (DIS-06, ERR-16, SETP-10)."""
    case = draw(positive_cases(**kw))
    m = _with_memset(case)
    _insert_at_round(draw, case, Disable(m))
    case.name = "disable-default"
    return case


@st.composite
def set_bad_type(draw: st.DrawFn, **kw: Any) -> Case:
    """SetParams with EVENT_RECORD/EVENT_WAIT/EVENT_RESET/DEFAULT: 107000 and FAULT
    (SETP-03, SETP-10, ERR-14)."""
    case = draw(positive_cases(**kw))
    disabled = {s.op for s in case.plan if isinstance(s, Disable)}  # dangling after Update
    targets = [i for i, op in enumerate(case.ops)
               if not isinstance(op, Memset) and i not in disabled]
    op = targets[draw(st.integers(0, len(targets) - 1))] if targets else _with_memset(case)
    _insert_at_round(draw, case, SetBadType(op, draw(st.sampled_from(BAD_TYPES))))
    case.name = "set-bad-type"
    return case


@st.composite
def sync_timeout_below_minus_one(draw: st.DrawFn, **kw: Any) -> Case:
    """aclrtSynchronizeStreamWithTimeout(origin, t < -1): 107000 (TMO-02). (A timeout of 0
    is not drawn: TMO-07 and TMO-08 disagree on it.)"""
    case = draw(positive_cases(**kw))
    _insert_at_round(draw, case, Sync(draw(st.sampled_from((-2, -1000)))))
    case.name = "sync-timeout-below-minus-one"
    return case


NEGATIVE: dict[str, Callable[..., st.SearchStrategy[Case]]] = {
    "execute-while-updating": execute_while_updating,
    "disable-default": disable_default,
    "set-bad-type": set_bad_type,
    "sync-timeout-below-minus-one": sync_timeout_below_minus_one,
}


def negative_cases(kinds: Sequence[str] = tuple(NEGATIVE), **kw: Any) -> st.SearchStrategy[Case]:
    """Any one of the negative plans named in ``kinds`` (keys of :data:`NEGATIVE`)."""
    return st.one_of(*(NEGATIVE[k](**kw) for k in kinds))
