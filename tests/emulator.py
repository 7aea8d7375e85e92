"""The project tests' one rule for needing the acl emulator."""

from __future__ import annotations

import pytest


def skip_unless_emulator() -> None:
    """Skip the calling test, with the build's reason, when the acl emulator cannot be built
    here (no compiler); every other emulator test then fails on the same reason."""
    from mdlri_conformance.backends.acl import availability
    why = availability("emulator")
    if why:
        pytest.skip(f"acl emulator unavailable: {why}")
