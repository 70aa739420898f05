"""The Chroma index of the store's records (no gRPC here).

One main collection holds every document of every record. Its metadata records the model and
dimension it was built with, and the change-feed watermark: the index and its progress live and
die together, in embedded mode and server mode alike, so a restart resumes where it stopped.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import threading
import time
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from functools import partial
from pathlib import Path
from typing import TypeVar, cast
from urllib.parse import urlparse

import chromadb
import httpx
import numpy as np
from chromadb.api import ClientAPI
from chromadb.api.client import Client as ChromaClient
from chromadb.api.models.Collection import Collection
from chromadb.api.types import Embeddable, EmbeddingFunction
from chromadb.config import Settings as ChromaSettings
from chromadb.errors import InternalError as ChromaInternalError
from chromadb.errors import NotFoundError

from mnemo.config import Settings
from mnemo.errors import FailedPrecondition, InvalidArgument, MnemoError, Unavailable
from mnemo.logs import get_logger
from mnemo.v1 import common_pb2, store_pb2, vector_pb2
from mnemo.vocab import KIND_NAMES
from vector_svc.documents import Document, best_per_record, record_documents, records_where, ref_of_id
from vector_svc.embedders import Embedder, MnemoEmbeddingFunction
from vector_svc.filters import build_where, validate_limit, validate_text  # noqa: F401 - re-exported
from vector_svc.memory import HeapTrimmer
from vector_svc.projects import ProjectMap
from vector_svc.recent import RecentVectors

log = get_logger(__name__)
T = TypeVar("T")

MAIN_COLLECTION = "mnemo_records"
REBUILD_COLLECTION = "mnemo_records_rebuild"
EMBED_BATCH = 128  # texts per embedder call (and per embed_delay_ms)
WRITE_BATCH = 1000  # documents per Chroma upsert, well under its max batch size
DEFAULT_LIMIT, MAX_LIMIT = 20, 200
OVERFETCH, MAX_FETCH = 4, 2000  # chunks fetched per wanted record; dedupe keeps each record's best
# A project-scoped query asks for the chunks it needs / the project's share of records x SCOPED_SLACK,
# unscoped, and keeps the project's (vector_svc/projects.py); past MAX_SCOPED chunks (a small project,
# for which Chroma's `where` is cheap), `where` answers.
SCOPED_SLACK, MAX_SCOPED = 1.0, 6400
QUERY_CACHE = 256  # query vectors kept: a repeated query (paging, a retried tool call) skips the model
BROKEN_SUFFIX = ".broken-"  # <chroma dir>.broken-<UTC time>: a damaged Chroma directory set aside
PROBLEM_CHARS = 300  # how much of Chroma's own error text a message quotes


class IndexDamaged(Unavailable):
    """Chroma failed inside its own storage: e.g. a collection whose HNSW segment can no longer
    apply its write-ahead log after a kill (upstream chroma-core/chroma issue 7678). Retrying the
    same call does not heal it; rebuilding the index from the store does."""


@contextlib.contextmanager
def damage_errors() -> Iterator[None]:
    """Chroma's InternalError becomes IndexDamaged (UNAVAILABLE: search falls back to lexical)."""
    try:
        yield
    except ChromaInternalError as err:
        raise IndexDamaged(
            f"the vector index is damaged ({str(err)[:PROBLEM_CHARS]}); vector_svc rebuilds it from the "
            "store by itself (lexical results meanwhile)"
        ) from None


@contextlib.contextmanager
def chroma_errors(backend: str) -> Iterator[None]:
    """Connection failures of a Chroma server become Unavailable; everything else propagates."""
    try:
        yield
    except MnemoError:
        raise
    except (httpx.TransportError, ConnectionError) as err:
        raise Unavailable(
            f"the Chroma server at {backend} is not reachable ({err}); start it or check --chroma-url"
        ) from None
    except ValueError as err:
        if "could not connect" in str(err).lower():
            raise Unavailable(
                f"the Chroma server at {backend} is not reachable; start it or check --chroma-url"
            ) from None
        raise


class ChromaConnection:
    """A lazily opened Chroma client: embedded under settings.chroma_dir, or a server's HttpClient."""

    def __init__(self, settings: Settings):
        self._url = settings.chroma_url.strip()
        self._path = settings.chroma_dir
        self._client: ClientAPI | None = None
        self._lock = threading.Lock()
        if self._url:
            parsed = urlparse(self._url)
            if parsed.scheme not in ("http", "https") or not parsed.hostname:
                raise InvalidArgument("chroma_url", f"must look like http://HOST:PORT, got {self._url!r}")
            self._parsed = parsed
            self._host: str = parsed.hostname

    @property
    def backend(self) -> str:
        return self._url if self._url else f"persistent:{self._path}"

    @property
    def embedded(self) -> bool:
        """The index lives in this process alone (a Chroma server may be written by other replicas)."""
        return not self._url

    def client(self) -> ClientAPI:
        with self._lock:
            if self._client is None:
                with chroma_errors(self.backend):
                    self._client = self._connect()
            return self._client

    def _connect(self) -> ClientAPI:
        settings = ChromaSettings(anonymized_telemetry=False)
        if self._url:
            p = self._parsed
            return chromadb.HttpClient(
                host=self._host, port=p.port or (443 if p.scheme == "https" else 80),
                ssl=p.scheme == "https", settings=settings,
            )
        self._path.mkdir(mode=0o700, parents=True, exist_ok=True)  # the home is private to its user
        return chromadb.PersistentClient(path=str(self._path), settings=settings)

    def start_fresh(self) -> Path:
        """Embedded mode: close the client and rename the Chroma directory to
        `<dir>.broken-<UTC time>`, kept for diagnosis (only the latest one: each holds a whole
        index); the next call opens a fresh, empty directory. Returns where the old one went."""
        if self._url:
            raise IndexDamaged(
                f"the Chroma server at {self._url} cannot rebuild the index; repair or reset that server, "
                "then run `mnemo reindex`"
            )
        with self._lock:  # one hold: no call may reopen the old directory before it moves
            self._release()
            for older in self._path.parent.glob(f"{self._path.name}{BROKEN_SUFFIX}*"):
                shutil.rmtree(older, ignore_errors=True)
            stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
            aside = self._path.with_name(f"{self._path.name}{BROKEN_SUFFIX}{stamp}")
            if self._path.exists():
                os.replace(self._path, aside)
            return aside

    def close(self) -> None:
        with self._lock:
            self._release()

    def _release(self) -> None:
        """Close and forget the client; the caller holds self._lock."""
        if self._client is not None:
            # Chroma's HTTP client never closes its httpx session itself (its sockets would
            # leak until garbage collection), so close it here; then release the client.
            for owner in (self._client, getattr(self._client, "_admin_client", None)):
                session = getattr(getattr(owner, "_server", None), "_session", None)
                if isinstance(session, httpx.Client):
                    session.close()
            if isinstance(self._client, ChromaClient):  # ClientAPI does not declare close()
                with contextlib.suppress(Exception):
                    self._client.close()
        self._client = None


def collection_metadata(embedder: Embedder, **extra: int | str) -> dict[str, object]:
    return {"model": embedder.model, "dimension": int(embedder.dimension), "embedder": embedder.key, **extra}


class ModelMismatch(FailedPrecondition):
    """A collection was built by another embedding model than the configured one."""


def check_model(collection: Collection, embedder: Embedder, remedy: str) -> None:
    """Refuse a collection built by another model instead of mixing vectors."""
    meta = collection.metadata or {}
    built = (meta.get("model"), meta.get("dimension"))
    if built != (embedder.model, embedder.dimension):
        raise ModelMismatch(
            f"index {collection.name!r} was built with {built[0]}/{built[1]}; configured "
            f"{embedder.model}/{embedder.dimension}; {remedy}"
        )


def chroma_function(embedder: Embedder) -> EmbeddingFunction[Embeddable]:
    """Our embedder as the function Chroma stores with a collection. The cast: Chroma types the
    parameter as EmbeddingFunction[Embeddable] (text or images) while text-only functions, its
    own included, are EmbeddingFunction[Documents]; Chroma only ever calls ours with text."""
    return cast("EmbeddingFunction[Embeddable]", MnemoEmbeddingFunction.for_embedder(embedder))


def open_collection(client: ClientAPI, name: str, embedder: Embedder, metadata: dict[str, object],
                    remedy: str) -> Collection:
    """Get or create a cosine collection for `embedder`; refuses one built with another model."""
    found = find_collection(client, name, embedder, remedy)
    if found is not None:
        return found
    return client.create_collection(
        name, metadata=metadata, embedding_function=chroma_function(embedder),
        configuration={"hnsw": {"space": "cosine"}},
    )


def find_collection(client: ClientAPI, name: str, embedder: Embedder, remedy: str) -> Collection | None:
    """The collection `name` if it exists; refuses one built with another model."""
    try:
        collection = client.get_collection(name, embedding_function=chroma_function(embedder))
    except NotFoundError:
        return None
    except ValueError as err:
        if "embedding function" in str(err).lower():  # built with a foreign embedding function
            raise FailedPrecondition(
                f"collection {name!r} was not built by mnemo's embedder; {remedy}"
            ) from None
        raise
    check_model(collection, embedder, remedy)
    return collection


def embed_all(embedder: Embedder, texts: Sequence[str]) -> np.ndarray:
    """Vectors for `texts` in batches; a text repeated (a shared title or fact) is embedded once."""
    unique = list(dict.fromkeys(texts))
    parts = [embedder.embed(unique[i : i + EMBED_BATCH]) for i in range(0, len(unique), EMBED_BATCH)]
    if not parts:
        return np.zeros((0, embedder.dimension), dtype=np.float32)
    vectors = np.concatenate(parts)
    if len(unique) == len(texts):
        return vectors
    row = {text: i for i, text in enumerate(unique)}
    return vectors[[row[text] for text in texts]]


class VectorIndex:
    """The main collection: applying change-feed batches, querying, rebuilding."""

    REMEDY = ("vector_svc re-embeds it with the configured model in the background (lexical results "
              "meanwhile); `mnemo reindex` does the same and waits for it")

    def __init__(self, connection: ChromaConnection, embedder: Embedder):
        self.connection = connection
        self.embedder = embedder
        self.write_lock = threading.RLock()  # one writer: follower, Sync and Rebuild take turns
        self._collection: Collection | None = None
        self._open_lock = threading.Lock()
        self.last_count = 0  # documents at the last successful count, for Status while Chroma fails
        self._query_vectors: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()
        self._cache_lock = threading.Lock()
        self.trimmer = HeapTrimmer()  # what indexing or a first query allocated goes back to the OS
        self.projects = ProjectMap()  # record -> project, for project-scoped queries (start_project_map)
        self.recent = RecentVectors()  # a text repeated across pages is embedded once (the follower clears it)

    @property
    def backend(self) -> str:
        return self.connection.backend

    # -- collections -------------------------------------------------------------------------
    def collection(self) -> Collection:
        """The main collection (created on first use), checked against the configured model."""
        with self._open_lock:
            if self._collection is None:
                with chroma_errors(self.backend), damage_errors():
                    self._collection = open_collection(
                        self.connection.client(), MAIN_COLLECTION, self.embedder,
                        collection_metadata(self.embedder, watermark=0), self.REMEDY,
                    )
            return self._collection

    @contextlib.contextmanager
    def _guard(self) -> Iterator[None]:
        """chroma_errors, plus: a main collection deleted behind our back is forgotten, so the next
        call recreates it at watermark 0 and the follower re-indexes the store into it."""
        try:
            with chroma_errors(self.backend), damage_errors():
                yield
        except NotFoundError:
            with self._open_lock:
                self._collection = None
            raise Unavailable(
                "the index collection disappeared from Chroma; it is being rebuilt, retry shortly"
            ) from None

    def watermark(self, collection: Collection | None = None) -> int:
        collection = collection or self.collection()
        return int((collection.metadata or {}).get("watermark", 0))

    def count(self) -> int:
        with self._guard():
            self.last_count = int(self.collection().count())
            return self.last_count

    # -- writes --------------------------------------------------------------------------------
    def apply(self, changes: Sequence[store_pb2.Change], collection: Collection | None = None) -> int:
        """Apply one page of the change feed and advance the watermark to its last seq.

        Idempotent: a page applied twice (a crash between the writes and the watermark update)
        leaves the same documents. Returns the number of changes consumed.
        """
        if not changes:
            return 0
        collection = collection or self.collection()
        latest: dict[tuple[str, int], store_pb2.Change] = {}
        for change in changes:  # a record changed twice in one page is indexed once, as it is now
            kind = KIND_NAMES.get(change.ref.kind)
            if kind is None:
                log.warning("change_skipped", seq=change.seq, reason="unknown record kind")
                continue
            latest[(kind, change.ref.id)] = change
        upserts, deletes = [], []
        for key, change in latest.items():
            has_record = change.HasField("record") and change.record.WhichOneof("record")
            if change.op == store_pb2.CHANGE_OP_UPSERT and has_record:
                upserts.append((key, change.record))
            else:  # a delete, or an upsert whose record is gone since: either way, not indexed
                deletes.append(key)
        docs: list[Document] = []
        for _key, record in upserts:
            docs += record_documents(record, self.embedder.token_spans)[1]
        vectors = self.recent.embed([d.text for d in docs], partial(embed_all, self.embedder), self.embedder.dimension)
        with self._guard():
            self._replace(collection, [key for key, _ in upserts], docs, vectors)
            if deletes:
                collection.delete(where=records_where(deletes))
            self._set_watermark(collection, changes[-1].seq)
        self.projects.set((d.metadata["kind"], d.metadata["record_id"], d.metadata["project"]) for d in docs)
        self.projects.drop(deletes)
        del docs, vectors
        self.trimmer.now()
        return len(changes)

    def _replace(self, collection: Collection, keys: list[tuple[str, int]], docs: list[Document],
                 vectors: np.ndarray) -> None:
        """Upsert `docs` and delete what these records produced before but no longer do."""
        if keys:
            existing = set(collection.get(where=records_where(keys), include=[])["ids"])
            stale = existing - {d.id for d in docs}
            if stale:
                collection.delete(ids=sorted(stale))
        for start in range(0, len(docs), WRITE_BATCH):
            part = docs[start : start + WRITE_BATCH]
            collection.upsert(
                ids=[d.id for d in part],
                embeddings=vectors[start : start + WRITE_BATCH],
                metadatas=[d.metadata for d in part],
            )

    def _set_watermark(self, collection: Collection, seq: int) -> None:
        metadata = dict(collection.metadata or {})
        metadata["watermark"] = int(seq)
        collection.modify(metadata=metadata)

    # -- rebuild -------------------------------------------------------------------------------
    def fresh_rebuild_collection(self) -> Collection:
        """An empty side collection to rebuild into while queries keep using the current one."""
        client = self.connection.client()
        with chroma_errors(self.backend), damage_errors():
            with contextlib.suppress(NotFoundError):
                client.delete_collection(REBUILD_COLLECTION)
            return open_collection(
                client, REBUILD_COLLECTION, self.embedder,
                collection_metadata(self.embedder, watermark=0), self.REMEDY,
            )

    def promote(self, rebuilt: Collection) -> None:
        """Swap the rebuilt collection in under the main name."""
        client = self.connection.client()
        with self._open_lock, chroma_errors(self.backend), damage_errors():
            with contextlib.suppress(NotFoundError):
                client.delete_collection(MAIN_COLLECTION)
            rebuilt.modify(name=MAIN_COLLECTION)
            self._collection = open_collection(
                client, MAIN_COLLECTION, self.embedder,
                collection_metadata(self.embedder, watermark=0), self.REMEDY,
            )

    def start_fresh(self) -> Path:
        """Set the whole Chroma directory aside (see ChromaConnection.start_fresh) and forget the
        collection it held; the next use opens an empty index at watermark 0."""
        with self._open_lock:
            self._collection = None
            self.projects.clear()
            return self.connection.start_fresh()

    def start_project_map(self) -> threading.Thread | None:
        """Load the record -> project map from the collection in the background (embedded Chroma
        only: with a server, other replicas write the index and this map would not see it)."""
        if not self.connection.embedded:
            return None

        def load() -> None:
            try:
                collection = self.collection()
                with self._guard():
                    count = self.projects.load_from(collection)
                log.info("project_map_loaded", documents=count)
                self.trimmer.now()  # reading every metadata row left ~80 MiB of freed heap behind
            except MnemoError as err:  # scoped queries keep using Chroma's `where`
                log.warning("project_map_not_loaded", error=err.message)
            except Exception as err:  # noqa: BLE001 - e.g. Chroma closed under it at shutdown; the map is an optimisation
                log.warning("project_map_not_loaded", error=type(err).__name__)

        thread = threading.Thread(target=load, name="project-map", daemon=True)
        thread.start()
        return thread

    # -- queries -------------------------------------------------------------------------------
    def query(self, text: str, filters: common_pb2.Filters, limit: int) -> list[vector_pb2.VectorHit]:
        """Nearest records, every filter applied inside Chroma, one hit per record (best chunk)."""
        limit = validate_limit(limit, DEFAULT_LIMIT, MAX_LIMIT, "limit")
        text = validate_text(text, "text")
        where = build_where(filters)
        vector = self.query_vector(text)
        collection = self.collection()
        fetch = min(max(limit * OVERFETCH, 40), MAX_FETCH)
        if where == {"project": filters.project} and self.projects.ready and self.connection.embedded:
            scoped = self._query_project(collection, vector, filters.project, limit, fetch)
            if scoped is not None:
                self.trimmer.maybe()
                return scoped
        while True:
            with self._guard():
                # Ids and distances only: the record is in the id (documents.ref_of_id).
                result = collection.query(query_embeddings=vector, n_results=fetch, where=where,
                                          include=["distances"])
                ids, distances = result["ids"][0], first_row(result["distances"])
                refs = [ref_of_id(doc_id) for doc_id in ids]
                if None in refs:  # a document not named by documents.py: its metadata says whose it is
                    result = collection.query(query_embeddings=vector, n_results=fetch, where=where,
                                              include=["distances", "metadatas"])
                    ids, distances = result["ids"][0], first_row(result["distances"])
                    refs = [(str(meta["kind"]), int(cast(int, meta["record_id"])))
                            for meta in first_row(result["metadatas"])]
            hits = best_per_record(ids, distances, cast("list[tuple[str, int]]", refs), limit)
            exhausted = len(ids) < fetch
            if len(hits) >= limit or exhausted or fetch >= MAX_FETCH:
                self.trimmer.maybe()
                return hits
            fetch = min(fetch * 2, MAX_FETCH)

    def _query_project(self, collection: Collection, vector: np.ndarray, project: str, limit: int,
                       fetch: int) -> list[vector_pb2.VectorHit] | None:
        """Unscoped neighbours filtered by the project map; None when Chroma's `where` must answer
        (a chunk or record the map does not know, or a project too small to fill the list)."""
        share = self.projects.share(project)
        if share <= 0 or fetch / share * SCOPED_SLACK > MAX_SCOPED:
            return None
        n = int(fetch / share * SCOPED_SLACK) + 1
        while True:
            with self._guard():
                result = collection.query(query_embeddings=vector, n_results=n, include=["distances"])
            ids, distances = result["ids"][0], first_row(result["distances"])
            refs = [ref_of_id(doc_id) for doc_id in ids]
            if None in refs:
                return None
            known = cast("list[tuple[str, int]]", refs)
            inside = self.projects.in_project(known, project)
            if None in inside:
                return None
            kept = [(i, d, r) for i, d, r, ok in zip(ids, distances, known, inside, strict=True) if ok]
            hits = best_per_record([k[0] for k in kept], [k[1] for k in kept], [k[2] for k in kept], limit)
            if len(hits) >= limit or len(ids) < n:  # enough, or every chunk of the index was seen
                return hits
            if n >= MAX_SCOPED:
                return None
            n = min(n * 2, MAX_SCOPED)

    def query_vector(self, text: str) -> np.ndarray:
        """The query's embedding, from a small LRU keyed by model and text."""
        key = (self.embedder.model, text)
        with self._cache_lock:
            cached = self._query_vectors.get(key)
            if cached is not None:
                self._query_vectors.move_to_end(key)
                return cached
        vector = self.embedder.embed([text])
        with self._cache_lock:
            self._query_vectors[key] = vector
            while len(self._query_vectors) > QUERY_CACHE:
                self._query_vectors.popitem(last=False)
        return vector


def first_row(rows: list[list[T]] | None) -> list[T]:
    """The results of the first (only) query text; Chroma types every `include`d field Optional."""
    return rows[0] if rows else []
