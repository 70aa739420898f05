"""Helpers shared by the gateway tests: spawn `mnemo mcp` with the SDK's stdio client,
and a fault-injecting SearchService (the one place a fake backend is allowed).
"""

from __future__ import annotations

import subprocess
import threading
import time

import grpc

from bench.harness import GATEWAY_ARGV, gateway_env, mcp_session  # noqa: F401 - one copy, shared with the benches
from bench.harness import REPO as REPO_ROOT
from mnemo.grpc_server import build_server
from mnemo.v1 import search_pb2, search_pb2_grpc


def minimal_arguments(tool: str) -> dict:
    """The smallest valid arguments of a tool: a plain value for each required property."""
    from gateway.tools import BY_NAME

    schema = BY_NAME[tool].input_schema
    plain = {"string": "alpha", "integer": 1, "array": [1]}
    special = {"type": "decision"}  # find_by_type: one observation type (a string or an array)

    def value(name: str):
        declared = schema["properties"][name]["type"]
        return special[name] if isinstance(declared, list) and name in special else plain[declared]

    return {name: value(name) for name in schema.get("required", [])}


def result_text(result) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


class FaultySearch(search_pb2_grpc.SearchServiceServicer):
    """Answers capabilities; Search sleeps `delay_s` (past the caller's deadline) and counts runs."""

    def __init__(self, delay_s: float = 2.0, capabilities: tuple[str, ...] = ("search",),
                 prime_quiet_s: float = 0.0, prime_steps: int = 3, prime_step_s: float = 0.05,
                 prime_fails_with: tuple[grpc.StatusCode, str] | None = None):
        self.delay_s = delay_s
        self.capabilities = capabilities
        self.search_calls = 0
        self.finished = threading.Event()
        self._lock = threading.Lock()
        self.prime_quiet_s = prime_quiet_s
        self.prime_steps = prime_steps
        self.prime_step_s = prime_step_s
        self.prime_started = threading.Event()
        self.prime_cancelled = threading.Event()
        self.prime_calls = 0
        # The way a failed job ends: after its first event, the stream ends with this status.
        self.prime_fails_with = prime_fails_with

    def GetCapabilities(self, request, context):
        return search_pb2.GetCapabilitiesResponse(capabilities=list(self.capabilities))

    def Search(self, request, context):
        with self._lock:
            self.search_calls += 1
        time.sleep(self.delay_s)
        self.finished.set()
        return search_pb2.SearchReply(text="too late")

    def PrimeCorpus(self, request, context):
        """A slow job: silent for prime_quiet_s, then prime_steps events; stops when the caller cancels."""
        with self._lock:
            self.prime_calls += 1
        self.prime_started.set()
        if not self._idle(context, self.prime_quiet_s):
            return
        total = self.prime_steps
        for done in range(1, total + 1):
            yield search_pb2.PrimeEvent(phase="embed", done=done, total=total, message=f"chunk {done}/{total}")
            if self.prime_fails_with:
                context.abort(*self.prime_fails_with)
            if not self._idle(context, self.prime_step_s):
                return
        yield search_pb2.PrimeEvent(phase="done", done=total, total=total, final=True,
                                    result_text=f"Corpus {request.name} primed: {total} chunks.")

    def _idle(self, context, seconds: float) -> bool:
        """Wait like a busy job would; False (and prime_cancelled set) once the caller went away."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if not context.is_active():
                self.prime_cancelled.set()
                return False
            time.sleep(0.02)
        if not context.is_active():
            self.prime_cancelled.set()
            return False
        return True

    ReprimeCorpus = PrimeCorpus


def start_fake_search(servicer: FaultySearch, address: str):
    """A real gRPC server (health included) serving the fake; returns the ServerHandle."""

    def register(server):
        search_pb2_grpc.add_SearchServiceServicer_to_server(servicer, server)
        return [search_pb2.DESCRIPTOR.services_by_name["SearchService"].full_name]

    return build_server(address, register)


def spawn_gateway(env: dict[str, str]) -> subprocess.Popen[bytes]:
    """`mnemo mcp` in the repository, its stdin and stdout piped to the test, stderr discarded."""
    return subprocess.Popen(GATEWAY_ARGV, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, env=env, cwd=str(REPO_ROOT))


def kill_gateway(proc) -> None:
    """Kill a spawned gateway (if still running) and close our ends of its pipes."""
    if proc.poll() is None:
        proc.kill()
        proc.wait()
    for pipe in (proc.stdin, proc.stdout):
        if pipe is not None and not pipe.closed:
            pipe.close()


class RawClient:
    """A bare JSON-RPC client over the gateway's pipes that keeps every stdout line it read,
    so a test can check that stdout carried JSON-RPC frames and nothing else."""

    def __init__(self, env: dict[str, str]):
        self.proc = spawn_gateway(env)
        self.lines: list[bytes] = []
        self._next_id = 0

    def send(self, method: str, params: dict | None = None, *, notify: bool = False) -> dict | None:
        import json

        frame: dict = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            frame["params"] = params
        if not notify:
            self._next_id += 1
            frame["id"] = self._next_id
        self.proc.stdin.write((json.dumps(frame) + "\n").encode())
        self.proc.stdin.flush()
        if notify:
            return None
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise EOFError("the gateway closed stdout")
            self.lines.append(line)
            message = json.loads(line)
            if message.get("id") == frame["id"]:
                return message

    def initialize(self) -> dict:
        reply = self.send("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                         "clientInfo": {"name": "raw", "version": "0"}})
        self.send("notifications/initialized", notify=True)
        return reply

    def close(self) -> int:
        """Close stdin, read what is left, and return the exit code."""
        self.proc.stdin.close()
        self.lines.extend(self.proc.stdout.read().splitlines(keepends=True))
        code = self.proc.wait(15)
        self.proc.stdout.close()
        return code

    def kill(self) -> None:
        kill_gateway(self.proc)


class FrameClient:
    """Raw frames to a spawned gateway, replies read by a thread: every wait is bounded, so a
    frame the gateway leaves unanswered fails the test instead of hanging it."""

    def __init__(self, env: dict[str, str]):
        import queue

        self.proc = spawn_gateway(env)
        self.replies: queue.Queue[dict | None] = queue.Queue()
        self.non_json: list[bytes] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        import json

        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            try:
                self.replies.put(json.loads(line))
            except ValueError:
                self.non_json.append(line[:200])
        self.replies.put(None)  # stdout closed

    def write(self, line: bytes | str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write((line.encode() if isinstance(line, str) else line) + b"\n")
        self.proc.stdin.flush()

    def collect(self, count: int, timeout: float = 10.0) -> list[dict]:
        """The next `count` replies; fails when they do not all arrive within `timeout`."""
        import queue

        got: list[dict] = []
        deadline = time.monotonic() + timeout
        while len(got) < count:
            try:
                reply = self.replies.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError(f"{count - len(got)} of {count} replies missing after {timeout}s: "
                                     f"got {[r.get('id') for r in got]}") from None
            if reply is None:
                raise AssertionError(f"the gateway closed stdout (exit {self.proc.poll()}) after {got}")
            if "id" in reply:  # server notifications (progress, logging) are not answers
                got.append(reply)
        return got

    def request(self, method: str, params: dict | None = None, request_id: int | str = "req",
                timeout: float = 30.0) -> dict:
        import json

        frame: dict = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            frame["params"] = params
        self.write(json.dumps(frame))
        [reply] = self.collect(1, timeout)
        assert reply["id"] == request_id, reply
        return reply

    def initialize(self) -> None:
        self.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                    "clientInfo": {"name": "frames", "version": "0"}}, request_id="init")
        self.write('{"jsonrpc":"2.0","method":"notifications/initialized"}')

    def call_tool(self, name: str, arguments: object, request_id: int | str = "call", timeout: float = 30.0) -> dict:
        return self.request("tools/call", {"name": name, "arguments": arguments}, request_id, timeout)

    def close(self) -> int:
        assert self.proc.stdin is not None
        if not self.proc.stdin.closed:
            self.proc.stdin.close()
        code = self.proc.wait(15)
        self._reader.join(5)
        return code

    def kill(self) -> None:
        kill_gateway(self.proc)
