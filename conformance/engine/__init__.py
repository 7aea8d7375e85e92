"""The generated-graph engine: task-graph cases, their generation, replay and oracle.

* :mod:`.graphs`: the case language (captured ops, the case, its JSON, what a case states:
  footprints, models, task groups); :mod:`.steps` the host plan's steps;
  :mod:`.ordering` the happens-before analysis (joins, races); :mod:`.validation` the
  check of a case from outside (:func:`.validation.check`).
* :mod:`.case_facts`: what both sides read from a case alone (stream classes, blocking,
  emptied streams).
* :mod:`.strategies`: Hypothesis strategies drawing cases inside defined behaviour;
  :mod:`.strategies_blocked` (blocked executions, value-wait flags) and
  :mod:`.strategies_capture` (capture-end negatives, emptied streams).
* :mod:`.oracle`: the independent oracle (what a conforming runtime shows for a case), over
  :mod:`.oracle_state` (the model state machine and each call's rc), :mod:`.oracle_memory`
  (buffers, words, host buffers), :mod:`.oracle_program` (the program, its pending changes
  and its interpreter); :mod:`.oracle_listing` its listing and capture observations.
* :mod:`.observe`: the observation shape both sides produce, and the first difference.
* :mod:`.signature`: the one task-signature encoding (which listed task is which op).
* :mod:`.listing`: the op <-> task mapping and the listing observations of a replay.
* :mod:`.runner`: replay of a case on a backend (its resources), with :mod:`.runner_capture`
  (the capture calls) and :mod:`.runner_plan` (the plan steps, under host deadlines);
  :mod:`.divergence` what is judged and a divergence's message; :mod:`.deadline` runs a
  call that may never return under a host deadline.
* :mod:`.machine`: the stateful machine's model of its captures (the library part of
  ``specs/test_stateful.py``).

The oracle (``oracle*.py``) imports only the case model (graphs, steps, ordering,
validation), case_facts, observe, the backend contract and the kernel catalog
(``tests/test_oracle.py``). The engine never imports specs, the harness or the scenarios.
"""
