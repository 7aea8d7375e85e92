"""Observations: what replaying a case shows, in one comparable shape.

The runner (a case replayed on a backend) and the oracle (a case interpreted from its
description alone) both produce a list of :class:`Observation` in the same order for the
same case. :func:`first_difference` finds where they part, which is what a divergence
report shows.

The order for a case is:

1. The capture: for every ``end_on_side`` op ``i``, ``("capture", -1, f"ops[{i}] end on
   side", rc)`` and ``("capture", -1, f"ops[{i}] statuses", [CaptureGetInfo status per user
   stream])`` (CAP-11); then ``("capture", -1, "rc", rc)``: the first non-zero rc of the
   setup and capture calls, or 0. When CaptureEnd itself failed, ``("capture", -1,
   "model", "NULL" | "unwritten" | "a model")`` and the statuses follow (CAP-13). When the
   rc is not 0 nothing else is observed.
2. After the capture and after every Update that returned 0, the listing:
   ``("listing", i, f"stream {s} ops", [op indices])`` for every user stream ``s``: the ops
   whose tasks GetTasksByStream lists on the internal stream of ``s``, in list order, among
   the user-visible kinds (launch, record, wait, value write, value wait; memset tasks are
   DEFAULT and not mapped), then ``("listing", i, "seq ids", {"unique": bool,
   "increasing": bool, "stable": bool})``: unique within the model (SEQ-04), strictly
   increasing along each stream's list (SEQ-03), and equal to the ids read after the
   capture for every surviving task (SEQ-05). ``i`` is -1 after the capture, the step
   index after an Update. After the capture only: ``("listing", -1, "stream order",
   [stream class per GetStreams entry])`` (LIST-02; case_facts.stream_classes), ``("listing",
   -1, "short streams", {...})`` and ``("listing", -1, "short tasks", {...})`` (LIST-05:
   rc, ``*num`` and slots of a listing one entry short). After an Update only, when the
   Updates emptied streams: ``("listing", i, "stream order", [...])`` again (DIS-11: the
   emptied streams stay listed, in the same order), then ``("listing", i, f"stream {s}
   emptied", [GetType of every listed task])`` for every stream the Updates emptied (DIS-07;
   case_facts.emptied_streams).
3. For every plan step ``i``: ``("step", i, "rc", rc)`` (for Execute, the list of the
   ``times`` return codes; for Query, ``[rc, status]``; for a sync or query that did not
   return within its deadline, ``"did not return"``, and nothing after it). After a Sync
   that answered 507046: ``("step", i, "waited the timeout", bool)`` (at least 90 % of it,
   TMO-01). After any other Sync: ``("sync", i, f"buffer {b}", [int32 values])`` for every
   buffer, then ``("sync", i, f"word {w}", value)`` for every word, then ``("sync", i,
   f"host {h}", [int32 values])`` for every pinned host buffer.

A case of several models (``Case.origins``) observes its capture block once (the rc is the
first non-zero rc of every model's capture); an op rejected during the capture (a pageable
copy, MODE-14) adds ``("capture", -1, f"ops[{i}] rc", rc)`` in op order. Item 2 comes once
per model after the capture (model 0 first) and for the model an Update committed; the
per-model observations whose name would repeat ("seq ids", "stream order", "short streams",
"short tasks") are named with :func:`model_key` (``"model 1 seq ids"``; model 0 keeps the
plain name).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Sequence


def model_key(model: int, what: str) -> str:
    """The name of a per-model observation: ``what`` for model 0, ``f"model {m} {what}"``
    for the others (so one-model cases read as before)."""
    return what if model == 0 else f"model {model} {what}"


@dataclass(frozen=True)
class Observation:
    """One observed (or expected) value, keyed by where it was seen."""

    phase: str   # "capture" | "listing" | "step" | "sync"
    index: int   # plan step index, -1 for the capture
    what: str
    value: Any

    @property
    def key(self) -> tuple[str, int, str]:
        return (self.phase, self.index, self.what)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Difference:
    """The first place where two observation lists disagree."""

    position: int
    expected: Observation | None
    observed: Observation | None

    def describe(self) -> str:
        """One line: where, expected and observed."""
        ref = self.expected or self.observed
        where = f"{ref.phase}[{ref.index}] {ref.what}" if ref else "?"
        exp = "nothing" if self.expected is None else repr(self.expected.value)
        obs = "nothing" if self.observed is None else repr(self.observed.value)
        if self.expected and self.observed and self.expected.key != self.observed.key:
            obs = f"{self.observed.phase}[{self.observed.index}] {self.observed.what} = {obs}"
        return f"{where}: expected {exp}, observed {obs}"


def first_difference(expected: Sequence[Observation],
                     observed: Sequence[Observation]) -> Difference | None:
    """The first position where the lists differ in key or value (None if identical)."""
    for i in range(max(len(expected), len(observed))):
        e = expected[i] if i < len(expected) else None
        o = observed[i] if i < len(observed) else None
        if e is None or o is None or e.key != o.key or e.value != o.value:
            return Difference(i, e, o)
    return None
