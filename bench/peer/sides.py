"""bench/peer/run.py's two sides: claude-mem 13.25.3 (full-text, or with its Chroma path on) and mnemo."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from bench.harness import REPO
from bench.peer.procs import free_port, timed_run

CLAUDE_MEM = "claude-mem@13.25.3"


def install_claude_mem(root: Path) -> None:
    """bun, then claude-mem with --legacy-peer-deps (one combined install loops on peer dependencies)."""
    npm = ["npm", "install", "--no-audit", "--no-fund", "--prefix", str(root)]
    for extra in (["bun"], ["--legacy-peer-deps", CLAUDE_MEM]):
        subprocess.run(npm + extra, check=True, capture_output=True, timeout=900)


class ClaudeMem:
    """One claude-mem install's worker and MCP server with a private HOME, data dir and port.

    Telemetry off; its LLM paths point at local stubs (CLAUDE_CODE_PATH a script that exits 1,
    ANTHROPIC_BASE_URL a local server answering 503), so no real `claude` starts. With `chroma`,
    its vector path is on and `bin_dir` (the uvx shim, bench/peer/chroma.py) comes first on PATH.
    """

    def __init__(self, root: Path, stub_url: str, name: str, *, chroma: bool = False, bin_dir: Path | None = None):
        self.root, self.name, self.chroma = root, name, chroma
        self.home = root / name
        self.data = self.home / ".claude-mem"
        self.db = self.data / "claude-mem.db"
        self.scripts = root / "node_modules" / "claude-mem" / "plugin" / "scripts"
        self.port = free_port()
        self.data.mkdir(parents=True)
        fake_claude = self.home / "claude-stub"
        fake_claude.write_text("#!/bin/sh\necho 'local stub: no claude in this benchmark' >&2\nexit 1\n")
        fake_claude.chmod(0o755)
        settings = {"CLAUDE_MEM_WORKER_PORT": str(self.port), "CLAUDE_MEM_DATA_DIR": str(self.data),
                    "CLAUDE_MEM_CHROMA_ENABLED": "true" if chroma else "false", "CLAUDE_MEM_TELEMETRY": "false",
                    "CLAUDE_CODE_PATH": str(fake_claude), "CLAUDE_MEM_LOG_LEVEL": "WARN"}
        (self.data / "settings.json").write_text(json.dumps(settings))
        path = [str(bin_dir)] if bin_dir else []
        path += [str(root / "node_modules" / ".bin"), os.environ.get("PATH", "")]
        self.env = {"PATH": ":".join(path), "HOME": str(self.home), "DO_NOT_TRACK": "1",
                    "CLAUDE_MEM_TELEMETRY": "false", "ANONYMIZED_TELEMETRY": "false",
                    "ANTHROPIC_BASE_URL": stub_url, "ANTHROPIC_API_KEY": "local-stub", **settings}

    def worker(self, action: str) -> None:
        subprocess.run(["bun", str(self.scripts / "worker-service.cjs"), action], env=self.env, cwd=str(self.home),
                       check=True, capture_output=True, timeout=120)

    def mcp_argv(self) -> list[str]:
        return ["node", str(self.scripts / "mcp-server.cjs")]

    def hook_ms(self, handler: str, payload: dict) -> float:
        argv = ["node", str(self.scripts / "bun-runner.js"), str(self.scripts / "worker-service.cjs"),
                "hook", "claude-code", handler]
        return timed_run(argv, payload, self.env, self.home)

    def highest_ids(self) -> dict[str, dict[str, int]]:
        """project -> the highest observation, summary and prompt id (what its Chroma sync must reach)."""
        conn = sqlite3.connect(self.db)
        try:
            tops: dict[str, dict[str, int]] = {}
            for kind, sql in (("observations", "SELECT project, MAX(id) FROM observations GROUP BY project"),
                              ("summaries", "SELECT project, MAX(id) FROM session_summaries GROUP BY project"),
                              ("prompts", "SELECT s.project, MAX(up.id) FROM user_prompts up JOIN sdk_sessions s"
                                          " ON up.session_db_id = s.id GROUP BY s.project")):
                for project, top in conn.execute(sql):
                    tops.setdefault(project, {})[kind] = top
            return tops
        finally:
            conn.close()

    def last_observations(self, n: int) -> list[int]:
        """The newest `n` observation ids of the first project (left to claude-mem's own backfill)."""
        conn = sqlite3.connect(self.db)
        try:
            project = conn.execute("SELECT project FROM observations ORDER BY id DESC LIMIT 1").fetchone()[0]
            return [row[0] for row in conn.execute(
                "SELECT id FROM observations WHERE project = ? ORDER BY id DESC LIMIT ?", (project, n))]
        finally:
            conn.close()


class Mnemo:
    """A private mnemo home; vector_svc idles out after `idle_exit_s` (the product's default is 600)."""

    def __init__(self, root: Path, embedder: str, idle_exit_s: float):
        from mnemo.config import load_settings, with_overrides

        self.home = root / "mnemo-home"
        self.settings = with_overrides(load_settings({"home": str(self.home)}, environ={}), embedder=embedder,
                                       log_level="warning", vector_idle_exit_s=idle_exit_s)
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("MNEMO_")}
        self.env.update(MNEMO_HOME=str(self.home), MNEMO_EMBEDDER=embedder, MNEMO_LOG_LEVEL="warning",
                        MNEMO_VECTOR_IDLE_EXIT_S=str(idle_exit_s))

    def up(self) -> None:
        from mnemo.config import ensure_private_dirs
        from mnemo.stack import ensure_stack

        ensure_private_dirs(self.settings)
        if not ensure_stack(self.settings, 180):
            raise RuntimeError("the mnemo stack did not become healthy")

    def down(self) -> None:
        from mnemo.stack import run_down

        run_down(self.settings, None)

    def cli(self, *args: str) -> str:
        done = subprocess.run([sys.executable, "-m", "mnemo.cli", *args], env=self.env, cwd=str(REPO),
                              capture_output=True, text=True, timeout=3600)
        if done.returncode != 0:
            raise RuntimeError(f"mnemo {args[0]}: {done.stderr[-500:]}")
        return done.stdout

    def wait_for_vectors(self, timeout_s: float) -> float:
        """Seconds until the vector index has caught up with the store, polled over one gRPC
        channel to vector_svc's Status (no use: it does not keep the service up). Not `mnemo stats`
        once a second: a fresh interpreter per poll took CPU from the catch-up it was timing."""
        from mnemo.errors import MnemoError
        from mnemo.grpc_client import connect
        from mnemo.v1 import vector_pb2, vector_pb2_grpc

        client = connect(self.settings, "vector", vector_pb2_grpc.VectorServiceStub)
        started = time.perf_counter()
        try:
            while time.perf_counter() - started < timeout_s:
                try:
                    status = client.stub.Status(vector_pb2.VectorStatusRequest(), timeout=30)
                    if status.head_seq and status.lag == 0:
                        return time.perf_counter() - started
                except MnemoError:
                    pass  # starting, or busy: ask again
                time.sleep(0.5)
        finally:
            client.close()
        raise RuntimeError(f"vector lag did not reach 0 within {timeout_s:.0f} s")

    def wait_rest(self, timeout_s: float) -> float:
        """Seconds until vector_svc has idled out (the supervisor lists it resting)."""
        from mnemo import wake

        started = time.perf_counter()
        while wake.resting(self.settings.run_dir) != {"vector"}:
            if time.perf_counter() - started > timeout_s:
                raise RuntimeError(f"vector_svc did not idle out within {timeout_s:.0f} s")
            time.sleep(0.2)
        return time.perf_counter() - started

    def strategy(self, query: str) -> str:
        """How search_svc answers `query` now (hybrid, or lexical while vector_svc warms up)."""
        from mnemo.grpc_client import connect
        from mnemo.v1 import search_pb2, search_pb2_grpc

        client = connect(self.settings, "search", search_pb2_grpc.SearchServiceStub)
        try:
            return client.stub.Search(search_pb2.SearchRequest(query=query, limit=5), timeout=30).strategy
        finally:
            client.close()

    def vector_off(self) -> None:
        """From now on the stack runs without vector_svc (`vector = "off"`: full-text search only)."""
        from mnemo.config import with_overrides

        self.settings = with_overrides(self.settings, vector="off")
        self.env["MNEMO_VECTOR"] = "off"

    def mcp_argv(self) -> list[str]:
        return [sys.executable, "-m", "mnemo.cli", "mcp"]

    def hook_ms(self, event: str, payload: dict) -> float:
        return timed_run([sys.executable, "-m", "mnemo.cli", "hook", event], payload, self.env, REPO)
