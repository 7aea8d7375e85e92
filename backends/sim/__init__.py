"""The reference simulator of the Model RI API (pure Python + numpy).

``backends.sim.create(**options) -> SimBackend`` builds one simulated device/context.

Modules, one job each:

* :mod:`.memory`   flat device address space (64-byte aligned, guard gaps, garbage-filled) and
  pinned host buffers;
* :mod:`.device`   device operations, FIFO queues and the deterministic progress engine;
* :mod:`.handles`  opaque handle base (identity, ``alive`` flag for 107017);
* :mod:`.streams`  user streams (flags, queue, capture status);
* :mod:`.events`   user events (old/new mode, SYNC, capture binding);
* :mod:`.capture`  capture sessions, capture modes, CaptureEnd join check;
* :mod:`.model`    models, internal streams, tasks, seq ids, deferred update, execution plans;
* :mod:`.kernels`  the manifest "binary" and function handles;
* :mod:`.backend`  :class:`SimBackend`, every contract method with its argument checks.

Options of :func:`create` (all keyword):

* ``destroy_wait_s`` (float, default 10.0): how long Destroy of a running model and
  DestroyStream with pending work wait (LIFE-03);
* ``base_address`` (int, default 0x12C0_4000_0000), ``guard_bytes`` (default 4096),
  ``fill_byte`` (default 0xA5): device memory layout and the garbage new memory holds;
* ``device_count`` (int, default 1): valid ids for set_device.
* ``faults`` (iterable of names, default none): injected bugs from the catalogue
  :data:`backends.sim.faults.FAULTS` (an unknown name raises
  :class:`~backends.sim.faults.UnknownFault`); used by ``--fault`` and the kill matrix.

:data:`CHOICES` records what the simulator does where semantics.md §24 leaves a question open,
and a few further sim-level decisions.
"""

from __future__ import annotations

from typing import Any

from .backend import SimBackend

CHOICES: dict[str, str] = {
    "Q-01": "A destroyed model (and any destroyed stream, event, binary or function handle) "
            "returns 107017; double Destroy returns 107017. Task handles of a destroyed model "
            "or removed by Update also return 107017 from the task APIs (LIFE-07 says UB).",
    "Q-02": "Internal tasks listed: one EVENT_RESET per captured event appended to the origin "
            "stream at CaptureEnd (XS-08) and one NOP (DEFAULT) appended by Update to a stream "
            "that lost all its tasks (DIS-07). No EndGraph task, no cascade streams, no "
            "task-group NOPs.",
    "Q-03": "Seq ids are dense from 0 over every appended task of a model (user and internal, "
            "in host submission order across streams); never renumbered; each model restarts "
            "at 0.",
    "Q-04": "GetStreams lists internal streams in reverse attachment order (origin last). The "
            "CaptureEnd EVENT_RESET tasks are ordered by the order in which each event was "
            "first captured (record, wait or reset) in that capture.",
    "Q-05": "After a wrong-thread CaptureEnd (107038) every stream of the capture returns to "
            "NONE, the model is not returned but stays alive in state READY without the "
            "EVENT_RESET tasks; it can be executed, listed, updated and destroyed through a "
            "handle obtained from GetInfo during capture, and counts as live until destroyed.",
    "Q-06": "Model-level invalidation (107032 cross-model event use) keeps GetInfo at ACTIVE "
            "and later launches on the capture succeed and are recorded; CaptureEnd returns "
            "507903 and destroys the model.",
    "Q-07": "GetParams/GetType between SetParams and Update return the new values "
            "(host record); executions use the device record, which only Update changes.",
    "Q-08": "ExecuteAsync with stream None runs on the implicit default stream; "
            "synchronize_stream(None) waits for it.",
    "Q-10": "Executing an empty captured model succeeds and has no effect.",
    "Q-11": "Concurrent executions of one model run interleaved, each with its own queues but "
            "sharing the model's internal event flags (no serialisation).",
    "Q-13": "GetParams on an event task returns the model-internal event object (not the "
            "user's handle; it is not a valid argument for the event APIs); eventFlag is the "
            "user event's creation flags; record/wait/reset flag 0.",
    "Q-14": "SetParams numBlocks is stored as uint16 (truncated, no error).",
    "Q-15": "A model whose dependencies were broken (e.g. a disabled EVENT_RECORD whose WAIT "
            "survives) blocks forever: sync with timeout returns 507046, the model stays "
            "running (SetParams/Disable 107040, Destroy waits destroy_wait_s then 107037).",
    "Q-23": "Task handles of surviving tasks are the same objects across SetParams, Update "
            "and executions.",
    "running": "A model counts as running from ExecuteAsync (enqueue) until that execution "
               "completes, so SetParams/Disable right after ExecuteAsync return 107040 even if "
               "the execution has not started yet (SETP-12, 'has not completed').",
    "execute-stream-flags": "ExecuteAsync on a PERSISTENT, DEVICE_USE_ONLY or CPU_SCHEDULE "
                            "stream returns 107000 (abi.md §5.3, newer chips).",
    "capture-forbidden-flags": "Only DEVICE_USE_ONLY streams refuse CaptureBegin (507000, "
                               "CAP-18); PERSISTENT streams can be captured (no binding API).",
    "default-stream-events": "Recording, waiting or resetting an event bound to an open "
                             "capture on the default stream (None) returns 107031.",
    "event-wait-task": "Events without SYNC (except aclrtCreateEvent ones) have no wait task "
                       "inside and outside capture: StreamWaitEvent/ResetEvent -> 107000.",
    "unrecorded-wait": "An event wait outside capture blocks until the event is recorded "
                       "(flag semantics), also for an event never recorded.",
    "memcpy-null": "memcpy/memcpy_async/memset with a None pointer return 100000; a device "
                   "range outside any allocation or a too-small host buffer returns 107000.",
    "device-errors": "An access outside any allocation during execution is a device error: a "
                     "plain stream op is dropped and the next sync of that stream returns "
                     "507000; inside a model execution the execution is abandoned and the "
                     "next sync of the execution stream returns 507011. Messages are kept in "
                     "SimBackend.device_faults.",
    "destroy-stream": "DestroyStream waits up to destroy_wait_s for pending work, then "
                      "discards what is left.",
    "get-tasks-dead-model": "GetTasksByStream on an internal stream of a destroyed model "
                            "returns 107000 (not a model stream).",
    "context": "The thread that creates the backend has an implicit current context (as if "
               "it had called aclrtSetDevice(0)); any other thread must call set_device first, "
               "otherwise every API call returns 107002 (ERR-03, abi.md §6.1). set_device with "
               "an id >= device_count (default 1) returns 107001.",
}


def create(**options: Any) -> SimBackend:
    """A fresh simulator (see the module docstring for ``options``)."""
    return SimBackend(**options)


__all__ = ["CHOICES", "SimBackend", "create"]
