"""What a shell command runs, where, and what its exit status can vouch for.

Shared by the observer (capture.observer_shell: test, build, vcs or inspection), the
outcome (capture.outcome: does a zero exit speak for the command?) and the fixes
(capture.fixes: the same command in the same directory). Pure functions over the
command's text; nothing is run.
"""

from __future__ import annotations

import posixpath
import re

# Test runners and build tools, recognised by the program a command runs (after `cd DIR &&`,
# `VAR=value`, `npx`, `uv run`, a path), never by a word anywhere in it: `pip install pytest`
# is an install, `python -m json.tool` no test.
_TEST_COMMANDS = re.compile(
    r"^(pytest|py\.test|python[\d.]*\s+-m\s+(?:pytest|unittest|doctest)|tox|nox|(?:npm|yarn|pnpm|bun)\s+(?:run\s+)?test|"
    r"jest|vitest|mocha|node\s+(?:\S+\s+)*--test|go\s+test|cargo\s+(?:test|nextest)|mvn\s+(?:-\S+\s+)*test|"
    r"(?:\./)?gradlew?\s+test|rspec|phpunit|dotnet\s+test|ctest|make\s+(?:test|check))\b"
)
_BUILD_COMMANDS = re.compile(
    r"^(make|cmake|cargo\s+(?:build|check|clippy)|go\s+(?:build|vet)|(?:npm|yarn|pnpm)\s+run\s+build|tsc|mvn|"
    r"(?:\./)?gradlew?|docker\s+build|gcc|g\+\+|clang|javac|python[\d.]*\s+-m\s+pip\s+install|pip3?\s+install|"
    r"(?:npm|yarn|pnpm)\s+(?:install|ci|add)|uv\s+(?:sync|pip)|poetry\s+install|dotnet\s+build|eslint|ruff|mypy|"
    r"cargo\s+fmt)\b"
)
VCS_COMMANDS = re.compile(r"^\s*(git|gh|hg)\s+(\w[\w-]*)")
_INSPECT_COMMANDS = re.compile(r"^\s*(ls|cat|head|tail|less|find|grep|rg|wc|tree|pwd|echo|which|file|stat|du|df|"
                               r"pip3?\s+(?:list|show|freeze)|npm\s+(?:ls|list|view)|env|printenv|ps|date|uname)\b")
_QUOTED_PROGRAM = re.compile(r"""^(["'])(?:[^"']*/)?([^"'/]+)\1""")
_PROGRAM_PREFIX = re.compile(r"^(?:\w+=\S*\s+|(?:sudo|time|env|npx|bunx|pnpm\s+exec|uv\s+run|poetry\s+run)\s+)+")
# Titles and summaries show a command without the directory it ran in (`cd /home/dev/app && `)
# and name a program run by its path by its file name (`/home/dev/app/.venv/bin/python`), so no
# path pushes what failed past the width they are shown in.
_LEADING_CD = re.compile(r"""^cd\s+("[^"]*"|'[^']*'|[^\s;&|]+)\s*&&\s*""")
PROGRAM_PATH = re.compile(r"^[^\s\"']*/(?=[^/\s]+(?:\s|$))")

def without_leading_cd(command: str) -> str:
    """The command without a leading `cd DIR &&` (hosts prefix commands with the directory)."""
    return _LEADING_CD.sub("", command.strip(), count=1)


def directory_and_command(cwd: str, command: str) -> tuple[str, str]:
    """The directory a command runs in (`cd DIR &&` applied to cwd) and the rest of it."""
    command = command.strip()
    cd = _LEADING_CD.match(command)
    if not cd:
        return cwd, command
    target = cd.group(1).strip("\"'")
    return posixpath.normpath(posixpath.join(cwd or "/", target)), command[cd.end():]


# git subcommands that only show things: behind a pipe, their zero exit is as good as their own
# (`git log | head`), unless the output holds a git error's residue (capture.readers._git).
_VCS_READ = re.compile(r"^git\s+(?:-C\s+\S+\s+)?(?:status|log|diff|show|blame|shortlog|reflog|ls-files|rev-parse|"
                       r"describe|grep|remote(?:\s+-v)?\s*$|(?:branch|tag)(?:\s+(?:-[avrl]+|--list|--all|"
                       r"--remotes|--verbose))*\s*$)\b")


def vcs_read(step: str) -> bool:
    """A git command (one step of `programs`) that only reads the repository."""
    return bool(_VCS_READ.match(step))


def command_kind(command: str) -> str:
    """test | build | vcs | inspect | other, by the program the command runs (each step of
    an `&&` chain; the first of a pipe)."""
    steps = programs(command)
    if any(_TEST_COMMANDS.match(p) for p in steps):
        return "test"
    if steps and VCS_COMMANDS.match(steps[0]):
        return "vcs"
    if any(_BUILD_COMMANDS.match(p) for p in steps):
        return "build"
    if steps and _INSPECT_COMMANDS.match(steps[0]):
        return "inspect"
    return "other"


def test_runner(command: str) -> str:
    """The test runner a command invokes, whitespace-normalised ("" for none)."""
    match = next((m for m in map(_TEST_COMMANDS.match, programs(command)) if m), None)
    return " ".join(match.group(1).split()) if match else ""


def programs(command: str) -> list[str]:
    """Each step of the command as `program args`, its program named by file name and without
    the wrappers that only run it (`VAR=1`, `npx`, `uv run`)."""
    text = without_leading_cd(command)
    found = []
    for step in _split_outside_quotes(r"\s*(?:&&|;|\|\|)\s*", text):  # `python -c "a; b"` is one step
        step = _PROGRAM_PREFIX.sub("", _split_outside_quotes(r"(?<!\|)\|(?!\|)", step)[0].strip())
        if step and not step.startswith("cd "):
            step = _QUOTED_PROGRAM.sub(r"\2", step, count=1)
            found.append(PROGRAM_PATH.sub("", step, count=1))
    return found


def _split_outside_quotes(separator: str, text: str) -> list[str]:
    """`re.split` at the separators that are not inside quotes."""
    pieces, start = [], 0
    for cut in re.finditer(separator, masked_quotes(text)):
        pieces.append(text[start:cut.start()])
        start = cut.end()
    return [*pieces, text[start:]]


# --------------------------------------------------------------------------------------
# what a command's exit status can vouch for


def exit_hidden(command: str) -> bool:
    """True when the shell's status is not the command's own (quoted text aside): a pipe
    (the last program's status), `||` or `&`; or a list (`;`, new lines) whose last step
    is not its one real command (`pytest; echo done`). Setup steps (`cd x; pytest`) hide
    nothing."""
    bare = _QUOTED.sub("''", command.strip())
    pipe = r"" if re.search(r"\bset\s+-\w*o\s+pipefail\b|\bpipefail\b", bare) else r"(?<![|>&])\|(?!\|)|"
    if re.search(pipe + r"\|\||(?<![&>\d])&(?![&>])", bare):  # with pipefail a pipe fails with its command
        return True
    steps = [step for step in re.split(r"\s*(?:;|\n)\s*", bare) if step.strip()]
    real = [i for i, step in enumerate(steps) if not _SETUP_STEP.match(step)]
    return len(real) > 1 or (bool(real) and real[-1] != len(steps) - 1)


# Steps that only prepare the shell for the command after them.
_SETUP_STEP = re.compile(r"^(?:cd|pushd|export|source|\.|set|unset|nvm\s+use|conda\s+activate)\b|^\w+=\S*$")


_QUOTED = re.compile(r"'[^']*'|\"(?:[^\"\\]|\\.)*\"")


def masked_quotes(command: str) -> str:
    """The command with the text inside its quotes blanked out, its length kept: a `|` or `>`
    inside `jq '.a | length > 1'` is no pipe and no redirection."""
    return _QUOTED.sub(lambda m: m.group(0)[0] + "_" * (len(m.group(0)) - 2) + m.group(0)[-1], command)
# Programs whose output is a file's or a record's text: what it says is data, not their status.
_READERS = re.compile(r"^(?:cat|tac|head|tail|less|more|bat|grep|egrep|rg|zcat|jq|sed\s+-n|awk|"
                      r"git\s+(?:log|show|diff|blame)|journalctl|docker\s+logs|kubectl\s+logs)\b")
READER_ERROR = re.compile(r"^(?:cat|tac|head|tail|grep|rg|sed|awk|jq): .*(?:No such file or directory|"
                           r"Permission denied|Is a directory)|"
                           # jq's own errors: a file it cannot parse, a filter it cannot compile or apply
                           r"^jq: (?:error\b|\d+ compile errors?)|^parse error: .+ at line \d+, column \d+$",
                           re.MULTILINE)
# git's own complaints start a line; what git log/show/diff print of commits is indented or
# prefixed. The last two lines end git's "ambiguous argument" error, all a `| tail -2` keeps of it.
GIT_ERROR = re.compile(r"^(?:fatal|error): |^Use '--' to separate paths from revisions, like this:$|"
                       r"^'git <command> \[<revision>\.\.\.\] -- \[<file>\.\.\.\]'$", re.MULTILINE)


# docker's and kubectl's own complaints when they cannot reach what they would print the logs of
_CLUSTER_ERROR = re.compile(r"^(?:Cannot connect to the Docker daemon|Error response from daemon: |"
                            r"Error from server\b|error: |The connection to the server .+ was refused)", re.MULTILINE)


def reader_failed(command: str, text: str) -> bool:
    """The output of a command that prints a file or a record (`reads_a_file`) holds its own
    error rather than the data's."""
    _, rest = directory_and_command("", command)
    own = GIT_ERROR if rest.startswith("git") else _CLUSTER_ERROR if rest.startswith(("docker", "kubectl")) else None
    return bool(READER_ERROR.search(text) or (own and own.search(text)))


def reads_a_file(command: str) -> bool:
    """The command's first program prints a file (or a log) rather than running anything."""
    _, rest = directory_and_command("", command)
    return bool(_READERS.match(rest))


