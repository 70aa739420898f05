"""`python -m bench.locomo`: the LoCoMo retrieval protocol (bench/locomo/run.py)."""

import sys

from bench.locomo.run import main

sys.exit(main())
