"""Gather the LoCoMo candidate lists once from the real stack and keep them in a cache file.

bench/locomo/run.py gathers the same lists for its cross-validation and throws them away; this
keeps them (outside the repository: the lists are derived from the licensed data set) so that
lexical-side experiments (bench/locomo/lexical.py) can be run offline in seconds.

    .venv/bin/python -m bench.locomo.lists                       # -> /tmp/locomo-lists.pkl
    .venv/bin/python -m bench.locomo.lists --out /tmp/x.pkl --embedder hash

The cache holds, per question of categories 1-4, the store's lexical list and the vector
list (100 deep), in its own project and in another conversation's project, and each lexical
hit's evidence (IndexRow.evidence, which the relevance floor reads) under "evidence".
"""

from __future__ import annotations

import argparse
import os
import pickle
import sys
import time
from pathlib import Path

from bench.locomo import run as locomo
from mnemo.config import Settings

DEFAULT_CACHE = Path("/tmp/locomo-lists.pkl")


def gather(embedder: str, out: Path) -> None:
    dev = locomo.load_dev()
    corrections, _ = locomo.audit_corrections(dev)
    stack = locomo.Stack(embedder)
    started = time.monotonic()
    try:
        dia_of: dict = {}
        qs: list = []
        for conv in dev:
            for obs_id, dia in locomo.ingest(stack.store, conv).items():
                dia_of[(conv["sample_id"], obs_id)] = dia
            qs += locomo.questions(conv, corrections)
        locomo.wait_for_vectors(stack.vector)
        projects = [c["sample_id"] for c in dev]
        lists: dict = {}
        evidence: dict = {}
        for q in qs:
            if q.category not in (1, 2, 3, 4):
                continue
            other = locomo.wrong_project(q.sample_id, projects)
            own, own_evidence = locomo._project_lists(stack, q, q.sample_id, dia_of)
            cross, cross_evidence = locomo._project_lists(stack, q, other, dia_of)
            lists[(q.sample_id, q.index)] = (own, cross, other)
            evidence[(q.sample_id, q.index)] = (own_evidence, cross_evidence)
    finally:
        stack.close()
    out.write_bytes(pickle.dumps({"embedder": embedder, "lists": lists, "evidence": evidence}))
    print(f"{len(lists)} questions' lists -> {out} in {time.monotonic() - started:.0f}s; "
          f"load average {' '.join(f'{v:.2f}' for v in os.getloadavg())}")


def load(path: Path = DEFAULT_CACHE) -> dict:
    return pickle.loads(path.read_bytes())


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--embedder", default=Settings.embedder)
    parser.add_argument("--out", type=Path, default=DEFAULT_CACHE)
    args = parser.parse_args(argv)
    if not (locomo.DATA_DIR / "locomo-dev.json").is_file():
        print(f"skipped: {locomo.DATA_DIR} is absent")
        return 0
    gather(args.embedder, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
