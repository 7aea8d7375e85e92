"""A do-nothing backend for testing the plugin and CLI without a simulator.

Every contract method answers rc 0 (or what ``answers`` says); capabilities are chosen
per test through the factory.
"""

from __future__ import annotations

from typing import Any

from mdlri_conformance.backends.contract import ALL_CAPS, Cap


class NullBackend:
    """Meets the Backend protocol's shape; every API call returns ``answers.get(name, 0)``."""

    name = "null"

    def __init__(self, caps: frozenset[Cap] = ALL_CAPS, answers: dict[str, Any] | None = None):
        self.capabilities = caps
        self.answers = answers or {}
        self.closed = False

    def version(self) -> str:
        return "null 0"

    def kernel_binary_path(self) -> str:
        return "/nonexistent"

    def close(self) -> None:
        self.closed = True

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return lambda *a, **k: self.answers.get(name, 0)


def create(**_: Any) -> NullBackend:
    return NullBackend()


def create_no_kernels(**_: Any) -> NullBackend:
    return NullBackend(ALL_CAPS - {Cap.KERNELS})


def create_not_a_backend(**_: Any) -> object:
    return object()


def create_sim_eager_update(**options: Any) -> Any:
    """The simulator with a planted bug: SetParams is committed at once (no deferral,
    the model never waits in UPDATING). Used to check differential runs and reports."""
    from mdlri_conformance.backends.sim import create as create_sim
    sim = create_sim(**options)
    original = sim.task_set_params

    def task_set_params(task: Any, params: Any) -> int:
        rc = original(task, params)
        if rc == 0:
            sim.update(task.model)
        return rc

    sim.task_set_params = task_set_params  # type: ignore[method-assign]
    sim.name = "sim-eager-update"
    return sim


class LeakyBackend(NullBackend):
    """A fake that leaks one event per call of ``create_event`` (leak checks)."""

    def __init__(self) -> None:
        super().__init__()
        self.events = 0

    def create_event(self) -> tuple[int, Any]:
        self.events += 1
        return 0, object()

    def live_counts(self) -> Any:
        from mdlri_conformance.backends.contract import LiveCounts
        return LiveCounts(events=self.events)


def create_leaky(**_: Any) -> LeakyBackend:
    """A backend whose live event count only grows."""
    return LeakyBackend()


class UnavailableBackend(NullBackend):
    """A backend that loads but cannot run: the whole backend is UNSUPPORTED with a reason."""

    def unsupported_reason(self, what: Any = None) -> str | None:
        return "no device attached to this fake" if what is None else None


def create_unavailable(**_: Any) -> UnavailableBackend:
    return UnavailableBackend(frozenset())


def create_raising(**_: Any) -> NullBackend:
    """A factory that fails the way an outside implementation might."""
    raise RuntimeError("driver handshake failed\nsecond line that must not be shown")


def create_sim_no_counts(**options: Any) -> Any:
    """The simulator without ``live_counts`` (like real hardware: leaks cannot be checked)."""
    from mdlri_conformance.backends.sim import create as create_sim
    sim = create_sim(**options)
    sim.live_counts = None  # leaks.snapshot: not callable -> not checked
    return sim
