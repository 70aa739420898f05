"""Corpus names are each project's own (migration 12): a token confined to one project creates
a corpus under a name another project holds exactly as under a free one, and never meets, reads
or changes the other. A caller who sees both names the project when the name alone is ambiguous."""

from __future__ import annotations

import grpc
import pytest

from mnemo.v1 import store_pb2
from tests.conftest import BOTH_BACKENDS
from tests.service.store_svc.test_access import Team, fails, seed, team  # noqa: F401 (the fixture)

pytestmark = [pytest.mark.service, BOTH_BACKENDS]


def _corpus(project: str, name: str = "docs", description: str = "") -> store_pb2.Corpus:
    return store_pb2.Corpus(name=name, description=description, observation_ids=[1],
                            filter=store_pb2.CorpusFilter(project=project))


def _comparable(corpus: store_pb2.Corpus) -> store_pb2.Corpus:
    """A reply without what differs from one call to the next: the clock and the name."""
    copy = store_pb2.Corpus()
    copy.CopyFrom(corpus)
    copy.created_at_epoch = copy.updated_at_epoch = 0
    copy.name = ""
    return copy


def test_a_name_held_by_another_project_is_created_exactly_like_a_free_one(team: Team):  # noqa: F811
    team.bob.PutCorpus(_corpus("beta", description="bob's notes"))
    taken = team.alice.PutCorpus(_corpus("alpha"))  # "docs" is bob's in beta
    free = team.alice.PutCorpus(_corpus("alpha", name="docs-free"))
    assert taken.filter.project == "alpha" and taken.description == ""
    assert _comparable(taken) == _comparable(free)
    # Each sees its own, and only its own; neither write touched the other's corpus.
    assert team.alice.GetCorpus(store_pb2.GetCorpusRequest(name="docs")).filter.project == "alpha"
    assert team.bob.GetCorpus(store_pb2.GetCorpusRequest(name="docs")).description == "bob's notes"
    assert [(c.filter.project, c.name) for c in team.alice.ListCorpora(store_pb2.ListCorporaRequest()).corpora] == [
        ("alpha", "docs"), ("alpha", "docs-free")]
    assert [(c.filter.project, c.name) for c in team.bob.ListCorpora(store_pb2.ListCorporaRequest()).corpora] == [
        ("beta", "docs")]


def test_updates_and_history_stay_in_the_callers_project(team: Team):  # noqa: F811
    team.bob.PutCorpus(_corpus("beta"))
    team.alice.PutCorpus(_corpus("alpha"))
    turn = store_pb2.CorpusTurn(question="what?", answer="this", citations=[1])
    team.alice.UpdateCorpus(store_pb2.UpdateCorpusRequest(name="docs", priming_state="primed", append_turn=turn))
    mine = team.alice.GetCorpus(store_pb2.GetCorpusRequest(name="docs"))
    theirs = team.bob.GetCorpus(store_pb2.GetCorpusRequest(name="docs"))
    assert (mine.priming_state, len(mine.history)) == ("primed", 1)
    assert (theirs.priming_state, len(theirs.history)) == ("unprimed", 0)
    # Naming the other project is no way in: it answers like a name nobody holds.
    hidden = fails(team.alice.GetCorpus, store_pb2.GetCorpusRequest(name="docs", project="beta"),
                   code=grpc.StatusCode.NOT_FOUND)
    unknown = fails(team.alice.GetCorpus, store_pb2.GetCorpusRequest(name="docs", project="gamma"),
                    code=grpc.StatusCode.NOT_FOUND)
    assert hidden == unknown == "corpus 'docs' not found; list_corpora shows the existing ones"
    fails(team.alice.UpdateCorpus, store_pb2.UpdateCorpusRequest(name="docs", project="beta", digest_json="{}"),
          code=grpc.StatusCode.NOT_FOUND)


def test_a_caller_who_sees_both_names_the_project(team: Team):  # noqa: F811
    team.bob.PutCorpus(_corpus("beta"))
    team.alice.PutCorpus(_corpus("alpha"))
    message = fails(team.admin.GetCorpus, store_pb2.GetCorpusRequest(name="docs"),
                    code=grpc.StatusCode.INVALID_ARGUMENT)
    assert "project" in message and "'alpha'" in message and "'beta'" in message and "name the project" in message
    assert team.admin.GetCorpus(store_pb2.GetCorpusRequest(name="docs", project="beta")).filter.project == "beta"
    # A corpus over all projects is the one an empty project names.
    team.admin.PutCorpus(_corpus("", description="everything"))
    assert team.admin.GetCorpus(store_pb2.GetCorpusRequest(name="docs")).description == "everything"
    assert team.alice.GetCorpus(store_pb2.GetCorpusRequest(name="docs")).filter.project == "alpha"


def test_forgetting_a_project_drops_only_its_own_corpus_of_a_shared_name(team: Team):  # noqa: F811
    seed(team.alice, "alpha", "alice-1")
    team.bob.PutCorpus(_corpus("beta"))
    team.alice.PutCorpus(_corpus("alpha"))
    team.alice.UpdateCorpus(store_pb2.UpdateCorpusRequest(
        name="docs", append_turn=store_pb2.CorpusTurn(question="q", answer="a")))
    team.admin.Forget(store_pb2.ForgetRequest(project="alpha"))
    fails(team.alice.GetCorpus, store_pb2.GetCorpusRequest(name="docs"), code=grpc.StatusCode.NOT_FOUND)
    assert team.bob.GetCorpus(store_pb2.GetCorpusRequest(name="docs")).filter.project == "beta"
