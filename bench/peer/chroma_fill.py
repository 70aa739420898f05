"""Run by bench/peer/chroma.py with chroma-mcp's private interpreter (chromadb 1.5.9), HOME set to
claude-mem's private home: fills, counts or checks claude-mem's Chroma collection.

    fill DATA_DIR SKIP_JSON   write every record's documents as claude-mem's backfill would
                              (ChromaSync.formatObservationDocs / formatSummaryDocs /
                              formatUserPromptDoc: same ids, same metadata, nulls dropped), in
                              a collection created as chroma-mcp's chroma_create_collection
                              creates it, with the model and tokenizer of chromadb's default
                              embedding function (the one chroma-mcp runs), padded to each
                              batch's longest text instead of 256 tokens (same vectors: the
                              padding is masked out; 11x less CPU); the observation ids in
                              SKIP_JSON are left for claude-mem itself
    check DATA_DIR IDS_JSON   count the documents, and compare the vectors claude-mem wrote
                              for those observations (through chroma-mcp and the default
                              embedding function) with what `fill` would have written
Prints one JSON line. Standard library and chromadb only: it runs outside mnemo's venv.
"""

from __future__ import annotations

import json
import sqlite3
import sys
import time
from pathlib import Path

import chromadb
import numpy as np
from chromadb.api.collection_configuration import CreateCollectionConfiguration
from chromadb.utils.embedding_functions import DefaultEmbeddingFunction
from chromadb.utils.embedding_functions.onnx_mini_lm_l6_v2 import ONNXMiniLM_L6_V2

COLLECTION = "cm__claude-mem"
BATCH = 64  # texts per embedding call
EF_SAMPLE = 64  # documents the default embedding function itself embeds, to price claude-mem's own path
SUMMARY_FIELDS = ("request", "investigated", "learned", "completed", "next_steps", "notes")


def _clean(meta: dict) -> dict:
    """claude-mem drops null and empty metadata values before a write (Chroma rejects nulls)."""
    return {k: v for k, v in meta.items() if v is not None and v != ""}


def _get(row: sqlite3.Row, key: str) -> object:
    """A column claude-mem's schema may lack (legacy `text`, `merged_into_project`) reads as null."""
    return row[key] if key in row.keys() else None  # noqa: SIM118 - `in` on a Row looks at its values


def _json_list(text: str | None) -> list[str]:
    try:
        value = json.loads(text or "[]")
    except ValueError:
        return [text] if text else []
    return [v for v in value if isinstance(v, str) and v.strip()] if isinstance(value, list) else []


def observation_docs(row: sqlite3.Row) -> list[tuple[str, str, dict]]:
    base = _clean({
        "sqlite_id": row["id"], "doc_type": "observation", "memory_session_id": row["memory_session_id"],
        "project": row["project"], "merged_into_project": _get(row, "merged_into_project"),
        "platform_source": row["platform_source"] or "claude", "created_at_epoch": row["created_at_epoch"],
        "type": row["type"] or "discovery", "title": row["title"] or "Untitled", "subtitle": row["subtitle"],
        "concepts": ",".join(_json_list(row["concepts"])), "files_read": ",".join(_json_list(row["files_read"])),
        "files_modified": ",".join(_json_list(row["files_modified"]))})
    docs = []
    if row["narrative"]:
        docs.append((f"obs_{row['id']}_narrative", row["narrative"], {**base, "field_type": "narrative"}))
    if _get(row, "text"):
        docs.append((f"obs_{row['id']}_text", str(_get(row, "text")), {**base, "field_type": "text"}))
    for i, fact in enumerate(_json_list(row["facts"])):
        docs.append((f"obs_{row['id']}_fact_{i}", fact, {**base, "field_type": "fact", "fact_index": i}))
    return docs


def summary_docs(row: sqlite3.Row) -> list[tuple[str, str, dict]]:
    base = _clean({
        "sqlite_id": row["id"], "doc_type": "session_summary", "memory_session_id": row["memory_session_id"],
        "project": row["project"], "merged_into_project": _get(row, "merged_into_project"),
        "platform_source": row["platform_source"] or "claude", "created_at_epoch": row["created_at_epoch"],
        "prompt_number": row["prompt_number"] or 0})
    return [(f"summary_{row['id']}_{field}", row[field], {**base, "field_type": field})
            for field in SUMMARY_FIELDS if row[field]]


def prompt_doc(row: sqlite3.Row) -> tuple[str, str, dict]:
    return (f"prompt_{row['id']}", row["prompt_text"], _clean({
        "sqlite_id": row["id"], "doc_type": "user_prompt", "memory_session_id": row["memory_session_id"],
        "project": row["project"], "platform_source": row["platform_source"] or "claude",
        "created_at_epoch": row["created_at_epoch"], "prompt_number": row["prompt_number"]}))


def corpus_docs(db: Path, skip: set[int]) -> list[tuple[str, str, dict]]:
    conn = sqlite3.connect(db)
    conn.row_factory = sqlite3.Row
    session = "LEFT JOIN sdk_sessions s ON s.memory_session_id = x.memory_session_id"
    docs: list[tuple[str, str, dict]] = []
    for row in conn.execute(f"SELECT x.*, s.platform_source AS platform_source FROM observations x {session} "
                            "ORDER BY x.id"):
        if row["id"] not in skip:
            docs += observation_docs(row)
    for row in conn.execute(f"SELECT x.*, s.platform_source AS platform_source FROM session_summaries x {session} "
                            "ORDER BY x.id"):
        docs += summary_docs(row)
    for row in conn.execute("SELECT up.*, s.memory_session_id, s.project, s.platform_source FROM user_prompts up "
                            "JOIN sdk_sessions s ON up.session_db_id = s.id ORDER BY up.id"):
        docs.append(prompt_doc(row))
    conn.close()
    return docs


class Embedder:
    """The default embedding function's model and tokenizer (its truncation at 256 tokens too),
    with the batch padded to its longest text instead of to 256 tokens, then the same mean
    pooling and normalisation (ONNXMiniLM_L6_V2._forward)."""

    def __init__(self) -> None:
        reference = ONNXMiniLM_L6_V2()
        self.tokenizer, self.model = reference.tokenizer, reference.model
        self.tokenizer.no_padding()
        self.tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")

    def __call__(self, texts: list[str]) -> np.ndarray:
        encoded = self.tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encoded], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encoded], dtype=np.int64)
        hidden = self.model.run(None, {"input_ids": ids, "attention_mask": mask,
                                       "token_type_ids": np.zeros_like(ids)})[0]
        pooled = (hidden * mask[..., None]).sum(1) / np.clip(mask.sum(1)[..., None], 1e-9, None)
        return (pooled / np.linalg.norm(pooled, axis=1, keepdims=True)).astype(np.float32)


def fill(data_dir: Path, skip: set[int]) -> dict:
    client = chromadb.PersistentClient(path=str(data_dir / "chroma"))
    # As chroma-mcp 0.2.6's chroma_create_collection creates it (claude-mem calls it with the name only).
    collection = client.create_collection(
        name=COLLECTION, configuration=CreateCollectionConfiguration(embedding_function=DefaultEmbeddingFunction()))
    embed = Embedder()
    # Texts of a length together: a batch is padded to its longest.
    docs = sorted(corpus_docs(data_dir / "claude-mem.db", skip), key=lambda doc: len(doc[1]))
    for start in range(0, len(docs), BATCH):
        batch = docs[start:start + BATCH]
        texts = [text for _, text, _ in batch]
        collection.add(ids=[i for i, _, _ in batch], documents=texts, embeddings=list(embed(texts)),
                       metadatas=[meta for _, _, meta in batch])
    # What the same documents cost claude-mem's own path (the default embedding function, every
    # text padded to 256 tokens), on a sample spread over the lengths: CPU seconds per document.
    sample = [text for _, text, _ in docs[::max(1, len(docs) // EF_SAMPLE)]][:EF_SAMPLE]
    started = time.process_time()
    DefaultEmbeddingFunction()(sample)
    ef_cpu = (time.process_time() - started) / max(1, len(sample))
    return {"documents": collection.count(), "written": len(docs), "ef_cpu_s_per_doc": ef_cpu}


def check(data_dir: Path, ids: set[int]) -> dict:
    client = chromadb.PersistentClient(path=str(data_dir / "chroma"))
    collection = client.get_collection(COLLECTION)
    conn = sqlite3.connect(data_dir / "claude-mem.db")
    conn.row_factory = sqlite3.Row
    marks = ",".join("?" * len(ids))
    rows = conn.execute(f"SELECT x.*, NULL AS platform_source FROM observations x WHERE x.id IN ({marks})",
                        sorted(ids)).fetchall()
    conn.close()
    expected = [doc for row in rows for doc in observation_docs(row)]
    stored = collection.get(ids=[i for i, _, _ in expected], include=["embeddings"])
    by_id = dict(zip(stored["ids"], stored["embeddings"], strict=True))
    ours = Embedder()([text for _, text, _ in expected])
    diff = max((float(np.max(np.abs(np.asarray(by_id[i]) - np.asarray(v))))
                for (i, _, _), v in zip(expected, ours, strict=True) if i in by_id), default=-1.0)
    return {"documents": collection.count(), "checked": len(by_id), "expected": len(expected), "max_abs_diff": diff}


def main() -> int:
    action, data_dir, ids = sys.argv[1], Path(sys.argv[2]), set(json.loads(sys.argv[3]))
    print(json.dumps(fill(data_dir, ids) if action == "fill" else check(data_dir, ids)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
