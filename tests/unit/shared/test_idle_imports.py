"""The processes that stay up while the stack idles load only what they use (docs/performance.md,
"Memory", "What the idle stack imports"): each check runs in a fresh interpreter."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

REPO = Path(__file__).resolve().parents[3]
OPENSSL = ("ssl", "_ssl", "_hashlib")
NOT_IN_SERVICES = ("viewer", "importlib.metadata", "rich", *OPENSSL)


def loaded_after(code: str, watched: tuple[str, ...]) -> list[str]:
    probe = f"{code}\nimport sys, json\nprint(json.dumps([m for m in {watched!r} if sys.modules.get(m)]))"
    done = subprocess.run([sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


@pytest.mark.parametrize("service", ["store", "search"])
def test_a_service_parses_its_flags_and_loads_its_code_without_the_viewer_or_openssl(service):
    code = ("import mnemo.cli as cli, importlib\n"
            f"argv = ['serve', {service!r}]\n"
            "cli._skip_pretty_printing(); cli._skip_openssl(argv)\n"
            "args = cli.parse(argv)\n"
            "assert (args.command, args.service) == ('serve', argv[1]), args\n"
            "from mnemo.serve import SERVICE_MODULES\n"
            "importlib.import_module(SERVICE_MODULES[argv[1]])\n"
            "import grpc, structlog, hashlib, hmac, secrets\n"
            "assert hashlib.sha256(b'x').hexdigest().startswith('2d711642')\n"
            "assert hmac.compare_digest('a', 'a') and not hmac.compare_digest('a', 'b')\n")
    assert loaded_after(code, NOT_IN_SERVICES) == []


def test_the_gateway_does_not_load_openssl_or_structlog():
    code = ("import mnemo.cli as cli\n"
            "cli._skip_pretty_printing(); cli._skip_openssl(['mcp'])\n"
            "import gateway.main, gateway.core, gateway.stdio\n"
            "from mnemo.logs import configure_logging, get_logger\n"
            "import tempfile, os\n"
            "path = os.path.join(tempfile.mkdtemp(), 'gateway.log')\n"
            "configure_logging('info', path, service='gateway', deferred=True, lean=True)\n"
            "get_logger('gateway').info('tool_call', tool='search')\n"
            "assert 'tool_call' in open(path).read()\n")
    assert loaded_after(code, (*OPENSSL, "structlog", "rich")) == []


def test_ssl_still_imports_after_the_block_is_lifted():
    code = ("import mnemo.cli as cli\n"
            "cli._skip_openssl(['serve', 'store'])\n"
            "import ssl\n"
            "assert ssl.OPENSSL_VERSION\n")
    assert loaded_after(code, ("ssl",)) == ["ssl"]


def test_other_commands_keep_openssl():
    code = ("import mnemo.cli as cli\n"
            "cli._skip_openssl(['serve', 'vector']); cli._skip_openssl(['status'])\n"
            "import asyncio, hashlib\n")
    assert loaded_after(code, ("ssl", "_hashlib")) == ["ssl", "_hashlib"]


def test_the_supervisor_logs_without_structlog_or_openssl(tmp_path):
    code = ("import mnemo.cli as cli\n"
            "args = cli.parse(['supervise'])\n"
            "import mnemo.supervisor, mnemo.processes, mnemo.health\n"
            "from mnemo.logs import configure_logging, get_logger\n"
            f"configure_logging('info', {str(tmp_path / 'supervisor.log')!r}, service='supervisor', lean=True)\n"
            "get_logger('mnemo.supervisor').info('service_resting', service='vector', lived_s=1.5)\n")
    assert loaded_after(code, ("structlog", "asyncio", *OPENSSL, "hashlib", "viewer")) == []
    line = json.loads((tmp_path / "supervisor.log").read_text())
    assert list(line) == ["service", "lived_s", "event", "level", "timestamp"]
    assert line["service"] == "vector" and line["event"] == "service_resting" and line["level"] == "info"
