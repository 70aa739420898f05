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


def test_a_filter_the_record_satisfies_never_empties_the_list(search_stub, notes):
    assert notes["Session cookie signing"] in found(search_stub, "cookie", obs_types=["bugfix"])
    assert notes["Bazel remote cache"] in found(search_stub, "bazel", obs_types=["feature"])


def test_or_finds_every_record_either_side_holds(search_stub, notes):
    """What `a OR b` adds from the vector leg depends on the embedding of the whole query, so only
    the records holding a side's words are pinned: each of those is in the OR list."""
    either = set(found(search_stub, "bazel OR oauth"))
    assert {notes["Bazel remote cache"], notes["OAuth device flow"]} <= either


@pytest.mark.parametrize("query", ["banana smoothie recipe", "kubernetes helm chart", "zanzibar"])
def test_words_found_nowhere_still_find_nothing(search_stub, notes, query):
    assert found(search_stub, query) == []


def test_a_partial_match_is_judged_by_similarity_once_the_index_has_embedded_it(search_stub, store_stub,
                                                                                 vector_stub, notes):
    """Unembedded means past the vector index's watermark, not 'missing from the neighbours and
    young': once synced, a record holding only some of the query's words needs similarity."""
    fresh = add_observation(store_stub, project="web", title="Quokka mascot",
                            narrative="the quokka mascot replaced the old banner")
    query = "quokka kubernetes helm chart"
    assert fresh in found(search_stub, query)  # not embedded yet: found by its words, unjudged
    sync_vectors(vector_stub)
    assert found(search_stub, query) == []  # embedded: a quarter of the words, far in meaning
    assert fresh in found(search_stub, "quokka mascot")  # every word: evidence
