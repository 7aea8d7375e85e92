"""The ``--profile`` settings hold on a CI runner: Hypothesis loads its own derandomized
"ci" profile at import when it sees a CI variable, and ours must not inherit it."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

_PROBE = """
import json
from hypothesis import settings
from mdlri_conformance.conformance.framework.profiles import load_hypothesis_profile
out = {}
for name in ("ci", "dev", "deep", "hw"):
    load_hypothesis_profile(name, "none")
    out[name] = [settings.default.derandomize, settings.default.max_examples]
print(json.dumps(out))
"""


@pytest.mark.parametrize("ci_env", [{}, {"CI": "true"}, {"GITHUB_ACTIONS": "true"}])
def test_only_the_ci_profile_is_derandomized(ci_env: dict[str, str]) -> None:
    env = {k: v for k, v in os.environ.items()
           if k not in ("CI", "GITHUB_ACTIONS", "TF_BUILD", "BUILDKITE", "CIRCLECI")}
    env.update(ci_env)
    res = subprocess.run([sys.executable, "-c", _PROBE], env=env, capture_output=True,
                         text=True, check=True)
    got = json.loads(res.stdout)
    assert got == {"ci": [True, 60], "dev": [False, 20], "deep": [False, 2000],
                   "hw": [False, 25]}
