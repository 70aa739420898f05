"""mnemo next to claude-mem 13.25.3 as its users run it (Chroma on), in one run on one corpus.

Installs bun and claude-mem from npm into a temp dir and runs two claude-mem installs side by
side on copies of one corpus: full-text (`CLAUDE_MEM_CHROMA_ENABLED=false`) and hybrid (its
Chroma path on, offline: bench/peer/chroma.py). The corpus is generated deterministically into
claude-mem's own database (created by its worker), dated within the last 30 days, imported
into a private mnemo home with `mnemo import`; all are asked the same queries, interleaved,
over raw JSON-RPC on their stdio (no client library on either side). Before measuring, the
bench confirms claude-mem's collection holds the corpus and answers a paraphrase. Prints the
table with ratios, the machine and the load average. Not part of `make test`.

    .venv/bin/python -m bench.peer [--observations 10000] [--embedder minilm-int8|hash] [--idle-exit 60]

mnemo runs with `vector_idle_exit_s` at --idle-exit (the product's default is 600): after the
searches the bench waits until vector_svc has idled out, measures the idle memory, and times
the first search after it (answered lexically while vector_svc warms up) and the time until
searches are hybrid again. Skips with a message where npm or node is missing.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import resource
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from bench.harness import REPO, load_average, percentile, print_table
from bench.peer import chroma as peer_chroma
from bench.peer.corpus import PLACES, SUBJECTS, generate_corpus, make_queries, paraphrase_queries
from bench.peer.procs import StdioPeer, cold_start, llm_stub, side_cpu_s, side_memory
from bench.peer.sides import ClaudeMem, Mnemo, install_claude_mem

WARM_QUERIES = 5  # asked of every side before the timed queries
TOP = 20  # results asked per search, and the depth of recall
Row = tuple[str, str, str, str, str]  # figure, claude-mem full-text, claude-mem hybrid, mnemo, ratio
TITLE = re.compile("(" + "|".join(map(re.escape, SUBJECTS)) + ") in (" + "|".join(map(re.escape, PLACES)) + ")",
                   re.IGNORECASE)


def p(values: list[float], q: float) -> float:
    """The q percentile of samples in seconds, in ms."""
    return percentile(values, q) * 1000


def ratio(ours: float, theirs: float) -> str:
    return f"{ours / theirs:.2f}x" if theirs else "n/a"


def tools_size(listed: dict) -> tuple[int, int]:
    """(tool count, chars of the tools array as JSON): what every session pays in context."""
    return len(listed["tools"]), len(json.dumps(listed["tools"]))


def mib(memory: tuple[float, float, float], part: str) -> str:
    rss, pss, share = memory
    return f"{rss:.0f} ({pss:.0f}) MiB" + (f", {part} {share:.0f}" if share else "")


def text_of(result: dict) -> str:
    return "\n".join(block.get("text", "") for block in result.get("content", []))


def child_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


# ---------- steps --------------------------------------------------------------------------


def prepare(cms: dict[str, ClaudeMem], mn: Mnemo, opts: argparse.Namespace) -> list[Row]:
    """The corpus in both claude-mem databases and in mnemo; claude-mem's collection filled and checked."""
    for cm in cms.values():
        cm.worker("start")  # creates claude-mem's database with its own schema
        cm.worker("stop")
        written = generate_corpus(cm.db, opts.observations)
    mn.up()
    started, cpu = time.perf_counter(), side_cpu_s(str(mn.home))
    mn.cli("import", str(cms["hybrid"].db))
    imported_s = time.perf_counter() - started
    indexed_s = mn.wait_for_vectors(opts.index_timeout)
    mn_cpu = side_cpu_s(str(mn.home)) - cpu
    after_index = side_memory(str(mn.home), "vector")
    fill, fill_s, fill_cpu, backfill_s = chroma_collection(cms["hybrid"])
    cm_index = side_memory(str(cms["hybrid"].home), "chroma-mcp")
    cms["hybrid"].worker("stop")
    check = peer_chroma.check(peer_chroma.chroma_venv(), cms["hybrid"].home, cms["hybrid"].data,
                              cms["hybrid"].last_observations(peer_chroma.LEFT_TO_CLAUDE_MEM))
    if check["checked"] != check["expected"] or not 0 <= check["max_abs_diff"] < 1e-4:
        raise RuntimeError(f"claude-mem's own vectors differ from the fill's: {check}")
    if check["documents"] != fill["written"] + check["expected"]:
        raise RuntimeError(f"claude-mem's collection does not hold the corpus: {check}, fill {fill}")
    for cm in cms.values():
        cm.worker("start")
    own_cpu = fill["ef_cpu_s_per_doc"] * check["documents"]
    return [
        ("corpus", f"{written:,} records", "same database", f"`mnemo import` {written / imported_s:,.0f} records/s",
         "-"),
        ("vector indexing of the corpus", "-",
         f"{check['documents']:,} documents: its own path {own_cpu:,.0f} CPU-s ({fill['ef_cpu_s_per_doc']:.2f} "
         f"per document, sampled); filled here in {fill_s:.0f} s, {fill_cpu:.0f} CPU-s; its own backfill of the "
         f"last {check['expected']} documents {backfill_s:.0f} s (vectors equal, max diff {check['max_abs_diff']:.1e})",
         f"caught up {indexed_s:.0f} s after the import, {mn_cpu:.0f} CPU-s",
         f"{ratio(mn_cpu, own_cpu)} CPU (fill here {ratio(mn_cpu, fill_cpu)})"),
        ("RSS (PSS) after indexing", "-", mib(cm_index, "chroma-mcp"), mib(after_index, "vector_svc"),
         ratio(after_index[0], cm_index[0])),
    ]


def chroma_collection(cm: ClaudeMem) -> tuple[dict, float, float, float]:
    """Fill claude-mem's collection but for a few records, start its worker with Chroma on, and
    wait for its own backfill to embed those: (fill reply, fill s, fill CPU-s, backfill s)."""
    venv = peer_chroma.chroma_venv()
    peer_chroma.place_model(cm.home, venv)
    left = cm.last_observations(peer_chroma.LEFT_TO_CLAUDE_MEM)
    started, cpu = time.perf_counter(), child_cpu_s()
    fill = peer_chroma.fill(venv, cm.home, cm.data, left)
    fill_s, fill_cpu = time.perf_counter() - started, child_cpu_s() - cpu
    started = time.perf_counter()
    cm.worker("start")
    tops = cm.highest_ids()
    while not peer_chroma.sync_complete(cm.data, tops):
        if time.perf_counter() - started > 1800:
            raise RuntimeError("claude-mem's Chroma backfill did not finish within 30 minutes")
        time.sleep(1.0)
    return fill, fill_s, fill_cpu, time.perf_counter() - started


def starts_rows(cm: ClaudeMem, mn: Mnemo, opts: argparse.Namespace) -> list[Row]:
    starts: dict[str, list[float]] = {"cm": [], "mn": []}
    listed: dict[str, dict] = {}
    for _ in range(opts.starts):
        for key, argv, env, cwd in (("cm", cm.mcp_argv(), cm.env, cm.home), ("mn", mn.mcp_argv(), mn.env, REPO)):
            elapsed, listed[key] = cold_start(argv, env, cwd)
            starts[key].append(elapsed)
    c, m = statistics.median(starts["cm"]), statistics.median(starts["mn"])
    (cn, cc), (mc, mchars) = tools_size(listed["cm"]), tools_size(listed["mn"])
    return [("cold start to tools/list p50 (its launcher)", f"{c * 1000:.0f} ms", "same", f"{m * 1000:.0f} ms",
             ratio(m, c)),
            ("tool definitions (tools/list JSON)", f"{cn} tools, {cc:,} chars", "same",
             f"{mc} tools, {mchars:,} chars", ratio(mchars, cc))]


def search_times(calls: dict[str, tuple[StdioPeer, str]], queries: list[str]) -> dict[str, list[float]]:
    """Each caller asks every query; who goes first rotates, so load drifts hit all alike."""
    times: dict[str, list[float]] = {name: [] for name in calls}
    for q in queries[:WARM_QUERIES]:
        for peer, tool in calls.values():
            peer.call(tool, {"query": q, "limit": TOP})
    for i, q in enumerate(queries):
        names = list(calls)[i % len(calls):] + list(calls)[:i % len(calls)]
        for name in names:
            peer, tool = calls[name]
            started = time.perf_counter()
            peer.call(tool, {"query": q, "limit": TOP})
            times[name].append(time.perf_counter() - started)
    return times


def search_rows(peers: dict[str, StdioPeer], homes: dict[str, Path], opts: argparse.Namespace) -> list[Row]:
    calls = {"full": (peers["full"], "search"), "hybrid": (peers["hybrid"], "search"),
             "mnemo search": (peers["mnemo"], "search"), "mnemo mem_search": (peers["mnemo"], "mem_search")}
    cpu = {side: side_cpu_s(str(home)) for side, home in homes.items()}
    times = search_times(calls, make_queries(opts.queries))
    per_call = opts.queries + WARM_QUERIES
    cpu_ms = {side: (side_cpu_s(str(home)) - cpu[side]) * 1000 / per_call for side, home in homes.items()}
    cpu_ms["mnemo"] /= 2  # two tools asked each query
    full, hybrid = p(times["full"], .5), p(times["hybrid"], .5)
    rows: list[Row] = []
    for name in ("mnemo search", "mnemo mem_search"):
        ours = p(times[name], .5)
        rows.append((f"MCP {name.split()[1]} p50 / p95, {opts.observations:,} observations",
                     f"{full:.1f} / {p(times['full'], .95):.1f} ms", f"{hybrid:.1f} / {p(times['hybrid'], .95):.1f} ms",
                     f"{ours:.1f} / {p(times[name], .95):.1f} ms",
                     f"{ratio(ours, hybrid)} (full-text {ratio(ours, full)})"))
    rows.append(("CPU per search, every process of the side", f"{cpu_ms['full']:.1f} ms",
                 f"{cpu_ms['hybrid']:.1f} ms", f"{cpu_ms['mnemo']:.1f} ms", ratio(cpu_ms["mnemo"], cpu_ms["hybrid"])))
    return rows


def recall_row(peers: dict[str, StdioPeer], cm: ClaudeMem) -> Row:
    """Paraphrased queries (no word shared with the corpus): recall@TOP and how many got any row."""
    import sqlite3

    conn = sqlite3.connect(cm.db)
    cells = {}
    for side, tool in (("full", "search"), ("hybrid", "search"), ("mnemo", "search")):
        recalls, answered = [], 0
        for q in paraphrase_queries():
            relevant = conn.execute("SELECT COUNT(*) FROM observations WHERE title LIKE ?",
                                    (f"% {q.means}",)).fetchone()[0]
            lines = text_of(peers[side].call(tool, {"query": q.query, "limit": TOP})).splitlines()
            rows = [line for line in lines if TITLE.search(line)]
            hits = sum(1 for line in rows if q.means.lower() in line.lower())
            recalls.append(min(hits, TOP) / max(1, min(relevant, TOP)))
            answered += bool(rows)
        cells[side] = (statistics.mean(recalls), answered)
    conn.close()
    fmt = {side: f"{r:.3f} / {a}" for side, (r, a) in cells.items()}
    return (f"paraphrased queries ({len(paraphrase_queries())}, no shared word): recall@{TOP} / answered",
            fmt["full"], fmt["hybrid"], fmt["mnemo"], ratio(cells["mnemo"][0], cells["hybrid"][0]))


def confirm_hybrid(peer: StdioPeer) -> None:
    """claude-mem's vector path must answer a paraphrase before anything is measured."""
    q = paraphrase_queries()[0]
    text = text_of(peer.call("search", {"query": q.query, "limit": TOP}))
    if not any(TITLE.search(line) for line in text.splitlines()):
        raise RuntimeError(f"claude-mem with Chroma on found nothing for the paraphrase {q.query!r}: {text[:400]}")


def rest_rows(peers: dict[str, StdioPeer], homes: dict[str, Path], mn: Mnemo, opts: argparse.Namespace) -> list[Row]:
    """Idle memory once vector_svc has idled out, and the first search after that."""
    waited = mn.wait_rest(opts.idle_exit * 3 + 120)
    idle = {side: side_memory(str(home)) for side, home in homes.items()}
    started = time.perf_counter()
    text = text_of(peers["mnemo"].call("search", {"query": "token refresh in the nightly job", "limit": TOP}))
    first_ms = (time.perf_counter() - started) * 1000
    started = time.perf_counter()
    while mn.strategy("token refresh") != "hybrid":
        if time.perf_counter() - started > 300:
            raise RuntimeError("searches were not hybrid again within 300 s of the wake")
        time.sleep(0.1)
    hybrid_s = time.perf_counter() - started
    notice = "says it warms up" if "warming up" in text else "NO NOTICE"
    return [(f"idle RSS (PSS) of the whole stack, mnemo's vector_svc idled out ({opts.idle_exit:g} s unused, "
             f"{waited:.0f} s after the searches)", mib(idle["full"], ""), mib(idle["hybrid"], ""),
             mib(idle["mnemo"], ""), f"{ratio(idle['mnemo'][0], idle['hybrid'][0])} "
             f"(full-text {ratio(idle['mnemo'][0], idle['full'][0])})"),
            ("first search after the idle-out (lexical, and wakes vector_svc); then hybrid again after", "-", "-",
             f"{first_ms:.0f} ms ({notice}); {hybrid_s:.1f} s", "-")]


def first_search_row(cm: ClaudeMem, mn: Mnemo) -> Row:
    """A cold start of the whole stack: its MCP server spawned with nothing running, up to the
    first search's answer (claude-mem with Chroma on: its worker and chroma-mcp start too)."""
    cm.worker("stop")
    mn.down()
    timings = {}
    for key, argv, env, cwd in (("cm", cm.mcp_argv(), cm.env, cm.home), ("mn", mn.mcp_argv(), mn.env, REPO)):
        started = time.perf_counter()
        if key == "cm":
            cm.worker("start")  # as its SessionStart hook does: its MCP server does not start the worker
        peer = StdioPeer(argv, env, cwd)
        try:
            peer.open()
            peer.call("search", {"query": "login redirect", "limit": TOP})
            timings[key] = time.perf_counter() - started
        finally:
            peer.close()
    mn.up()
    return ("first search after a cold start of the whole stack (claude-mem: its worker started as its "
            "SessionStart hook starts it)", "-", f"{timings['cm']:.1f} s",
            f"{timings['mn']:.1f} s", ratio(timings["mn"], timings["cm"]))


def hook_rows(cm: ClaudeMem, mn: Mnemo, runs: int) -> list[Row]:
    rows: dict[str, tuple[list[float], list[float]]] = {"UserPromptSubmit": ([], []), "PostToolUse Read": ([], [])}
    for run in range(runs):
        base = {"session_id": f"peer-hook-{run}", "cwd": str(REPO), "transcript_path": ""}
        prompt = {**base, "hook_event_name": "UserPromptSubmit", "prompt": "why does the login redirect loop?"}
        tool = {**base, "hook_event_name": "PostToolUse", "tool_name": "Read", "tool_use_id": f"t{run}",
                "tool_input": {"file_path": str(REPO / "README.md")}, "tool_response": {"content": "x"}}
        rows["UserPromptSubmit"][0].append(cm.hook_ms("session-init", prompt))
        rows["UserPromptSubmit"][1].append(mn.hook_ms("UserPromptSubmit", prompt))
        rows["PostToolUse Read"][0].append(cm.hook_ms("observation", tool))
        rows["PostToolUse Read"][1].append(mn.hook_ms("PostToolUse", tool))
    out = []
    for name, (theirs, ours) in rows.items():
        c, m = statistics.median(theirs), statistics.median(ours)
        out.append((f"hook {name} p50", f"{c:.0f} ms", "same", f"{m:.0f} ms", ratio(m, c)))
    return out


def fulltext_row(cm: ClaudeMem, mn: Mnemo, opts: argparse.Namespace) -> Row:
    """mnemo restarted with `vector = "off"` (no vector_svc), against claude-mem full-text again."""
    mn.down()
    mn.vector_off()
    mn.up()
    cm_peer, mn_peer = StdioPeer(cm.mcp_argv(), cm.env, cm.home), StdioPeer(mn.mcp_argv(), mn.env, REPO)
    try:
        cm_peer.open()
        mn_peer.open()
        times = search_times({"full": (cm_peer, "search"), "mnemo": (mn_peer, "search")}, make_queries(opts.queries))
    finally:
        cm_peer.close()
        mn_peer.close()
    full, ours = p(times["full"], .5), p(times["mnemo"], .5)
    return ("MCP search p50, mnemo full-text only (`vector = \"off\"`)", f"{full:.1f} ms", "-", f"{ours:.1f} ms",
            f"full-text {ratio(ours, full)}")


def measure(cms: dict[str, ClaudeMem], mn: Mnemo, opts: argparse.Namespace, rows: list[Row]) -> None:
    """Appends each row as it is measured: a failure later still leaves the table of what was."""
    rows += prepare(cms, mn, opts)
    rows += starts_rows(cms["full"], mn, opts)
    homes = {"full": cms["full"].home, "hybrid": cms["hybrid"].home, "mnemo": mn.home}
    peers = {"full": StdioPeer(cms["full"].mcp_argv(), cms["full"].env, cms["full"].home),
             "hybrid": StdioPeer(cms["hybrid"].mcp_argv(), cms["hybrid"].env, cms["hybrid"].home),
             "mnemo": StdioPeer(mn.mcp_argv(), mn.env, REPO)}
    try:
        for peer in peers.values():
            peer.open()
        confirm_hybrid(peers["hybrid"])
        rows += search_rows(peers, homes, opts)
        after = {"full": side_memory(str(homes["full"])), "hybrid": side_memory(str(homes["hybrid"]), "chroma-mcp"),
                 "mnemo": side_memory(str(homes["mnemo"]), "vector")}
        rss, pss = ratio(after["mnemo"][0], after["hybrid"][0]), ratio(after["mnemo"][1], after["hybrid"][1])
        rows.append(("RSS (PSS) of the whole stack after the searches", mib(after["full"], ""),
                     mib(after["hybrid"], "chroma-mcp"), mib(after["mnemo"], "vector_svc"), f"{rss} (PSS {pss})"))
        rows.append(recall_row(peers, cms["hybrid"]))
        if opts.embedder != "hash":  # the hash embedder's index answers no paraphrase anyway
            rows += rest_rows(peers, homes, mn, opts)
    finally:
        for peer in peers.values():
            peer.close()
    rows.append(first_search_row(cms["hybrid"], mn))
    rows += hook_rows(cms["full"], mn, opts.hook_runs)
    rows.append(fulltext_row(cms["full"], mn, opts))


def print_figures(rows: list[Row], opts: argparse.Namespace) -> None:
    print()
    print_table(("figure", "claude-mem full-text", "claude-mem hybrid (Chroma on)", "mnemo",
                 "mnemo / claude-mem hybrid"), rows)
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.processor())
    print(f"\n{opts.observations:,} observations, {opts.queries} queries interleaved, mnemo embedder {opts.embedder}; "
          f"{os.cpu_count()} CPUs ({cpu}), Python {platform.python_version()}; "
          f"load average at the end {load_average()}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--observations", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=40)
    parser.add_argument("--starts", type=int, default=7)
    parser.add_argument("--hook-runs", type=int, default=5)
    parser.add_argument("--embedder", default="minilm-int8", help="mnemo's embedder (hash: no model)")
    parser.add_argument("--index-timeout", type=float, default=3600)
    parser.add_argument("--idle-exit", type=float, default=60.0, help="mnemo's vector_idle_exit_s for this run (s)")
    parser.add_argument("--keep", action="store_true", help="keep the temp dir (prints its path)")
    opts = parser.parse_args()
    if not (shutil.which("npm") and shutil.which("node")):
        print("bench/peer/run.py: skipped: npm and node are needed to install and run claude-mem", file=sys.stderr)
        return 0
    root = Path(tempfile.mkdtemp(prefix="mnemo-peer-"))
    stub = llm_stub()
    stub_url = f"http://127.0.0.1:{stub.server_address[1]}"
    venv = peer_chroma.chroma_venv()
    bin_dir = root / "bin"
    peer_chroma.install_uvx_shim(bin_dir, venv)
    cms = {"full": ClaudeMem(root, stub_url, "cm-full"),
           "hybrid": ClaudeMem(root, stub_url, "cm-hybrid", chroma=True, bin_dir=bin_dir)}
    mn = Mnemo(root, opts.embedder, opts.idle_exit)
    rows: list[Row] = []
    try:
        print(f"installing bun and claude-mem into {root} ...", flush=True)
        install_claude_mem(root)
        measure(cms, mn, opts, rows)
    finally:
        print_figures(rows, opts)
        for stop in (*(lambda cm=cm: cm.worker("stop") for cm in cms.values()), mn.down, stub.shutdown):
            try:
                stop()
            except Exception as err:  # a failed stop must not hide the others or the table
                print(f"cleanup: {err}", file=sys.stderr)
        if opts.keep:
            print(f"kept {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
