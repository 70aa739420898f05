"""bench/known_items.py's path comparison: the CLI's sample is spread over each class and read
against MCP's answers to the very same queries (issue 32: the CLI's "absent two words" figure
was the first 10-25 queries of the class, where 2 of its 7 failures sat)."""

from __future__ import annotations

from bench.known_items import Query, Tally, path_agreement, spread_sample


def _queries(kind: str, n: int) -> list[Query]:
    return [Query(kind, f"{kind} {i}", None) for i in range(n)]


def test_the_cli_sample_is_spread_over_the_whole_class():
    queries = _queries("absent word", 200) + _queries("absent two words", 7)
    sample = spread_sample(queries, 25)
    words = [q for q in sample if q.kind == "absent word"]
    assert len(words) == 25 and words[0].text == "absent word 0" and words[-1].text == "absent word 192"
    assert [q.text for q in sample if q.kind == "absent two words"] == [f"absent two words {i}" for i in range(7)]


def test_path_agreement_reads_the_sample_against_mcp_on_the_same_queries():
    mcp = {kind: Tally() for kind in ("rare word", "identifier", "two words", "filtered", "absent word",
                                      "absent two words")}
    cli = {kind: Tally() for kind in mcp}
    queries = _queries("absent two words", 4)
    for q, ok in zip(queries, (False, True, True, True), strict=True):
        mcp["absent two words"].add(q, ok, 1.0)
    cli["absent two words"].add(queries[0], False, 1.0)  # answered alike: both found something
    cli["absent two words"].add(queries[1], False, 1.0)  # answered differently
    alike, asked, rate = path_agreement(mcp, cli)["absent two words"]
    assert (alike, asked, rate) == (1, 2, 0.5)
