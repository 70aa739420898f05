"""`python -m bench.peer`: mnemo against claude-mem in one interleaved run (bench/peer/run.py)."""

import sys

from bench.peer.run import main

sys.exit(main())
