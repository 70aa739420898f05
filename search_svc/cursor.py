"""mem_search cursors: the state of one search, kept in store_svc so any replica continues it.

A cursor holds the ordered result list of a search (fetched once, so pages never repeat
or skip a result), the position of the next page, and the ids already shown (the only
ids whose details may be fetched: filter-before-fetch enforced by the server). Tokens are
`ms_` + 24 URL-safe characters from `secrets` (144 random bits), opaque to the client.
Expiry slides: every use of a cursor pushes its expiry `ttl_ms` past the caller's clock.
"""

from __future__ import annotations

import base64
import json
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field, fields

from google.protobuf import json_format

from mnemo.errors import NotFound
from mnemo.privacy import clean
from mnemo.v1 import common_pb2, store_pb2
from mnemo.vocab import CONTINUATION_PREFIX, CONTINUATION_RANDOM_CHARS
from search_svc.backend import StoreClient

# How often a new search also purges expired cursors (a write of its own).
PURGE_EVERY_MS = 60_000
EXPIRED_MESSAGE = (
    "continuation: this search is unknown or has expired; start a new search "
    "(call mem_search with query and without continuation)"
)


def new_token() -> str:
    """`ms_` + 24 URL-safe characters (token_urlsafe(18) yields exactly 24 = 144 bits)."""
    return CONTINUATION_PREFIX + secrets.token_urlsafe(18)[:CONTINUATION_RANDOM_CHARS]


@dataclass
class SearchState:
    """Everything needed to continue a search; serialised as JSON into the store."""

    query: str
    project: str
    mode: str
    limit: int
    max_details: int
    strategy: str
    notice: str
    matches: int  # true total of the search, of which `rows` are the pageable best ones
    rows: list[str | dict] = field(default_factory=list)  # IndexRow (rows_to_json), in result order
    offset: int = 0  # index of the next row to show
    shown: list[str] = field(default_factory=list)  # ids shown so far (`#12`, `#S3`, `#P7`)
    created_at_epoch: int = 0  # when the search ran (kept across the re-saves that slide the expiry)

    def __post_init__(self) -> None:
        # The state is stored (cursors.state_json): the query and project it keeps are the
        # privacy-filtered ones, so a <private> region typed into a search reaches no file.
        self.query = clean(self.query)
        self.project = clean(self.project)

    def index_rows(self, start: int, stop: int) -> list[common_pb2.IndexRow]:
        return [_row(raw) for raw in self.rows[start:stop]]

    def mark_shown(self, ids: list[str]) -> None:
        for shown_id in ids:
            if shown_id not in self.shown:
                self.shown.append(shown_id)

    def to_json(self) -> str:
        # Not dataclasses.asdict: it deep-copies every row first (milliseconds per search).
        state = {item.name: getattr(self, item.name) for item in fields(self)}
        return json.dumps(state, separators=(",", ":"), ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str) -> SearchState:
        return cls(**json.loads(text))


def rows_to_json(rows: list[common_pb2.IndexRow]) -> list[str | dict]:
    """Each row as its protobuf encoding in base64: exact, half the size of a JSON object per
    row, and fast both ways (MessageToDict and ParseDict cost milliseconds per search)."""
    return [base64.b64encode(row.SerializeToString()).decode("ascii") for row in rows]


def _row(raw: str | dict) -> common_pb2.IndexRow:
    if isinstance(raw, dict):  # a cursor saved before rows were kept as protobuf bytes
        return json_format.ParseDict(raw, common_pb2.IndexRow())
    return common_pb2.IndexRow.FromString(base64.b64decode(raw))


class CursorStore:
    """Saves and loads SearchStates through StoreService's cursor RPCs."""

    def __init__(self, store: StoreClient, ttl_s: int, clock: Callable[[], int]):
        self.store = store
        self.ttl_ms = int(ttl_s) * 1000
        self.clock = clock
        self._purged_at: int | None = None

    def save(self, state: SearchState, token: str | None = None) -> str:
        """Write the state under `token` (sliding its expiry), or under a new token when None;
        returns the token. A new search is one store write: its first page is already in the
        state, and expired cursors are purged at most every PURGE_EVERY_MS."""
        now = self.clock()
        if token is None:
            self._purge_expired(now)
            token = new_token()
            state.created_at_epoch = now
        self.store.stub.SaveCursor(store_pb2.Cursor(token=token, state_json=state.to_json(),
                                                    created_at_epoch=state.created_at_epoch or now,
                                                    expires_at_epoch=now + self.ttl_ms))
        return token

    def _purge_expired(self, now: int) -> None:
        # An expired cursor can no longer be loaded (LoadCursor checks the time), so purging is
        # only housekeeping: it need not cost every new search a write of its own.
        if self._purged_at is None or now - self._purged_at >= PURGE_EVERY_MS:
            self.store.stub.PurgeCursors(store_pb2.PurgeCursorsRequest(now_epoch=now))
            self._purged_at = now

    def load(self, token: str) -> SearchState:
        try:
            cursor = self.store.stub.LoadCursor(store_pb2.LoadCursorRequest(token=token, now_epoch=self.clock()))
        except NotFound:
            raise NotFound(EXPIRED_MESSAGE) from None
        return SearchState.from_json(cursor.state_json)
