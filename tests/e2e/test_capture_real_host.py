"""The real `claude` CLI (pinned, offline against the fake Messages API), mnemo installed as a
new user installs it: what the host really sends for a failure hidden behind a pipe, for an
output too large to keep whole, and for mnemo's own search tool, read back from the store."""

from __future__ import annotations

import json
import sys

import pytest

from bench.replay import install_for_a_new_user
from tests.conftest import read_rows, subprocess_env, wait_for
from tests.e2e.test_claude_cli import run_claude
from tests.fakes.claude_cli import claude_cli
from tests.fakes.messages_stream import ScriptedMessages, text, tool_use

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

MANY = "import pytest\n\n\n@pytest.mark.parametrize('n', range(460))\ndef test_many(n):\n    assert n != 457\n"


@pytest.fixture
def host(stack, tmp_path):
    binary = claude_cli()
    _, env = install_for_a_new_user(subprocess_env(stack), tmp_path)
    project = tmp_path / "many"
    (project / "tests").mkdir(parents=True)
    (project / "tests" / "test_many.py").write_text(MANY)
    return {"binary": binary, "env": env, "project": project, "db": stack.database}


def test_a_piped_failure_a_cut_output_and_mnemos_own_search_as_the_real_host_sends_them(host):
    db = host["db"]
    pytest_v = f"{sys.executable} -m pytest -v -p no:cacheprovider tests"
    turns = [
        [text("Running the tests."), tool_use("Bash", {"command": f"{pytest_v} 2>&1 | tail -5"})],
        [tool_use("Bash", {"command": f"{pytest_v} 2>&1 | tee test.log"})],  # ~40 KB: cut, persisted
        [tool_use("mcp__mcp-search__mem_search", {"query": "test_many failed"})],
        [text("The tests still fail.")],
    ]

    def hooks_landed(step: int) -> None:
        if 0 < step <= 2:
            wait_for(lambda: len(read_rows(db, "SELECT id FROM tool_uses")) >= step, 60.0, f"tool use {step}")

    with ScriptedMessages(turns, before_turn=hooks_landed) as api:
        run_claude(host, api, "Run the tests.")
    wait_for(lambda: read_rows(db, "SELECT id FROM session_summaries"), 60.0, "the Stop summary")

    uses = read_rows(db, "SELECT tool_name, tool_response FROM tool_uses ORDER BY id")
    assert [u["tool_name"] for u in uses] == ["Bash", "Bash"]  # mnemo's own mem_search is stored nowhere
    # Stored as valid JSON under the store's cap, the end of the persisted output kept.
    cut = json.loads(uses[1]["tool_response"])
    assert cut["persistedOutputPath"].endswith(".txt") and "1 failed, 459 passed" in cut["persistedOutputTail"]
    failures = read_rows(db, "SELECT title, facts FROM observations WHERE type = 'bugfix' ORDER BY id")
    assert [f["title"] for f in failures] == ["Tests failed: python -m pytest -v -p no:cacheprovider tests: "
                                              "test_many[457]"] * 2
    assert all("Outcome: failed" in json.loads(f["facts"]) for f in failures)
    assert not read_rows(db, "SELECT id FROM observations WHERE title LIKE 'Fixed:%' OR title LIKE 'Tests passed:%'")
