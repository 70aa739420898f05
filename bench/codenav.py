"""Code navigation on real code nobody here wrote: speed, and tokens against grep + read.

Tree: the virtualenv's site-packages (grpc, chromadb, numpy, the mcp SDK, pydantic...),
searched whole. Measured, in one table:

  smart_outline   p50 per file over a sample of its code files, and p50 of one real
                  file of >= 5,000 lines (target < 100 ms)
  smart_search    p50 cold (a fresh outline cache: every file parsed) and warm (the
                  cache filled) over the whole tree (target warm < 1 s with >= 10,000
                  files); ripgrep searching the same tree for the same names is the floor
  lookups         10 scripted lookups with known answers ("where is X defined", scoped
                  to its package as an agent would): smart_search + smart_unfold tokens
                  against rg -n -w NAME + reading every matching file, and against the
                  best case of grep (reading only the defining file); answer found?
                  Targets: every answer found, >= 10x fewer tokens than grep + read.

Tokens are characters / 4, for every column alike. The load average is printed: other
work on the machine slows the timings, never the token counts.
Run: .venv/bin/python -m bench.codenav [--root DIR] [--cold-runs N]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sysconfig
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

from bench.harness import load_average, print_table
from gateway.codenav import run_smart_outline, run_smart_search, run_smart_unfold
from gateway.codenav.languages import language_for
from gateway.codenav.model import estimate_tokens
from gateway.codenav.search import OutlineCache, search
from gateway.codenav.walk import Walk

# (name, package directory, file that defines it)
LOOKUPS = (
    ("PersistentClient", "chromadb", "chromadb/__init__.py"),
    ("insecure_channel", "grpc", "grpc/__init__.py"),
    ("linspace", "numpy", "numpy/_core/function_base.py"),
    ("GitIgnoreSpec", "pathspec", "pathspec/gitignore.py"),
    ("create_task_group", "anyio", "anyio/_core/_tasks.py"),
    ("MessageToJson", "google/protobuf", "google/protobuf/json_format.py"),
    ("BaseModel", "pydantic", "pydantic/main.py"),
    ("AsyncClient", "httpx", "httpx/_client.py"),
    ("ClientSession", "mcp", "mcp/client/session.py"),
    ("make_filtering_bound_logger", "structlog", "structlog/_native.py"),
)
OUTLINE_SAMPLE = 300
BIG_FILE_LINES = 5000
NO_CAP = 3600.0


def p50_ms(run: Callable[[], object], times: int) -> float:
    samples = []
    for _ in range(times):
        began = time.perf_counter()
        run()
        samples.append((time.perf_counter() - began) * 1000)
    return statistics.median(samples)


def code_files(root: Path) -> list[str]:
    walk = Walk(str(root), str(root), max_file_bytes=512 * 1024, max_files=10**6, deadline=time.monotonic() + NO_CAP)
    return [entry.shown for entry in walk if language_for(entry.shown) is not None]


def big_file(root: Path, files: list[str]) -> tuple[str, int]:
    """The real code file whose line count is the smallest at or above BIG_FILE_LINES."""
    best = ("", 10**9)
    for shown in files:
        if shown.endswith(".py"):
            lines = (root / shown).read_bytes().count(b"\n")
            if BIG_FILE_LINES <= lines < best[1]:
                best = (shown, lines)
    return best


def rg(args: list[str], cwd: Path) -> str:
    return subprocess.run(["rg", *args], cwd=cwd, capture_output=True, text=True, check=False).stdout


def lookup_row(root: Path, name: str, scope: str, answer: str, have_rg: bool) -> dict[str, object]:
    text, structured = run_smart_search(root, {"query": name, "path": scope})
    best = structured["symbols"][0] if structured["symbols"] else {}
    found = best.get("path") == answer and best.get("name") == name
    unfold_text, _ = run_smart_unfold(root, {"file_path": best.get("path", answer), "symbol_name": name})
    smart = estimate_tokens(text) + estimate_tokens(unfold_text)
    row: dict[str, object] = {"name": name, "found": found, "smart": smart}
    if have_rg:
        grep = rg(["-n", "-w", "-F", name, scope], root)
        matching = sorted({line.split(":", 1)[0] for line in grep.splitlines()})
        read_all = sum(estimate_tokens((root / path).read_text(errors="replace")) for path in matching)
        row["grep_read"] = estimate_tokens(grep) + read_all
        row["grep_best"] = estimate_tokens(grep) + estimate_tokens((root / answer).read_text(errors="replace"))
        row["files"] = len(matching)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=Path(sysconfig.get_paths()["purelib"]))
    parser.add_argument("--cold-runs", type=int, default=3)
    parser.add_argument("--warm-runs", type=int, default=3)
    args = parser.parse_args()
    root: Path = args.root.resolve()
    have_rg = shutil.which("rg") is not None
    files = code_files(root)
    rows: list[tuple[str, str, str, str, str]] = []
    load = load_average()

    sample = files[:: max(1, len(files) // OUTLINE_SAMPLE)][:OUTLINE_SAMPLE]
    per_file = [p50_ms(partial(run_smart_outline, root, {"file_path": shown}), 1) for shown in sample]
    rows.append(("smart_outline p50 per file", f"{statistics.median(per_file):.1f} ms", "", f"{len(sample)} files", ""))
    big, big_lines = big_file(root, files)
    big_ms = p50_ms(lambda: run_smart_outline(root, {"file_path": big}), 5)
    outline_text, outline_data = run_smart_outline(root, {"file_path": big})
    rows.append((f"smart_outline {big} ({big_lines:,} lines)", f"{big_ms:.1f} ms", "", "< 100 ms",
                 _ok(big_ms < 100)))
    outline_tokens, file_tokens = estimate_tokens(outline_text), outline_data["file_tokens"]
    rows.append(("  tokens: outline vs whole file", f"{outline_tokens:,}", f"{file_tokens:,}",
                 f"{file_tokens / outline_tokens:.1f}x", ""))

    names = [name for name, _, _ in LOOKUPS]
    cold = [p50_ms(lambda: search(root, names[0], cache=OutlineCache(), time_cap_s=NO_CAP), 1)
            for _ in range(args.cold_runs)]
    warm_cache = OutlineCache()
    search(root, names[0], cache=warm_cache, time_cap_s=NO_CAP)
    warm = [p50_ms(partial(search, root, name, cache=warm_cache, time_cap_s=NO_CAP), args.warm_runs)
            for name in names]
    rg_names = names if have_rg else []
    floor = [p50_ms(partial(rg, ["-n", "-w", "-F", name, "."], root), args.warm_runs) for name in rg_names]
    rg_cell = f"rg {statistics.median(floor):.0f} ms" if have_rg else "rg not installed: no floor"
    rows.append((f"smart_search cold p50, {len(files):,} code files", f"{statistics.median(cold) / 1000:.1f} s",
                 rg_cell, f"{args.cold_runs} runs", ""))
    warm_ms = statistics.median(warm)
    rows.append(("smart_search warm p50, same tree", f"{warm_ms:.0f} ms", rg_cell, "< 1 s, >= 10,000 files",
                 _ok(warm_ms < 1000 and len(files) >= 10_000)))

    lookups = [lookup_row(root, name, scope, answer, have_rg) for name, scope, answer in LOOKUPS]
    rows.extend(_lookup_rows(lookups, have_rg))
    _print(rows, root, len(files), load)


def _lookup_rows(lookups: list[dict[str, object]], have_rg: bool) -> list[tuple[str, str, str, str, str]]:
    rows = []
    for row in lookups:
        smart = int(str(row["smart"]))
        baseline = f"{int(str(row['grep_read'])):,} ({row['files']} files)" if have_rg else "no rg"
        ratio = (f"{int(str(row['grep_read'])) / smart:.0f}x / {int(str(row['grep_best'])) / smart:.1f}x"
                 if have_rg else "")
        rows.append((f"lookup {row['name']}", f"{smart:,} t", baseline, ratio, "found" if row["found"] else "MISSED"))
    smart_total = sum(int(str(row["smart"])) for row in lookups)
    all_found = all(row["found"] for row in lookups)
    if have_rg:
        grep_total = sum(int(str(row["grep_read"])) for row in lookups)
        best_total = sum(int(str(row["grep_best"])) for row in lookups)
        rows.append(("lookups total (search+unfold vs grep+read all / defining file)", f"{smart_total:,} t",
                     f"{grep_total:,} t", f"{grep_total / smart_total:.1f}x / {best_total / smart_total:.1f}x",
                     _ok(all_found and grep_total >= 10 * smart_total)))
    return rows


def _ok(passed: bool) -> str:
    return "PASS" if passed else "FAIL"


def _print(rows: list[tuple[str, str, str, str, str]], root: Path, files: int, load: str) -> None:
    print(f"tree: {root} ({files:,} code files); cores: {os.cpu_count()}; "
          f"load average at start: {load}; tokens = characters / 4")
    print_table(("measure", "smart_*", "floor / grep+read", "ratio / target", "ok"), rows)


if __name__ == "__main__":
    main()
