"""The library part of the stateful machine (``specs/test_stateful.py``).

The machine's rules draw what to do next; this module holds what they draw from and check
against:

* the machine's resources (:data:`N_BUFFERS` buffers, :data:`N_WORDS` words,
  :data:`N_STREAMS` streams, :data:`N_EVENTS` events, the data kernels :data:`KERNELS`);
* :class:`Capture`: the ops issued in the current capture, what orders them, and which new
  ops keep the program inside defined behaviour (no unordered conflicting accesses, every
  side stream joined back before CaptureEnd, XS-02);
* :class:`Signatures` and :class:`StreamMatch`: the listed user-visible tasks of each internal
  stream against the surviving ops of each user stream, by task signature
  (:mod:`conformance.engine.signature`, LIST-08, DIS-05, GETP-06);
* :func:`run`: running a machine class so that a step meeting a 207000 / 207019 is noted,
  never raised to Hypothesis, with the decorators :func:`tolerant` and :func:`skippable`.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol

from hypothesis import HealthCheck, reject, settings
from hypothesis.errors import FailedHealthCheck, Unsatisfiable
from hypothesis.stateful import RuleBasedStateMachine, run_state_machine_as_test

from mdlri_conformance.backends.contract import KernelTaskParams, TaskParams
from mdlri_conformance.conformance.framework import outcomes
from mdlri_conformance.conformance.framework.shrinking import shrink_budget
from mdlri_conformance.kernel import catalog

from . import signature
from .graphs import Case, Launch, Op, Record, Wait, clash, op_footprint
from .oracle_program import Program
from .ordering import happens_before_ops
from .signature import Sig

N = catalog.SEED_ELEMENTS
N_BUFFERS = 5
N_WORDS = 2
N_STREAMS = 3
N_EVENTS = 10
#: the data kernels the machine draws (not the waiting / faulting special kernels)
KERNELS = tuple(k for k in catalog.KERNELS if k not in catalog.SPECIAL_KERNELS)


def initial_buffer(b: int) -> list[int]:
    """The initial contents of buffer ``b``."""
    return [(b + 1) * 10 + i for i in range(N)]


def same_layout(kernel: str) -> list[str]:
    """Kernels SetParams may swap in for ``kernel`` (same argument struct)."""
    fields = catalog.get(kernel).fields
    return [k for k in KERNELS if catalog.get(k).fields == fields]


def race_free(new: Op, others: list[tuple[int, Op | None]], ordered: set[int]) -> bool:
    """Whether ``new`` conflicts with none of ``others`` outside the ``ordered`` indices."""
    foot = op_footprint(new)
    return not any(op is not None and j not in ordered and clash(foot, op_footprint(op))
                   for j, op in others)


def pointer_args(kernel: str) -> list[str]:
    """The buffer arguments of a catalog kernel, in struct order."""
    return [f.name for f in catalog.get(kernel).fields if f.kind == "ptr"]


# ---------------------------------------------------------------------------------------------
# the current capture


@dataclass
class Capture:
    """The ops issued in a capture (in host order) with the streams that joined it and the
    stream each event was recorded on; ``order`` (happens-before) once it ended."""

    ops: list[Op] = field(default_factory=list)
    joined: set[int] = field(default_factory=lambda: {0})
    record_stream: dict[int, int] = field(default_factory=dict)
    order: list[set[int]] = field(default_factory=list)

    def track(self, op: Op) -> None:
        """Note what an issued record/wait does to the capture (before its rc is checked)."""
        if isinstance(op, Record):
            self.record_stream[op.event] = op.stream
        elif isinstance(op, Wait):
            self.joined.add(op.stream)

    def seal(self) -> None:
        """CaptureEnd: fix the happens-before order of the ops."""
        self.order = happens_before_ops(list(self.ops))

    def last_on(self, stream: int) -> int | None:
        idx = [i for i, op in enumerate(self.ops) if op.stream == stream]
        return idx[-1] if idx else None

    def free_events(self) -> list[int]:
        return [e for e in range(N_EVENTS) if e not in self.record_stream]

    def case(self) -> Case:
        """The capture as a case (no plan)."""
        return Case(streams=N_STREAMS, buffers=[initial_buffer(b) for b in range(N_BUFFERS)],
                    words=[0] * N_WORDS, events=N_EVENTS, ops=list(self.ops), plan=[],
                    name="stateful")

    def ordered_before_next(self, stream: int) -> set[int]:
        """Ops that happen before the next op issued on ``stream``."""
        last = self.last_on(stream)
        return set() if last is None else happens_before_ops(list(self.ops))[last] | {last}

    def appendable(self, new: Op) -> bool:
        """Whether issuing ``new`` keeps the capture free of unordered conflicts."""
        return race_free(new, list(enumerate(self.ops)), self.ordered_before_next(new.stream))

    def launch_candidates(self, stream: int, kernel: str) -> list[tuple[int, ...]]:
        """Buffer choices (one per pointer argument) for a launch of ``kernel`` on ``stream``
        that race with no unordered op."""
        fields = catalog.get(kernel).fields
        ptrs = pointer_args(kernel)
        ordered = self.ordered_before_next(stream)
        others = list(enumerate(self.ops))
        out = []
        for combo in itertools.permutations(range(N_BUFFERS), len(ptrs)):
            args = {**dict(zip(ptrs, combo)), **{f.name: 1 for f in fields if f.kind == "i32"}}
            if race_free(Launch(stream, kernel, args), others, ordered):
                out.append(combo)
        return out

    def joined_back(self, stream: int) -> bool:
        """Whether side ``stream`` ends with a record that the origin stream's last op
        already waits on (XS-02)."""
        last, last0 = self.last_on(stream), self.last_on(0)
        before0 = happens_before_ops(list(self.ops))[last0] if last0 is not None else set()
        return isinstance(self.ops[last], Record) and last in before0

    def kernel_choices(self, i: int, program: Program) -> list[tuple[str, tuple[int, ...]]]:
        """(kernel, buffers) replacements for launch op ``i`` that keep ``program``
        defined."""
        op = self.ops[i]
        assert isinstance(op, Launch)
        ptrs = pointer_args(op.kernel)
        scal = {k: v for k, v in op.args.items() if k not in ptrs}
        # ordering never changes (records and waits are never disabled or set): only the
        # new accesses of op i against the ops unordered with it matter
        others = [(j, o) for j, o in enumerate(program.effective()) if j != i]
        ordered = self.order[i] | {j for j in range(len(self.ops)) if i in self.order[j]}
        out = []
        for kernel in same_layout(op.kernel):
            for combo in itertools.permutations(range(N_BUFFERS), len(ptrs)):
                new = Launch(op.stream, kernel, {**dict(zip(ptrs, combo)), **scal}, op.num_blocks)
                if race_free(new, others, ordered):
                    out.append((kernel, combo))
        return out


# ---------------------------------------------------------------------------------------------
# the listing against the program


class TaskReader(Protocol):
    """The listing queries the machine needs, each required to succeed (the spec's device
    helper provides them)."""

    def streams_of(self, model: Any) -> list[Any]: ...
    def tasks_of(self, stream: Any) -> list[Any]: ...
    def type_of(self, task: Any) -> int: ...
    def params_of(self, task: Any) -> TaskParams: ...
    def read_bytes(self, addr: int, nbytes: int) -> bytes: ...


@dataclass
class Signatures:
    """The machine's task signatures: ops at the machine's buffer and word addresses, listed
    tasks through ``reader``. Without data movement (``moves_data`` False) argument bytes are
    not read and kernels match by name (the "no-args" level)."""

    reader: TaskReader
    buffer_addrs: list[int]
    word_addrs: list[int]
    funcs: dict[Any, str]
    moves_data: bool

    @property
    def level(self) -> str:
        return "full" if self.moves_data else "no-args"

    def of_op(self, op: Op) -> Sig | None:
        """What a conforming runtime lists for ``op``."""
        sig = signature.of_op(op, self.buffer_addrs.__getitem__, self.word_addrs.__getitem__)
        return signature.coarse(sig, self.level)

    def of_task(self, task: Any, ttype: int) -> Sig | None:
        """What a listed task of type ``ttype`` shows (GetParams where it identifies it)."""
        params = self.reader.params_of(task) if signature.asks_params(ttype) else None
        sig = signature.of_task(ttype, params, self.function_name, self.kernel_args)
        return signature.coarse(sig, self.level)

    def function_name(self, handle: Any) -> str:
        return self.funcs.get(handle, repr(handle))

    def kernel_args(self, k: KernelTaskParams) -> bytes | None:
        return signature.kernel_args(k, self.reader.read_bytes if self.moves_data else None)

    def listing(self, model: Any) -> list[list[tuple[Any, int]]]:
        """Per internal stream, (task, type) of every listed task."""
        return [[(t, self.reader.type_of(t)) for t in self.reader.tasks_of(s)]
                for s in self.reader.streams_of(model)]

    def user_tasks(self, listing: list[list[tuple[Any, int]]]
                   ) -> list[list[tuple[Any, Sig | None]]]:
        """Per internal stream, (task, signature) of the user-visible tasks."""
        return [[(t, self.of_task(t, ty)) for t, ty in tasks if ty in signature.KINDS]
                for tasks in listing]

    def describe(self, sig: Sig) -> str:
        return signature.describe(sig, self.buffer_addrs, self.word_addrs)


@dataclass
class StreamMatch:
    """Listed internal streams against user streams, grouped by their signature sequences:
    ``expected`` (signatures -> the op ids of each user stream with them) and ``listed``
    (signatures -> the tasks of each internal stream with them)."""

    expected: dict[tuple[Sig, ...], list[list[int]]]
    listed: dict[tuple[Sig, ...], list[list[Any]]]

    @classmethod
    def of(cls, streams: list[list[int]], sig_of: Callable[[int], Sig],
           listed: list[list[tuple[Any, Sig]]]) -> StreamMatch:
        """Group the user streams' op ids (``sig_of`` gives an op's signature) and the
        listed streams' (task, signature) lists; empty streams take no part."""
        exp: dict[tuple[Sig, ...], list[list[int]]] = {}
        for ids in streams:
            if ids:
                exp.setdefault(tuple(sig_of(i) for i in ids), []).append(ids)
        got: dict[tuple[Sig, ...], list[list[Any]]] = {}
        for tasks in listed:
            if tasks:
                got.setdefault(tuple(sig for _, sig in tasks), []).append([t for t, _ in tasks])
        return cls(exp, got)

    def agrees(self) -> bool:
        """Every signature sequence is listed as many times as user streams have it."""
        return ({k: len(v) for k, v in self.expected.items()}
                == {k: len(v) for k, v in self.listed.items()})

    def summaries(self, describe: Callable[[Sig], str]) -> tuple[list[list[str]], list[list[str]]]:
        """(expected, listed) as sorted lists of readable signature sequences."""
        def side(groups: dict[tuple[Sig, ...], list[Any]]) -> list[list[str]]:
            return sorted([describe(sig) for sig in k] for k, v in groups.items() for _ in v)
        return side(self.expected), side(self.listed)

    def pairs(self) -> tuple[dict[int, Any], list[tuple[list[int], list[Any]]]]:
        """(op -> task for uniquely matched streams, [(op ids, tasks)] per group of streams
        whose signatures are identical); only meaningful when :meth:`agrees`."""
        mapping: dict[int, Any] = {}
        groups = []
        for key, id_lists in self.expected.items():
            if len(id_lists) == 1:
                mapping.update(zip(id_lists[0], self.listed[key][0]))
            groups.append(([i for ids in id_lists for i in ids],
                           [t for ts in self.listed[key] for t in ts]))
        return mapping, groups


# ---------------------------------------------------------------------------------------------
# running a machine: unsupported steps are noted, never failures


#: seconds Hypothesis may spend shrinking a machine's failure (well inside the spec timeout)
SHRINK_BUDGET_S = 20

#: the unsupported steps met in the running machine (reset by :func:`run`)
UNSUPPORTED: list[str] = []


def tolerant(fn: Callable[..., Any]) -> Callable[..., Any]:
    """A rule that meets a 207000 / 207019 notes it and discards the example (the call may
    have changed the backend half-way, so the machine's model of it no longer holds)."""

    @functools.wraps(fn)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return fn(self, *args, **kwargs)
        except outcomes.Unsupported as exc:
            UNSUPPORTED.append(f"{fn.__name__}: {exc}")
            reject()
    return wrapper


def skippable(fn: Callable[..., Any]) -> Callable[..., Any]:
    """A host-side change or query whose call answered 207000 / 207019 changed nothing:
    note it, put the expected model state (``self.model_state.state``) back and go on with
    the example (so the other rules keep being checked in it, and a real failure among them
    still fails)."""

    @functools.wraps(fn)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        before = self.model_state.state
        try:
            return fn(self, *args, **kwargs)
        except outcomes.Unsupported as exc:
            UNSUPPORTED.append(f"{fn.__name__}: {exc}")
            self.model_state.state = before
            return None
    return wrapper


def batch_seed(name: str, batch: int) -> int | None:
    """The seed of one batch of a machine: derived from the machine's name and the batch
    under a derandomized profile (``ci``) or ``--hypothesis-seed``, so batches explore
    different programs and every run of a batch replays the same ones; None (Hypothesis's own
    randomness) otherwise."""
    from hypothesis import core
    forced = getattr(core, "global_force_seed", None)
    if forced is None and not settings.default.derandomize:
        return None
    digest = hashlib.sha256(f"{name}/{batch}/{forced}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


def run(machine: type[RuleBasedStateMachine], steps: int, batch: int = 0,
        batches: int = 1) -> None:
    """Run one of ``batches`` short batches of the machine (``steps`` per example, the
    profile's examples shared between the batches, the first failure shrunk for at most
    :data:`SHRINK_BUDGET_S`); a run whose only trouble was unsupported steps raises
    :class:`outcomes.Unsupported` with the first of them. A failure prints the shrunk steps
    (and Hypothesis's reproduce blob under ``print_blob``), and replays with the same test id,
    whose batch fixes the seed."""
    UNSUPPORTED.clear()
    checks = [HealthCheck.too_slow, HealthCheck.filter_too_much]
    examples = max(1, -(-settings.default.max_examples // batches))
    factory = type(f"{machine.__name__}_batch{batch}", (machine,), {})
    factory._hypothesis_internal_use_seed = batch_seed(machine.__name__, batch)  # type: ignore[attr-defined]
    try:
        with shrink_budget(SHRINK_BUDGET_S):
            run_state_machine_as_test(factory, settings=settings(
                max_examples=examples, stateful_step_count=steps, report_multiple_bugs=False,
                suppress_health_check=checks))
    except (Unsatisfiable, FailedHealthCheck):
        if not UNSUPPORTED:
            raise
    if UNSUPPORTED:
        first = UNSUPPORTED[0]
        UNSUPPORTED.clear()
        raise outcomes.Unsupported(f"state machine step {first}")
