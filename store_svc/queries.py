"""Read-side SQL of the store: filters, full-text search, listings, hydration, timelines.

Everything here is built from fixed SQL fragments and `?` parameters. User text reaches
SQLite only as parameters, and FTS5 expressions come from mnemo.query (quoted tokens).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from mnemo.query import ParsedQuery, like_pattern
from mnemo.v1 import common_pb2
from mnemo.vocab import KIND_OBSERVATION as OBSERVATION
from mnemo.vocab import KIND_PROMPT as PROMPT
from mnemo.vocab import KIND_SUMMARY as SUMMARY
from mnemo.vocab import OBSERVATION_TEXT_FIELDS, SUMMARY_FIELDS
from store_svc import convert, terms
from store_svc.dialect import Conn, Dialect, Row


def _chars(alias: str, columns: Sequence[str]) -> str:
    return " + ".join(f"length(coalesce({alias}.{c}, ''))" for c in columns)


# Where a kind's index columns put the first file of its JSON file lists, and the last characters
# of its main text (both dialect-specific).
_FIRST_FILE = "@FIRST_FILE@"
_ENDING = "@ENDING@"
_HEAD = "@HEAD@"
ENDING_CHARS = 16  # enough for a question mark behind trailing whitespace (convert.asks)


@dataclass(frozen=True)
class KindSql:
    """How one record kind is queried."""

    kind: int
    table: str
    alias: str
    text_columns: tuple[str, ...]
    bm25_weights: tuple[float, ...]
    session_join: str
    project: str
    file_columns: tuple[str, ...]
    index_columns: str
    title_column: str
    """The text column shown as the kind's title: what `title:word` restricts to."""
    body: str = "''"
    """SQL for the record's main text: its ending tells whether it asks (convert.asks), its words how
    specific it is (store_svc.terms); '' for summaries, which neither ask nor are counted."""

    def index_select(self, dialect: Dialect) -> str:
        """index_columns with the dialect's expressions for the first file and the body's ends."""
        columns = (self.index_columns.replace(_ENDING, dialect.last_chars(self.body, ENDING_CHARS))
                   .replace(_HEAD, f"substr({self.body}, 1, {terms.TERMS_CHARS})"))
        if len(self.file_columns) < 2:
            return columns
        a, (primary, secondary) = self.alias, self.file_columns
        first = f"coalesce({dialect.json_first(f'{a}.{secondary}')}, {dialect.json_first(f'{a}.{primary}')}, '')"
        return columns.replace(_FIRST_FILE, first)

    @property
    def columns(self) -> dict[str, str]:
        """mnemo.query.COLUMNS names -> this kind's FTS5 columns (fixed names from code)."""
        return {**{c.removesuffix("_text"): c for c in self.text_columns}, "title": self.title_column}

    @property
    def fts(self) -> str:
        return f"{self.table}_fts"

    @property
    def tri(self) -> str:
        return f"{self.table}_tri"


_OBS_TEXT = OBSERVATION_TEXT_FIELDS
_SUM_TEXT = SUMMARY_FIELDS

KINDS: dict[int, KindSql] = {
    OBSERVATION: KindSql(
        OBSERVATION, "observations", "o", _OBS_TEXT, (8.0, 4.0, 1.0, 1.0, 2.0, 2.0),
        "LEFT JOIN sdk_sessions ss ON ss.id = o.session_db_id", "o.project",
        ("files_read", "files_modified"),
        f"""{OBSERVATION} AS kind, o.id AS id, o.type AS type,
            coalesce(nullif(o.title, ''), substr(coalesce(nullif(o.subtitle, ''), nullif(o.narrative, ''),
              o.text, ''), 1, 120)) AS title,
            o.created_at AS created_at, o.created_at_epoch AS created_at_epoch,
            ({_chars('o', _OBS_TEXT)}) AS chars, o.project AS project,
            {_FIRST_FILE} AS file, {_ENDING} AS ending, {_HEAD} AS head""", "title",
        terms.BODIES["observations"].format(r="o"),
    ),
    SUMMARY: KindSql(
        SUMMARY, "session_summaries", "s", _SUM_TEXT, (4.0, 1.0, 1.0, 1.0, 1.0, 1.0),
        "LEFT JOIN sdk_sessions ss ON ss.id = s.session_db_id", "s.project",
        ("files_read", "files_edited"),
        f"""{SUMMARY} AS kind, s.id AS id, 'session' AS type,
            coalesce(nullif(s.request, ''), substr(coalesce(nullif(s.completed, ''), s.learned, ''), 1, 120))
              AS title,
            s.created_at AS created_at, s.created_at_epoch AS created_at_epoch,
            ({_chars('s', _SUM_TEXT)}) AS chars, s.project AS project,
            {_FIRST_FILE} AS file, {_ENDING} AS ending, {_HEAD} AS head""", "request",
    ),
    PROMPT: KindSql(
        PROMPT, "user_prompts", "p", ("prompt_text",), (1.0,),
        "LEFT JOIN sdk_sessions ss ON ss.id = p.session_db_id", "ss.project", (),
        f"""{PROMPT} AS kind, p.id AS id, 'prompt' AS type, substr(p.prompt_text, 1, 120) AS title,
            p.created_at AS created_at, p.created_at_epoch AS created_at_epoch,
            length(p.prompt_text) AS chars, coalesce(ss.project, '') AS project, '' AS file,
            {_ENDING} AS ending, {_HEAD} AS head""", "prompt_text", terms.BODIES["user_prompts"].format(r="p"),
    ),
}

ORDER_SQL: dict[int, str] = {  # keyed by common_pb2.Order values (ints on the wire)
    # Ties on score fall back to kind, then newest id: no table lookup is needed to rank.
    common_pb2.ORDER_RELEVANCE: "score DESC, kind ASC, id DESC",
    common_pb2.ORDER_DATE_DESC: "epoch DESC, kind ASC, id DESC",
    common_pb2.ORDER_DATE_ASC: "epoch ASC, kind ASC, id ASC",
}


@dataclass
class Clause:
    """A WHERE fragment with its parameters."""

    sql: list[str]
    params: list[object]

    def add(self, sql: str, *params: object) -> None:
        self.sql.append(sql)
        self.params.extend(params)

    def render(self) -> str:
        return " AND ".join(self.sql) if self.sql else "TRUE"


def union_branches(branches: list[tuple[str, list]], scored: bool) -> tuple[str, list] | None:
    """One match source from a dialect's branches (SQL, params): ids, or ids with their summed score."""
    if not branches:
        return None
    if len(branches) == 1:
        return branches[0]
    params = [p for b in branches for p in b[1]]
    if not scored:
        return " UNION ".join(b[0] for b in branches), params
    sql = " UNION ALL ".join(b[0] for b in branches)
    return f"SELECT id, sum(score) AS score FROM ({sql}) u GROUP BY id", params


def _placeholders(values: Sequence) -> str:
    return ", ".join("?" for _ in values)


def not_marked_wrong(kind: int, id_sql: str, filters: common_pb2.Filters) -> str:
    """SQL true for rows the owner has not marked wrong (always true when the filters ask for
    marked records too). `kind` and `id_sql` come from code, never from a request."""
    if filters.include_marked_wrong:
        return "TRUE"
    return f"NOT EXISTS (SELECT 1 FROM marked_wrong w WHERE w.kind = {int(kind)} AND w.record_id = {id_sql})"


def kind_applies(spec: KindSql, filters: common_pb2.Filters) -> bool:
    """Whether records of this kind can pass the filters at all."""
    if filters.kinds and spec.kind not in filters.kinds:
        return False
    if (filters.obs_types or filters.concepts) and spec.kind != OBSERVATION:
        return False
    return not (filters.files and not spec.file_columns)


def filter_clause(spec: KindSql, filters: common_pb2.Filters, dialect: Dialect) -> Clause:
    """Every filter as SQL over the kind's table (alias) joined to its session (ss)."""
    a = spec.alias
    clause = Clause([], [])
    if filters.project:
        clause.add(f"{spec.project} = ?", filters.project)
    if filters.scope_projects:  # the caller's token scope (store_svc.access sets it; never a client)
        clause.add(f"{spec.project} IN ({_placeholders(filters.scope_projects)})", *filters.scope_projects)
    if filters.platform_source:
        clause.add("ss.platform_source = ?", filters.platform_source)
    if filters.obs_types:
        clause.add(f"{a}.type IN ({_placeholders(filters.obs_types)})", *filters.obs_types)
    if filters.concepts:
        clause.add(
            f"EXISTS (SELECT 1 FROM {dialect.json_values(f'{a}.concepts')} "
            f"WHERE value IN ({_placeholders(filters.concepts)}))",
            *filters.concepts,
        )
    if filters.files:
        tests, params = [], []
        for column in spec.file_columns:
            for fragment in filters.files:
                tests.append(
                    f"EXISTS (SELECT 1 FROM {dialect.json_values(f'{a}.{column}')} "
                    f"WHERE value LIKE ? ESCAPE '\\')"
                )
                params.append(like_pattern(fragment))
        clause.add("(" + " OR ".join(tests) + ")", *params)
    if filters.date_start_epoch:
        clause.add(f"{a}.created_at_epoch >= ?", filters.date_start_epoch)
    if filters.date_end_epoch:
        clause.add(f"{a}.created_at_epoch <= ?", filters.date_end_epoch)
    return clause


@dataclass
class Branch:
    """One kind's rows passing query and filters: a page query and a cheaper count query."""

    rows_sql: str
    rows_params: list
    count_sql: str
    count_params: list


def _branch(spec: KindSql, filters: common_pb2.Filters, parsed: ParsedQuery | None, conn: Conn,
            by_relevance: bool = False) -> Branch | None:
    if not kind_applies(spec, filters):
        return None
    dialect = conn.dialect
    a = spec.alias
    clause = filter_clause(spec, filters, dialect)
    if parsed is not None and parsed.has_exclusions:
        dialect.exclusion_clause(spec, parsed, clause)
    where = f"{clause.render()} AND {not_marked_wrong(spec.kind, f'{a}.id', filters)}"
    unmarked = not_marked_wrong(spec.kind, "m.id", filters)
    if parsed is not None and not parsed.is_empty:
        source = dialect.match_source(spec, parsed, conn=conn)
        ids = dialect.match_source(spec, parsed, scored=False)
        if source is None or ids is None:
            return None
        # CROSS JOIN keeps the full-text matches as the outer loop. With a plain JOIN and a
        # filter such as project, SQLite may scan the filter's index and re-run the MATCH for
        # every row it visits: seconds instead of milliseconds on a large store.
        rows = (f"SELECT {spec.kind} AS kind, {a}.id AS id, {a}.created_at_epoch AS epoch, m.score AS score "
                f"FROM ({source[0]}) m {dialect.join_matches} {spec.table} {a} ON {a}.id = m.id {spec.session_join} "
                f"WHERE {where}")
        if by_relevance and not clause.sql:
            # Nothing to filter and no time order: rank straight off the index, no row lookups.
            rows = (f"SELECT {spec.kind} AS kind, m.id AS id, 0 AS epoch, m.score AS score FROM ({source[0]}) m "
                    f"WHERE {unmarked}")
        if clause.sql:
            count = (f"SELECT count(*) FROM ({ids[0]}) m {dialect.join_matches} {spec.table} {a} ON {a}.id = m.id "
                     f"{spec.session_join} WHERE {where}")
        else:
            count = f"SELECT count(*) FROM ({ids[0]}) m WHERE {unmarked}"
        return Branch(rows, source[1] + clause.params, count, ids[1] + clause.params)
    rows = (f"SELECT {spec.kind} AS kind, {a}.id AS id, {a}.created_at_epoch AS epoch, 0.0 AS score "
            f"FROM {spec.table} {a} {spec.session_join} WHERE {where}")
    count = f"SELECT count(*) FROM {spec.table} {a} {spec.session_join} WHERE {where}"
    return Branch(rows, clause.params, count, clause.params)


@dataclass
class Hit:
    kind: int
    id: int
    score: float


@dataclass
class ResultPage:
    hits: list[Hit]
    totals: dict[int, int]


def find(conn: Conn, filters: common_pb2.Filters, parsed: ParsedQuery | None,
         order: int, limit: int, offset: int) -> ResultPage:
    """One page of matching records plus true totals per kind.

    `parsed` None means a listing (no query text). Each kind's branch is cut to
    offset+limit rows in the final order before the merge, so the merge sorts little.
    """
    listing = parsed is None or parsed.is_empty  # no text, or only exclusions: nothing to rank by
    by_relevance = not listing and order == common_pb2.ORDER_RELEVANCE
    branches = {k: b for k, spec in KINDS.items()
                if (b := _branch(spec, filters, parsed, conn, by_relevance)) is not None}
    totals = {k: 0 for k in KINDS}
    if not branches:
        return ResultPage([], totals)
    for kind, branch in branches.items():
        totals[kind] = conn.execute(branch.count_sql, branch.count_params).fetchone()[0]
    order_sql = ORDER_SQL.get(order, ORDER_SQL[common_pb2.ORDER_RELEVANCE])
    if listing and order == common_pb2.ORDER_RELEVANCE:
        order_sql = ORDER_SQL[common_pb2.ORDER_DATE_DESC]
    wanted = [k for k in branches if totals[k]]
    if not wanted or limit <= 0:
        return ResultPage([], totals)
    parts = [f"SELECT * FROM ({branches[k].rows_sql} ORDER BY {order_sql} LIMIT {offset + limit})" for k in wanted]
    params = [p for k in wanted for p in branches[k].rows_params]
    rows = conn.execute(
        f"SELECT kind, id, score FROM ({' UNION ALL '.join(parts)}) ORDER BY {order_sql} LIMIT ? OFFSET ?",
        [*params, limit, offset],
    ).fetchall()
    # float(): PostgreSQL hands numeric constants back as Decimal.
    return ResultPage([Hit(r["kind"], r["id"], float(r["score"])) for r in rows], totals)


def index_rows(conn: Conn, refs: Iterable[tuple[int, int]],
               filters: common_pb2.Filters | None = None) -> dict[tuple[int, int], Row]:
    """Index-row columns of the given (kind, id) refs that pass the filters."""
    filters = filters or common_pb2.Filters()
    wanted: dict[int, list[int]] = {}
    for kind, rid in refs:
        wanted.setdefault(kind, []).append(rid)
    found: dict[tuple[int, int], Row] = {}
    for kind, ids in wanted.items():
        spec = KINDS.get(kind)
        if spec is None or not kind_applies(spec, filters):
            continue
        clause = filter_clause(spec, filters, conn.dialect)
        sql = (f"SELECT {spec.index_select(conn.dialect)} FROM {spec.table} {spec.alias} {spec.session_join} "
               f"WHERE {spec.alias}.id IN ({_placeholders(ids)}) AND {clause.render()} "
               f"AND {not_marked_wrong(kind, f'{spec.alias}.id', filters)}")
        for row in conn.execute(sql, [*ids, *clause.params]):
            found[(kind, row["id"])] = row
    return found


def specificities(conn: Conn, rows: Iterable[Row]) -> dict[tuple[int, int], float]:
    """(kind, id) -> the record's specificity (store_svc.terms) from index rows' heads: one lookup
    of their words' counts in term_stats."""
    words = {(row["kind"], row["id"]): terms.terms(row["head"] or "") for row in rows}
    test, values = conn.dialect.one_of("term", sorted(set().union(*words.values()) | {terms.CORPUS_SIZE_TERM}))
    docs = dict(conn.execute(f"SELECT term, docs FROM term_stats WHERE {test}", (values,)).fetchall())
    return terms.specificities(words, docs, docs.get(terms.CORPUS_SIZE_TERM, 0))


_RECORD_SQL: dict[int, str] = {  # keyed by DocKind values
    OBSERVATION: "SELECT o.*, ss.platform_source AS platform_source FROM observations o "
                 "LEFT JOIN sdk_sessions ss ON ss.id = o.session_db_id WHERE o.id IN ({})",
    SUMMARY: "SELECT s.*, ss.platform_source AS platform_source FROM session_summaries s "
             "LEFT JOIN sdk_sessions ss ON ss.id = s.session_db_id WHERE s.id IN ({})",
    PROMPT: "SELECT p.*, ss.project AS project, ss.memory_session_id AS memory_session_id, "
            "ss.platform_source AS platform_source FROM user_prompts p "
            "LEFT JOIN sdk_sessions ss ON ss.id = p.session_db_id WHERE p.id IN ({})",
}


def tool_use_links(conn: Conn, column: str, ids: Sequence[int]) -> dict[int, list[int]]:
    """observation id -> tool-use ids (column='observation_id') or the reverse (column='tool_use_id')."""
    other = "tool_use_id" if column == "observation_id" else "observation_id"
    links: dict[int, list[int]] = {}
    if not ids:
        return links
    sql = (f"SELECT {column} AS k, {other} AS v FROM observation_tool_uses WHERE {column} IN "
           f"({_placeholders(ids)}) ORDER BY {other}")
    for row in conn.execute(sql, list(ids)):
        links.setdefault(row["k"], []).append(row["v"])
    return links


def records(conn: Conn, refs: Iterable[tuple[int, int]],
            project: str = "") -> dict[tuple[int, int], common_pb2.Record]:
    """Full records of the given refs (optionally only those of one project)."""
    wanted: dict[int, list[int]] = {}
    for kind, rid in refs:
        wanted.setdefault(kind, []).append(rid)
    found: dict[tuple[int, int], common_pb2.Record] = {}
    for kind, ids in wanted.items():
        if kind not in _RECORD_SQL or not ids:
            continue
        rows = conn.execute(_RECORD_SQL[kind].format(_placeholders(ids)), ids).fetchall()
        links = tool_use_links(conn, "observation_id", [r["id"] for r in rows]) if kind == OBSERVATION else {}
        for row in rows:
            if project and (row["project"] or "") != project:
                continue
            message: common_pb2.Observation | common_pb2.Summary | common_pb2.UserPrompt
            if kind == OBSERVATION:
                message = convert.observation_pb(row, links.get(row["id"], ()))
            elif kind == SUMMARY:
                message = convert.summary_pb(row)
            else:
                message = convert.prompt_pb(row)
            found[(kind, row["id"])] = convert.record_pb(kind, message)
    for ref, mark in wrong_marks(conn, found).items():
        found[ref].marked_wrong.CopyFrom(mark)
    return found


def wrong_marks(conn: Conn,
                refs: Iterable[tuple[int, int]]) -> dict[tuple[int, int], common_pb2.WrongMark]:
    """The owner's marks on these (kind, id) refs."""
    by_kind: dict[int, list[int]] = {}
    for kind, rid in refs:
        by_kind.setdefault(kind, []).append(rid)
    marks: dict[tuple[int, int], common_pb2.WrongMark] = {}
    for kind, ids in by_kind.items():
        for start in range(0, len(ids), 500):  # stay under SQLite's bound-parameter limit
            part = ids[start:start + 500]
            for row in conn.execute(f"SELECT record_id, reason, marked_at_epoch FROM marked_wrong WHERE kind = ? "
                                    f"AND record_id IN ({_placeholders(part)})", [kind, *part]):
                marks[(kind, row["record_id"])] = common_pb2.WrongMark(marked_at_epoch=row["marked_at_epoch"],
                                                                       reason=row["reason"])
    return marks


def anchor_key(conn: Conn, ref: common_pb2.Ref) -> tuple[int, int, int] | None:
    spec = KINDS.get(ref.kind)
    if spec is None:
        return None
    row = conn.execute(f"SELECT created_at_epoch FROM {spec.table} WHERE id = ?", (ref.id,)).fetchone()
    return (row[0], ref.kind, ref.id) if row else None


def around(conn: Conn, key: tuple[int, int, int], filters: common_pb2.Filters,
           before: int, after: int) -> tuple[list[tuple[int, int, int]], list[tuple[int, int, int]]]:
    """Items strictly before `key` (nearest first) and at-or-after it, in (epoch, kind, id) order."""
    def side(forward: bool, limit: int) -> list[tuple[int, int, int]]:
        if limit <= 0:
            return []
        parts, params = [], []
        cmp, direction = (">=", "ASC") if forward else ("<", "DESC")
        for spec in KINDS.values():
            if not kind_applies(spec, filters):
                continue
            a = spec.alias
            clause = filter_clause(spec, filters, conn.dialect)
            clause.add(f"{a}.created_at_epoch {'>=' if forward else '<='} ?", key[0])
            clause.add(f"({a}.created_at_epoch, {spec.kind}, {a}.id) {cmp} (?, ?, ?)", *key)
            clause.add(not_marked_wrong(spec.kind, f"{a}.id", filters))
            parts.append(
                f"SELECT * FROM (SELECT {a}.created_at_epoch AS epoch, {spec.kind} AS kind, {a}.id AS id "
                f"FROM {spec.table} {a} {spec.session_join} WHERE {clause.render()} "
                f"ORDER BY {a}.created_at_epoch {direction}, {a}.id {direction} LIMIT {limit})"
            )
            params.extend(clause.params)
        if not parts:
            return []
        sql = (f"SELECT epoch, kind, id FROM ({' UNION ALL '.join(parts)}) "
               f"ORDER BY epoch {direction}, kind {direction}, id {direction} LIMIT {limit}")
        return [tuple(r) for r in conn.execute(sql, params)]

    return side(False, before), side(True, after)
