"""The relevance floor on evidence (issue 32), over the real stack with the calibrated model
(minilm-int8): a record holding the query's words is a match whatever its similarity; what only
the vector leg finds still has to reach the gate, so words found nowhere still find nothing."""

from __future__ import annotations

import pytest

from mnemo.config import Settings, with_overrides
from mnemo.v1 import search_pb2
from tests.conftest import add_observation, sync_vectors

pytestmark = [pytest.mark.service, pytest.mark.chroma]

# Short queries embed far from any whole record: their similarity stays under the gate, so only
# lexical evidence can find these records.
NOTES = [
    ("bugfix", "Session cookie signing", "SecureCookieSession now signs the cookie with itsdangerous."),
    ("bugfix", "Login redirect loop", "test_login_redirect covers the redirect after a failed login."),
    ("feature", "Bazel remote cache", "The bazel build uses a remote cache on the CI runners."),
    ("feature", "OAuth device flow", "Added the oauth device flow for command-line logins."),
    ("discovery", "Config home", "MNEMO_HOME decides where the database and the logs live."),
    ("change", "Dependency bump", "Bumped the web framework and its test client to the latest release."),
]


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return with_overrides(settings, embedder="minilm-int8")


@pytest.fixture
def notes(store_stub, vector_stub) -> dict[str, int]:
    made = {title: add_observation(store_stub, project="web", type=kind, title=title, narrative=text)
            for kind, title, text in NOTES}
    sync_vectors(vector_stub)
    return made


def found(search_stub, query: str, **fields) -> list[int]:
    reply = search_stub.Search(search_pb2.SearchRequest(query=query, project="web", **fields))
    assert reply.counts.total == len(reply.rows) or len(reply.rows) == 20
    return [row.ref.id for row in reply.rows]


@pytest.mark.parametrize(("query", "title"), [
    ("itsdangerous", "Session cookie signing"),
    ("cookie", "Session cookie signing"),
    ("bazel", "Bazel remote cache"),
    ("SecureCookieSession", "Session cookie signing"),
    ("test_login_redirect", "Login redirect loop"),
    ("MNEMO_HOME", "Config home"),
    ("remote cache", "Bazel remote cache"),
])
def test_a_word_or_identifier_the_record_holds_finds_it(search_stub, notes, query, title):
    assert notes[title] in found(search_stub, query)[:10]


@pytest.fixture
def handling(store_stub, vector_stub) -> list[int]:
    """A word most records hold: bm25 gives it next to nothing (issue 32: "handling" was in 160 of
    166 titles and found nothing), so only evidence can find them."""
    made = [add_observation(store_stub, project="api", type="bugfix" if i % 2 else "change",
                            title=f"Error handling in the {part}", narrative=f"The {part} now reports failures.")
            for i, part in enumerate(("parser", "router", "uploader", "scheduler", "mailer", "exporter", "cache"))]
    add_observation(store_stub, project="api", title="Release notes", narrative="Version 2 is out.")
    sync_vectors(vector_stub)
    return made


def test_a_word_most_records_hold_finds_every_one_of_them(search_stub, handling):
    reply = search_stub.Search(search_pb2.SearchRequest(query="handling", project="api"))
    assert set(handling) <= {row.ref.id for row in reply.rows}
    bugfixes = search_stub.Search(search_pb2.SearchRequest(query="handling", project="api", obs_types=["bugfix"]))
    assert {row.ref.id for row in bugfixes.rows} == set(handling[1::2])  # the filter narrows, never empties


def test_a_filter_the_record_satisfies_never_empties_the_list(search_stub, notes):
    assert notes["Session cookie signing"] in found(search_stub, "cookie", obs_types=["bugfix"])
    assert notes["Bazel remote cache"] in found(search_stub, "bazel", obs_types=["feature"])


def test_or_finds_every_record_either_side_holds(search_stub, notes):
    either = set(found(search_stub, "bazel OR oauth"))
    assert {notes["Bazel remote cache"], notes["OAuth device flow"]} <= either


PARAPHRASE = "application launches sluggishly"  # shares no word with the note it finds by meaning


@pytest.mark.parametrize(("side", "other"), [(PARAPHRASE, "bazel"), ("bazel", PARAPHRASE), (PARAPHRASE, "zanzibar")])
def test_or_never_finds_less_than_either_side_even_by_meaning(search_stub, store_stub, vector_stub, notes,
                                                              side, other):
    """`a OR b` embeds each side on its own: a record only the vector leg finds for one side is
    found by the OR too (embedded whole, "... OR bazel" sat far from it)."""
    slow = add_observation(store_stub, project="web", type="bugfix", title="Slow startup",
                           narrative="The service took forty seconds to boot: it loaded every plugin eagerly.")
    sync_vectors(vector_stub)
    assert slow in found(search_stub, PARAPHRASE)  # by meaning alone
    either = set(found(search_stub, f"{side} OR {other}"))
    assert set(found(search_stub, side)) | set(found(search_stub, other)) <= either


@pytest.mark.parametrize("query", ["banana smoothie recipe", "kubernetes helm chart", "zanzibar"])
def test_words_found_nowhere_still_find_nothing(search_stub, notes, query):
    assert found(search_stub, query) == []


def test_a_record_not_embedded_yet_is_a_match_by_most_of_the_query_not_by_one_word(search_stub, store_stub,
                                                                                   vector_stub, notes):
    """Until the vector index embeds a record (past its watermark) the floor has no similarity to
    judge it by: it is a match when it holds three quarters of what the query names, never by one
    word of four (right after a burst of saves, every record holding one word of a question passed).
    Once embedded, a record holding only some of the query's words needs similarity."""
    fresh = add_observation(store_stub, project="web", title="Quokka mascot",
                            narrative="the quokka mascot replaced the old banner")
    query = "quokka kubernetes helm chart"
    assert fresh in found(search_stub, "quokka mascot replaced old banner kubernetes")  # not embedded: five of six
    assert found(search_stub, query) == []  # not embedded yet: a quarter of the words
    sync_vectors(vector_stub)
    assert found(search_stub, query) == []  # embedded: a quarter of the words, far in meaning
    assert fresh in found(search_stub, "quokka mascot")  # every word: evidence


def test_observations_holding_a_keyword_rank_above_prompts_that_asked_about_it(search_stub, store_stub,
                                                                               vector_stub, notes):
    """Issue 32: for a keyword many records hold, mnemo returned mostly prompts: a short prompt sits
    close to a short query in meaning and passed the similarity gate, while the observations that
    hold the word (long, far in meaning) were dropped. With evidence they are matches, and rank first."""
    from mnemo.v1 import store_pb2

    stories = ["Two workers took the artifact cache lock and the upload lock in opposite order",
               "The connection pool waited on itself when a request held a session while opening another",
               "The migration held a table lock while the background job waited for a row lock it needed",
               "A signal handler logged through a lock the interrupted thread was already holding"]
    held = {add_observation(store_stub, project="web", type="bugfix", title=f"Stall number {i}",
                            narrative=f"{story}: a deadlock. The stall was fixed by ordering the locks; the runs "
                                      "now finish in time and the timeouts in the nightly job are gone for good.")
            for i, story in enumerate(stories)}
    for text in ("deadlock again", "another deadlock", "deadlock in the build", "deadlock", "the deadlock is back"):
        store_stub.RecordPrompt(store_pb2.RecordPromptRequest(content_session_id="c1", project="web",
                                                              prompt_text=text))
    sync_vectors(vector_stub)
    reply = search_stub.Search(search_pb2.SearchRequest(query="deadlock", project="web"))
    kinds = [row.display_id[:2] for row in reply.rows]
    assert {row.ref.id for row in reply.rows[:len(held)]} == held
    assert kinds.count("#P") == reply.counts.prompts == 5  # still found: they hold the word
