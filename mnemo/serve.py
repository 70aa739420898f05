"""`mnemo serve SERVICE`: run one service in the foreground until SIGTERM/SIGINT."""

from __future__ import annotations

import argparse
import importlib
import sys

from mnemo.config import Settings, ensure_private_dirs
from mnemo.logs import configure_logging

# Each service package exposes `start(settings, listen) -> (ServerHandle, on_stop)`.
SERVICE_MODULES = {"store": "store_svc.main", "vector": "vector_svc.main", "search": "search_svc.main"}


def run(settings: Settings, args: argparse.Namespace) -> int:
    from mnemo.grpc_server import check_bind_policy, serve_forever
    from mnemo.home import confine_caches, tighten

    listen = settings.listen_address(args.service)
    check_bind_policy(listen, tls_cert=settings.tls_cert, tls_key=settings.tls_key, auth_token=settings.auth_token,
                      insecure_no_auth=settings.insecure_no_auth)
    if not listen.startswith("unix:") and not settings.auth_token:  # allowed by insecure_no_auth only
        # On the terminal too, whatever the log settings: the person who typed the flag reads it.
        print(f"mnemo serve: WARNING: {listen} serves without a token: any user of this machine can read "
              "and write this memory (--insecure-no-auth)", file=sys.stderr)
    ensure_private_dirs(settings)
    configure_logging(settings.log_level, settings.log_file or None, service=f"{args.service}_svc",
                      max_bytes=settings.log_max_bytes, backups=settings.log_backups)
    tighten(settings)  # an existing home made private before the service opens its files
    confine_caches(settings)  # before the service imports onnxruntime, Chroma and the like
    module = importlib.import_module(SERVICE_MODULES[args.service])
    handle, on_stop = module.start(settings, listen)
    serve_forever(handle, on_stop)
    return 0
