"""search_svc's side of per-user tokens (setting `user_tokens`).

search_svc keeps no tokens: it authenticates a caller's token by asking store_svc who it
is (`WhoAmI`, cached for `token_cache_s` seconds), and its store client presents that same
token on every store call made while serving the caller (mnemo.identity.caller_token), so
store_svc, the one gatekeeper, applies the caller's project scope. Its calls to vector_svc
keep the service token: vector hits of other projects are dropped when the store hydrates
them under the caller's scope.

`RULES` names, for every SearchService RPC, how the caller's scope reaches it; a user token
may call only those (and the StoreService methods search_svc relays to the store with the
caller's token): the server refuses it anything else, so an RPC added later without a rule
here is closed to users (tests/service/search_svc/test_search_access_rules.py enumerates them).
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

from mnemo import identity
from mnemo.config import Settings
from mnemo.identity import Identity, TokenResolver
from mnemo.v1 import search_pb2, store_pb2
from search_svc import store_forward

if TYPE_CHECKING:  # a core module: the typed client is handed in by the composition root
    from search_svc.backend import StoreClient


# How each rule keeps a user token to its projects.
STORE = "every record it reads or writes goes through store_svc with the caller's token (the store's rule)"
HYDRATED = "vector hits (service token) are kept only when the store hydrates them under the caller's token"
CORPUS = ("the corpus is looked up in store_svc with the caller's token first (NOT_FOUND outside its scope); "
          "only then is vector_svc asked about that corpus")
NO_DATA = "answers what the deployment can do, nothing of any project"

RULES: dict[str, str] = {
    "GetCapabilities": NO_DATA,
    "Search": HYDRATED,
    "Timeline": STORE,
    "GetObservations": STORE,
    "MemSearch": HYDRATED,
    "GetToolUses": STORE,
    "SaveMemory": STORE,
    "WriteWorkState": STORE,
    "ReadWorkState": STORE,
    "SessionStartContext": HYDRATED,
    "BuildCorpus": STORE,
    "ListCorpora": STORE,
    "RebuildCorpus": CORPUS,
    "PrimeCorpus": CORPUS,
    "ReprimeCorpus": CORPUS,
    "QueryCorpus": CORPUS,
    "Forget": STORE,
    "EditObservation": STORE,
    "GetRecordDetail": STORE,
    "Overview": STORE,
    "MarkWrong": STORE,
    "ObservationAdd": STORE,
    "ObservationRecordEvent": STORE,
    "ObservationSearch": HYDRATED,
    "ObservationContext": HYDRATED,
    "ObservationGenerationStatus": STORE,
}
_SERVICE = search_pb2.DESCRIPTOR.services_by_name["SearchService"].full_name
_REFLECTION = "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo"  # names of RPCs, no data
USER_METHODS = frozenset({f"/{_SERVICE}/{name}" for name in RULES}
                         | {f"/{store_forward.SERVICE}/{name}" for name in store_forward.FORWARDED}
                         | {_REFLECTION})


class StoreTokenResolver:
    """A caller's secret -> Identity, as store_svc knows it."""

    def __init__(self, store: StoreClient, ttl_s: float):
        self._store = store
        self._cache = identity.TokenCache(ttl_s)

    def __call__(self, secret: str) -> Identity:
        digest = hashlib.sha256(secret.encode("utf-8", "surrogatepass")).hexdigest()
        cached = self._cache.get(digest)
        if cached is not None:
            return cached
        reset = identity.caller_token.set(secret)  # the store client presents this token
        try:
            reply = self._store.stub.WhoAmI(store_pb2.WhoAmIRequest())
        finally:
            identity.caller_token.reset(reset)
        projects = None if reply.all_projects or reply.admin else frozenset(reply.projects)
        who = Identity(reply.user, projects, admin=reply.admin)
        self._cache.put(digest, who)
        return who


def token_resolver(settings: Settings, store: StoreClient) -> TokenResolver | None:
    """The resolver search_svc's server uses, or None when only the service token is accepted."""
    return StoreTokenResolver(store, settings.token_cache_s) if settings.user_tokens else None
