"""What a corpus indexes: each observation cut into passages, and the corpus's statistics."""

from __future__ import annotations

import math
from collections import Counter

from mnemo.timefmt import iso_from_ms
from mnemo.v1 import common_pb2, store_pb2, vector_pb2
from mnemo.vocab import CHARS_PER_TOKEN
from search_svc.render import corpus_markdown

NARRATIVE_CHUNK_CHARS = 800
NARRATIVE_OVERLAP_CHARS = 100
MAX_FACT_PASSAGES = 50


def corpus_stats(observations: list[common_pb2.Observation]) -> store_pb2.CorpusStats:
    """Counts, span and types of a snapshot; tokens are estimated on its markdown rendering."""
    rendered_chars = sum(len(corpus_markdown(o)) for o in observations)
    epochs = [o.created_at_epoch for o in observations]
    return store_pb2.CorpusStats(
        observation_count=len(observations),
        token_estimate=math.ceil(rendered_chars / CHARS_PER_TOKEN),
        earliest=iso_from_ms(min(epochs)) if epochs else "",
        latest=iso_from_ms(max(epochs)) if epochs else "",
        type_breakdown=dict(Counter(o.type or "unknown" for o in observations)),
    )


def _next_start(text: str, end: int, start: int, overlap: int) -> int:
    """Where the piece after [start, end) begins: `overlap` characters back, at a word start."""
    start = max(end - overlap, start + 1)
    space = text.find(" ", start, end)
    return space + 1 if 0 <= space < end else start


def chunk_text(text: str, size: int = NARRATIVE_CHUNK_CHARS,
               overlap: int = NARRATIVE_OVERLAP_CHARS) -> list[str]:
    """Pieces of at most `size` characters, cut at whitespace where possible, overlapping a little
    so a sentence cut in two is still whole in one piece."""
    text = text.strip()
    if len(text) <= size:
        return [text] if text else []
    pieces = []
    start = 0
    while start < len(text):
        end = min(len(text), start + size)
        if end < len(text):
            cut = text.rfind(" ", start + size // 2, end)
            end = cut if cut > start else end
        pieces.append(text[start:end].strip())
        if end >= len(text):
            break
        start = _next_start(text, end, start, overlap)
    return [p for p in pieces if p]


def observation_passages(obs: common_pb2.Observation) -> list[vector_pb2.CorpusDocument]:
    """Passages of one observation, ids `obs_<id>_<part>`: the head (title + subtitle),
    narrative chunks (prefixed with the title, so each chunk says what it is about), facts."""
    docs = []
    head = " - ".join(p for p in (obs.title.strip(), obs.subtitle.strip()) if p)
    if head:
        docs.append(vector_pb2.CorpusDocument(id=f"obs_{obs.id}_head", text=head, observation_id=obs.id))
    body = obs.narrative or obs.text
    for i, piece in enumerate(chunk_text(body)):
        text = f"{obs.title.strip()}: {piece}" if obs.title.strip() else piece
        docs.append(vector_pb2.CorpusDocument(id=f"obs_{obs.id}_narrative_c{i}", text=text,
                                              observation_id=obs.id))
    for i, fact in enumerate(f for f in obs.facts[:MAX_FACT_PASSAGES] if f.strip()):
        text = fact.strip()[:NARRATIVE_CHUNK_CHARS]
        docs.append(vector_pb2.CorpusDocument(id=f"obs_{obs.id}_fact_{i}", text=text, observation_id=obs.id))
    return docs
