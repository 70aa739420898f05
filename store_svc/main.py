"""Composition root of store_svc: settings in, a started server out."""

from __future__ import annotations

from collections.abc import Callable

from mnemo.config import Settings
from mnemo.grpc_server import ServerHandle, build_server, check_token_policy
from store_svc.backend import SqliteBackend
from store_svc.core import Store
from store_svc.idle_memory import IdleRelease
from store_svc.servicer import register
from store_svc.tokens import TokenResolver


def start(settings: Settings, listen: str) -> tuple[ServerHandle, Callable[[], None]]:
    check_token_policy(user_tokens=settings.user_tokens, auth_token=settings.auth_token)
    store = Store.from_settings(settings)
    try:
        resolver = TokenResolver(store, settings.token_cache_s) if settings.user_tokens else None
        handle = build_server(listen, lambda server: register(server, store), tls_cert=settings.tls_cert,
                              tls_key=settings.tls_key, auth_token=settings.auth_token, resolve_token=resolver,
                              insecure_no_auth=settings.insecure_no_auth)
    except BaseException:
        store.close()
        raise
    # A quiet SQLite store gives back its connections' page caches (PostgreSQL has none here).
    release = IdleRelease(store.backend).start() if isinstance(store.backend, SqliteBackend) else None

    def on_stop() -> None:
        if release is not None:
            release.stop()
        store.close()

    return handle, on_stop
