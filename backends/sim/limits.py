"""Field behaviours of the simulator: stream-resource exhaustion and device faults
(FLD-06..FLD-10, conformance/clauses-field.toml).

Stream resources (Cap.RESOURCE_LIMITS): one pool of ``stream_limit`` stream ids. In use = the
live user streams plus the internal streams of every live capture model and of its sub-models
(a built model binds user streams and takes nothing extra); a model's internal streams come back
when it is destroyed. With the pool full (every stream takes a driver stream id,
``core/src/stream/stream.cc:698, 886``):

* R1 aclrtCreateStream[WithConfig] -> 207008, ``*stream`` not written;
* R2 aclmdlRICaptureBegin / aclmdlRICaptureToModelRIBegin -> 207008 after every other check, no
  model, the stream stays NONE (``feature/aclgraph/context_aclgraph.cc:299-328``);
* R3 a stream that would fork into an open capture (StreamWaitEvent on an event recorded in it)
  -> 207008, it does not join, and the capture is invalidated at model level (CaptureEnd
  507903; ``api/impl/api_impl.cc:1638-1642``, ``feature/aclgraph/capture_model_utils.cc:125-139``);
* R4 (``model_stream_limit`` set: the simulator models software-SQ mode, where one captured
  model's streams take SQ/CQs from a pool of that size at ExecuteAsync) ExecuteAsync of a captured
  model whose internal streams plus its sub-models' exceed it -> 207005, nothing runs, the model
  stays READY (``feature/aclgraph/capture_model.cc:1012-1043``).

Device faults (Cap.DEVICE_FAULTS): the catalog kernel ``trap_if`` raises an AI Core exception
(``backends.sim.device.AICoreException``): 507015 on an ordinary stream's next sync, once;
inside a replay the execution ends and the execute stream's next sync returns 507011 once, the
model stays READY. Declared only when the simulator's kernel manifest names ``trap_if``.
"""

from __future__ import annotations

from typing import Any

from mdlri_conformance.backends.contract import ALL_CAPS, EXTENDED_CAPS, Cap, Err

from .kernels import parse_manifest

#: default size of the stream-resource pool (field-impl.md §2; the suite keeps a few dozen alive)
DEFAULT_STREAM_LIMIT = 512
#: default software-SQ SQ/CQ pool of one captured model (the real RT_DEVICE_SQCQ_RES_MAX_NUM is
#: 1024, ``core/src/device/device_sq_cq_pool.hpp:23``)
DEFAULT_MODEL_STREAM_LIMIT = 64
#: the refusal code of a full stream pool (ACL_ERROR_RT_NO_STREAM_RESOURCE, errcode_manage.cc:94)
REFUSED = int(Err.RT_NO_STREAM_RESOURCE)
#: ACL_ERROR_RT_RESOURCE_ALLOC_FAIL (rt_error_codes.h:74), software-SQ pool exhausted
RESOURCE_ALLOC_FAIL = int(getattr(Err, "RT_RESOURCE_ALLOC_FAIL", 207005))


def field_capabilities(stream_limit: int | None, manifest: str) -> frozenset[Cap]:
    """The simulator's capabilities: the whole contract, RESOURCE_LIMITS when a stream limit
    is set, DEVICE_FAULTS when the kernel manifest names ``trap_if``."""
    caps = set(ALL_CAPS | EXTENDED_CAPS)
    if stream_limit is not None:
        caps.add(Cap.RESOURCE_LIMITS)
    if "trap_if" in (parse_manifest(manifest) or ()):
        caps.add(Cap.DEVICE_FAULTS)
    return frozenset(caps)


class LimitsMixin:
    """Stream-resource accounting of :class:`~backends.sim.backend.SimBackend`."""

    stream_limit: int | None
    model_stream_limit: int | None

    def _model_streams(self, model: Any) -> int:
        """Internal streams of ``model`` and of its sub-models, recursively."""
        n = len(model.streams)
        for sub in self._subs.get(model, ()):
            n += self._model_streams(sub)
        return n

    def _streams_in_use(self) -> int:
        BuiltModel = _built_model()
        return len(self._streams) + sum(self._model_streams(m) for m in self._models
                                        if not isinstance(m, BuiltModel))

    def _stream_refused(self) -> bool:
        """True when one more stream resource is not available (R1-R3)."""
        return self.stream_limit is not None and self._streams_in_use() + 1 > self.stream_limit

    def _refusal(self) -> int:
        return REFUSED

    def _model_streams_refused(self, model: Any) -> bool:
        """R4: a captured model needs more SQ/CQs than the software-SQ pool has (a built
        model is never refused)."""
        limit = self.model_stream_limit
        if limit is None:
            return False
        n = self._model_streams(model) if self._subs else len(model.streams)
        return n > limit and not isinstance(model, _built_model())


def _built_model() -> type:
    """:class:`backends.sim.build.BuiltModel` (imported on first use: build imports the
    device and model modules; the import statement itself costs a microsecond per call, and
    ExecuteAsync asks on every call)."""
    global _BUILT_MODEL
    if _BUILT_MODEL is None:
        from .build import BuiltModel
        _BUILT_MODEL = BuiltModel
    return _BUILT_MODEL


_BUILT_MODEL: Any = None


__all__ = ["DEFAULT_MODEL_STREAM_LIMIT", "DEFAULT_STREAM_LIMIT", "LimitsMixin", "REFUSED",
           "RESOURCE_ALLOC_FAIL", "field_capabilities"]
