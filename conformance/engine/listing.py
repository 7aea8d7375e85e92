"""The listing of a replayed model: which listed task is which op of the case.

Every internal stream's user-visible tasks are matched to the case's per-stream op sequences
by signature (:mod:`conformance.engine.signature`): the type (GetType), for kernels the
function handle plus the argument bytes read from device memory at ``params.kernel.args``
compared with the packed expected arguments, for value tasks devAddr/value(/flag) (LIST-01,
LIST-08, TYPE-02, GETP-03, GETP-05). Internal streams are assigned to user streams by the best
total alignment; streams whose user-visible tasks align equally well are told apart by their
DEFAULT tasks (the memsets of each user stream). Memset ops are then mapped to the DEFAULT
tasks between their neighbours' tasks (needed to Disable them, DIS-06). Task handles mapped at
capture are reused after Update (handles are stable across Update, abi.md §6.3, Q-23). Seq
ids give the unique/increasing/stable flags (SEQ-03, SEQ-04, SEQ-05).

The signatures get coarser when the runtime cannot show more (signature.LEVELS): without
``Cap.DATA_MOVEMENT`` no argument bytes are read from the device (kernel name only), and when
GetParams does not answer the match uses the listing order and GetType alone.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from mdlri_conformance.backends.contract import (
    UNWRITTEN, Backend, Cap, Err, KernelTaskParams, MemcpyKind, TaskType,
)

from . import case_facts, graphs, signature
from .graphs import DEFAULT_OPS, Case, Op
from .observe import Observation, model_key
from .signature import Sig, coarse

#: a success (note() is asked about the other return codes only: it keeps nothing of 0)
_OK = Err.SUCCESS
#: (internal stream, [(task, GetType or None)]) per listed stream
Typed = list[tuple[Any, list[tuple[Any, int | None]]]]
#: (internal stream, [(task, signature)]) per listed stream, user-visible tasks only
Visible = list[tuple[Any, list[tuple[Any, Sig]]]]


@dataclass
class TaskMap:
    """The op <-> task mapping of one model of a replay, built at the first listing and
    kept after.

    ``note`` remembers a 207000 / 207019 answer of a call (the runner's); ``model`` is the
    case model (``Case.origins``) whose streams and ops this map covers."""

    b: Backend
    case: Case
    buf_addr: list[int]
    word_addr: list[int]
    funcs: dict[str, Any]
    note: Callable[[Any, str], Any]
    task_op: dict[Any, int] = field(default_factory=dict)      # task handle -> op index
    op_task: dict[int, Any] = field(default_factory=dict)      # op index -> task handle
    seq0: dict[Any, int] = field(default_factory=dict)         # seq ids read after capture
    stream_user: dict[Any, int] = field(default_factory=dict)  # internal stream -> user stream
    level: str = "full"                                        # signature level (LEVELS)
    model: int = 0                                             # the case model mapped
    users: list[int] = field(init=False)                       # its user streams
    #: id(op) -> (op, its full expected signature): the addresses are fixed once setup ran,
    #: before any listing, so an op's signature is packed once (the op is kept, so its id
    #: is not reused while the entry lives)
    _sigs: dict[int, tuple[Op, Sig | None]] = field(default_factory=dict, init=False,
                                                    repr=False, compare=False)

    def __post_init__(self) -> None:
        self.users = graphs.model_streams(self.case, self.model)

    def coarsen(self, level: str) -> None:
        """Use signature ``level`` from now on, if it is coarser than the current one."""
        self.level = signature.coarser(self.level, level)

    # -- signatures ------------------------------------------------------------------------
    def expected_sig(self, op: Op) -> Sig | None:
        """What GetType/GetParams show for an op's task (None: DEFAULT, not mapped)."""
        hit = self._sigs.get(id(op))
        if hit is not None and hit[0] is op:
            return hit[1]
        sig = signature.of_op(op, self.buf_addr.__getitem__, self.word_addr.__getitem__)
        self._sigs[id(op)] = (op, sig)
        return sig

    def task_type(self, task: Any) -> int | None:
        """GetType of a listed task (None when it fails)."""
        rc, ttype = self.b.task_get_type(task)
        if rc != _OK:  # note() keeps nothing of a success: asked only for the others
            self.note(rc, "aclmdlRITaskGetType")
            return None
        return int(ttype)

    def observed_sig(self, task: Any, ttype: int | None) -> Sig | None:
        """A listed task's signature from GetType/GetParams (None for DEFAULT/internal).

        When GetParams does not answer, the signature is the type alone and the replay
        matches at the "type" level from then on (the listing order still identifies the
        tasks); without data movement kernel arguments are not read ("no-args")."""
        if ttype is None or ttype in signature.HIDDEN:
            return None  # of_task's answer for a hidden type (GetParams is not asked)
        params = None
        if signature.asks_params(ttype):
            rc, params = self.b.task_get_params(task)
            if rc != Err.SUCCESS:
                params = None
                if ttype in signature.KINDS:
                    self.coarsen("type")
        return signature.of_task(ttype, params, self.function_name, self.read_args)

    def function_name(self, handle: Any) -> str:
        """The catalog kernel whose function handle this is ("?" for none)."""
        return next((n for n, f in self.funcs.items() if f == handle), "?")

    def read_args(self, k: KernelTaskParams) -> bytes | None:
        """The argument bytes of a kernel task (device copy, GETP-03; host bytes accepted);
        None when device memory does not move (the match is then by kernel name)."""
        moves = Cap.DATA_MOVEMENT in self.b.capabilities
        args = signature.kernel_args(k, self.read_device if moves else None)
        if args is None:
            self.coarsen("no-args")
        return args

    def read_device(self, addr: int, nbytes: int) -> bytes:
        out = np.zeros(nbytes, dtype=np.uint8)
        rc = self.b.memcpy(out, nbytes, addr, nbytes, MemcpyKind.DEVICE_TO_HOST)
        return out.tobytes() if rc == Err.SUCCESS else b""

    # -- listing ---------------------------------------------------------------------------
    def list_model(self, model: Any) -> list[tuple[Any, list[Any]]]:
        """(internal stream, its tasks) for every stream GetStreams returns."""
        out: list[tuple[Any, list[Any]]] = []
        rc, _, n = self.b.get_streams(model, None)
        if self.note(rc, "aclmdlRIGetStreams") != Err.SUCCESS or not isinstance(n, int):
            return out
        rc, slots, got = self.b.get_streams(model, n)
        if self.note(rc, "aclmdlRIGetStreams") != Err.SUCCESS or slots is None:
            return out
        return [(s, self.tasks_of(s)) for s in slots[:got]]

    def tasks_of(self, stream: Any) -> list[Any]:
        """GetTasksByStream, two-phase (LIST-03); [] when a call fails."""
        rc, _, m = self.b.get_tasks_by_stream(stream, None)
        if self.note(rc, "aclmdlRIGetTasksByStream") != Err.SUCCESS or not isinstance(m, int):
            return []
        rc, tslots, tgot = self.b.get_tasks_by_stream(stream, m)
        self.note(rc, "aclmdlRIGetTasksByStream")
        return list(tslots[:tgot]) if rc == Err.SUCCESS and tslots is not None else []

    def observe(self, model: Any, index: int, current: dict[int, Op]) -> list[Observation]:
        """The listing block of observe.py item 2 (LIST-08, SEQ-03/04/05, DIS-05);
        ``current`` holds the ops with their committed SetParams."""
        listed = self.list_model(model)
        typed = [(s, [(t, self.task_type(t)) for t in tasks]) for s, tasks in listed]
        visible = [(s, [(t, sig) for t, sig in ((t, self.observed_sig(t, ty)) for t, ty in ts)
                        if sig is not None]) for s, ts in typed]
        if self.level != "full":  # coarse() keeps a full signature as it is
            visible = [(s, [(t, coarse(sig, self.level)) for t, sig in ts])
                       for s, ts in visible]
        first = index == -1
        if first:
            self.map_capture(visible, typed)
            self.map_memsets(typed)
        per_user: dict[int, list[int]] = {u: [] for u in self.users}
        for s, ts in visible:
            u = self.stream_user.get(s)
            if u is None:
                u = self.guess_user(ts)
                self.stream_user[s] = u
            ops = [self.op_of(t, sig, current) for t, sig in ts]
            if u is not None:
                per_user[u].extend(ops)
        obs = [Observation("listing", index, f"stream {u} ops", ids)
               for u, ids in sorted(per_user.items())]
        obs.append(Observation("listing", index, model_key(self.model, "seq ids"),
                               self.seq_flags(listed, first,
                                              {t for _, ts in visible for t, _ in ts})))
        return obs

    def capture_extras(self, model: Any) -> list[Observation]:
        """After the capture: the GetStreams order as stream classes (LIST-02), then a
        GetStreams and a GetTasksByStream (of the origin's internal stream) with one slot
        fewer than the count (LIST-05, LIST-14): rc, ``*num``, how many slots came back
        ("capacity" when exactly that many), and which were written."""
        order, listed = self.stream_order(model, -1)
        obs = [order]
        count = len(listed)
        cap = max(count - 1, 0)
        rc, slots, got = self.b.get_streams(model, cap)
        self.note(rc, "aclmdlRIGetStreams")
        slots = list(slots or [])
        obs.append(Observation("listing", -1, model_key(self.model, "short streams"), {
            "rc": int(rc), "num": _capacity(got, cap), "slots": _capacity(len(slots), cap),
            "written": sum(x is not UNWRITTEN for x in slots)}))
        origin_user = self.case.origins[self.model]
        origin = next((s for s in listed if self.stream_user.get(s) == origin_user), None)
        full = self.tasks_of(origin) if origin is not None else []
        cap = max(len(full) - 1, 0)
        rc, tslots, got = (self.b.get_tasks_by_stream(origin, cap) if origin is not None
                           else (-1, [], None))
        self.note(rc, "aclmdlRIGetTasksByStream")
        tslots = list(tslots or [])
        obs.append(Observation("listing", -1, model_key(self.model, "short tasks"), {
            "rc": int(rc), "num": _capacity(got, cap), "slots": _capacity(len(tslots), cap),
            "prefix": tslots[:cap] == full[:cap]}))
        return obs

    def stream_order(self, model: Any, index: int) -> tuple[Observation, list[Any]]:
        """The two-phase GetStreams of ``model`` as stream classes (-1: a stream mapped to no
        user stream; LIST-02, DIS-11), and the listed internal streams."""
        classes = case_facts.stream_classes(self.case)
        rc, _, n = self.b.get_streams(model, None)
        self.note(rc, "aclmdlRIGetStreams")
        count = n if rc == Err.SUCCESS and isinstance(n, int) else 0
        rc, slots, _ = self.b.get_streams(model, count)
        self.note(rc, "aclmdlRIGetStreams")
        listed = list(slots or [])[:count] if rc == Err.SUCCESS else []
        order = [classes[self.stream_user[s]] if self.stream_user.get(s) is not None else -1
                 for s in listed]
        return Observation("listing", index, model_key(self.model, "stream order"), order), listed

    def emptied(self, model: Any, index: int, removed: set[int]) -> list[Observation]:
        """When Updates removed every task of some user streams (among those that can be
        emptied, :func:`case_facts.emptied_streams`): the GetStreams order, which keeps them
        (DIS-11), then for each the GetType of every task its internal stream lists (DIS-07:
        one DEFAULT, the NOP Update appends)."""
        mine = [u for u in case_facts.emptied_streams(self.case, removed) if u in self.users]
        if not mine:
            return []
        obs = [self.stream_order(model, index)[0]]
        for u in mine:
            s = next((s for s, user in self.stream_user.items() if user == u), None)
            tasks = self.tasks_of(s) if s is not None else []
            obs.append(Observation("listing", index, f"stream {u} emptied",
                                   [self.task_type(t) for t in tasks]))
        return obs

    def op_of(self, task: Any, sig: Sig, current: dict[int, Op]) -> int:
        """The op of a task: from the capture-time mapping, else by signature (-1: none)."""
        mapped = self.task_op.get(task)
        if mapped is not None:
            return mapped
        for i, op in sorted(current.items()):
            if op.stream not in self.users:
                continue
            if i not in self.op_task and coarse(self.expected_sig(op), self.level) == sig:
                self.task_op[task], self.op_task[i] = i, task
                return i
        return -1

    def guess_user(self, ts: list[tuple[Any, Sig]]) -> int | None:
        """The user stream most of an unknown internal stream's known tasks belong to."""
        votes = [self.case.ops[self.task_op[t]].stream for t, _ in ts if t in self.task_op]
        return max(set(votes), key=votes.count) if votes else None

    def map_capture(self, visible: Visible, typed: Typed) -> None:
        """Assign internal streams to user streams (best total alignment of the user-visible
        tasks; among equally good assignments, the one whose DEFAULT task counts best match
        the user streams' memsets), then tasks to ops along the alignment."""
        expected: dict[int, list[tuple[int, Sig | None]]] = {u: [] for u in self.users}
        memsets = dict.fromkeys(self.users, 0)
        for i, op in enumerate(self.case.ops):
            if op.stream not in expected:
                continue
            sig = self.expected_sig(op)
            if sig is not None:
                expected[op.stream].append((i, coarse(sig, self.level)))
            if isinstance(op, DEFAULT_OPS):
                memsets[op.stream] += 1
        defaults = [sum(ty == TaskType.DEFAULT for _, ty in ts) for _, ts in typed]
        k = len(visible)
        users = list(self.users)
        listed_sigs = [[sig for _, sig in ts] for _, ts in visible]
        op_sigs = {u: [sig for _, sig in expected[u]] for u in users}
        score = {(a, u): (_lcs_length(listed_sigs[a], op_sigs[u]),
                          -abs(defaults[a] - memsets[u]))
                 for a in range(k) for u in users}
        best: tuple[int | None, ...] = ()
        best_total = (-1, 0)
        # injective map internal stream -> user stream (or None when there are more streams)
        slots: list[int | None] = [*users, *([None] * max(0, k - len(users)))]
        for perm in itertools.permutations(slots, k):
            pairs = [score[(a, u)] for a, u in enumerate(perm) if u is not None]
            total = (sum(p[0] for p in pairs), sum(p[1] for p in pairs))
            if total > best_total:
                best, best_total = perm, total
        for a, u in enumerate(best):
            s, ts = visible[a]
            if u is None:
                continue
            self.stream_user[s] = u
            for ti, oi in _align(ts, expected[u])[1]:
                task, op_index = ts[ti][0], expected[u][oi][0]
                self.task_op[task], self.op_task[op_index] = op_index, task

    def map_memsets(self, typed: Typed) -> None:
        """Memset ops (DEFAULT tasks, not identifiable by GetParams, GETP-01): the DEFAULT
        tasks of the user stream's internal stream, in order, between the tasks of the
        neighbouring mapped ops (needed to Disable them, DIS-06)."""
        for s, ts in typed:
            u = self.stream_user.get(s)
            if u is None:
                continue
            pos = {t: k for k, (t, _) in enumerate(ts)}
            used: set[int] = set()
            lo = -1
            for i, op in enumerate(self.case.ops):
                if op.stream != u:
                    continue
                t = self.op_task.get(i)
                if t is not None and t in pos:
                    lo = pos[t]
                    continue
                if not isinstance(op, DEFAULT_OPS):
                    continue
                nxt = next((pos[self.op_task[j]] for j in range(i + 1, len(self.case.ops))
                            if self.case.ops[j].stream == u and self.op_task.get(j) in pos),
                           len(ts))
                cand = next((k for k in range(lo + 1, nxt) if k not in used
                             and ts[k][1] == TaskType.DEFAULT), None)
                if cand is not None:
                    used.add(cand)
                    lo = cand
                    self.op_task[i] = ts[cand][0]
                    self.task_op[ts[cand][0]] = i

    def seq_flags(self, listed: list[tuple[Any, list[Any]]], first: bool,
                  visible: set[Any]) -> dict[str, bool]:
        """unique within the model (SEQ-04), increasing along each list (SEQ-03), equal to
        the capture-time ids for every surviving user task (SEQ-05). Only a task ``visible``
        now (a user task, DEFAULT/internal ones aside) is held to its capture-time id: the
        runtime may hand the handle of a task that Update removed (DIS-05) to the internal
        NOP it adds (DIS-07), which takes a new id (SEQ-06)."""
        seen: list[int] = []
        increasing = True
        stable = True
        for _, tasks in listed:
            prev: int | None = None
            for t in tasks:
                rc, sid = self.b.task_get_seq_id(t)
                if rc != _OK:
                    self.note(rc, "aclmdlRITaskGetSeqId")
                    continue
                if not isinstance(sid, int):
                    continue
                seen.append(sid)
                if prev is not None and sid <= prev:
                    increasing = False
                prev = sid
                if first:
                    self.seq0[t] = sid
                elif t in visible and t in self.seq0 and self.seq0[t] != sid:
                    stable = False
        return {"unique": len(seen) == len(set(seen)), "increasing": increasing,
                "stable": stable}


def _capacity(value: Any, capacity: int) -> Any:
    """``"capacity"`` when ``value`` equals it (what the oracle names), else the value."""
    return "capacity" if value == capacity else value


def _lcs_length(a: Sequence[Sig], b: Sequence[Sig]) -> int:
    """The length of the longest common subsequence of two signature lists: what
    :func:`_align` gives as its first item, without its table (the bit-parallel algorithm of
    Allison and Dix, as Hyyrö writes it: one big-int step per item of ``b``). The
    assignment of internal streams scores every pair of streams with it; only the chosen
    pairs are aligned."""
    if len(a) == len(b) and all(x == y for x, y in zip(a, b)):
        return len(a)
    where: dict[Sig, int] = {}
    for i, x in enumerate(a):
        where[x] = where.get(x, 0) | (1 << i)
    full = (1 << len(a)) - 1
    v = full
    for y in b:
        u = v & where.get(y, 0)
        v = ((v + u) | (v - u)) & full
    return len(a) - v.bit_count()


def _align(ts: Sequence[tuple[Any, Sig]], ops: Sequence[tuple[int, Sig | None]]
           ) -> tuple[int, list[tuple[int, int]]]:
    """Longest common subsequence of task and op signatures: (length, [(task i, op j)])."""
    n, m = len(ts), len(ops)
    if n == m and all(t[1] == o[1] for t, o in zip(ts, ops)):
        return n, [(k, k) for k in range(n)]  # the usual listing: every task in op order
    dp = [[0] * (m + 1) for _ in range(n + 1)]
    for a in range(n - 1, -1, -1):
        for c in range(m - 1, -1, -1):
            dp[a][c] = (dp[a + 1][c + 1] + 1 if ts[a][1] == ops[c][1]
                        else max(dp[a + 1][c], dp[a][c + 1]))
    pairs: list[tuple[int, int]] = []
    a = c = 0
    while a < n and c < m:
        if ts[a][1] == ops[c][1]:
            pairs.append((a, c))
            a, c = a + 1, c + 1
        elif dp[a + 1][c] >= dp[a][c + 1]:
            a += 1
        else:
            c += 1
    return dp[0][0], pairs
