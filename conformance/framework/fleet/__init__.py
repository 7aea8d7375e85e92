"""The fleet: one conformance run split over N machines and read back as one report.
``shard`` is the deterministic, duration-balanced split of ``--shard K/N`` (the plugin selects
its shard's items with it) and its ``shard.json`` record; ``merge`` checks that the shards
belong to one run and folds their rows, summaries, JUnit files, crash dumps and kill matrices
into one report directory. It reads the run's records and writes through ``verdicts/``; of
the run it imports only its records, never its hooks or processes."""
