"""Where a process's fault dump goes, how a dead process is named, and tidying empty dumps.

Rules:

* Every process that runs specs writes its fault dump (faulthandler's stacks of every thread
  on a fatal signal, and the hard watchdog's stacks) to one file of the run,
  ``<report_dir>/crashes/<name>-<pid>.txt`` (:class:`CrashDump`): ``gwN`` for an xdist
  worker, ``main`` for a ``-n 0`` run, never the console. Rows and console lines name it
  relative to the run directory (``crashes/gw0-1234.txt``, :attr:`CrashDump.relpath`).
* A dump that stayed empty is removed when its process ends (:meth:`CrashDump.close`), and
  whatever empty dumps are left (a process ended without closing its own) once no process of
  the run can still write (:func:`remove_if_empty`); a run without crashes leaves no
  ``crashes/`` folder, and a folder made only to hold a dump (a run directory where no spec
  ran) goes too.
* A dead process is named by its signal (:func:`fault_of`): from its exit status when that is
  negative (the signal that ended it), else from the fault its dump names, else its exit
  status; e.g. ``signal 11, SIGSEGV``.

This module knows nothing of pytest, the watchdog or the rows; :mod:`conformance.isolation`
uses it.
"""

from __future__ import annotations

import faulthandler
import os
import signal
import sys
from pathlib import Path

#: the run directory's folder of crash dumps (``<report_dir>/crashes/``)
CRASH_DIR = "crashes"

#: the fatal signals faulthandler catches, by the name it writes (CPython faulthandler.c)
_FAULT_NAMES = {"Segmentation fault": signal.SIGSEGV, "Aborted": signal.SIGABRT,
                "Bus error": signal.SIGBUS, "Illegal instruction": signal.SIGILL,
                "Floating point exception": signal.SIGFPE}


class CrashDump:
    """This process's fault dump: ``<crash_dir>/<name>-<pid>.txt``.

    faulthandler writes the stacks of every thread there on a fatal signal (instead of the
    inherited stderr, i.e. the console); the file stays open for the life of the process
    and is removed again at :meth:`close` when nothing was written."""

    def __init__(self, crash_dir: Path, name: str) -> None:
        #: the folders above ``crash_dir`` made here (innermost first): a ``-n 0`` process
        #: opens its dump before it knows whether any spec will run, and a run without
        #: specs must leave no run directory behind
        self._made = [d for d in crash_dir.parents if not d.exists()]
        crash_dir.mkdir(parents=True, exist_ok=True)
        self.path = crash_dir / f"{name}-{os.getpid()}.txt"
        self._file = self.path.open("w", encoding="utf-8")
        self._was_enabled: bool | None = None  # faulthandler before the first enable()

    @property
    def relpath(self) -> str:
        """The name in rows and on the console (relative to the run directory)."""
        return f"{CRASH_DIR}/{self.path.name}"

    def enable(self) -> None:
        """Point faulthandler here (again: pytest's faulthandler plugin points it at stderr
        in its pytest_configure, after ours)."""
        if not self._file.closed:
            if self._was_enabled is None:
                self._was_enabled = faulthandler.is_enabled()
            faulthandler.enable(file=self._file, all_threads=True)

    def dump_now(self, header: str) -> None:
        """Write ``header`` and every thread's stack now (the hard watchdog, before it ends
        the process)."""
        if self._file.closed:
            return
        self._file.write(header + "\n")
        self._file.flush()
        faulthandler.dump_traceback(file=self._file, all_threads=True)

    def close(self) -> None:
        """Stop writing here; remove the file (and ``crashes/``) when it stayed empty."""
        if self._file.closed:
            return
        if self._was_enabled is not None:
            faulthandler.disable()
            if self._was_enabled and sys.__stderr__ is not None:
                # e.g. a run inside another pytest (pytester): give it back its handler
                faulthandler.enable(file=sys.__stderr__, all_threads=True)
        self._file.close()
        try:  # only this file: another worker's empty dump is still open, waiting
            if self.path.stat().st_size == 0:
                self.path.unlink()
        except FileNotFoundError:
            pass  # removed already (remove_if_empty of the recorder in this process)
        except OSError:
            return
        for folder in (self.path.parent, *self._made):
            try:
                folder.rmdir()
            except FileNotFoundError:
                continue
            except OSError:
                return  # a dump of a crash, another process's dump, or the run's files


def remove_if_empty(crash_dir: Path) -> None:
    """Remove the empty dump files in ``crash_dir`` (processes that did not crash or ended
    without closing theirs), and the folder when nothing is left. Only once no process of
    the run can still write there (the recorder's unconfigure)."""
    for path in crash_dir.glob("*.txt"):
        try:
            if path.stat().st_size == 0:
                path.unlink()
        except OSError:
            pass
    try:
        crash_dir.rmdir()
    except OSError:
        pass  # absent, or a dump of a crash is in it


def dump_of(crash_dir: Path, name: str) -> Path | None:
    """The non-empty dump of process ``name`` (an xdist worker id) in ``crash_dir``."""
    for path in sorted(crash_dir.glob(f"{name}-*.txt")):
        try:
            if path.stat().st_size > 0:
                return path
        except OSError:
            continue
    return None


def fault_of(dump: Path | None, returncode: int | None) -> str:
    """How a process died, for a row: ``signal 11, SIGSEGV`` from its exit status (negative:
    the signal), else from the fault its dump names, else ``exit status N``."""
    sig: int | None = -returncode if returncode is not None and returncode < 0 else None
    if sig is None and dump is not None:
        try:
            head = dump.read_text(encoding="utf-8", errors="replace")[:200]
        except OSError:
            head = ""
        for name, value in _FAULT_NAMES.items():
            if f"Fatal Python error: {name}" in head:
                sig = int(value)
                break
    if sig is not None:
        return signal_name(sig)
    if returncode is not None:
        return f"exit status {returncode}"
    return "cause unknown"


def signal_name(sig: int) -> str:
    """``signal 11, SIGSEGV`` (``signal N`` for a number with no name here)."""
    try:
        return f"signal {sig}, {signal.Signals(sig).name}"
    except ValueError:
        return f"signal {sig}"


__all__ = ["CRASH_DIR", "CrashDump", "dump_of", "fault_of", "remove_if_empty", "signal_name"]
