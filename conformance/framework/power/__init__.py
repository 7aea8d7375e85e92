"""The tools that measure the suite's own power, each a run of the suite against deliberately
broken implementations or for a bounded time: the kill matrix over the catalogued faults
(``killmatrix``), mutation testing of the simulator (``mutants``, ``mutation_coverage``,
``mutation_run``, ``mutation_report``), coverage-guided deep campaigns (``campaign``,
``fuzz_session``, ``fuzz_failures``, ``branch_coverage``). They drive the run and read its
verdicts; the run never imports them (a spec runs the same whether or not the suite is being
measured: the per-spec example counts of ``killstats`` and the shrink bound of ``shrinking``
are the run's), and they never import the fleet."""
