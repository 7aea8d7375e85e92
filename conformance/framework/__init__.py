"""The suite's framework: the pytest plugin split along its jobs, isolation, run bookkeeping
and the inputs of a run (clause registry, known divergences). It never imports the content
(harness, expect, specs, scenarios, engine)."""
