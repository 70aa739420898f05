"""`python -m viewer [--port N] [--open]`: the viewer without the `mnemo` command (settings
come from the environment and config.toml, as for `mnemo ui`)."""

from __future__ import annotations

import argparse
import sys

from mnemo.cli import port_number
from mnemo.config import load_settings
from viewer.main import run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m viewer", description="the mnemo web viewer")
    add_arguments(parser)
    args = parser.parse_args(argv)
    return run(load_settings({"home": args.home} if args.home else {}), args)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--port", type=port_number, default=None,
                        help="loopback port (default: a new link into the running viewer, else any free port)")
    parser.add_argument("--new", action="store_true", help="start another viewer even when one runs")
    parser.add_argument("--open", action="store_true", help="open the URL in the default browser")
    parser.add_argument("--home", default=None, help="MNEMO_HOME")


if __name__ == "__main__":
    sys.exit(main())
