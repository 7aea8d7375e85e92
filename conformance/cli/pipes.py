"""Standard output that a reader closed early (``mdlri-conformance run | head``).

The run goes on and records everything (results, summaries, the verdict's exit code); only
what it would still print is dropped. Without this, the first write after the reader left
raises ``BrokenPipeError`` deep in pytest's terminal writer and the command ends in an
INTERNALERROR traceback, with the run cut short."""

from __future__ import annotations

import os
import sys
from typing import Any, TextIO


class ClosedReaderSafe:
    """A text stream that forwards to ``stream`` until a write or flush meets a closed pipe;
    from then on it points the file descriptor at ``/dev/null`` (so a child process that
    inherited it does not fail either) and drops what it is given."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self.broken = False

    def _drop(self) -> None:
        self.broken = True
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, self._stream.fileno())
            os.close(devnull)
        except (OSError, ValueError):
            pass

    def write(self, text: str) -> int:
        if not self.broken:
            try:
                return self._stream.write(text)
            except BrokenPipeError:
                self._drop()
        return len(text)

    def flush(self) -> None:
        if not self.broken:
            try:
                self._stream.flush()
            except BrokenPipeError:
                self._drop()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def guard_stdout() -> None:
    """Make ``sys.stdout`` safe against a reader that closes it early."""
    if not isinstance(sys.stdout, ClosedReaderSafe):
        sys.stdout = ClosedReaderSafe(sys.stdout)  # type: ignore[assignment]


__all__ = ["ClosedReaderSafe", "guard_stdout"]
