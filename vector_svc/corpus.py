"""Knowledge-corpus collections: one Chroma collection per corpus, primed by search_svc."""

from __future__ import annotations

import contextlib
import hashlib
import re
import threading
from collections.abc import Mapping, Sequence

from chromadb.api.models.Collection import Collection
from chromadb.errors import NotFoundError

from mnemo.errors import Aborted, FailedPrecondition, InvalidArgument, Unavailable
from mnemo.v1 import vector_pb2
from mnemo.vocab import CORPUS_NAME_PATTERN, CORPUS_NAME_RE, CORPUS_PASSAGES_DEFAULT, PROJECT_MAX_BYTES
from vector_svc.embedders import Embedder
from vector_svc.index import (
    ChromaConnection,
    chroma_errors,
    collection_metadata,
    embed_all,
    find_collection,
    first_row,
    open_collection,
    validate_limit,
    validate_text,
)

# Chroma's own rule: 3-512 characters of [a-zA-Z0-9._-], alphanumeric at both ends, no "..".
CHROMA_NAME = re.compile(r"^[a-zA-Z0-9](?:[a-zA-Z0-9._-]{1,510})[a-zA-Z0-9]$")
MAX_DOCUMENTS = 500
MAX_ID = 256
MAX_PASSAGES = 50  # the service bound; query_corpus asks for at most CORPUS_PASSAGES_MAX


def validate_corpus_name(name: str) -> str:
    if not CORPUS_NAME_RE.fullmatch(name):
        raise InvalidArgument("corpus", f"must match {CORPUS_NAME_PATTERN}")
    return name


def validate_project(project: str) -> str:
    if len(project.encode("utf-8", "surrogatepass")) > PROJECT_MAX_BYTES:
        raise InvalidArgument("project", f"at most {PROJECT_MAX_BYTES} bytes")
    return project


def collection_name(corpus: str, project: str = "") -> str:
    """The collection of corpus `corpus` of `project` (names are each project's own).

    A corpus over all projects (project '') keeps `corpus_<name>`, or a sanitised name plus a
    hash where the plain one breaks Chroma's rules (as before corpora had projects); a project's
    is `pcorpus_` and a hash of both, a prefix no name of the first kind can produce."""
    if project:
        return "pcorpus_" + hashlib.sha256(f"{project}\x00{corpus}".encode("utf-8", "surrogatepass")).hexdigest()[:40]
    plain = f"corpus_{corpus}"
    if CHROMA_NAME.match(plain) and ".." not in plain:
        return plain
    safe = re.sub(r"[^a-zA-Z0-9]", "_", corpus)
    return f"corpus_{safe}_{hashlib.sha256(corpus.encode()).hexdigest()[:10]}"


def _superseded(corpus: str) -> Aborted:
    """A batch of a priming job whose collection another job reset or dropped meanwhile."""
    return Aborted(f"corpus {corpus!r} was dropped or re-primed by another job while this one ran; prime it again")


def _rebuilding(corpus: str) -> Unavailable:
    """A query that met a corpus between its reset and its new passages: retryable."""
    return Unavailable(f"corpus {corpus!r} is being re-primed right now; ask again in a moment")


class Corpora:
    """Upsert, query and drop corpus collections with the service's embedder.

    Writes to one corpus run one at a time (a lock per corpus): a caller that timed out and
    sends the same batch again (reset included) waits for its first attempt to finish instead
    of deleting the collection under it. A query that meets a collection deleted meanwhile
    (a reprime's reset) answers UNAVAILABLE, retryable, never Chroma's NotFoundError."""

    def __init__(self, connection: ChromaConnection, embedder: Embedder):
        self.connection = connection
        self.embedder = embedder
        self._locks: dict[str, threading.Lock] = {}
        self._locks_guard = threading.Lock()

    def _writing(self, collection: str) -> threading.Lock:
        with self._locks_guard:
            return self._locks.setdefault(collection, threading.Lock())

    def _remedy(self, corpus: str) -> str:
        return f"re-prime corpus {corpus!r} (reprime_corpus) to rebuild it with the configured model"

    def upsert(self, corpus: str, documents: Sequence[vector_pb2.CorpusDocument], reset: bool,
               generation: str = "", project: str = "") -> int:
        validate_corpus_name(corpus)
        validate_project(project)
        if len(generation) > MAX_ID:
            raise InvalidArgument("generation", f"at most {MAX_ID} characters")
        if len(documents) > MAX_DOCUMENTS:
            raise InvalidArgument("documents", f"at most {MAX_DOCUMENTS} per call; send several calls")
        ids = []
        for i, doc in enumerate(documents):
            if not doc.id or len(doc.id) > MAX_ID:
                raise InvalidArgument(f"documents[{i}].id", f"required, at most {MAX_ID} characters")
            if not doc.text.strip():
                raise InvalidArgument(f"documents[{i}].text", "required: the passage to embed")
            ids.append(doc.id)
        if len(set(ids)) != len(ids):
            raise InvalidArgument("documents", "ids must be unique within one call")
        with self._writing(collection_name(corpus, project)), chroma_errors(self.connection.backend):
            collection = self._for_batch(corpus, project, reset, generation)
            try:
                if documents:
                    vectors = embed_all(self.embedder, [d.text for d in documents])
                    collection.upsert(
                        ids=ids,
                        embeddings=vectors,
                        documents=[d.text for d in documents],
                        metadatas=[{"observation_id": int(d.observation_id)} for d in documents],
                    )
                return int(collection.count())
            except NotFoundError:  # dropped or reset by another replica meanwhile
                raise _superseded(corpus) from None

    def _for_batch(self, corpus: str, project: str, reset: bool, generation: str) -> Collection:
        """The collection a batch of job `generation` goes into (see UpsertCorpusDocumentsRequest).

        Fenced by the generation held in the collection's metadata rather than by a lock, since
        another vector_svc replica may run the first attempt of a batch sent again: a reset
        keeps its own job's collection and never drops a later job's, and a batch finds the
        collection of its own job or is ABORTED. Chroma cannot delete on a condition, so a first
        attempt stalled between reading the generation and deleting can still drop the
        collection; the job then sees fewer documents than it sent and fails (search_svc
        corpus/job.py), rather than leaving a corpus primed on part of its passages."""
        client = self.connection.client()
        name = collection_name(corpus, project)
        found = find_collection(client, name, self.embedder, self._remedy(corpus))
        held = str((found.metadata or {}).get("generation", "")) if found is not None else ""
        if generation and held > generation:
            raise _superseded(corpus)
        if reset and found is not None and not (generation and held == generation):
            with contextlib.suppress(NotFoundError):
                client.delete_collection(name)
            found = None
        elif not reset and generation and held != generation:  # dropped or re-primed under this job
            raise _superseded(corpus)
        if found is not None:
            return found
        extra = {"generation": generation} if generation else {}
        return open_collection(client, name, self.embedder, collection_metadata(self.embedder, corpus=corpus, **extra),
                               self._remedy(corpus))

    def query(self, corpus: str, text: str, limit: int, project: str = "") -> list[vector_pb2.CorpusPassage]:
        validate_corpus_name(corpus)
        name = collection_name(corpus, validate_project(project))
        limit = validate_limit(limit, CORPUS_PASSAGES_DEFAULT, MAX_PASSAGES, "limit")
        text = validate_text(text, "text")
        with chroma_errors(self.connection.backend):
            collection = find_collection(self.connection.client(), name, self.embedder, self._remedy(corpus))
            if collection is None:
                if self._writing(name).locked():
                    raise _rebuilding(corpus)
                raise FailedPrecondition(
                    f"corpus {corpus!r} has no passages yet; prime it first (prime_corpus)"
                )
            try:
                result = collection.query(
                    query_embeddings=self.embedder.embed([text]), n_results=limit,
                    include=["documents", "metadatas", "distances"],
                )
            except NotFoundError:  # deleted between finding and querying it: a reprime's reset
                raise _rebuilding(corpus) from None
        return [
            vector_pb2.CorpusPassage(
                id=doc_id, text=doc or "", observation_id=_observation_id(meta),
                distance=float(distance),
            )
            for doc_id, doc, meta, distance in zip(
                result["ids"][0], first_row(result["documents"]), first_row(result["metadatas"]),
                first_row(result["distances"]), strict=False,
            )
        ]

    def drop(self, corpus: str, project: str = "") -> bool:
        validate_corpus_name(corpus)
        name = collection_name(corpus, validate_project(project))
        with self._writing(name), chroma_errors(self.connection.backend):
            try:
                self.connection.client().delete_collection(name)
            except NotFoundError:
                return False
        return True


def _observation_id(meta: Mapping[str, object] | None) -> int:
    """The observation a passage came from, as add() stored it (0: none)."""
    value = (meta or {}).get("observation_id", 0)
    return int(value) if isinstance(value, int | str) else 0
