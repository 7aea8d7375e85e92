"""The generated-graph engine: task-graph cases, their generation, replay and oracle.

* :mod:`.graphs`: the case model (ops, plan steps) and its JSON; :func:`validation.check`.
* :mod:`.case_facts`: what both sides read from a case alone (stream classes, blocking,
  emptied streams).
* :mod:`.strategies`: Hypothesis strategies drawing cases inside defined behaviour;
  :mod:`.strategies_blocked` (blocked executions, value-wait flags) and
  :mod:`.strategies_capture` (capture-end negatives, emptied streams).
* :mod:`.oracle`: the independent oracle (what a conforming runtime shows for a case);
  :mod:`.oracle_listing` its listing and capture observations.
* :mod:`.observe`: the observation shape both sides produce, and the first difference.
* :mod:`.signature`: the one task-signature encoding (which listed task is which op).
* :mod:`.listing`: the op <-> task mapping and the listing observations of a replay.
* :mod:`.runner`: replay of a case on a backend, divergences and their messages;
  :mod:`.deadline` runs a call that may never return under a host deadline.
* :mod:`.machine`: the stateful machine's model of its captures (the library part of
  ``specs/test_stateful.py``).

The oracle imports only graphs, case_facts, observe, oracle_listing, the backend contract
and the kernel catalog. The
engine never imports specs, the harness or the scenarios.
"""
