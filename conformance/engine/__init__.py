"""The generated-graph engine: task-graph cases, their generation, replay and oracle.

* :mod:`.graphs`: the case model (ops, plan steps) and its JSON; :func:`graphs.check`.
* :mod:`.strategies`: Hypothesis strategies drawing cases inside defined behaviour.
* :mod:`.oracle`: the independent oracle (what a conforming runtime shows for a case).
* :mod:`.observe`: the observation shape both sides produce, and the first difference.
* :mod:`.signature`: the one task-signature encoding (which listed task is which op).
* :mod:`.listing`: the op <-> task mapping and the listing observations of a replay.
* :mod:`.runner`: replay of a case on a backend, divergences and their messages.
* :mod:`.machine`: the stateful machine's model of its captures (the library part of
  ``specs/test_stateful.py``).

The oracle imports only graphs, observe, the backend contract and the kernel catalog. The
engine never imports specs, the harness or the scenarios.
"""
