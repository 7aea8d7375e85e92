"""Hypothesis strategies for task graphs that stay inside defined behaviour.

Every :class:`~conformance.engine.graphs.Case` drawn from :func:`cases` passes
:func:`conformance.engine.graphs.check`: streams fork from the origin (or from a stream that
already joined) through an event record/wait pair (XS-01) and join back to the origin with a
record the origin waits on (XS-02); no two unordered ops touch a buffer or word with a write; value
waits (any flag: GEQ, EQ, AND, NOR, abi.md §3.5) are satisfied by an ordered value write, whose
values reach the 64-bit edges. Blocked executions and the capture-end negatives have their
own modules (:mod:`conformance.engine.strategies_blocked`,
:mod:`conformance.engine.strategies_capture`). Plans (:func:`plans`) only use SetParams and
Disable in the ways the documented clauses define (SETP-01, DIS-01, UPD-05), always Update
before Execute, Sync (5000 ms) after every Execute, and end with Execute + Sync (EXE-02).

Negative strategies (:func:`negative_cases`) add exactly one out-of-contract step whose
outcome is an error code: execute while UPDATING (SETP-02, EXE-07), disable a DEFAULT task
(DIS-06), SetParams with a type it rejects (SETP-03, SETP-10), sync with timeout 0 (TMO-02).

Generation is driven by small abstract "items" (a kernel launch, a value write/wait, a memset,
an event edge) drawn with ``st.lists`` and interpreted by a builder that repairs them into a
race-free program (a buffer that would race is replaced by a fresh one). Deleting items
deletes ops, and every integer choice shrinks toward the origin stream and existing buffers,
so counterexamples shrink to few tasks and streams.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Sequence, cast

from hypothesis import strategies as st

from mdlri_conformance.backends.contract import TaskType
from mdlri_conformance.kernel import catalog

from . import graphs
from .graphs import (Case, Copy, Disable, Execute, HostFill, Launch, Memset, Op,
                     Record, SetBadType, SetKernel, SetValue, Step, Sync, Update, ValueWait,
                     ValueWrite, Wait)

#: int32 elements per buffer (the seed example's size, scenarios.md S6)
N = catalog.SEED_ELEMENTS
SYNC_MS = 5000
#: the kernels generated, simplest first (shrinking moves toward the front)
KERNELS: tuple[str, ...] = ("fill", "copy", "affine", "add", "accumulate",
                            "fallback_main", "fallback_postprocess")
SEED_PAIR = ("fallback_main", "fallback_postprocess")
#: launch block counts drawn (one first: shrinking moves toward it); 3 does not divide 8
NUM_BLOCKS: tuple[int, ...] = (1, 2, 3, 8)
#: SetParams types that SetParams rejects with 107000 + FAULT (SETP-03)
BAD_TYPES: tuple[int, ...] = (int(TaskType.EVENT_RECORD), int(TaskType.EVENT_WAIT),
                              int(TaskType.EVENT_RESET), int(TaskType.DEFAULT))

Ref = tuple[str, int]

# ---------------------------------------------------------------------------------------------
# the builder: abstract items -> a race-free op list


@dataclass
class _Builder:
    """Accumulates one model's ops with their happens-before sets and footprints
    (graphs.op_footprint). ``buffers``, ``words`` and ``hosts`` may be shared with the
    builders of a case's other models; ``base`` is this model's origin stream and
    ``events`` the first event index it uses."""

    buffers: list[list[int]] = field(default_factory=list)
    words: list[int] = field(default_factory=list)
    ops: list[Op] = field(default_factory=list)
    before: list[set[int]] = field(default_factory=list)
    foot: list[tuple[set[Ref], set[Ref]]] = field(default_factory=list)
    last_on: dict[int, int] = field(default_factory=dict)
    record_of: dict[int, int] = field(default_factory=dict)
    stream_of: dict[int, int] = field(default_factory=dict)  # drawn id -> case id
    fork_event: dict[int, int] = field(default_factory=dict)  # side stream -> its fork's event
    events: int = 0
    hosts: list[list[int]] = field(default_factory=list)
    base: int = 0

    def __post_init__(self) -> None:
        self.stream_of.setdefault(0, self.base)

    # -- resources -------------------------------------------------------------------------
    def fresh_buffer(self, data: bool) -> int:
        """A new buffer: deterministic input data, or the sentinel for an output."""
        b = len(self.buffers)
        self.buffers.append([b * N + i + 1 for i in range(N)] if data
                            else [graphs.SENTINEL] * N)
        return b

    def fresh_host(self, data: bool) -> int:
        """A new pinned host buffer: deterministic data (distinct from every device
        buffer's), or the sentinel for a copy's destination."""
        h = len(self.hosts)
        self.hosts.append([1000 + h * N + i for i in range(N)] if data
                          else [graphs.SENTINEL] * N)
        return h

    def fresh_word(self) -> int:
        w = len(self.words)
        self.words.append(100 + w)
        return w

    # -- ordering ----------------------------------------------------------------------------
    def preds(self, stream: int) -> set[int]:
        """Ops that happen before the next op issued on ``stream``."""
        j = self.last_on.get(stream)
        return set() if j is None else self.before[j] | {j}

    def can_read(self, ref: Ref, preds: set[int], exclude: int = -1) -> bool:
        return not any(ref in self.foot[j][1] for j in range(len(self.ops))
                       if j not in preds and j != exclude)

    def can_write(self, ref: Ref, preds: set[int], exclude: int = -1) -> bool:
        return not any(ref in self.foot[j][0] or ref in self.foot[j][1]
                       for j in range(len(self.ops)) if j not in preds and j != exclude)

    def emit(self, op: Op) -> int:
        """Append an op, tracking happens-before (graphs.happens_before) and footprints."""
        i = len(self.ops)
        preds = self.preds(op.stream)
        if isinstance(op, Wait):
            j = self.record_of[op.event]
            preds |= self.before[j] | {j}
        if isinstance(op, Record):
            self.record_of[op.event] = i
        self.ops.append(op)
        self.before.append(preds)
        self.foot.append(graphs.op_footprint(op))
        self.last_on[op.stream] = i
        return i

    def edge(self, src: int, dst: int, event: int | None = None) -> int:
        """Record on ``src``, wait on ``dst`` (a fork when ``dst`` has not joined, XS-01);
        a new event unless ``event`` reuses one (recorded again: the wait takes this record,
        XS-13). Returns the event."""
        e = self.events if event is None else event
        if event is None:
            self.events += 1
        self.emit(Record(src, e))
        self.emit(Wait(dst, e))
        return e

    def stream(self, drawn: int, parent: int) -> int:
        """The case stream for a drawn stream id, forking it on first use."""
        if drawn in self.stream_of:
            return self.stream_of[drawn]
        joined = sorted(self.stream_of.values())
        s = self.base + len(self.stream_of)
        self.stream_of[drawn] = s
        self.fork_event[s] = self.edge(joined[parent % len(joined)], s)
        return s

    # -- choosing buffers ----------------------------------------------------------------------
    def pick_buffer(self, pick: int, write: bool, preds: set[int], avoid: set[int],
                    data: bool, exclude: int = -1) -> int:
        """An existing race-free buffer (``pick``-th candidate) or a fresh one."""
        ok = self.can_write if write else self.can_read
        cands = [b for b in range(len(self.buffers))
                 if b not in avoid and ok(("buf", b), preds, exclude)]
        return cands[pick] if pick < len(cands) else self.fresh_buffer(data)

    def kernel_args(self, kernel: str, picks: Sequence[int], scalars: Sequence[int],
                    preds: set[int], exclude: int = -1) -> dict[str, int]:
        """Race-free args for ``kernel``: inputs first (they may be shared), then outputs."""
        spec = catalog.get(kernel)
        args: dict[str, int] = {}
        ptrs = [f for f in spec.fields if f.kind == "ptr"]
        for k, f in enumerate(sorted(ptrs, key=lambda f: f.role != "in")):
            pick = picks[k % len(picks)]
            if f.role == "in":
                args[f.name] = self.pick_buffer(pick, False, preds, set(), True, exclude)
            else:
                args[f.name] = self.pick_buffer(pick, True, preds, set(args.values()),
                                                f.role == "inout", exclude)
        scalar_vals = iter(scalars)
        for f in spec.fields:
            if f.kind == "i32":
                args[f.name] = N if f.name == "n" else next(scalar_vals)
        return {f.name: args[f.name] for f in spec.fields}

    # -- the items ---------------------------------------------------------------------------
    def launch(self, item: tuple[Any, ...]) -> None:
        """A catalog kernel on 1 or more blocks: every block's share together is the kernel's
        whole result (KRN-01), so the block count changes nothing an execution shows."""
        _, kernel, drawn, parent, picks, scalars, *blocks = item
        s = self.stream(drawn, parent)
        args = self.kernel_args(kernel, picks, scalars, self.preds(s))
        self.emit(Launch(s, kernel, args, blocks[0] if blocks else 1))

    def value_write(self, item: tuple[Any, ...]) -> None:
        _, drawn, parent, pick, value = item
        s = self.stream(drawn, parent)
        preds = self.preds(s)
        cands = [w for w in range(len(self.words)) if self.can_write(("word", w), preds)]
        w = cands[pick] if pick < len(cands) else self.fresh_word()
        self.emit(ValueWrite(s, w, value))

    def value_wait(self, item: tuple[Any, ...]) -> None:
        """A wait that the value the last ordered write stored satisfies, with any flag
        (:func:`satisfied_value`); without such a write, a write of an edge value first."""
        _, drawn, parent, pick, flag, distance = item
        s = self.stream(drawn, parent)
        preds = self.preds(s)
        written: dict[int, int] = {}
        for j in sorted(preds):
            op = self.ops[j]
            if isinstance(op, ValueWrite):
                written[op.word] = op.value
        cands = [w for w in sorted(written) if self.can_read(("word", w), preds)]
        if cands:
            w = cands[pick % len(cands)]
        else:  # nothing written before it yet: a handshake on this stream
            w = self.fresh_word()
            written[w] = EDGE_VALUES[pick % len(EDGE_VALUES)]
            self.emit(ValueWrite(s, w, written[w]))
        value, flag = satisfied_value(written[w], flag, distance)
        self.emit(ValueWait(s, w, value, flag))

    def memset(self, item: tuple[Any, ...]) -> None:
        """A memset of a whole buffer, or of ``count`` bytes at byte ``offset`` (odd counts
        and offsets drawn as often as even ones, RT-45)."""
        _, drawn, parent, pick, byte, span = item
        s = self.stream(drawn, parent)
        b = self.pick_buffer(pick, True, self.preds(s), set(), False)
        if span is None:
            self.emit(Memset(s, b, byte))
            return
        nbytes = 4 * len(self.buffers[b])
        offset = span[0] % nbytes
        self.emit(Memset(s, b, byte, offset, min(span[1], nbytes - offset)))

    def pick_host(self, pick: int, write: bool, preds: set[int], data: bool) -> int:
        """An existing race-free pinned host buffer (``pick``-th candidate) or a fresh one."""
        ok = self.can_write if write else self.can_read
        cands = [h for h in range(len(self.hosts)) if ok(("host", h), preds)]
        return cands[pick] if pick < len(cands) else self.fresh_host(data)

    def copy(self, item: tuple[Any, ...]) -> None:
        """aclrtMemcpyAsync of ``kind`` (graphs.COPY_KINDS) from a race-free source into a
        race-free other buffer: device to device, pinned host to device or device to pinned
        host (MODE-01, CAP-19)."""
        _, drawn, parent, src_pick, dst_pick, *rest = item
        kind = rest[0] if rest else "d2d"  # the direction
        s = self.stream(drawn, parent)
        preds = self.preds(s)
        if kind == "h2d":
            src = self.pick_host(src_pick, False, preds, True)
            dst = self.pick_buffer(dst_pick, True, preds, set(), False)
        elif kind == "d2h":
            src = self.pick_buffer(src_pick, False, preds, set(), True)
            dst = self.pick_host(dst_pick, True, preds, False)
        else:
            src = self.pick_buffer(src_pick, False, preds, set(), True)
            dst = self.pick_buffer(dst_pick, True, preds, {src}, False)
        self.emit(Copy(s, src, dst, kind))

    def event_edge(self, item: tuple[Any, ...]) -> None:
        _, src, dst, parent = item
        a = self.stream(src, parent)
        if dst in self.stream_of and self.stream_of[dst] == a:
            return
        if dst in self.stream_of:
            self.edge(a, self.stream_of[dst])
        else:
            self.stream_of[dst] = self.base + len(self.stream_of)
            self.edge(a, self.stream_of[dst])

    def join(self, item: tuple[Any, ...]) -> None:
        """Join a side stream back to the origin now (record on it, wait on the origin), so
        later origin ops may consume its results (XS-02); with ``reuse`` the join records
        the side stream's fork event again instead of a new one (XS-13)."""
        _, drawn, parent, *reuse = item
        s = self.stream(drawn, parent)
        if s != self.base:
            self.edge(s, self.base, self.fork_event.get(s) if reuse and reuse[0] else None)

    def joined_back(self, s: int) -> bool:
        """Whether side stream ``s`` already ends with a record the origin's last op follows."""
        last, last0 = self.last_on.get(s), self.last_on.get(self.base)
        return (last is not None and last0 is not None and isinstance(self.ops[last], Record)
                and last in self.before[last0])

    def close(self) -> None:
        """Join every side stream not yet joined back to the origin (XS-02)."""
        for s in range(self.base + 1, self.base + len(self.stream_of)):
            if self.joined_back(s):
                continue
            e = self.events
            self.events += 1
            self.emit(Record(s, e))
            self.emit(Wait(self.base, e))

    def finish(self) -> Case:
        """:meth:`close`, then the one-model case."""
        self.close()
        return Case(streams=self.base + len(self.stream_of), buffers=self.buffers,
                    words=self.words, events=self.events, ops=list(self.ops), plan=[],
                    hosts=self.hosts)


# ---------------------------------------------------------------------------------------------
# item strategies
#
# Each item is two integer draws: a head (the item's kind, its drawn stream and the parent
# its stream forks from on first use) and a detail (the kind's other fields), both decoded
# by place value with the field that shrinking should settle first in the highest place.
# One draw per field made a case cost ~47 choices and the generator ran at a third of
# Hypothesis's rate for as many draws; packed, an item costs 3 choices (with the list's
# own) instead of up to 12. Every field still shrinks toward 0 (the integer shrinker lowers
# the high places first), and deleting an item deletes its op, so counterexamples shrink
# as before.

_streams = st.integers(0, graphs.MAX_STREAMS - 1)
_parent = st.integers(0, 3)
_pick = st.integers(0, 3)
_scalars = st.tuples(st.integers(-3, 3), st.integers(-9, 9))

PARENTS, PICKS = 4, 4
#: affine's scalar a in -3..3, every other scalar in -9..9 (shrinking toward 0)
SCALAR_A, SCALAR_B = 3, 9

#: word values at the edges of the signed and unsigned 64-bit ranges
EDGE_VALUES: tuple[int, ...] = (0, 1, 2, (1 << 63) - 1, 1 << 63, (1 << 63) + 1,
                                graphs.WORD_MASK - 1, graphs.WORD_MASK)
#: value-wait flags, EQ first (shrinking moves toward it): EQ 1, GEQ 0, AND 2, NOR 3
WAIT_FLAGS: tuple[int, ...] = (1, 0, 2, 3)
#: distances between a wait's value and the word: near-equal pairs first, then the far edge
distances = st.one_of(st.sampled_from((0, 1, 2, (1 << 63) - 1)), st.integers(0, (1 << 63) - 1))
#: a value write's values: 0..50, then the 64-bit edges
WRITE_VALUES: tuple[int, ...] = (*range(51), *EDGE_VALUES)


def satisfied_value(have: int, flag: int, distance: int) -> tuple[int, int]:
    """(value, flag) of a wait that a word holding ``have`` satisfies (graphs.wait_holds):
    GEQ with a value ``distance`` below it (mod 2^64: the signed difference is what counts),
    EQ with the value itself, AND with its lowest set bit, NOR with 0. AND of a zero word
    and NOR of an all-ones word can never hold: EQ instead."""
    have &= graphs.WORD_MASK
    if flag == 0:
        return (have - distance) & graphs.WORD_MASK, 0
    if flag == 2 and have:
        return have & -have, 2
    if flag == 3 and have != graphs.WORD_MASK:
        return 0, 3
    return have, 1


def zigzag(k: int) -> int:
    """0, 1, -1, 2, -2, ... for k = 0, 1, 2, 3, 4, ...: a signed field whose draw shrinks
    toward 0."""
    return (k + 1) // 2 if k % 2 else -(k // 2)


class _Digits:
    """Reads mixed-radix digits of a drawn integer, lowest place first."""

    __slots__ = ("rest",)

    def __init__(self, value: int) -> None:
        self.rest = value

    def take(self, radix: int) -> int:
        self.rest, d = divmod(self.rest, radix)
        return d


def _decode_launch(kernels: tuple[str, ...], s: int, parent: int, d: _Digits
                   ) -> tuple[Any, ...]:
    blocks = NUM_BLOCKS[d.take(len(NUM_BLOCKS))]
    scalars = (zigzag(d.take(2 * SCALAR_A + 1)), zigzag(d.take(2 * SCALAR_B + 1)))
    picks = (d.take(PICKS), d.take(PICKS), d.take(PICKS))
    kernel = kernels[d.take(len(kernels))]
    return ("launch", kernel, s, parent, picks, scalars, blocks)


def _decode_join(_k: tuple[str, ...], s: int, parent: int, d: _Digits) -> tuple[Any, ...]:
    return ("join", s, parent, bool(d.take(2)))


def _decode_edge(_k: tuple[str, ...], s: int, parent: int, d: _Digits) -> tuple[Any, ...]:
    return ("event_edge", s, d.rest, parent)  # the destination stream: the whole detail


def _decode_write(_k: tuple[str, ...], s: int, parent: int, d: _Digits) -> tuple[Any, ...]:
    value = WRITE_VALUES[d.take(len(WRITE_VALUES))]
    return ("value_write", s, parent, d.take(PICKS), value)


def _decode_wait(_k: tuple[str, ...], s: int, parent: int, d: _Digits) -> tuple[Any, ...]:
    flag = WAIT_FLAGS[d.take(len(WAIT_FLAGS))]
    return ("value_wait", s, parent, d.take(PICKS), flag, None)  # distance drawn apart


def _decode_memset(_k: tuple[str, ...], s: int, parent: int, d: _Digits) -> tuple[Any, ...]:
    offset, count = d.take(4 * N), 1 + d.take(4 * N)
    span = (offset, count) if d.take(2) else None
    byte = d.take(2)
    return ("memset", s, parent, d.take(PICKS), byte, span)


def _decode_copy(_k: tuple[str, ...], s: int, parent: int, d: _Digits) -> tuple[Any, ...]:
    kind = graphs.COPY_KINDS[d.take(len(graphs.COPY_KINDS))]
    dst = d.take(PICKS)
    return ("copy", s, parent, d.take(PICKS), dst, kind)


_DECODERS: dict[str, tuple[Callable[..., tuple[Any, ...]], Callable[[int, int], int]]] = {
    # kind: (decoder, detail radix for k kernels and s drawn stream ids)
    "launch": (_decode_launch, lambda k, s: len(NUM_BLOCKS) * (2 * SCALAR_A + 1)
               * (2 * SCALAR_B + 1) * PICKS ** 3 * k),
    "join": (_decode_join, lambda k, s: 2),
    "event_edge": (_decode_edge, lambda k, s: s),
    "value_write": (_decode_write, lambda k, s: len(WRITE_VALUES) * PICKS),
    "value_wait": (_decode_wait, lambda k, s: len(WAIT_FLAGS) * PICKS),
    "memset": (_decode_memset, lambda k, s: 4 * N * 4 * N * 2 * 2 * PICKS),
    "copy": (_decode_copy, lambda k, s: len(graphs.COPY_KINDS) * PICKS * PICKS),
}


@dataclass(frozen=True)
class _Items:
    """The item kinds a generator draws (launch first: shrinking moves toward it), over
    ``streams`` drawn stream ids, with the two integer strategies an item is drawn from.
    The detail's range is the largest kind's; a kind reads its digits modulo its own
    (ranges stay under 2^24, where Hypothesis draws bounded integers uniformly)."""

    kernels: tuple[str, ...]
    kinds: tuple[str, ...]
    streams: int
    head: st.SearchStrategy[int]
    detail: st.SearchStrategy[int]

    def decode(self, head: int, detail: int) -> tuple[Any, ...]:
        """The builder item (the tuple its method reads) of one drawn (head, detail)."""
        h = _Digits(head)
        parent = h.take(PARENTS)
        s = h.take(self.streams)
        kind = self.kinds[h.take(len(self.kinds))]
        decoder, radix = _DECODERS[kind]
        r = radix(len(self.kernels), self.streams)
        return decoder(self.kernels, s, parent, _Digits(detail % r))


def _item_kinds(kernels: Sequence[str], values: bool, memsets: bool,
                streams: int = graphs.MAX_STREAMS) -> _Items:
    """The item kinds and their draws for these arguments, built once per argument set
    (building and validating strategies on every draw was a fifth of the generation time)."""
    return _items_cached(tuple(kernels), values, memsets, streams)


@functools.lru_cache(maxsize=None)
def _items_cached(kernels: tuple[str, ...], values: bool, memsets: bool,
                  streams: int) -> _Items:
    kinds = ["launch", "join", "event_edge"]
    if values:
        kinds += ["value_write", "value_wait"]
    if memsets:
        kinds += ["memset", "copy"]
    detail = max(radix(len(kernels), streams) for k, (_, radix) in _DECODERS.items()
                 if k in kinds)
    return _Items(kernels, tuple(kinds), streams,
                  st.integers(0, len(kinds) * streams * PARENTS - 1), st.integers(0, detail - 1))


@functools.lru_cache(maxsize=None)
def _item_lists(items: _Items, max_size: int) -> st.SearchStrategy[list[tuple[int, int]]]:
    return st.lists(st.tuples(items.head, items.detail), max_size=max_size)


@functools.lru_cache(maxsize=None)
def _first_launch(items: _Items) -> st.SearchStrategy[tuple[int, int]]:
    """A launch item's head and detail (the head's kind place fixed at 0, launch)."""
    return st.tuples(st.integers(0, items.streams * PARENTS - 1), items.detail)


def _build_items(draw: st.DrawFn, b: _Builder, items: _Items, max_ops: int) -> None:
    """Draw a launch and up to ``max_ops - 1`` more items and interpret them into ``b``; a
    value wait's distance is its own draw (a 63-bit range, near values half the time)."""
    drawn = [draw(_first_launch(items)), *draw(_item_lists(items, max_ops - 1))]
    for head, detail in drawn:
        item = items.decode(head, detail)
        if item[0] == "value_wait":
            item = (*item[:-1], draw(distances))
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
    """A captured program (no plan yet) inside defined behaviour (graphs.check passes).

    At least one kernel launch; 1-4 streams; ``max_ops`` abstract items (each item is one op
    plus the fork of its stream the first time a stream is used). ``memsets`` also allows
    copies of every capturable kind (device to device, pinned host to device, device to
    pinned host; memsets and copies are DEFAULT tasks).
    """
    return draw_case(draw, max_ops=max_ops, values=values, memsets=memsets, kernels=kernels)

# ---------------------------------------------------------------------------------------------
# plans


@dataclass
class _PlanState:
    """What the plan builder knows: current (committed or pending) args and disabled ops."""

    case: Case
    current: dict[int, Launch] = field(default_factory=dict)
    values: dict[int, int] = field(default_factory=dict)
    disabled: set[int] = field(default_factory=set)

    def __post_init__(self) -> None:
        self.current = {i: op for i, op in enumerate(self.case.ops) if isinstance(op, Launch)}
        self.values = {i: op.value for i, op in enumerate(self.case.ops)
                       if isinstance(op, ValueWrite)}

    @property
    def waited_words(self) -> set[int]:
        return {op.word for op in self.case.ops if isinstance(op, ValueWait)}

    def kernel_targets(self, touched: set[int]) -> list[int]:
        return [i for i in self.current if i not in self.disabled and i not in touched]

    def value_targets(self, touched: set[int]) -> list[int]:
        waited = self.waited_words
        return [i for i, op in enumerate(self.case.ops) if isinstance(op, ValueWrite)
                and op.word not in waited and i not in self.disabled and i not in touched]

    def effective_ops(self) -> list[Op]:
        return [self.current.get(i, op) for i, op in enumerate(self.case.ops)]

    def race_free(self, i: int, new: Launch) -> bool:
        ops = self.effective_ops()
        ops[i] = new
        try:
            graphs._check_races(replace(self.case, ops=ops))
        except graphs.GraphError:
            return False
        return True


def _set_kernel(state: _PlanState, item: tuple[int, ...], touched: set[int]) -> Step | None:
    """SetParams(KERNEL) keeping the layout: swap a buffer, change a scalar, or switch
    between the seed pair (SETP-01, SETP-05)."""
    targets = state.kernel_targets(touched)
    if not targets:
        return None
    _, op_pick, how, field_pick, value = item
    i = targets[op_pick % len(targets)]
    old = state.current[i]
    spec = catalog.get(old.kernel)
    args = dict(old.args)
    kernel = None
    scalars = [f for f in spec.fields if f.kind == "i32" and f.name != "n"]
    if how == 2 and old.kernel in SEED_PAIR:
        kernel = SEED_PAIR[1 - SEED_PAIR.index(old.kernel)]
    elif how == 1 and scalars:
        f = scalars[field_pick % len(scalars)]
        args[f.name] = value if value != args[f.name] else value + 1
    else:
        ptrs = [f for f in spec.fields if f.kind == "ptr"]
        f = ptrs[field_pick % len(ptrs)]
        taken = {v for k, v in old.args.items() if k != f.name
                 and any(p.name == k and p.kind == "ptr" for p in spec.fields)}
        cands = [b for b in range(len(state.case.buffers)) if b != old.args[f.name]
                 and (f.role == "in" or b not in taken)
                 and state.race_free(i, replace(old, args={**args, f.name: b}))]
        pick = value % (len(cands) + 1)
        if pick < len(cands):
            args[f.name] = cands[pick]
        else:
            b = len(state.case.buffers)
            data = f.role != "out"
            state.case.buffers.append([b * N + k + 1 for k in range(N)] if data
                                      else [graphs.SENTINEL] * N)
            args[f.name] = b
    new = Launch(old.stream, kernel or old.kernel, args, old.num_blocks)
    if not state.race_free(i, new):
        return None
    state.current[i] = new
    touched.add(i)
    captured = cast(Launch, state.case.ops[i])
    # SetKernel.kernel is relative to the captured op (graphs.check, oracle)
    return SetKernel(i, args, new.kernel if new.kernel != captured.kernel else None)


def _set_value(state: _PlanState, item: tuple[int, ...], touched: set[int]) -> Step | None:
    """SetParams(VALUE_WRITE) on a write no value wait depends on (SETP-07, UPD-05)."""
    targets = state.value_targets(touched)
    if not targets:
        return None
    _, op_pick, _, _, value = item
    i = targets[op_pick % len(targets)]
    if value == state.values[i]:
        value += 1
    state.values[i] = value
    touched.add(i)
    return SetValue(i, value)


def _disable(state: _PlanState, item: tuple[int, ...], touched: set[int]) -> Step | None:
    """Disable a kernel, or a value write no wait reads (DIS-01); never an event task."""
    targets = sorted(state.kernel_targets(touched) + state.value_targets(touched))
    if not targets:
        return None
    i = targets[item[1] % len(targets)]
    state.disabled.add(i)
    touched.add(i)
    return Disable(i)


def _convert(state: _PlanState, item: tuple[int, ...], touched: set[int]) -> Step | None:
    """SetParams(VALUE_WRITE) on a kernel task outside any task group: it becomes a value
    write into a fresh word (SETP-07), the same task with the same seq id, which the listing
    after the Update shows (SEQ-05). The op takes no further change."""
    grouped = {k for members in graphs.groups(state.case) for k in members}
    targets = [i for i in state.kernel_targets(touched) if i not in grouped]
    if not targets:
        return None
    _, op_pick, _, _, value = item
    i = targets[op_pick % len(targets)]
    word = len(state.case.words)
    state.case.words.append(0)
    del state.current[i]
    touched.add(i)
    return SetValue(i, value & graphs.WORD_MASK, word)


def _host_fill(state: _PlanState, item: tuple[int, ...], touched: set[int]) -> Step | None:
    """A host store into a pinned host buffer between executions: copies from it move the
    new contents at the next execution (CAP-19)."""
    hosts = state.case.hosts
    if not hosts:
        return None
    _, pick, _, _, value = item
    return HostFill(pick % len(hosts), value)


_MODS: dict[int, Callable[[_PlanState, tuple[int, ...], set[int]], Step | None]] = {
    0: _set_kernel, 1: _disable, 2: _set_value, 3: _host_fill, 4: _convert}
#: a modification item (kind, op pick, how, field pick, value), drawn as one integer whose
#: highest place is the kind (SetParams(KERNEL) first) and lowest the value (0 first)
MOD_RADIX = (5, 8, 3, 4, 19)
_mod_draw = st.integers(0, 5 * 8 * 3 * 4 * 19 - 1)
_mod_list = st.lists(_mod_draw, max_size=3)


def mod_item(drawn: int) -> tuple[int, ...]:
    """The (kind, op pick, how, field pick, value) tuple of a drawn modification: value in
    -9..9 (zigzag from 0), field pick 0..3, how 0..2, op pick 0..7, kind 0..4."""
    d = _Digits(drawn)
    value = zigzag(d.take(19))
    field_pick, how, op_pick = d.take(4), d.take(3), d.take(8)
    return (d.take(5), op_pick, how, field_pick, value)


_mod_item = _mod_draw.map(mod_item)
#: a round as drawn: (modifications as drawn, times)
_raw_round = st.tuples(_mod_list, st.integers(1, 3))


def _round_of(raw: tuple[list[int], int]) -> tuple[list[tuple[int, ...]], int]:
    return [mod_item(m) for m in raw[0]], raw[1]


_round = _raw_round.map(_round_of)
#: one execution of a multi-model round: (model, times, Sync after it), one integer
_exec_item = st.integers(0, graphs.MAX_MODELS * 2 * 2 - 1).map(
    lambda k: (k // 4, 1 + (k // 2) % 2, bool(k % 2)))
_multi_round = st.tuples(_mod_list.map(lambda ms: [mod_item(m) for m in ms]),
                         st.lists(_exec_item, min_size=1, max_size=3))


def _mod_steps(state: _PlanState, mods: Sequence[tuple[int, ...]]) -> list[Step]:
    """A round's modifications, then one Update per model they changed (SETP-01, DIS-02:
    a model left UPDATING would not execute)."""
    touched: set[int] = set()
    steps = [s for s in (_MODS[m[0]](state, m, touched) for m in mods) if s is not None]
    models = graphs.op_models(state.case)
    changed = sorted({models[s.op] for s in steps if hasattr(s, "op")})
    return steps + [Update(m) for m in changed]


def build_plan(case: Case, rounds: Sequence[tuple[Sequence[tuple[int, ...]], int]]) -> list[Step]:
    """Interpret abstract rounds: modifications, Update (if any), Execute(times), Sync.

    Mutates ``case.buffers`` when a swap needs a fresh buffer.
    """
    state = _PlanState(case)
    plan: list[Step] = []
    for mods, times in rounds:
        plan += _mod_steps(state, mods)
        plan += [Execute(times), Sync(SYNC_MS)]
    return plan


def build_multi_plan(case: Case, rounds: Sequence[tuple[Sequence[tuple[int, ...]],
                                                        Sequence[tuple[int, int, bool]]]]
                     ) -> list[Step]:
    """Interpret abstract rounds of a case of several models: modifications and the Update
    of every model they changed, then executions of drawn models in a drawn order, each
    followed by a Sync or not, and a Sync at the end of the round; models no round executed
    run once at the end (EXE-01, EXE-02, UPD-05).

    Mutates ``case.buffers`` when a swap needs a fresh buffer.
    """
    state = _PlanState(case)
    plan: list[Step] = []
    for mods, execs in rounds:
        plan += _mod_steps(state, mods)
        for model, times, sync in execs:
            plan.append(Execute(times, model % case.models))
            if sync:
                plan.append(Sync(SYNC_MS))
        if not isinstance(plan[-1], Sync):
            plan.append(Sync(SYNC_MS))
    ran = {s.model for s in plan if isinstance(s, Execute)}
    rest = [m for m in range(case.models) if m not in ran]
    if rest:
        plan += [*(Execute(1, m) for m in rest), Sync(SYNC_MS)]
    return plan


@st.composite
def plans_for(draw: st.DrawFn, case: Case, max_rounds: int = 3) -> list[Step]:
    """A defined plan for ``case`` (mutates ``case.buffers`` for fresh swap targets)."""
    return draw_plan(draw, case, max_rounds)


def draw_plan(draw: st.DrawFn, case: Case, max_rounds: int = 3) -> list[Step]:
    """:func:`plans_for` as a function of ``draw`` (no strategy object made per draw)."""
    return build_plan(case, [_round_of(r) for r in draw(_rounds(max_rounds))])


@functools.lru_cache(maxsize=None)
def _rounds(max_rounds: int) -> st.SearchStrategy[list[Any]]:
    return st.lists(_raw_round, min_size=1, max_size=max_rounds)


@st.composite
def positive_cases(draw: st.DrawFn, **kw: Any) -> Case:
    """A case with a defined plan; ``graphs.check`` passes (SETP-01, DIS-01, UPD-05, EXE-02)."""
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
