"""Names the framework's modules share (one place, so no module imports another for a name).

User-property keys carry a spec's facts on its reports from the process that runs it to the
process that records it (through xdist and own-process children); stash keys hold the
per-process objects of a run on ``config.stash`` / ``item.stash``.
"""

from __future__ import annotations

from typing import Any

import pytest

#: a spec's result info (outcome, clauses, level, area, message, ...): the row to be
RESULT = "mdlri"
#: a process's capability-probe findings (sent once, with its first spec report)
PROBE = "mdlri_probe"
#: what the ``fingerprint`` fixture recorded (undefined- and implementation-level behaviour)
FINGERPRINT = "mdlri_fingerprint"
#: a process's stack under test (runtime, version, device; sent once, with its first report)
STACK = "mdlri_stack"
#: the Hypothesis example counts of a spec (killstats)
HYPOTHESIS = "mdlri_hypothesis"
#: the live-resource diff of a spec (leaks)
LEAKS = "mdlri_leaks"
#: the process-global state change of a spec (global_state)
STATE = "mdlri_state"

#: the backend under test of this process
backend_key = pytest.StashKey[Any]()
#: the run's bookkeeping (recording.RunState) in the process that records results
state_key = pytest.StashKey[Any]()
#: this process's probe findings, until they travel with its first spec report
probe_key = pytest.StashKey[dict[str, Any]]()
#: this process's stack under test, until it travels with its first spec report
stack_key = pytest.StashKey[dict[str, Any]]()
#: an item skipped because the whole backend is unavailable
unreached_key = pytest.StashKey[bool]()
#: the capabilities an item required and the backend lacked
missing_key = pytest.StashKey[list[str]]()

#: set in an own-process child: where it writes its serialized test reports (own_process)
OWN_PROCESS_ENV = "MDLRI_OWN_PROCESS_OUT"
#: workerinput keys: where an xdist worker leaves its isolation markers and its fault dump
ISO_DIR = "mdlri_isolation_dir"
CRASH_DIR = "mdlri_crash_dir"

#: the names the isolation's plugin objects are registered under
RUNNER_PLUGIN = "mdlri-isolation-runner"
RECORDER_PLUGIN = "mdlri-isolation-recorder"
OWN_PLUGIN = "mdlri-own-process"
#: set (true) on the plugin object ``mdlri-conformance run`` hands to pytest.main: a usage
#: error inside the run then reads like every other of the command line
#: (``mdlri-conformance: error: ...``)
CLI_ATTR = "mdlri_cli"


def under_cli(config: pytest.Config) -> bool:
    """True when ``mdlri-conformance run`` started this pytest (in its own process)."""
    return any(getattr(p, CLI_ATTR, False) is True for p in config.pluginmanager.get_plugins())
CHILD_PLUGIN = "mdlri-own-process-child"
