"""The README is part of the product: its configuration table and commands must stay true."""

from __future__ import annotations

import dataclasses
import re

from mnemo.cli import COMMANDS, build_parser
from mnemo.config import Settings
from tests.conftest import REPO_ROOT
from tests.docs_support import NOT_RUN, all_blocks, blocks, commands, doc_paths, programs

README = (REPO_ROOT / "README.md").read_text(encoding="utf-8")


def test_every_setting_is_documented_in_the_readme_table() -> None:
    documented = set(re.findall(r"^\| `([a-z_0-9]+)` \| `MNEMO_", README, flags=re.MULTILINE))
    fields = {f.name for f in dataclasses.fields(Settings)} - {"extra"}
    assert fields - documented == set(), "settings missing from README's configuration table"
    assert documented - fields == set(), "README documents settings that do not exist"


def test_the_two_quick_start_commands_are_the_makefile_targets_ci_runs() -> None:
    assert "make run" in README and "make test" in README
    ci = (REPO_ROOT / ".ci" / "run").read_text()
    assert "make test" in ci
    makefile = (REPO_ROOT / "Makefile").read_text()
    assert re.search(r"^run:", makefile, flags=re.MULTILINE)
    assert re.search(r"^test:", makefile, flags=re.MULTILINE)


def test_every_cli_subcommand_in_the_readme_exists() -> None:
    used = set(re.findall(r"mnemo (serve|up|down|status|mcp|install|uninstall|import|export|reindex|hook)\b", README))
    assert used <= set(COMMANDS)
    build_parser()  # every subcommand parser builds


# --------------------------------------------------------------------------------------
# Shell examples (tests/e2e/test_docs_examples.py runs them; these checks need no stack)

# Blocks a reader can paste but the docs test cannot run, per file. A new `not-run` marker
# must be added here too, so no example stops running unnoticed.
NOT_RUN_PER_DOC = {
    "README.md": 3,  # make run/test; claude mcp add; importing a claude-mem database
    "docs/gateway.md": 4,  # make run + mnemo mcp (foreground); claude mcp add; the Inspector (npm); a team server
    "docs/store.md": 2,  # mnemo serve store in the foreground; the PostgreSQL backend
    "docs/vector.md": 2,  # mnemo serve vector in the foreground; a Chroma server
    "docs/server.md": 5,  # PostgreSQL; a Chroma server and vector replicas; openssl certificates; a team server; tokens
}
# Programs a reader has on PATH anyway, or that the examples cannot replace; everything of
# ours is called as .venv/bin/<name>, which works from the checkout without activating it.
SYSTEM_COMMANDS = {"make", "claude", "npx", "echo", "printf", "psql", "openssl"}


def test_every_code_fence_names_its_language() -> None:
    unnamed = [block.where for block in all_blocks() if not block.language]
    assert unnamed == [], "say ```sh for commands, ```text for output and diagrams"


def test_not_run_markers_give_a_reason_and_are_counted() -> None:
    shell = [block for block in all_blocks() if block.is_shell]
    not_run = [block for block in shell if block.not_run is not None]
    assert all(block.not_run for block in not_run), [block.where for block in not_run if not block.not_run]
    counted = {doc: sum(block.doc == doc for block in not_run) for doc in {block.doc for block in not_run}}
    assert counted == NOT_RUN_PER_DOC
    assert len(shell) > len(not_run) + 10  # the docs test has plenty to run


def test_not_run_markers_stand_only_before_shell_blocks() -> None:
    for path in doc_paths():
        lines = path.read_text(encoding="utf-8").splitlines()
        markers = sum(bool(NOT_RUN.match(line.strip())) for line in lines)
        assert markers == sum(block.not_run is not None and block.is_shell for block in blocks(path)), path


def test_shell_examples_call_our_programs_from_the_venv_and_use_mnemo_home() -> None:
    for block in all_blocks():
        if not block.is_shell:
            continue
        for command in commands(block):
            for program in programs(command):
                assert program.startswith(".venv/bin/") or program in SYSTEM_COMMANDS, f"{block.where}: {command}"
            assert "~/.mnemo" not in command, f"{block.where}: use $MNEMO_HOME in {command}"


def test_every_printed_claude_registration_is_for_every_folder() -> None:
    """Claude Code's default scope ("local") registers a server for the current folder only."""
    from mnemo.config import load_settings
    from mnemo.stack import registration_text

    printed = registration_text(load_settings({"home": "/tmp/mnemo-docs-home"})).splitlines()
    lines = [line for path in doc_paths() for line in path.read_text(encoding="utf-8").splitlines()] + printed
    adds = [line for line in lines if "claude mcp add" in line]
    assert adds and all("claude mcp add -s user " in line for line in adds), adds
