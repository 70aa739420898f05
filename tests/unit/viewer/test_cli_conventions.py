"""The `mnemo` command line as a person meets it: help that fits a screen, --version, bare
`mnemo` showing help, an unknown flag reported with its command's usage, bad values refused
while parsing, and every failure one line with a non-zero exit, never a traceback."""

from __future__ import annotations

import io
import socket
from datetime import UTC, datetime

import pytest

from mnemo import cli
from mnemo.cli_errors import one_line
from mnemo.config import load_settings
from mnemo.errors import FailedPrecondition, InvalidArgument, Unavailable
from mnemo.progress import Progress, rate_and_eta, spinning
from mnemo.stack import registration_text
from viewer import when
from viewer.main import bind

SCREEN_LINES = 40


def run(capsys, argv: list[str]) -> tuple[int, str, str]:
    try:
        code = cli.main(argv)
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    out = capsys.readouterr()
    return code, out.out, out.err


def test_bare_mnemo_prints_the_help_with_user_commands_first(capsys):
    code, out, _ = run(capsys, [])
    assert code == 0
    assert out.index("search") < out.index("run by hosts") < out.index("supervise")
    assert len(out.splitlines()) <= SCREEN_LINES


def test_version(capsys):
    code, out, _ = run(capsys, ["--version"])
    assert code == 0 and out.startswith("mnemo ")


@pytest.mark.parametrize("command", ["search", "up", "ui", "doctor", "install", "export"])
def test_a_commands_help_fits_a_screen_and_the_settings_flags_wait_for_help_all(capsys, command):
    code, out, _ = run(capsys, [command, "--help"])
    assert code == 0 and len(out.splitlines()) <= SCREEN_LINES and "--store-addr STORE_ADDR" not in out
    assert "--help-all" in out
    code, out, _ = run(capsys, [command, "--help-all"])
    assert code == 0 and "--store-addr STORE_ADDR" in out and "-o KEY=VALUE" in out


def test_an_unknown_flag_prints_the_usage_of_its_command(capsys):
    code, _, err = run(capsys, ["search", "x", "--bogus"])
    assert code == 2 and err.startswith("usage: mnemo search") and "--bogus" in err
    code, _, err = run(capsys, ["server", "token", "list", "--bogus"])
    assert code == 2 and err.startswith("usage: mnemo server token list")


@pytest.mark.parametrize("argv, named", [
    (["search", "x", "--limit", "0"], "--limit"),
    (["search", "x", "--limit", "101"], "--limit"),
    (["search", "x", "--type", "bogus"], "--type"),
    (["search", "x", "--since", "someday"], "--since"),
    (["ui", "--port", "70000"], "--port"),
])
def test_bad_values_are_refused_while_parsing(capsys, argv, named):
    code, _, err = run(capsys, argv)
    assert code == 2 and named in err.splitlines()[-1]


def test_search_words_need_no_quotes(capsys):
    args = cli.parse(["search", "VAT", "rate", "--limit", "5"])
    assert args.query == ["VAT", "rate"] and args.limit == 5


def test_a_home_behind_a_file_is_one_line_naming_the_home(capsys, tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("MNEMO_HOME", str(blocker / "home"))
    code, out, err = run(capsys, ["search", "anything"])
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert err.startswith("mnemo search: ") and "not a directory" in err and "MNEMO_HOME" in err


def test_errors_at_the_boundary_are_one_line():
    settings = load_settings({"home": "/tmp/mnemo-cli-home"})
    assert one_line(PermissionError(13, "Permission denied", "/tmp/mnemo-cli-home/run"), settings) == (
        "cannot write /tmp/mnemo-cli-home/run: permission denied; MNEMO_HOME is /tmp/mnemo-cli-home: "
        "choose a directory you own and can write with --home or MNEMO_HOME")
    assert "\n" not in one_line(InvalidArgument("limit", "must be\nsmall"), settings)
    assert "`mnemo up` starts it" in one_line(Unavailable("search_svc is not answering"), settings)
    assert one_line(RuntimeError("boom"), None).startswith("unexpected RuntimeError: boom")


def test_a_port_in_use_is_a_one_line_error_naming_what_to_do():
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen(1)
    try:
        with pytest.raises(FailedPrecondition, match="is in use: choose another --port"):
            bind(taken.getsockname()[1])
    finally:
        taken.close()


def test_relative_dates_become_what_search_svc_reads():
    now = datetime(2026, 3, 10, 15, 30, tzinfo=UTC)
    assert when.resolve("yesterday", "--since", now) == "2026-03-09"
    assert when.resolve("today", "--since", now) == "2026-03-10"
    assert when.resolve("7d", "--since", now) == "2026-03-03T15:30:00Z"
    assert when.resolve("12h", "--since", now) == "2026-03-10T03:30:00Z"
    assert when.resolve("2026-01-15", "--since", now) == "2026-01-15"
    assert when.resolve("", "--since", now) == ""
    with pytest.raises(InvalidArgument, match="--since"):
        when.resolve("someday", "--since", now)


def test_the_printed_registration_works_from_any_folder():
    text = registration_text(load_settings({"home": "/tmp/mnemo-cli-home"}))
    assert "claude mcp add -s user mcp-search -e MNEMO_HOME=/tmp/mnemo-cli-home -- " in text
    assert "install claude-code" in text


def test_progress_is_silent_unless_a_terminal_or_asked(monkeypatch):
    monkeypatch.delenv("MNEMO_PROGRESS", raising=False)
    quiet = io.StringIO()
    Progress(quiet).update("working")
    assert quiet.getvalue() == ""
    monkeypatch.setenv("MNEMO_PROGRESS", "1")
    asked = io.StringIO()
    progress = Progress(asked)
    progress.update("waiting for store")
    progress.update("waiting for store")
    progress.done("started")
    lines = asked.getvalue().splitlines()
    assert lines[0] == "… waiting for store" and lines[1].startswith("✓ started (") and len(lines) == 2


def test_rate_and_eta():
    assert rate_and_eta(100, 300, 2.0) == "100/300 · 50/s · ETA 4s"
    assert rate_and_eta(0, 0, 0.0) == "0"


def test_a_spinner_leaves_what_the_command_prints_whole(monkeypatch, capsys):
    monkeypatch.setenv("MNEMO_PROGRESS", "1")
    with spinning("rebuilding", interval=0.001):
        print("reindexed: 3 changes applied")
    out = capsys.readouterr()
    assert out.out == "reindexed: 3 changes applied\n" and "rebuilding" not in out.out


def test_piped_titles_are_whole():
    from viewer.terminal import table

    title = "A long title " * 20
    out = io.StringIO()
    table([{"display_id": "#1", "type": "bugfix", "created_at": "2026-01-01", "project": "p", "title": title}], out)
    assert " ".join(title.split()) in out.getvalue() and "…" not in out.getvalue()
