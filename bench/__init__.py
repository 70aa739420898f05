"""mnemo's benchmarks, run from the repository root as `python -m bench.NAME` (`make bench` runs
them all but the claude-mem comparison, which has its own target). bench.harness holds what they
share; bench.locomo is the LoCoMo retrieval work, bench.peer the side-by-side with claude-mem."""
