"""The builder behind the generated task graphs: abstract items -> a race-free op list.

:class:`_Builder` interprets the items :mod:`conformance.engine.strategies` draws (a kernel
launch, a value write/wait, a memset, a copy, an event edge, a join) into one model's ops,
tracking happens-before (ordering.happens_before) and footprints (graphs.op_footprint) so
that no two unordered ops touch a buffer or word with a write: a buffer that would race is
replaced by a fresh one (XS-01, XS-02, XS-13). Also the constants every generator shares and
:class:`_Digits`, which reads the fields packed into one drawn integer.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

from mdlri_conformance.backends.contract import TaskType
from mdlri_conformance.kernel import catalog

from . import graphs
from .graphs import Case, Copy, Launch, Memset, Op, Record, ValueWait, ValueWrite, Wait


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
        """Append an op, tracking happens-before (ordering.happens_before) and footprints."""
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


#: word values at the edges of the signed and unsigned 64-bit ranges
EDGE_VALUES: tuple[int, ...] = (0, 1, 2, (1 << 63) - 1, 1 << 63, (1 << 63) + 1,
                                graphs.WORD_MASK - 1, graphs.WORD_MASK)


def satisfied_value(have: int, flag: int, distance: int) -> tuple[int, int]:
    """(value, flag) of a wait that a word holding ``have`` satisfies (graphs.wait_holds):
    GEQ with a value up to ``distance`` below it in the signed range (graphs.geq_readings_agree),
    EQ with the value itself, AND with its lowest set bit, NOR with 0. AND of a zero word
    and NOR of an all-ones word can never hold: EQ instead."""
    have &= graphs.WORD_MASK
    if flag == 0:  # not below the signed range: both readings of GEQ hold (abi.md §3.5)
        h = graphs.signed64(have)
        return (h - min(distance, h + (1 << 63), (1 << 63) - 1)) & graphs.WORD_MASK, 0
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
