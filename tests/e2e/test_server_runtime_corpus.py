"""Corpus tools through MCP in the server runtime, with every kind of token: the service
token, a user token of the corpus's project, a user token of every project, and a user
token of another project (which must not learn the corpus exists)."""

from __future__ import annotations

import anyio
import pytest

from tests.server_runtime_support import team_with_token_kinds, write_token_file
from tests.service.gateway.mcp_support import gateway_env, mcp_session, result_text

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

SERVICE_TOKEN = "corpus-service-token-91c2"
CORPUS_TOOLS = ("build_corpus", "prime_corpus", "query_corpus", "reprime_corpus")


@pytest.fixture(scope="module")
def team():
    """A team server with user tokens: (server, {kind: secret})."""
    with team_with_token_kinds(SERVICE_TOKEN, [f"Harbor deploys use blue-green switch {n}" for n in range(3)]) as team:
        yield team


def _env(settings, server, secret: str, name: str) -> dict[str, str]:
    token_file = write_token_file(settings.home, secret)
    token_file.rename(settings.home / f"{name}.token")
    return gateway_env(settings, MNEMO_SERVER_URL=server.url, MNEMO_TOKEN_FILE=str(settings.home / f"{name}.token"))


@pytest.mark.parametrize("kind", ["service", "project", "all"])
def test_prime_query_and_reprime_work_through_mcp_with_every_token_that_may(settings, team, kind):
    server, secrets = team
    corpus = f"harbor-{kind}"

    async def scenario():
        async with mcp_session(_env(settings, server, secrets[kind], kind)) as session:
            built = await session.call_tool("build_corpus", {"name": corpus, "project": "harbor"})
            assert not built.is_error, result_text(built)
            for tool in ("prime_corpus", "reprime_corpus"):
                primed = await session.call_tool(tool, {"name": corpus})
                assert not primed.is_error, f"{tool}: {result_text(primed)}"
            asked = await session.call_tool("query_corpus", {"name": corpus, "question": "how do deploys switch?"})
            assert not asked.is_error, result_text(asked)

    anyio.run(scenario)


def test_a_token_of_another_project_gets_not_found_for_every_corpus_tool(settings, team):
    server, secrets = team

    async def scenario():
        async with mcp_session(_env(settings, server, secrets["project"], "owner")) as session:
            built = await session.call_tool("build_corpus", {"name": "harbor-private", "project": "harbor"})
            assert not built.is_error, result_text(built)
        async with mcp_session(_env(settings, server, secrets["other"], "intruder")) as session:
            for tool in ("prime_corpus", "reprime_corpus", "query_corpus"):
                args = {"name": "harbor-private"} | ({"question": "what?"} if tool == "query_corpus" else {})
                refused = await session.call_tool(tool, args)
                assert refused.is_error and "NOT_FOUND" in result_text(refused), f"{tool}: {result_text(refused)}"
                # A name held in another project answers exactly like a name held nowhere.
                unknown = await session.call_tool(tool, args | {"name": "harbor-nothing"})
                assert result_text(unknown).replace("harbor-nothing", "harbor-private") == result_text(refused)

    anyio.run(scenario)


def test_a_name_held_by_another_project_is_free_for_a_confined_token(settings, team):
    """Names are each project's own: the intruder builds under the owner's name exactly as under
    a free one, and the owner's corpus (its snapshot, its index) stays as it was."""
    server, secrets = team

    async def scenario():
        async with mcp_session(_env(settings, server, secrets["project"], "owner2")) as session:
            built = await session.call_tool("build_corpus", {"name": "harbor-shared", "project": "harbor"})
            assert not built.is_error, result_text(built)
            primed = await session.call_tool("prime_corpus", {"name": "harbor-shared"})
            assert not primed.is_error, result_text(primed)
        async with mcp_session(_env(settings, server, secrets["other"], "intruder2")) as session:
            taken = await session.call_tool("build_corpus", {"name": "harbor-shared", "project": "elsewhere"})
            free = await session.call_tool("build_corpus", {"name": "elsewhere-free", "project": "elsewhere"})
            assert not taken.is_error, result_text(taken)
            assert result_text(taken).replace("harbor-shared", "elsewhere-free") == result_text(free)
            listed = result_text(await session.call_tool("list_corpora", {}))
            assert "harbor-shared" in listed and "blue-green" not in listed
        async with mcp_session(_env(settings, server, secrets["project"], "owner3")) as session:
            asked = await session.call_tool("query_corpus", {"name": "harbor-shared",
                                                             "question": "how do deploys switch?"})
            assert not asked.is_error and "blue-green" in result_text(asked), result_text(asked)
        async with mcp_session(_env(settings, server, secrets["all"], "all2")) as session:
            # A token of both projects names the one it means.
            ambiguous = await session.call_tool("query_corpus", {"name": "harbor-shared", "question": "deploys?"})
            assert ambiguous.is_error and "name the project" in result_text(ambiguous), result_text(ambiguous)
            chosen = await session.call_tool("query_corpus", {"name": "harbor-shared", "project": "harbor",
                                                              "question": "how do deploys switch?"})
            assert not chosen.is_error and "blue-green" in result_text(chosen), result_text(chosen)

    anyio.run(scenario)
