"""`mnemo serve SERVICE`: run one service in the foreground until SIGTERM/SIGINT."""

from __future__ import annotations

import argparse
import importlib

from mnemo.config import Settings, ensure_private_dirs
from mnemo.logs import configure_logging

# Each service package exposes `start(settings, listen) -> (ServerHandle, on_stop)`.
SERVICE_MODULES = {"store": "store_svc.main", "vector": "vector_svc.main", "search": "search_svc.main"}


def run(settings: Settings, args: argparse.Namespace) -> int:
    from mnemo.grpc_server import serve_forever

    ensure_private_dirs(settings)
    configure_logging(settings.log_level, settings.log_file or None, service=f"{args.service}_svc")
    module = importlib.import_module(SERVICE_MODULES[args.service])
    handle, on_stop = module.start(settings, settings.listen_address(args.service))
    serve_forever(handle, on_stop)
    return 0
