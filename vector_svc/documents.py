"""Records -> index documents: stable ids, chunking, metadata. Pure functions, no Chroma.

Document ids (one record yields several documents; long text gets `_c<n>` suffixes):
  obs_<id>_title        title and subtitle together
  obs_<id>_narrative    the narrative
  obs_<id>_fact_<i>     each fact (0-based)
  obs_<id>_text         legacy free text
  summary_<id>_<field>  request, investigated, learned, completed, next_steps, notes
  prompt_<id>           the prompt text
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from mnemo.v1 import common_pb2, vector_pb2
from mnemo.vocab import KIND_BY_NAME, SUMMARY_FIELDS

SpanFn = Callable[[str], list[tuple[int, int]]]

# The (kind, record id) every document id above starts with; a query reads refs from ids alone,
# since fetching each hit's metadata from Chroma costs ~10x the nearest-neighbour search itself.
_ID_PREFIX = re.compile(r"(obs|summary|prompt)_(\d+)(?:_|$)")
_ID_KINDS = {"obs": "observation", "summary": "summary", "prompt": "prompt"}

# The model sees at most 256 tokens, [CLS] and [SEP] included. Longer text is cut into windows
# of 200 tokens that overlap by 50, so a sentence on a boundary is whole in one of them.
SINGLE_CHUNK_TOKENS = 254
CHUNK_TOKENS = 200
CHUNK_OVERLAP = 50


@dataclass(frozen=True)
class Document:
    id: str
    text: str
    metadata: dict


def chunk_text(
    text: str, spans: SpanFn, window: int = CHUNK_TOKENS, overlap: int = CHUNK_OVERLAP
) -> list[str]:
    """`text` as one chunk when it fits the model's window, else overlapping token windows."""
    if len(text) <= SINGLE_CHUNK_TOKENS:  # a token covers at least one character
        return [text]
    offsets = spans(text)
    if len(offsets) <= SINGLE_CHUNK_TOKENS:
        return [text]
    chunks, stride = [], window - overlap
    for start in range(0, len(offsets), stride):
        end = min(start + window, len(offsets))
        chunks.append(text[offsets[start][0] : offsets[end - 1][1]])
        if end == len(offsets):
            break
    return chunks


def _field_documents(base_id: str, text: str, metadata: dict, field: str, spans: SpanFn) -> list[Document]:
    text = text.strip()
    if not text:
        return []
    chunks = chunk_text(text, spans)
    if len(chunks) == 1:
        return [Document(base_id, text, {**metadata, "field": field, "chunk": 0})]
    return [
        Document(f"{base_id}_c{n}", chunk, {**metadata, "field": field, "chunk": n})
        for n, chunk in enumerate(chunks)
    ]


def _base_metadata(
    kind: str, record_id: int, project: str, platform_source: str, created_at_epoch: int
) -> dict:
    # Chroma refuses None values: every key is always present with a concrete value.
    return {
        "kind": kind,
        "record_id": int(record_id),
        "project": project or "",
        "platform_source": platform_source or "",
        "created_at_epoch": int(created_at_epoch),
    }


def observation_documents(obs: common_pb2.Observation, spans: SpanFn) -> list[Document]:
    meta = _base_metadata("observation", obs.id, obs.project, obs.platform_source, obs.created_at_epoch)
    meta["type"] = obs.type or ""
    base = f"obs_{obs.id}"
    heading = ". ".join(part.strip() for part in (obs.title, obs.subtitle) if part.strip())
    docs = _field_documents(f"{base}_title", heading, meta, "title", spans)
    docs += _field_documents(f"{base}_narrative", obs.narrative, meta, "narrative", spans)
    for i, fact in enumerate(obs.facts):
        docs += _field_documents(f"{base}_fact_{i}", fact, meta, "fact", spans)
    docs += _field_documents(f"{base}_text", obs.text, meta, "text", spans)
    return docs


def summary_documents(summary: common_pb2.Summary, spans: SpanFn) -> list[Document]:
    meta = _base_metadata(
        "summary", summary.id, summary.project, summary.platform_source, summary.created_at_epoch
    )
    docs: list[Document] = []
    for field in SUMMARY_FIELDS:
        docs += _field_documents(f"summary_{summary.id}_{field}", getattr(summary, field), meta, field, spans)
    return docs


def prompt_documents(prompt: common_pb2.UserPrompt, spans: SpanFn) -> list[Document]:
    meta = _base_metadata(
        "prompt", prompt.id, prompt.project, prompt.platform_source, prompt.created_at_epoch
    )
    return _field_documents(f"prompt_{prompt.id}", prompt.prompt_text, meta, "prompt", spans)


def record_documents(record: common_pb2.Record, spans: SpanFn) -> tuple[tuple[str, int], list[Document]]:
    """((kind name, record id), documents) for one record of the change feed."""
    which = record.WhichOneof("record")
    if which == "observation":
        return ("observation", record.observation.id), observation_documents(record.observation, spans)
    if which == "summary":
        return ("summary", record.summary.id), summary_documents(record.summary, spans)
    if which == "prompt":
        return ("prompt", record.prompt.id), prompt_documents(record.prompt, spans)
    raise ValueError("record has no content")


def ref_of_id(doc_id: str) -> tuple[str, int] | None:
    """(kind name, record id) of a document id made by this module; None for any other id."""
    match = _ID_PREFIX.match(doc_id)
    if match is None:
        return None
    return _ID_KINDS[match.group(1)], int(match.group(2))


def records_where(refs: Iterable[tuple[str, int]]) -> dict | None:
    """A Chroma `where` matching every document of the given (kind, record id) pairs."""
    by_kind: dict[str, list[int]] = {}
    for kind, record_id in refs:
        by_kind.setdefault(kind, []).append(int(record_id))
    clauses = [
        {"$and": [{"kind": kind}, {"record_id": {"$in": sorted(set(ids))}}]}
        for kind, ids in sorted(by_kind.items())
    ]
    if not clauses:
        return None
    return clauses[0] if len(clauses) == 1 else {"$or": clauses}


def best_per_record(ids: Sequence[str], distances: Sequence[float], refs: Sequence[tuple[str, int]],
                    limit: int) -> list[vector_pb2.VectorHit]:
    """One hit per record, its closest chunk, closest first (Chroma returns chunks sorted), for the
    first `limit` records: the overfetched chunks past them would only be built to be dropped."""
    seen: set[tuple[str, int]] = set()
    hits: list[vector_pb2.VectorHit] = []
    for doc_id, distance, key in zip(ids, distances, refs, strict=False):
        if key in seen:
            continue
        if len(hits) == limit:
            break
        seen.add(key)
        ref = common_pb2.Ref(kind=KIND_BY_NAME[key[0]], id=key[1])  # type: ignore[arg-type]
        hits.append(vector_pb2.VectorHit(ref=ref, distance=float(distance), chunk_id=doc_id))
    return hits
