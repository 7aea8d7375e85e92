"""The behaviours HypoFuzz's guidance counts in a deep campaign: the line arcs one example
executed, recorded by coverage.py's C tracer.

HypoFuzz's own collector (``hypofuzz.coverage.CoverageCollector``) is a Python
``sys.settrace`` function before Python 3.12: one Python call per executed line, which made
a generated case's replay and oracle about 16 times slower than the case itself (17 ms
against 1 ms on the simulator) and was the campaign's largest per-example cost.
:class:`ArcCollector` records the same kind of facts in C: every ``(file, from line, to
line)`` arc (coverage.py's branch mode; entries and exits of a code object are arcs too) of
the files HypoFuzz would trace (coverage.py's default selection: neither the standard
library nor installed packages, so the specs, the engine and the implementation under
test), in the thread that runs the example only, as HypoFuzz's collector does.

One difference in what is counted: HypoFuzz's pairs of consecutive lines cross calls and
returns (the caller's last line to the callee's first), coverage.py's arcs stay inside one
code object. A call is then the callee's entry arc, so every executed function and every
branch taken in it is still a behaviour.

The traced files are named, not left to coverage.py's default: that default leaves out
installed packages, and a suite installed with ``pip`` is one, so a campaign of an installed
suite saw no behaviour at all and HypoFuzz fuzzed blind. :func:`suite_sources` names the
suite's own folders (specs, engine, backends) and the folder of a backend loaded from
outside it.
"""

from __future__ import annotations

import sys
import threading
from itertools import repeat
from pathlib import Path
from typing import Any, Iterable


class ArcCollector:
    """A HypoFuzz coverage collector (the provider's ``collector``): a context manager
    whose ``branches`` are the arcs the last use executed, as ``(file, arc)`` pairs
    (``arc`` is coverage.py's number for the line pair: equal pairs, equal numbers)."""

    def __init__(self, source: Iterable[str] | None = None) -> None:
        import coverage
        self.branches: set[tuple[str, Any]] = set()
        self._cov = coverage.Coverage(data_file=None, branch=True, config_file=False,
                                      source=list(source) if source is not None
                                      else suite_sources())

    def __enter__(self) -> ArcCollector:
        self.branches = set()
        hook = threading.gettrace()
        self._cov.start()
        # coverage.py hooks the threads started from now on; HypoFuzz traces the example's
        # own thread only, and a tracer per thread would pile up over a campaign
        threading.settrace(hook)  # type: ignore[arg-type]
        return self

    def __exit__(self, *exc: object) -> None:
        self._cov.stop()
        data = self._cov._collector.data  # coverage.py's raw per-file arc sets
        branches: set[tuple[str, Any]] = set()
        for name, arcs in data.items():
            branches.update(zip(repeat(name), arcs))  # the pairs made in C, not a comprehension
            arcs.clear()  # the tracer keeps references to these sets: emptied, not replaced
        self.branches = branches


def suite_sources(backend: Any = None) -> list[str]:
    """The folders whose arcs are behaviours: the suite's (``mdlri_conformance``'s backends,
    conformance and kernel packages, wherever they are installed) and, for a backend whose
    class lives outside them, that class's package folder."""
    import mdlri_conformance.backends as backends
    import mdlri_conformance.conformance as conformance
    import mdlri_conformance.kernel as kernel
    dirs = [str(Path(m.__file__).resolve().parent) for m in (backends, conformance, kernel)]
    module = sys.modules.get(type(backend).__module__) if backend is not None else None
    path = getattr(module, "__file__", None)
    if path:
        folder = Path(path).resolve().parent
        if not any(folder.is_relative_to(d) for d in dirs):
            dirs.append(str(folder))
    return dirs
