"""Composition root of store_svc: settings in, a started server out."""

from __future__ import annotations

from collections.abc import Callable

from mnemo.config import Settings
from mnemo.grpc_server import ServerHandle, build_server
from store_svc.core import Store
from store_svc.servicer import register


def start(settings: Settings, listen: str) -> tuple[ServerHandle, Callable[[], None]]:
    store = Store.from_settings(settings)
    try:
        handle = build_server(listen, lambda server: register(server, store), tls_cert=settings.tls_cert,
                              tls_key=settings.tls_key, auth_token=settings.auth_token)
    except BaseException:
        store.close()
        raise
    return handle, store.close
