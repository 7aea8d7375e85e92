"""The oracle's listing and capture observations: what a conforming runtime lists and
answers around CaptureEnd, computed from a case description alone (no backend, no runner;
the same independence as :mod:`conformance.engine.oracle`, which drives these).

* the listing block after the capture and after every Update (LIST-08, SEQ-03/04/05);
* after the capture, the GetStreams order (LIST-02) and the short two-phase listings
  (LIST-05, with GetStreams' copy-back of LIST-04's note);
* after an Update that left streams emptied, the GetStreams order (DIS-11) and each emptied
  stream's single NOP (DIS-07);
* CaptureEnd on a joined side stream (CAP-11), a pageable copy rejected during the capture
  (MODE-14) and a capture that fails for an unjoined side stream (XS-02, CAP-13).
"""

from __future__ import annotations

from typing import Iterable

from mdlri_conformance.backends.contract import CaptureStatus, Err, TaskType

from . import case_facts, graphs, ordering
from .graphs import Case, EndOnSide, OutsideWait, PageableCopy, StrayWait
from .observe import Observation, model_key

#: the seq-id properties every conforming listing has (SEQ-03, SEQ-04, SEQ-05)
SEQ_IDS_OK = {"unique": True, "increasing": True, "stable": True}


def listing_observations(index: int, listing: dict[int, list[int]],
                         model: int = 0) -> list[Observation]:
    """The listing block of observe.py item 2 for ``index`` (-1 after the capture) of one
    model (``listing``: its user streams); seq ids are per model (SEQ-04, SEQ-07)."""
    obs = [Observation("listing", index, f"stream {s} ops", list(ids))
           for s, ids in sorted(listing.items())]
    obs.append(Observation("listing", index, model_key(model, "seq ids"), dict(SEQ_IDS_OK)))
    return obs


#: the short two-phase listings after the capture: GetStreams with a too-small array gives
#: 107039, *num = capacity and writes nothing (LIST-05, LIST-14: the public API copies back
#: only on success); GetTasksByStream fills the first ``capacity`` slots (LIST-05). Neither
#: writes past ``capacity``.
SHORT_STREAMS = {"rc": int(Err.RT_INSUFFICIENT_INPUT_ARRAY), "num": "capacity",
                 "slots": "capacity", "written": 0}
SHORT_TASKS = {"rc": int(Err.RT_INSUFFICIENT_INPUT_ARRAY), "num": "capacity",
               "slots": "capacity", "prefix": True}


def attachment_order(case: Case, model: int = 0) -> list[int]:
    """The user streams of ``model`` in the order they join its capture: the origin at
    CaptureBegin, each side stream at its first task (CAP-04, XS-01)."""
    mine = set(graphs.model_streams(case, model))
    order = [case.origins[model]]
    for op in case.ops:
        if isinstance(op, graphs.TASK_OPS) and op.stream in mine and op.stream not in order:
            order.append(op.stream)
    return order


def stream_order(case: Case, index: int, model: int = 0) -> Observation:
    """The GetStreams order of one model by stream class, most recently attached first and
    the origin last (LIST-02); an Update keeps it, emptied streams included (DIS-11)."""
    classes = case_facts.stream_classes(case)
    order = [classes[u] for u in reversed(attachment_order(case, model))]
    return Observation("listing", index, model_key(model, "stream order"), order)


def capture_listing_extras(case: Case, model: int = 0) -> list[Observation]:
    """After the capture, for one model: the GetStreams order (LIST-02), then the short
    listings (LIST-05)."""
    return [stream_order(case, -1, model),
            Observation("listing", -1, model_key(model, "short streams"), dict(SHORT_STREAMS)),
            Observation("listing", -1, model_key(model, "short tasks"), dict(SHORT_TASKS))]


def emptied_observations(case: Case, index: int, streams: Iterable[int],
                         model: int = 0) -> list[Observation]:
    """After an Update that left streams emptied: the GetStreams order, unchanged (DIS-11),
    then for each emptied stream its single DEFAULT task, the NOP Update appends (DIS-07)."""
    streams = list(streams)
    if not streams:
        return []
    return [stream_order(case, index, model),
            *(Observation("listing", index, f"stream {s} emptied", [int(TaskType.DEFAULT)])
              for s in streams)]


#: the rc of each capture-time call that issues no task and lets the capture go on: a
#: pageable async copy (MODE-14), a wait on an event recorded before the capture (XS-05), a
#: wait on an event not recorded yet (XS-14)
_CAPTURE_CALL_RC: dict[type, int] = {PageableCopy: int(Err.RT_PARAM_INVALID),
                                     OutsideWait: int(Err.RT_CAPTURE_DEPENDENCY),
                                     StrayWait: int(Err.SUCCESS)}


def capture_observations(case: Case) -> tuple[list[Observation], bool]:
    """The capture block of observe.py item 1 and whether a model came out of it:
    a CaptureEnd on a joined side stream answers 107036 and the capture stays ACTIVE on
    every stream joined so far (CAP-11; the others are not capturing yet, NONE); a pageable
    async copy on a capturing stream answers 107000 (MODE-14) and a wait on an event
    recorded before the capture 107024 (XS-05), a wait on an event never recorded 0 (XS-14),
    and the capture goes on; an
    unjoined side stream makes CaptureEnd fail with 107025, the model NULL and every stream
    out of capture (XS-02, CAP-13)."""
    obs = []
    for i, op in enumerate(case.ops):
        if type(op) in _CAPTURE_CALL_RC:
            obs.append(Observation("capture", -1, f"ops[{i}] rc", _CAPTURE_CALL_RC[type(op)]))
        if isinstance(op, EndOnSide):
            obs.append(Observation("capture", -1, f"ops[{i}] end on side",
                                   int(Err.RT_STREAM_CAPTURE_UNMATCHED)))
            joined = {0} | {o.stream for o in case.ops[:i] if isinstance(o, graphs.TASK_OPS)}
            obs.append(Observation("capture", -1, f"ops[{i}] statuses",
                                   [int(CaptureStatus.ACTIVE if s in joined else
                                        CaptureStatus.NONE) for s in range(case.streams)]))
    if ordering.unjoined_streams(case):
        obs += [Observation("capture", -1, "rc", int(Err.RT_STREAM_UNJOINED)),
                Observation("capture", -1, "model", "NULL"),
                Observation("capture", -1, "statuses", [int(CaptureStatus.NONE)] * case.streams)]
        return obs, False
    obs.append(Observation("capture", -1, "rc", int(Err.SUCCESS)))
    return obs, True
