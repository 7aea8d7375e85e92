"""The reference simulator of the Model RI API (pure Python + numpy).

``backends.sim.create(**options) -> SimBackend`` builds one simulated device/context.

Layout: the API functions are in the subpackage :mod:`.api`, one module per API area (the
map of the emulator's C sources: ``api/streams.py``, ``api/events.py``, ``api/capture.py``,
``api/listing.py``, ``api/update.py``, ``api/model.py``, ``api/build.py``, ...), each contract
method written in exactly one place; :mod:`.backend` holds :class:`SimBackend` (construction,
handle lookups, the append/enqueue plumbing, model teardown, ``close``), :mod:`.guard` the one
API guard and error style. The modules beside them hold the simulator's state, one job each:

* :mod:`.memory`   flat device address space (64-byte aligned, guard gaps, garbage-filled) and
  pinned host buffers;
* :mod:`.device`   device operations, FIFO queues and the deterministic progress engine;
* :mod:`.handles`  opaque handle base (identity, ``alive`` flag for 107017);
* :mod:`.streams`  user streams (flags, queue, capture status);
* :mod:`.events`   user events (old/new mode, SYNC, capture binding);
* :mod:`.external` the EXTERNAL record/wait placeholders (XS-10);
* :mod:`.capture`  capture sessions, capture modes, CaptureEnd join check;
* :mod:`.model`    models, internal streams, tasks, seq ids, deferred update, execution plans;
* :mod:`.kernels`  the manifest "binary" and function handles;
* :mod:`.taskgroups`, :mod:`.build`, :mod:`.cond`, :mod:`.attributes`: task groups, built
  models, cond handles and sub-models, launch attributes;
* :mod:`.switch`   what ActiveStream, SwitchStream, labels and the end task do when they run;
* :mod:`.limits`   field behaviours: stream-resource pools, capabilities (FLD-06..10);
* :mod:`.debugjson` the runtime's DebugJsonPrint writer (DBG-01, DBG-05).

Options of :func:`create` (all keyword):

* ``destroy_wait_s`` (float, default 10.0): how long Destroy of a running model and
  DestroyStream with pending work wait (LIFE-03);
* ``base_address`` (int, default 0x12C0_4000_0000), ``guard_bytes`` (default 4096),
  ``fill_byte`` (default 0xA5): device memory layout and the garbage new memory holds;
* ``device_count`` (int, default 1): valid ids for set_device.
* ``stream_limit`` (int or None, default 512) and ``model_stream_limit`` (int or None, default
  64): the stream-resource pool and the software-SQ pool of one captured model
  (:mod:`.limits`, Cap.RESOURCE_LIMITS; None switches the rule off).
* ``faults`` (iterable of names, default none): injected bugs from the catalogue
  :data:`backends.faults.FAULTS` (an unknown name raises
  :class:`~backends.faults.UnknownFault`); used by ``--fault`` and the kill matrix.

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
            "that lost all its tasks (DIS-07), 8 NOPs (DEFAULT) appended by each "
            "CaptureTaskGrpBegin before the group opens (TG-03, taskPrefetchCount of A2/A3), and "
            "one DEFAULT NOP per aclmdlRIEndTask of a built model. No EndGraph task at "
            "CaptureEnd, no cascade streams. A conditional task is listed as one DEFAULT task. "
            "The internal task composition depends on the software-SQ mode (findings.md §4: a "
            "captured memset lists 2 tasks with software SQ off, 1 with it on); the simulator "
            "models software-SQ mode ON (TS_FEATURE_SOFTWARE_SQ_ENABLE, "
            "context_aclgraph.cc:309-317): every captured memcpy/memset is one DEFAULT task, and "
            "one captured model's streams take SQ/CQs from model_stream_limit at ExecuteAsync "
            "(FLD-08).",
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
    "Q-16": "aclmdlRIExecute expiry returns 507046 after the timeout; the execution stays "
            "queued and running (it completes once unblocked; Destroy waits for it).",
    "Q-17": "aclmdlRIAbort on a root captured or built model returns 0 and abandons the "
            "model's executions that have started (their stream's next sync returns 507011); "
            "executions still queued behind other work run later; the model stays executable "
            "(ABT-02). Sub-models: 207000; NULL: 107000; destroyed: 107017.",
    "Q-18": "Destroy callbacks run in ascending id() order of the callable (the simulator's "
            "'function pointer' order, LIFE-11), synchronously in Destroy before the handles are "
            "invalidated, so they may call APIs on the model. An exception raised by a callback "
            "is recorded in SimBackend.callback_errors and does not stop Destroy. Callbacks "
            "also run when a failed CaptureEnd destroys the model (LIFE-14), not at close().",
    "Q-19": "Conditional tasks read the 64-bit value when the task reaches the head of its "
            "stream: IF cond!=0 -> model[0], cond==0 -> model[1] if size 2 else nothing; WHILE "
            "runs model[0] while cond!=0, re-reading after each iteration, and more than 100000 "
            "iterations is a device error (the execution fails with 507011); SWITCH runs "
            "model[cond], a value >= size runs nothing. ASSIGN_DEFAULT writes "
            "defaultLaunchValue host-synchronously when ExecuteAsync/Execute is accepted "
            "(COND-03), also while an earlier execution is in flight.",
    "Q-21": "A task-group update (TG-10) is an operation queued on the update stream: it "
            "changes the grouped tasks when it runs, so an execution that starts before it "
            "runs with the old kernels and one starting after it with the new ones; without an "
            "event nothing orders them.",
    "Q-24": "GetId returns the model handle's process-unique id (shared counter of all "
            "simulator handles); ids are never reused.",
    "Q-23": "Task handles of surviving tasks are the same objects across SetParams, Update "
            "and executions.",
    "running": "A model counts as running from ExecuteAsync (enqueue) until that execution "
               "completes, so SetParams/Disable right after ExecuteAsync return 107040 even if "
               "the execution has not started yet (SETP-12, 'has not completed').",
    "execute-stream-flags": "ExecuteAsync on a PERSISTENT, DEVICE_USE_ONLY or CPU_SCHEDULE "
                            "stream returns 107000 (abi.md §5.3: chips with "
                            "RT_FEATURE_MODEL_STREAM_DOT_SYNC, api_error.cc:4002-4016; 910B "
                            "has no such check and no spec asserts it).",
    "capture-forbidden-flags": "DEVICE_USE_ONLY and CPU_SCHEDULE streams refuse CaptureBegin, "
                               "CaptureEnd and joining a capture by a wait (507000, CAP-18, "
                               "the v100 list); PERSISTENT streams can be captured.",
    "default-stream-events": "Waiting on the default stream (None) for an event bound to an "
                             "open capture returns 107031; recording it there is a plain "
                             "record, 0 (CAP-08).",
    "event-wait-task": "Events without SYNC (except aclrtCreateEvent ones) have no wait task "
                       "inside and outside capture: StreamWaitEvent -> 207000 "
                       "(api_error.cc:1414-1416, RT-25), ResetEvent -> 207000 "
                       "(api_error.cc:1760-1762), "
                       "except ACL_EVENT_EXTERNAL ones (see external-events).",
    "external-events": "An aclrtCreateEventWithFlag(ACL_EVENT_EXTERNAL) event not bound to a "
                       "capture can be waited on and reset inside a capture: the EVENT_WAIT / "
                       "EVENT_RESET tasks act on the user event's own flag, so a record outside "
                       "the model (another stream, after ExecuteAsync) releases the execution "
                       "(the 1_model_update pattern, S2). Outside capture they wait and reset "
                       "like SYNC events.",
    "external-record-wait": "aclrtRecordEventWithFlag / aclrtStreamWaitEventWithFlag with "
                            "EXTERNAL (XS-10; backends.sim.external): a second EXTERNAL use "
                            "of one event in one graph returns 107000, one inside a sub-graph "
                            "207000; an EXTERNAL wait with a non-zero timeout and a flag other "
                            "than 0/1 are ACL-layer checks, 100000 (src/acl/aclrt_impl/"
                            "stream.cpp:239-256, event.cpp:96-110).",
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
    "task-groups": "UpdateBegin with a destroyed or still-open group handle returns 107017 "
                   "(LIFE-07: UB in the runtime). A group is closed by CaptureEnd's 107033 "
                   "(TG-07); its NOPs are issued through the normal task path, so GrpBegin on a "
                   "second stream while a group is open on another stream of the model returns "
                   "107034 (TG-05).",
    "build": "Only HEAD-bound streams run when a built model executes; DEFAULT-flag streams "
             "wait for aclrtActiveStream, which the contract lacks, so they never run. EndTask "
             "(any bound stream, at least once) is required by Execute and ExecuteAsync "
             "(507011, EXE-12); BuildEnd is not. UnbindStream removes the stream and its stored "
             "tasks from the model. Event tasks stored on bound streams act on the user event "
             "itself. CaptureBegin on a bound stream returns 107005 (ERR-01).",
    "cond": "AddCondTask fills min(array length, size) slots; a runtime-side failure sets "
            "every slot to NULL, an ACL-layer failure (NULL stream) leaves them untouched. A "
            "failed CaptureEnd of a sub-model capture empties the sub-model, which may then be "
            "captured again. A parent CaptureEnd refused with 107045 also ends the open "
            "sub-model captures (their streams go back to NONE). Sub-models are not counted "
            "as live models.",
    "names": "GetName with maxLen < strlen+1 returns 507000 and an empty (cleared) buffer; "
             "SetName/GetName/GetId/DebugJsonPrint also work on sub-models.",
    "attributes": "An unknown attribute id or TIMEOUT together with TIMEOUT_US in a launch "
                  "or SetParams cfg returns 107000 (SetParams: + FAULT). The system default op "
                  "timeout is 1800 s (TIMEOUT 1800, TIMEOUT_US 1800000000); SCHEM_MODE, "
                  "DYN_UBUF_SIZE and DATA_DUMP default to 0.",
    "context": "The thread that creates the backend has an implicit current context (as if "
               "it had called aclrtSetDevice(0)); any other thread must call set_device first, "
               "otherwise every API call returns 107002 (ERR-03, abi.md §6.1) except the "
               "ACL-layer NULL checks (100000) that come first. set_device with an id >= "
               "device_count (default 1) returns 107001. aclrtGetDevice returns the thread's "
               "device; aclrtGetCurrentContext one primary context handle per device.",
    "timeouts": "Sync with timeout 0 (stream and event) is one immediate check, the documented "
                "meaning (TMO-07; the real code returns 107000, TMO-08): 0 when done, else "
                "507046 / 507047 at once. aclmdlRIExecute(0) stays 107000. A kernel launched "
                "with TIMEOUT / TIMEOUT_US (default 1800 s, 0 never) that is still waiting "
                "(wait_flag) when that time has passed since it reached the head of its stream "
                "completes with the timeout bit: the stream's next sync returns 107020 once "
                "(TMO-10); inside a replay the execution ends and the execute stream's next "
                "sync returns 507011 once, the model stays READY (TMO-11, behaviour.md Q4). An "
                "event sync waits for the event's latest record on a plain stream; a stream "
                "error is not returned by it.",
    "field": "Stream-resource pool (stream_limit, default 512), software-SQ model pool "
             "(model_stream_limit, default 64) and the trap_if AI Core exception (507015 once "
             "on a plain stream, 507011 once on the execute stream in a replay): "
             "backends.sim.limits (FLD-06..10). A catalog kernel that raises anything else "
             "is a device error (507000 / 507011), never an exception out of the engine.",
}


def create(**options: Any) -> SimBackend:
    """A fresh simulator (see the module docstring for ``options``)."""
    return SimBackend(**options)


__all__ = ["CHOICES", "SimBackend", "create"]
