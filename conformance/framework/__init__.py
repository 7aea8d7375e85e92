"""The suite's framework: how a run is run and judged. This package itself holds the pytest
plugin and the run: the plugin split along its jobs (options, markers, recording, reporting,
write guard), the backend session and its capability probes, isolation (own-process children,
watchdog, leak and global-state checks, crash dumps, example counts, the shrink bound) and
the inputs a run shares (clause registry, items, keys, run directories, outcomes). Its sub-packages: ``verdicts/`` (what is
judged and written for people), ``fleet/`` (a run split over machines and merged) and
``power/`` (the tools that measure the suite's own power). It never imports the content
(harness, expect, specs, scenarios, engine)."""
