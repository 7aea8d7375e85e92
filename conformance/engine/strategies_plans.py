"""Plans for generated task graphs: rounds of modifications, Update, Execute and Sync.

Plans only use SetParams and Disable in the ways the documented clauses define (SETP-01,
SETP-05, SETP-07, DIS-01, UPD-05), always Update before Execute, Sync (5000 ms) after every
Execute, and end with Execute + Sync (EXE-02). A modification is drawn as one integer
(:func:`mod_item`) and interpreted against the case (:func:`build_plan`,
:func:`build_multi_plan`), so deleting one deletes its step.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Sequence, cast

from hypothesis import strategies as st

from mdlri_conformance.kernel import catalog

from . import graphs, ordering
from .graphs import Case, Launch, Op, ValueWait, ValueWrite
from .steps import Disable, Execute, HostFill, SetKernel, SetValue, Step, Sync, Update
from .strategies_build import N, SEED_PAIR, SYNC_MS, _Digits, zigzag


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
            ordering.check_races(replace(self.case, ops=ops))
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
    # SetKernel.kernel is relative to the captured op (validation.check, oracle)
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
#: a modification item (kind, op pick, how, field pick, value), drawn as two integers of at
#: most 256 values (wider ones are drawn weighted toward small values, see
#: strategies.MAX_PART): kind and op pick (SetParams(KERNEL) and the first target first),
#: then how, field pick and value (value 0 first)
_mod_draw = st.tuples(st.integers(0, 5 * 8 - 1), st.integers(0, 3 * 4 * 19 - 1))
_mod_list = st.lists(_mod_draw, max_size=3)


def mod_item(drawn: tuple[int, int]) -> tuple[int, ...]:
    """The (kind, op pick, how, field pick, value) tuple of a drawn modification: kind 0..4,
    op pick 0..7, how 0..2, field pick 0..3, value in -9..9 (zigzag from 0)."""
    d = _Digits(drawn[1])
    how, field_pick, value = d.take(3), d.take(4), zigzag(d.take(19))
    kind, op_pick = divmod(drawn[0], 8)
    return (kind, op_pick, how, field_pick, value)


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
    return build_plan(case, [_round_of(r) for r in draw_rounds(draw, _raw_round, max_rounds)])


def draw_rounds(draw: st.DrawFn, round_: st.SearchStrategy[Any], max_rounds: int) -> list[Any]:
    """1..``max_rounds`` rounds: the first drawn alone, then a list of up to
    ``max_rounds - 1``. The sizes are distributed as ``st.lists(min_size=1)`` draws them
    (the same mean above the minimum), but a list with a minimum records a forced choice
    for each element it must draw, which costs as much as a drawn one."""
    return [draw(round_), *draw(_more_rounds(round_, max_rounds - 1))]


@functools.lru_cache(maxsize=None)
def _more_rounds(round_: st.SearchStrategy[Any], most: int) -> st.SearchStrategy[list[Any]]:
    return st.lists(round_, max_size=most)
