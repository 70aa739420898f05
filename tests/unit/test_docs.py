"""The README is part of the product: its configuration table and commands must stay true."""

from __future__ import annotations

import dataclasses
import re

from mnemo.cli import COMMANDS, build_parser
from mnemo.config import Settings
from tests.conftest import REPO_ROOT

README = (REPO_ROOT / "README.md").read_text(encoding="utf-8")


def test_every_setting_is_documented_in_the_readme_table():
    documented = set(re.findall(r"^\| `([a-z_0-9]+)` \| `MNEMO_", README, flags=re.MULTILINE))
    fields = {f.name for f in dataclasses.fields(Settings)} - {"extra"}
    assert fields - documented == set(), "settings missing from README's configuration table"
    assert documented - fields == set(), "README documents settings that do not exist"


def test_the_two_quick_start_commands_are_the_makefile_targets_ci_runs():
    assert "make run" in README and "make test" in README
    ci = (REPO_ROOT / ".ci" / "run").read_text()
    assert "make test" in ci
    makefile = (REPO_ROOT / "Makefile").read_text()
    assert re.search(r"^run:", makefile, flags=re.MULTILINE)
    assert re.search(r"^test:", makefile, flags=re.MULTILINE)


def test_every_cli_subcommand_in_the_readme_exists():
    used = set(re.findall(r"mnemo (serve|up|down|status|mcp|install|uninstall|import|export|reindex|hook)\b", README))
    assert used <= set(COMMANDS)
    build_parser()  # every subcommand parser builds
