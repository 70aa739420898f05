"""The deterministic observer: one rule per tool, read bursts merged, outcomes of shell commands."""

from __future__ import annotations

import pytest

from capture.observer import ToolEvent, command_kind, merge_reads, observe, shell_verdict

pytestmark = pytest.mark.unit

CWD = "/home/dev/acme-shop"


def one(name: str, tool_input, tool_response=None):
    drafts = observe(ToolEvent(name, tool_input, tool_response, CWD))
    assert len(drafts) == 1
    return drafts[0]


def test_edit_is_a_change_with_the_file_modified_relative_to_cwd():
    d = one("Edit", {"file_path": f"{CWD}/src/shop/pricing.py", "old_string": "return price",
                     "new_string": "return price.quantize(CENT)"})
    assert d.type == "change"
    assert d.title == "Edited src/shop/pricing.py"
    assert d.files_modified == ["src/shop/pricing.py"] and d.files_read == []
    assert "In src/shop/pricing.py: `return price` became `return price.quantize(CENT)`" in d.facts
    assert {"python", "what-changed"} <= set(d.concepts)


def test_write_multiedit_and_notebook_edit_are_changes():
    w = one("Write", {"file_path": f"{CWD}/docs/setup.md", "content": "# Setup\nRun make.\n"})
    assert (w.type, w.title, w.files_modified) == ("change", "Wrote docs/setup.md", ["docs/setup.md"])
    assert "docs" in w.concepts and "docs/setup.md now has 2 lines" in w.facts
    m = one(
        "MultiEdit",
        {
            "file_path": f"{CWD}/pyproject.toml",
            "edits": [{"old_string": "a = 1", "new_string": "a = 2"}, {"old_string": "b", "new_string": "c"}],
        },
    )
    assert m.title == "Edited pyproject.toml (2 edits)" and len(m.facts) == 2 and "config" in m.concepts
    n = one("NotebookEdit", {"notebook_path": f"{CWD}/eda.ipynb", "new_source": "df.head()", "edit_mode": "insert"})
    assert n.type == "change" and n.files_modified == ["eda.ipynb"]


def test_read_burst_is_one_discovery_listing_every_file_and_search():
    events = [
        ToolEvent(
            "Grep",
            {"pattern": "def apply_discount", "path": f"{CWD}/src"},
            {"filenames": [f"{CWD}/src/shop/pricing.py"], "numFiles": 1},
            CWD,
        ),
        ToolEvent("Read", {"file_path": f"{CWD}/src/shop/pricing.py"}, {"type": "text"}, CWD),
        ToolEvent("Read", {"file_path": f"{CWD}/tests/test_pricing.py", "offset": 10, "limit": 20}, {}, CWD),
        ToolEvent("Glob", {"pattern": "**/*.toml"}, {"filenames": [f"{CWD}/pyproject.toml"]}, CWD),
        ToolEvent("LS", {"path": f"{CWD}/src"}, "- shop/", CWD),
    ]
    d = merge_reads(events)
    assert d.type == "discovery"
    assert d.files_read == ["src/shop/pricing.py", "tests/test_pricing.py"]
    assert d.files_modified == []
    assert "Searched for `def apply_discount` in src: 1 file matched" in d.facts
    assert "Read tests/test_pricing.py (lines 10-30)" in d.facts
    assert "Listed files matching `**/*.toml`: 1 file" in d.facts
    assert "Listed directory src" in d.facts
    assert {"python", "testing", "how-it-works"} <= set(d.concepts)
    assert merge_reads(events) == d  # deterministic: a replay dedupes on the same content


def test_a_single_read_gets_a_plain_title():
    d = merge_reads([ToolEvent("Read", {"file_path": f"{CWD}/README.md"}, {}, CWD)])
    assert d.title == "Read README.md" and d.files_read == ["README.md"] and "docs" in d.concepts


PYTEST_FAIL = (
    "tests/test_pricing.py F..\nE       AssertionError: assert 17.991 == 17.99\n"
    "FAILED tests/test_pricing.py::test_discount_rounding - AssertionError\n"
    "========================= 1 failed, 2 passed in 0.06s =========================="
)


def test_failing_test_run_is_a_bugfix_candidate_with_the_error():
    d = one(
        "Bash",
        # Claude Code fires PostToolUse for a pipe: its exit status is tail's; the output tells.
        {"command": "python -m pytest tests -q 2>&1 | tail -40", "description": "Run tests"},
        {"stdout": PYTEST_FAIL, "stderr": "", "interrupted": False},
    )
    assert d.type == "bugfix"
    assert d.title == "Tests failed: python -m pytest tests -q: test_discount_rounding"
    assert "1 failed, 2 passed" in d.facts and "Outcome: failed" in d.facts
    assert "Failing test: tests/test_pricing.py::test_discount_rounding" in d.facts
    assert "First error: E AssertionError: assert 17.991 == 17.99" in d.facts
    assert "testing" in d.concepts and "problem-solution" in d.concepts


def test_passing_test_run_and_other_commands():
    ok = one("Bash", {"command": "pytest -q"}, {"stdout": "===== 3 passed in 0.04s =====", "stderr": ""})
    assert ok.type == "discovery" and ok.title == "Tests passed: pytest -q (3 passed)" and "3 passed" in ok.facts
    commit = one("Bash", {"command": "git commit -m 'Fix rounding'"}, {"stdout": "[main 1a2b3c] Fix rounding"})
    assert commit.type == "change" and commit.title.startswith("git commit")
    status = one("Bash", {"command": "git status"}, {"stdout": "On branch main"})
    assert status.type == "discovery"
    failed = one("Bash", {"command": "make build"}, {"stdout": "", "stderr": "make: *** [all] Error 2", "exit_code": 2})
    assert failed.type == "bugfix" and "Exit code 2" in failed.facts


@pytest.mark.parametrize(
    "response, event, outcome, counts",
    [
        ({"stdout": "ok  \tgithub.com/acme/shop\t0.01s", "stderr": ""}, "PostToolUse", "succeeded",
         "1 packages ok, 0 failed"),
        ({"stdout": "--- FAIL: TestDiscount\nFAIL\tgithub.com/acme/shop\t0.02s"}, "PostToolUse", "failed",
         "0 packages ok, 1 failed"),
        ({"stdout": "test result: FAILED. 3 passed; 1 failed; 0 ignored"}, "PostToolUse", "failed",
         "3 passed; 1 failed; 0 ignored"),
        ({"stdout": "Tests:       1 failed, 4 passed, 5 total"}, "PostToolUse", "failed",
         "1 failed, 4 passed, 5 total"),
        ("Exit code 1\nTraceback (most recent call last):\nValueError: boom", "PostToolUse", "failed",
         "ValueError: boom"),
        ({"error": "Exit code 1\n1 failed, 2 passed in 0.63s", "is_interrupt": False}, "PostToolUseFailure", "failed",
         "1 failed, 2 passed"),
        ({"stdout": "done", "stderr": "", "exitCode": 0}, "PostToolUse", "succeeded", ""),
        ({"stdout": "done", "stderr": "", "interrupted": False}, "PostToolUse", "succeeded", ""),
        ("done", "PostToolUse", "unknown", ""),
        ({"stdout": "partial", "interrupted": True}, "PostToolUse", "unknown", ""),
    ],
)
def test_shell_verdict_reads_every_host_shape(response, event, outcome, counts):
    # A pipe: the host's exit status is tail's, so the output has the last word.
    # A failure behind a pipe: the host's exit status is tail's, so the output has the last word.
    command = "make test 2>&1 | tail -20" if (event, outcome) == ("PostToolUse", "failed") else "make test"
    verdict = shell_verdict(ToolEvent("Bash", {"command": command}, response, CWD, event))
    assert verdict.outcome == outcome
    assert verdict.counts == counts


@pytest.mark.parametrize(
    "command, kind",
    [
        ("npm test", "test"),
        ("go test ./...", "test"),
        ("cargo test", "test"),
        ("python -m pytest -x", "test"),
        ("make test", "test"),
        ("git log -3", "vcs"),
        ("cargo build --release", "build"),
        ("ls -la", "inspect"),
        ("./deploy.sh", "other"),
    ],
)
def test_command_kinds(command, kind):
    assert command_kind(command) == kind


def test_secrets_in_tool_output_are_masked():
    d = one(
        "Bash",
        {"command": "grep TOKEN .env"},
        {
            "stdout": "GITHUB_TOKEN=ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8\n"
            "API_KEY=sk-ant-api03-abcdefghijklmnop1234",
            "stderr": "",
        },
    )
    text = " ".join([d.title, d.subtitle, d.narrative, *d.facts])
    assert "ghp_A1b2" not in text and "sk-ant-api03" not in text
    assert "[REDACTED]" in d.narrative


def test_web_subagent_and_mcp_tools():
    fetch = one(
        "WebFetch",
        {"url": "https://docs.python.org/3/library/decimal.html", "prompt": "How does quantize round?"},
        {"result": "quantize uses the context rounding unless given one."},
    )
    assert fetch.type == "discovery" and "Fetched https://docs.python.org/3/library/decimal.html" in fetch.facts
    search = one("WebSearch", {"query": "python decimal ROUND_HALF_UP"}, {"results": []})
    assert search.title == "Searched the web: python decimal ROUND_HALF_UP"
    task = one(
        "Task",
        {"description": "Find every caller of apply_discount", "prompt": "List callers.", "subagent_type": "Explore"},
        {"content": [{"type": "text", "text": "cart.py and checkout.py"}]},
    )
    assert task.type == "discovery" and task.title == "Sub-agent: Find every caller of apply_discount"
    assert "Result: cart.py and checkout.py" in task.facts
    decision = one("Agent", {"description": "Decide between Decimal and integer cents", "prompt": "Recommend one."}, "")
    assert decision.type == "decision"
    mcp = one("mcp__github__create_issue", {"title": "Rounding bug", "body": "…"}, {"number": 12})
    assert mcp.type == "discovery" and mcp.title == "Used create_issue (github)" and "mcp" in mcp.concepts
    assert "title = Rounding bug" in mcp.facts


def test_private_regions_in_inputs_never_reach_an_observation():
    d = one("Write", {"file_path": f"{CWD}/notes.md", "content": "public <PRIVATE>hunter2</PRIVATE> part"})
    assert "hunter2" not in d.narrative


def test_non_dict_input_and_empty_values_do_not_crash():
    assert one("Bash", "ls", None).type in ("discovery", "change")
    assert one("SomethingNew", None, None).title == "Used SomethingNew"


@pytest.mark.parametrize(("command", "title"), [
    ("/home/dev/acme-shop/.venv/bin/python -m pytest -q", "Tests passed: python -m pytest -q"),
    ("./gradlew test", "Tests passed: gradlew test"),
    ("  /usr/bin/make check\nmore", "Ran tests: make check (outcome unknown)"),  # the status is `more`'s
    ('"/opt/my tools/pytest" -q', 'Tests passed: "/opt/my tools/pytest" -q'),
    ("cd /srv/app && /srv/app/.venv/bin/pytest -q", "Tests passed: pytest -q"),
    ("cd '/srv/my app' && make test", "Tests passed: make test"),
    ("cd /srv/app; pytest", "Tests passed: cd /srv/app; pytest"),
    ("pytest && cd /tmp && ls", "Tests passed: pytest && cd /tmp && ls"),
])
def test_titles_drop_the_directory_and_name_a_program_by_its_file_name_facts_keep_both(command, title):
    d = one("Bash", {"command": command}, {"stdout": "", "stderr": ""})
    assert d.title == title
    assert f"Ran `{command.strip().splitlines()[0]}`" in d.facts
