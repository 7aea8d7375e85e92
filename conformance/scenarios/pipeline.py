"""The runtime guide's copy/compute/copy pipeline, captured into one Model RI and replayed.

Three streams, linked by events and double-buffered over two device slots:

* ``h2d`` (the capture origin): for batch ``k`` of a replay, ``aclrtMemcpyAsync`` from the
  batch's **pinned** host buffer (``aclrtMallocHost``; a pinned async copy is "safe" and is
  captured, MODE-14) into the slot's device staging buffer, then a catalog ``copy`` kernel
  that publishes staging -> the slot's compute input, then an event record ``ready[k]``;
* ``compute``: waits ``ready[k]`` (the first wait forks the stream into the capture,
  XS-01), and from batch 2 on also ``drained[k-2]`` (the d2h stream has read the slot's
  output), runs the catalog ``affine`` kernel ``y = 3x + 7`` from the slot's input to its
  output, records ``done[k]``;
* ``d2h``: waits ``done[k]`` (forks in turn), ``aclrtMemcpyAsync`` of the slot's output
  into the batch's pinned host output buffer, records ``drained[k]`` when a later batch
  reuses the slot.

Slot ``k % 2`` alternates; the h2d stream waits ``done[k-2]`` before it overwrites a slot
the compute stream may still read (write-after-read across streams). At the end the
compute and d2h streams record a join event each and the origin waits on both (XS-02), so
``aclmdlRICaptureEnd`` on the origin gives one model holding the whole pipeline for
:data:`PER_REPLAY` batches. The host fills the pinned inputs, executes the model on the
origin stream, waits with a 5000 ms timed sync, and checks every batch against numpy;
:data:`REPLAYS` replays give :data:`BATCHES` batches.

Then one copy task is disabled (DIS-01) and the model is replayed again. The disabled task
is the ``copy`` **kernel** that publishes batch :data:`DISABLED_POSITION` of each replay:
a captured ``aclrtMemcpyAsync`` is a DEFAULT task, and disabling one returns 107000 and
moves the model to FAULT (DIS-06), so the disable-able copy of this scenario is the
kernel stage. With it disabled, the slot's compute input keeps what the batch two earlier
(same slot) published, so that batch's output is ``3 * input[k-2] + 7``: the stale buffer
the guide warns about. Every other batch stays correct.

The scenario prints a short transcript (``[INFO]  `` lines) and returns every batch's
input and output so the spec can assert each one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from mdlri_conformance.backends.contract import Backend, CaptureMode, EventFlag, MemcpyKind, TaskType
from mdlri_conformance.kernel import catalog

from ._common import Example, Runner, ScenarioError, reports_unsupported, run_scenario

NAME = "pipeline"
ELEMENTS = 64
BYTES = ELEMENTS * 4
SLOTS = 2
PER_REPLAY = 4
REPLAYS = 4
BATCHES = PER_REPLAY * REPLAYS
STALE_REPLAYS = 2
DISABLED_POSITION = 2
SCALE = 3
BIAS = 7
TIMEOUT_MS = 5000


def batch_input(g: int) -> np.ndarray:
    """The input of global batch ``g`` (distinct for every batch)."""
    return (np.arange(ELEMENTS, dtype=np.int32) * (g % 5 + 1) + 1000 * g).astype(np.int32)


def compute(x: np.ndarray) -> np.ndarray:
    """What the compute stage does (the ``affine`` kernel with a=3, b=7), in numpy."""
    return (x.astype(np.int32) * np.int32(SCALE) + np.int32(BIAS)).astype(np.int32)


@dataclass
class PipelineResult:
    """Everything the scenario observed."""

    lines: list[str] = field(default_factory=list)
    stream_count: int | None = None
    task_count: int | None = None
    #: per global batch: its input and the output read back from its pinned buffer
    inputs: list[np.ndarray] = field(default_factory=list)
    outputs: list[np.ndarray] = field(default_factory=list)
    #: the same after the copy kernel of DISABLED_POSITION was disabled
    stale_inputs: list[np.ndarray] = field(default_factory=list)
    stale_outputs: list[np.ndarray] = field(default_factory=list)
    ok: bool = False


def stale_expected(inputs: list[np.ndarray]) -> list[np.ndarray]:
    """The outputs the disabled run must give for ``inputs`` (PER_REPLAY per replay)."""
    out = []
    for g, x in enumerate(inputs):
        k = g % PER_REPLAY
        src = inputs[g - SLOTS] if k == DISABLED_POSITION else x
        out.append(compute(src))
    return out


class _Pipeline:
    """The resources of one pipeline: streams, slots, pinned buffers, events, kernels."""

    def __init__(self, r: Runner) -> None:
        self.r = r
        self.h2d, self.comp, self.d2h = r.stream(), r.stream(), r.stream()
        self.stage = [r.malloc(BYTES) for _ in range(SLOTS)]
        self.dev_in = [r.malloc(BYTES) for _ in range(SLOTS)]
        self.dev_out = [r.malloc(BYTES) for _ in range(SLOTS)]
        self.pin_in = [r.malloc_host(BYTES) for _ in range(PER_REPLAY)]
        self.pin_out = [r.malloc_host(BYTES) for _ in range(PER_REPLAY)]
        self.funcs = r.load_functions("copy", "affine")
        self.model: Any = None

    def _launch(self, name: str, stream: Any, **values: int) -> None:
        args = catalog.get(name).pack(**values)
        self.r.check(self.r.b.launch_kernel_with_host_args(self.funcs[name], 1, stream, None,
                                                           args, len(args)),
                     "aclrtLaunchKernelWithHostArgs")

    def _record(self, stream: Any) -> Any:
        e = self.r.event(EventFlag.SYNC)
        self.r.check(self.r.b.record_event(e, stream), "aclrtRecordEvent")
        return e

    def _wait(self, stream: Any, event: Any) -> None:
        self.r.check(self.r.b.stream_wait_event(stream, event), "aclrtStreamWaitEvent")

    def capture(self) -> None:
        """Capture PER_REPLAY batches of the three-stage pipeline into one model."""
        b, r = self.r.b, self.r
        r.check(b.capture_begin(self.h2d, CaptureMode.GLOBAL), "aclmdlRICaptureBegin")
        capturing = r.opened(lambda: b.capture_end(self.h2d))
        done: list[Any] = []
        drained: list[Any] = []
        for k in range(PER_REPLAY):
            slot = k % SLOTS
            # stage 1: host -> device, then publish the slot to the compute stage
            if k >= SLOTS:
                self._wait(self.h2d, done[k - SLOTS])
            r.check(b.memcpy_async(self.stage[slot], BYTES, self.pin_in[k], BYTES,
                                   MemcpyKind.HOST_TO_DEVICE, self.h2d), "aclrtMemcpyAsync")
            self._launch("copy", self.h2d, src=self.stage[slot], dst=self.dev_in[slot],
                         n=ELEMENTS)
            ready = self._record(self.h2d)
            # stage 2: compute
            self._wait(self.comp, ready)
            if k >= SLOTS:
                self._wait(self.comp, drained[k - SLOTS])
            self._launch("affine", self.comp, x=self.dev_in[slot], y=self.dev_out[slot],
                         n=ELEMENTS, a=SCALE, b=BIAS)
            done.append(self._record(self.comp))
            # stage 3: device -> host
            self._wait(self.d2h, done[k])
            r.check(b.memcpy_async(self.pin_out[k], BYTES, self.dev_out[slot], BYTES,
                                   MemcpyKind.DEVICE_TO_HOST, self.d2h), "aclrtMemcpyAsync")
            drained.append(self._record(self.d2h) if k + SLOTS < PER_REPLAY else None)
        # join both sub streams back into the origin
        self._wait(self.h2d, self._record(self.comp))
        self._wait(self.h2d, self._record(self.d2h))
        rc, model = b.capture_end(self.h2d)
        r.closed(capturing)
        r.check(rc, "aclmdlRICaptureEnd")
        self.model = model
        r.defer("aclmdlRIDestroy", lambda: b.destroy(model))

    def replay(self, first: int) -> tuple[list[np.ndarray], list[np.ndarray]]:
        """Fill the pinned inputs with batches first.., execute, return (inputs, outputs)."""
        b, r = self.r.b, self.r
        ins = [batch_input(first + k) for k in range(PER_REPLAY)]
        for k, x in enumerate(ins):
            self.pin_in[k].view(np.int32)[:] = x
            self.pin_out[k].view(np.int32)[:] = -1
        r.check(b.execute_async(self.model, self.h2d), "aclmdlRIExecuteAsync")
        r.check(b.synchronize_stream_with_timeout(self.h2d, TIMEOUT_MS),
                "aclrtSynchronizeStreamWithTimeout")
        outs = [self.pin_out[k].view(np.int32).copy() for k in range(PER_REPLAY)]
        return ins, outs


@reports_unsupported
def run_pipeline(b: Backend, emit: Callable[[str], None] = print) -> PipelineResult:
    """Run the scenario on ``b``; ``emit`` receives each printed line."""
    res = PipelineResult()
    return run_scenario(res, b, emit, lambda r: _steps(r, _Pipeline(r), res), sample=NAME)


EXAMPLE = Example(run_pipeline, (NAME,))


def _first_mismatch(got: list[np.ndarray], want: list[np.ndarray], base: int) -> str | None:
    for k, (g, w) in enumerate(zip(got, want)):
        bad = np.flatnonzero(g != w)
        if bad.size:
            i = int(bad[0])
            return f"Batch {base + k} mismatch at {i}: actual={g[i]}, expected={w[i]}."
    return None


def _steps(r: Runner, p: _Pipeline, res: PipelineResult) -> None:
    b = r.b
    p.capture()
    listing = r.tasks(p.model)
    res.stream_count = len(listing)
    res.task_count = sum(len(t) for _, t in listing)
    r.info(f"Pipeline captured: {PER_REPLAY} batches over {SLOTS} slots, "
           f"model streams={res.stream_count}, tasks={res.task_count}.")

    for rep in range(REPLAYS):
        first = rep * PER_REPLAY
        ins, outs = p.replay(first)
        res.inputs += ins
        res.outputs += outs
        bad = _first_mismatch(outs, [compute(x) for x in ins], first)
        if bad:
            raise ScenarioError(bad)
        firsts = " ".join(str(int(o[0])) for o in outs)
        r.info(f"Replay {rep + 1}: batches {first}-{first + PER_REPLAY - 1} verified "
               f"(first outputs {firsts}).")
    r.info(f"All {BATCHES} batches verified.")

    # Disable the copy kernel that publishes batch DISABLED_POSITION of every replay.
    copies = []
    for _, tasks in listing:
        for task in tasks:
            rc, ttype = b.task_get_type(task)
            r.check(rc, "aclmdlRITaskGetType")
            if ttype != TaskType.KERNEL:
                continue
            rc, params = b.task_get_params(task)
            r.check(rc, "aclmdlRITaskGetParams")
            if params.kernel is not None and params.kernel.func_handle == p.funcs["copy"]:
                copies.append(task)
    if len(copies) != PER_REPLAY:
        raise ScenarioError(f"Expected {PER_REPLAY} copy Kernel tasks, but found {len(copies)}.")
    r.check(b.task_disable(copies[DISABLED_POSITION]), "aclmdlRITaskDisable")
    r.check(b.update(p.model), "aclmdlRIUpdate")
    r.info(f"Disabled the copy task of batch position {DISABLED_POSITION} "
           f"(slot {DISABLED_POSITION % SLOTS}).")

    for rep in range(STALE_REPLAYS):
        first = BATCHES + rep * PER_REPLAY
        ins, outs = p.replay(first)
        res.stale_inputs += ins
        res.stale_outputs += outs
        bad = _first_mismatch(outs, stale_expected(ins), first)
        if bad:
            raise ScenarioError(bad)
        g = first + DISABLED_POSITION
        o = outs[DISABLED_POSITION]
        r.info(f"Replay {REPLAYS + rep + 1}: batch {g} kept the stale slot "
               f"(first output {int(o[0])} = {SCALE}*{int(ins[DISABLED_POSITION - SLOTS][0])}"
               f"+{BIAS} from batch {g - SLOTS}, fresh would be "
               f"{int(compute(ins[DISABLED_POSITION])[0])}); other batches verified.")
