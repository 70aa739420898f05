"""bench/peer/run.py's corpus: claude-mem's schema filled deterministically, and the queries.

200 sessions over 5 projects, one prompt and one summary per session, observations "<Verb>
<subject> in <place>" (seed 18), dated within the last 30 days (claude-mem's semantic search
drops hits older than 90 days); queries of one to four adjacent words of those titles, so
claude-mem's phrase match can hit too; and paraphrased queries that share no word with the
corpus, labelled by the (subject, place) of the titles they mean.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path

PROJECTS = ["billing-api", "web-dashboard", "infra-tools", "mobile-app", "data-pipeline"]
OBS_TYPES = ["bugfix", "feature", "refactor", "discovery", "decision", "change"]
SUBJECTS = ["login redirect", "token refresh", "cache invalidation", "retry backoff", "schema migration",
            "socket timeout", "parser error", "build cache", "rate limiter", "webhook signature",
            "search index", "deploy rollback", "memory leak", "config loader", "feature flag",
            "payment reconcile", "image resize", "queue consumer", "log rotation", "csv export"]
VERBS = ["fixed", "added", "reworked", "found", "chose", "changed"]
CORPUS_AGE_DAYS = 30
PLACES = ["the auth module", "the worker pool", "the HTTP client", "the nightly job", "the admin page",
          "the CLI", "the sync service", "the test harness"]


def observation_text(rng: random.Random, i: int) -> tuple[str, str, str]:
    subject, place = rng.choice(SUBJECTS), rng.choice(PLACES)
    other = rng.choice(SUBJECTS)
    title = f"{rng.choice(VERBS).capitalize()} {subject} in {place}"
    narrative = (f"While working on {place} the {subject} path misbehaved next to the {other} code; "
                 f"step {i % 97} traced it and the change keeps {other} intact.")
    return title, f"{subject} / {other}", narrative


def generate_corpus(db: Path, observations: int, sessions: int = 200) -> int:
    """Fill claude-mem's schema (its worker created it) deterministically; returns rows written."""
    rng = random.Random(18)
    conn = sqlite3.connect(db)
    base_ms = (int(time.time()) // 86_400 - CORPUS_AGE_DAYS) * 86_400_000  # midnight UTC, 30 days ago
    per_session = max(1, observations // sessions)
    rows = 0
    with conn:
        for s in range(sessions):
            project, started = PROJECTS[s % len(PROJECTS)], base_ms + s * 3_600_000
            content_id, memory_id = f"peer-content-{s}", f"peer-memory-{s}"
            cur = conn.execute(
                "INSERT INTO sdk_sessions (content_session_id, memory_session_id, project, user_prompt, started_at,"
                " started_at_epoch, status) VALUES (?,?,?,?,?,?, 'completed')",
                (content_id, memory_id, project, f"work on {rng.choice(SUBJECTS)}", iso(started), started))
            conn.execute("INSERT INTO user_prompts (session_db_id, content_session_id, prompt_number, prompt_text,"
                         " created_at, created_at_epoch) VALUES (?,?,1,?,?,?)",
                         (cur.lastrowid, content_id, f"please look at the {rng.choice(SUBJECTS)} problem",
                          iso(started), started))
            count = per_session if s < sessions - 1 else observations - per_session * (sessions - 1)
            for k in range(count):
                rows += insert_observation(conn, rng, memory_id, project, started + (k + 1) * 1000, s * 1000 + k)
            conn.execute("INSERT INTO session_summaries (memory_session_id, project, request, investigated, learned,"
                         " completed, next_steps, prompt_number, created_at, created_at_epoch)"
                         " VALUES (?,?,?,?,?,?,?,1,?,?)",
                         (memory_id, project, f"fix the {rng.choice(SUBJECTS)}", "logs and tests",
                          f"the {rng.choice(SUBJECTS)} depends on config", "patched and tested", "watch the metrics",
                          iso(started + 999_000), started + 999_000))
            rows += 2
    conn.close()
    return rows


def insert_observation(conn: sqlite3.Connection, rng: random.Random, memory_id: str, project: str,
                       at_ms: int, i: int) -> int:
    title, subtitle, narrative = observation_text(rng, i)
    digest = hashlib.sha256(f"{memory_id}\0{title}\0{narrative}".encode()).hexdigest()[:16]
    facts = json.dumps([f"{rng.choice(SUBJECTS)} uses {rng.choice(PLACES)}"])
    files = json.dumps([f"src/{project}/{rng.choice(SUBJECTS).replace(' ', '_')}.py"])
    conn.execute("INSERT INTO observations (memory_session_id, project, type, title, subtitle, facts, narrative,"
                 " concepts, files_read, files_modified, prompt_number, created_at, created_at_epoch, content_hash)"
                 " VALUES (?,?,?,?,?,?,?,?,?,?,1,?,?,?)",
                 (memory_id, project, rng.choice(OBS_TYPES), title, subtitle, facts, narrative,
                  json.dumps(["how-it-works"]), files, files, iso(at_ms), at_ms, digest))
    return 1


def iso(ms: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(ms / 1000))


def make_queries(n: int = 40) -> list[str]:
    """One to four words, adjacent in the generated text so claude-mem's phrase match can hit too."""
    rng = random.Random(40)
    out = []
    for i in range(n):
        words = f"{rng.choice(SUBJECTS)} in {rng.choice(PLACES)}".split()
        width = 1 + i % 4
        start = rng.randrange(0, max(1, len(words) - width + 1))
        out.append(" ".join(words[start:start + width]))
    return out


# Paraphrases that share no word with the corpus (checked by paraphrase_queries).
SUBJECT_PARAPHRASES = {
    "login redirect": "user signin forwarding", "token refresh": "renewing expired credentials",
    "cache invalidation": "evicting stale memoized entries", "retry backoff": "exponential delay between reattempts",
    "schema migration": "database structure upgrade", "socket timeout": "network connection hangs",
    "parser error": "syntax analysis failure", "build cache": "compilation artifact reuse",
    "rate limiter": "request throttling", "webhook signature": "callback payload hmac verification",
    "search index": "lookup catalog", "deploy rollback": "reverting a bad release",
    "memory leak": "ram growing without bound", "config loader": "reading settings files",
    "feature flag": "toggle for experimental functionality", "payment reconcile": "matching invoices with charges",
    "image resize": "scaling pictures down", "queue consumer": "message backlog reader",
    "log rotation": "archiving old logfiles", "csv export": "spreadsheet download of records",
}
PLACE_PARAPHRASES = {
    "the auth module": "authentication component", "the worker pool": "background thread group",
    "the HTTP client": "outbound request library", "the nightly job": "scheduled overnight task",
    "the admin page": "administrator screen", "the CLI": "command line tool",
    "the sync service": "synchronisation daemon", "the test harness": "qa scaffolding",
}
CORPUS_WORDS = (" ".join([*SUBJECTS, *PLACES, *VERBS, *PROJECTS, *OBS_TYPES]) + " while working on path misbehaved "
                "next to code step traced it and change keeps intact uses please look at problem work fix logs "
                "tests depends config patched tested watch metrics how works src py")


@dataclass(frozen=True)
class Paraphrase:
    """A query with no word of the corpus, and the title phrase of the observations it means."""

    query: str
    means: str  # "<subject> in <place>", as every relevant observation's title holds it


def words(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9]+", text.lower()))


def paraphrase_queries(n: int = 30) -> list[Paraphrase]:
    rng = random.Random(30)
    pairs = sorted({(s, p) for s in SUBJECTS for p in PLACES})
    chosen = rng.sample(pairs, n)
    out = [Paraphrase(f"{SUBJECT_PARAPHRASES[s]} within the {PLACE_PARAPHRASES[p]}".replace(" the ", " "),
                      f"{s} in {p}") for s, p in chosen]
    shared = {q.query: words(q.query) & words(CORPUS_WORDS) for q in out}
    assert not any(shared.values()), f"paraphrases sharing words with the corpus: {shared}"
    return out
