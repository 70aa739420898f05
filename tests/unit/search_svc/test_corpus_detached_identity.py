"""A corpus job records its outcome outside the RPC's deadline (`detached`), yet still as the
caller: the store must see the caller's token there, never search_svc's service token (with
which a job of alice's could write onto, say, a corpus of bob's that took the name meanwhile)."""

from __future__ import annotations

from mnemo import identity
from mnemo.rpc_context import remaining_budget, time_remaining
from search_svc.corpus.records import detached


def test_a_detached_call_keeps_the_caller_but_not_the_deadline():
    alice = identity.Identity("alice", frozenset({"alpha"}))
    tokens = (identity.caller_token.set("mnemo_alice"), identity.current.set(alice),
              time_remaining.set(lambda: 0.0))
    try:
        seen = detached(lambda: (identity.caller_token.get(), identity.get(), remaining_budget()))
    finally:
        time_remaining.reset(tokens[2])
        identity.current.reset(tokens[1])
        identity.caller_token.reset(tokens[0])
    assert seen == ("mnemo_alice", alice, None)
    assert detached(lambda: (identity.caller_token.get(), identity.get())) == ("", None)  # the local stack
