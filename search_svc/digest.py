"""The digest of a primed corpus: what it is about, computed from its observations alone.

Pure functions, no I/O. A digest holds themes (counts by observation type, concept tag
and file), the most frequent content terms (stop-words, numbers and very short tokens
removed) and the time span. It is saved as JSON on the corpus (`digest_json`) and
rendered in the priming result, so an agent knows what a corpus can answer before asking.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable

from mnemo import vocab
from mnemo.timefmt import iso_from_ms
from mnemo.v1 import common_pb2

TOP_CONCEPTS = 15
TOP_FILES = 15
TOP_TERMS = 25

# The stop-words (mnemo.vocab) plus the words every coding-agent observation repeats: they would
# top every corpus's themes and say nothing about this one, yet a search must keep them ("new
# file", "fixed in code"), so they are the digest's own.
_THEME_FILLER = """
    added adds already also around called calls code done either else even every file files fixed
    found gets however instead least less like made make makes many may might much must need needs
    new often one onto others per ran rather run runs see seen set sets since still thing things
    though thus upon us use used uses using via way ways well whether whose within without work works
    yet
"""
STOP_WORDS = vocab.STOP_WORDS | frozenset(_THEME_FILLER.split())

_TERM = re.compile(r"[A-Za-z][A-Za-z0-9_'-]{2,}")


def observation_text(obs: common_pb2.Observation) -> str:
    """Every free-text field of an observation, one per line."""
    parts = [obs.title, obs.subtitle, obs.narrative, *obs.facts]
    if not obs.narrative and obs.text:
        parts.append(obs.text)
    return "\n".join(p for p in parts if p)


def terms(text: str) -> Iterable[str]:
    """Lower-cased content words of a text (stop-words and tokens under 3 letters dropped)."""
    for match in _TERM.finditer(text):
        word = match.group().lower().strip("'-_")
        if len(word) >= 3 and word not in STOP_WORDS:
            yield word


def build_digest(observations: list[common_pb2.Observation]) -> dict:
    """Themes, frequent terms and time span of a list of observations."""
    by_type = Counter(o.type or "unknown" for o in observations)
    by_concept = Counter(c for o in observations for c in dict.fromkeys(o.concepts) if c)
    by_file = Counter(f for o in observations for f in dict.fromkeys([*o.files_modified, *o.files_read]) if f)
    term_counts: Counter[str] = Counter()
    for obs in observations:
        term_counts.update(terms(observation_text(obs)))
    epochs = [o.created_at_epoch for o in observations if o.created_at_epoch]
    return {
        "observations": len(observations),
        "themes": {
            "types": _ranked(by_type, len(by_type)),
            "concepts": _ranked(by_concept, TOP_CONCEPTS),
            "files": _ranked(by_file, TOP_FILES),
        },
        "top_terms": _ranked(term_counts, TOP_TERMS),
        "time_span": _time_span(epochs),
    }


def _ranked(counter: Counter, top: int) -> list[dict]:
    # Ties broken by name so the digest of the same observations is always the same.
    items = sorted(counter.items(), key=lambda kv: (-kv[1], kv[0]))[:top]
    return [{"name": name, "count": count} for name, count in items]


def _time_span(epochs: list[int]) -> dict:
    if not epochs:
        return {"earliest": "", "latest": "", "days": 0}
    first, last = min(epochs), max(epochs)
    return {"earliest": iso_from_ms(first), "latest": iso_from_ms(last),
            "days": round((last - first) / 86_400_000, 1)}


def digest_json(digest: dict) -> str:
    return json.dumps(digest, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def render_digest(digest: dict) -> str:
    """A few lines an agent can read: themes, terms, span."""
    themes = digest.get("themes", {})
    span = digest.get("time_span", {})
    lines = []
    for label, key in (("Types", "types"), ("Concepts", "concepts"), ("Files", "files")):
        items = themes.get(key) or []
        if items:
            lines.append(f"{label}: " + ", ".join(f"{i['name']} ({i['count']})" for i in items))
    top = digest.get("top_terms") or []
    if top:
        lines.append("Frequent terms: " + ", ".join(i["name"] for i in top))
    if span.get("earliest"):
        lines.append(f"Time span: {span['earliest'][:10]} to {span['latest'][:10]} ({span['days']} days)")
    return "\n".join(lines)
