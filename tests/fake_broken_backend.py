"""A backend module that fails at import with something other than ImportError (a driver
handshake done at import time): ``--backend tests.fake_broken_backend:create`` must be one
line of bad input, not a traceback."""

raise RuntimeError("driver handshake failed at import")


def create() -> None:  # pragma: no cover - never reached
    """Never reached."""
