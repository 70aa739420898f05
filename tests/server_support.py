"""A server deployment in a test: `mnemo serve` replicas on loopback TCP, a Chroma server, kill -9.

Every process is a real `mnemo serve` (or `chroma run`) subprocess, ready when its health
check answers (polled, never slept on), its log in the test's home. `Deployment` stops
whatever is still running at the end, killed replicas included.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from mnemo.grpc_client import check_health
from tests.conftest import REPO_ROOT, subprocess_env
from tests.grpcurl_support import free_port, mnemo_command

CHROMA = Path(sys.executable).parent / "chroma"
READY_TIMEOUT_S = 60.0


@dataclass
class Service:
    """One running replica."""

    name: str
    address: str
    process: subprocess.Popen
    log: Path

    def kill(self) -> None:
        """kill -9: no drain, no goodbye; what it had in flight is lost on its side."""
        if self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGKILL)
        self.process.wait(30)

    def stop(self) -> int:
        if self.process.poll() is None:
            stop_process(self.process, wait_s=30)
        return self.process.returncode

    def tail(self) -> str:
        return self.log.read_text(errors="replace")[-3000:] if self.log.exists() else ""


@dataclass
class Deployment:
    """The processes of one test's server deployment (stopped in reverse order of start)."""

    settings: object
    env: dict[str, str] = field(default_factory=dict)
    services: list[Service] = field(default_factory=list)

    def serve(self, service: str, *, label: str = "", **env: str) -> Service:
        """Start `mnemo serve SERVICE` on a free loopback port with MNEMO_* `env`; wait until healthy."""
        address = f"127.0.0.1:{free_port()}"
        label = label or f"{service}-{len(self.services)}"
        log = Path(self.settings.home) / f"{label}.log"  # type: ignore[attr-defined]
        variables = subprocess_env(self.settings, PYTHONPATH=str(REPO_ROOT), MNEMO_LOG_LEVEL="info")
        variables.update(self.env)
        variables.update({f"MNEMO_{k.upper()}": str(v) for k, v in env.items()})
        if not variables.get("MNEMO_AUTH_TOKEN"):  # a test that is not about tokens says so explicitly
            variables["MNEMO_INSECURE_NO_AUTH"] = "true"
        with log.open("ab") as out:
            process = subprocess.Popen([*mnemo_command(), "serve", service, "--listen", address], cwd=REPO_ROOT,
                                       env=variables, stdout=subprocess.DEVNULL, stderr=out)
        started = Service(label, address, process, log)
        self.services.append(started)
        deadline = time.monotonic() + READY_TIMEOUT_S
        while not check_health(address, timeout=0.5, tls_ca=variables.get("MNEMO_TLS_CA", "")):
            if process.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"{label} did not become healthy:\n{started.tail()}")
            time.sleep(0.05)
        return started

    def close(self) -> None:
        for service in reversed(self.services):
            service.stop()


def start_chroma(home: Path) -> tuple[subprocess.Popen, str]:
    """`chroma run` on a free port, returned once its heartbeat answers."""
    if not CHROMA.exists():
        pytest.skip(f"{CHROMA} is not installed")
    port = free_port()
    log = (home / "chroma-server.log").open("wb")
    process = subprocess.Popen(
        [str(CHROMA), "run", "--path", str(home / "chroma-server"), "--host", "127.0.0.1", "--port", str(port)],
        stdout=log, stderr=subprocess.STDOUT)
    log.close()
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while True:
        if process.poll() is not None:
            pytest.fail((home / "chroma-server.log").read_text()[-2000:])
        try:
            with urllib.request.urlopen(f"{url}/api/v2/heartbeat", timeout=1) as reply:
                if reply.status == 200:
                    return process, url
        except urllib.error.HTTPError as err:
            err.close()
        except OSError:
            pass
        if time.monotonic() > deadline:
            process.kill()
            pytest.fail("chroma server did not answer its heartbeat")
        time.sleep(0.1)


def stop_process(process: subprocess.Popen, wait_s: float = 10) -> None:
    """SIGTERM, then SIGKILL if it has not exited within `wait_s`."""
    process.terminate()
    try:
        process.wait(wait_s)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
