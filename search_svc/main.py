"""Composition root of search_svc: settings in, a started server out."""

from __future__ import annotations

from collections.abc import Callable

import grpc

from mnemo.config import Settings
from mnemo.grpc_server import ServerHandle, build_server
from search_svc.access import USER_METHODS, token_resolver
from search_svc.backend import Backend
from search_svc.corpus import Corpora
from search_svc.curation import Curation
from search_svc.details import Details
from search_svc.memsearch import MemSearchEngine
from search_svc.observations import Observations
from search_svc.retrieval import Retrieval
from search_svc.servicer import Cores, register
from search_svc.store_forward import StoreForwarder
from search_svc.writes import Writes


def build_cores(settings: Settings, backend: Backend) -> Cores:
    retrieval = Retrieval(backend, settings)
    return Cores(
        retrieval=retrieval,
        details=Details(retrieval),
        memsearch=MemSearchEngine(backend, retrieval, settings),
        writes=Writes(backend, settings),
        corpora=Corpora(backend, settings),
        curation=Curation(backend),
        observations=Observations(backend, settings),
    )


def start(settings: Settings, listen: str) -> tuple[ServerHandle, Callable[[], None]]:
    backend = Backend.connect(settings)
    cores = build_cores(settings, backend)
    forwarder = StoreForwarder(settings)  # hooks of the server runtime reach the store through here

    def register_all(server: grpc.Server) -> list[str]:
        server.add_generic_rpc_handlers((forwarder,))
        return register(server, cores)

    handle = build_server(listen, register_all, tls_cert=settings.tls_cert,
                          tls_key=settings.tls_key, auth_token=settings.auth_token,
                          resolve_token=token_resolver(settings, backend.store), forward_caller=settings.user_tokens,
                          insecure_no_auth=settings.insecure_no_auth, user_methods=USER_METHODS)

    def on_stop() -> None:
        forwarder.close()
        cores.observations.close()
        cores.corpora.close()
        cores.retrieval.close()
        backend.close()

    return handle, on_stop
