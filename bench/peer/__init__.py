"""mnemo and claude-mem side by side (`python -m bench.peer`, bench/peer/run.py): the corpus,
the two sides, their processes and claude-mem's Chroma path."""
