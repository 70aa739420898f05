"""The one renderer of records: every text search_svc builds from a record comes from here.

Index rows (search, timeline, mem_search), details (get_observations, mem_search),
tool uses (get_tool_uses) and the markdown a corpus is measured on. Each output keeps
its own shape (get_observations is exhaustive, mem_search compact), built from the same
pieces: ids, dates and inert text.

Record contents are data. Everything that comes from a record (titles, narratives,
facts, paths, project names) and everything the caller typed (queries) passes through
`inline()` or `block()` before it reaches a reply, so it can never change the reply's
structure: control and invisible format characters are replaced, table pipes are
escaped, single-line contexts get no line breaks, and multi-line contexts are quoted
line by line.

Dates are ISO-8601: UTC (`2026-01-15T14:00Z`) by default, or with the offset of the
configured `display_tz` (`2026-01-15T15:00+01:00`). Paths are shown as stored.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from mnemo import vocab
from mnemo.inert import inert
from mnemo.logs import get_logger
from mnemo.privacy import clean
from mnemo.v1 import common_pb2, search_pb2
from mnemo.vocab import EVIDENCE_NOTICE, TOOL_USE_TEXT_CAP

log = get_logger(__name__)

__all__ = ["EVIDENCE_NOTICE", "EMPTY_HINT", "Renderer", "ReplyContext", "block", "cap_text", "corpus_markdown",
           "display_id", "format_time", "inline", "quoted", "record_ref", "resolve_tz", "shown"]
EMPTY_HINT = (
    "Try fewer or other words, widen the filters (project, type, dates), "
    "or send an empty query to list the newest records."
)

INDEX_TITLE_CHARS = 100  # a compact (mem_search) index row's title
CONTEXT_TITLE_CHARS = 60  # a timeline neighbour's title under a mem_search detail



# -- inert text (mnemo.inert) ---------------------------------------------------------------
def _shorten(text: str, max_chars: int | None) -> str:
    if max_chars is not None and len(text) > max_chars:
        return text[: max(1, max_chars - 1)].rstrip() + "…"
    return text


def inline(text: str, max_chars: int | None = None) -> str:
    """One line of inert text, safe inside a markdown table cell or a heading."""
    flat = " ".join(inert(text).split())
    return _shorten(flat, max_chars).replace("\\", "\\\\").replace("|", "\\|")


def block(text: str, max_chars: int | None = None, prefix: str = "> ") -> list[str]:
    """Multi-line inert text as quoted lines: headings, rules or fences inside a record stay
    inside its quote instead of becoming structure of the reply."""
    normalised = text.replace("\r\n", "\n").replace("\r", "\n")
    cleaned = inert(normalised, keep_newline=True)
    cleaned = _shorten(cleaned.strip(), max_chars)
    return [(prefix + line.rstrip()).rstrip() for line in cleaned.split("\n")]


def shown(value: str, max_chars: int = 40) -> str:
    """A caller's rejected value quoted in an error: as a Python literal, so what made it wrong
    stays visible (a newline as \\n, a tab as \\t, a bidi override as \\u202e) instead of being
    flattened away; privacy-filtered (mnemo.privacy), cut at `max_chars`."""
    cut = value[:max_chars]
    cleaned = clean(cut)  # which also trims whitespace: kept only when it removed more than that
    literal = repr(cut if cleaned == cut.strip() else cleaned)
    return literal + "..." if len(value) > max_chars else literal


def quoted(text: str, max_chars: int = 200) -> str:
    """A caller's text inside double quotes, on one line, without its <private> regions (a query
    echoed in a reply, as every text of a reply, carries none)."""
    return '"' + inline(clean(text), max_chars).replace('"', '\\"') + '"'


# -- ids and dates -------------------------------------------------------------------------
def display_id(ref: common_pb2.Ref) -> str:
    """The display id of a record known by its ref (an index row carries the store's own,
    `row.display_id`, made by the same mnemo.vocab.display_id)."""
    return vocab.display_id(ref.kind, ref.id)


def resolve_tz(name: str) -> tzinfo:
    if not name or name.upper() == "UTC":
        return UTC
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        log.warning("unknown display_tz, using UTC", display_tz=name)
        return UTC


def format_time(epoch_ms: int, tz: tzinfo, *, seconds: bool = False) -> str:
    moment = datetime.fromtimestamp(epoch_ms / 1000, tz=UTC).astimezone(tz)
    text = moment.strftime("%Y-%m-%dT%H:%M:%S" if seconds else "%Y-%m-%dT%H:%M")
    offset = moment.utcoffset()
    if not offset:
        return text + "Z"
    return text + moment.strftime("%z")[:3] + ":" + moment.strftime("%z")[3:]


@dataclass(frozen=True)
class ReplyContext:
    """What a search reply's header needs besides the rows."""

    query: str
    counts: search_pb2.SearchCounts
    offset: int
    strategy: str
    notice: str = ""
    filters_text: str = ""


class Renderer:
    """Renders index tables, timelines and observation details in one time zone."""

    def __init__(self, display_tz: str = "UTC"):
        self.tz = resolve_tz(display_tz)

    def time(self, epoch_ms: int, *, seconds: bool = False) -> str:
        return format_time(epoch_ms, self.tz, seconds=seconds) if epoch_ms else "-"

    # -- index ---------------------------------------------------------------------------
    def index_table(self, rows: Sequence[common_pb2.IndexRow], *, show_project: bool,
                    marker_at: int | None = None) -> list[str]:
        columns = ["ID", "Date", "Type", "Title"] + (["Project"] if show_project else []) + ["File", "Read"]
        if marker_at is not None:
            columns = [" "] + columns
        lines = ["| " + " | ".join(columns) + " |", "|" + "|".join("---" for _ in columns) + "|"]
        for position, row in enumerate(rows):
            cells = [row.display_id, self.time(row.created_at_epoch), inline(row.type or "-", 24),
                     inline(row.title, 160) or "(untitled)"]
            if show_project:
                cells.append(inline(row.project, 60) or "-")
            cells += [inline(row.file, 200) or "-", f"~{row.token_estimate}"]
            if marker_at is not None:
                cells = ["▶" if position == marker_at else " "] + cells
            lines.append("| " + " | ".join(cells) + " |")
        return lines

    def search(self, ctx: ReplyContext, rows: Sequence[common_pb2.IndexRow], *, show_project: bool) -> str:
        subject = f"matching {quoted(ctx.query)}" if ctx.query.strip() else "for the filters"
        lines: list[str] = []
        if not rows and ctx.counts.total == 0:
            lines.append(f"No results found {subject}.")
            lines += _filter_and_notice(ctx)
            lines.append(EMPTY_HINT)
            return "\n".join(lines)
        c = ctx.counts
        lines += [EVIDENCE_NOTICE, ""]  # titles are record contents: data, as in every reply that shows them
        lines.append(f"Found {c.total} result(s) {subject} "
                     f"({c.observations} obs, {c.summaries} sessions, {c.prompts} prompts)")
        lines += _filter_and_notice(ctx)
        if not rows:
            lines.append(f"No rows at offset {ctx.offset}; use an offset below {c.total}.")
            return "\n".join(lines)
        lines.append("")
        lines += self.index_table(rows, show_project=show_project)
        lines.append("")
        shown_to = ctx.offset + len(rows)
        more = f" More: offset={shown_to}." if shown_to < c.total else ""
        lines.append(f"Rows {ctx.offset + 1}-{shown_to} of {c.total} ({ctx.strategy}).{more} "
                     "Details: get_observations(ids) or timeline(anchor=ID).")
        return "\n".join(lines)

    # -- timeline -------------------------------------------------------------------------
    def timeline(self, title: str, rows: Sequence[common_pb2.IndexRow], anchor_index: int,
                 *, before: int, after: int, show_project: bool) -> str:
        lines = [EVIDENCE_NOTICE, "", f"# {title}", f"Window: {before} before, {after} after · Items: {len(rows)}", ""]
        if not rows:
            lines.append("No records in this window.")
            return "\n".join(lines)
        lines += self.index_table(rows, show_project=show_project,
                                  marker_at=anchor_index if anchor_index >= 0 else -1)
        if anchor_index >= 0:
            lines += ["", f"▶ marks the anchor ({rows[anchor_index].display_id})."]
        return "\n".join(lines)

    # -- details --------------------------------------------------------------------------
    def observation(self, obs: common_pb2.Observation) -> list[str]:
        ref = common_pb2.Ref(kind=common_pb2.DOC_KIND_OBSERVATION, id=obs.id)
        lines = [f"## {display_id(ref)} · {inline(obs.type or 'observation', 24)} · "
                 f"{inline(obs.title, 300) or '(untitled)'}",
                 f"- Date: {self.time(obs.created_at_epoch, seconds=True)}",
                 f"- Project: {inline(obs.project, 256) or '-'}"]
        if obs.platform_source:
            lines.append(f"- Platform: {inline(obs.platform_source, 64)}")
        if obs.subtitle:
            lines.append(f"- Subtitle: {inline(obs.subtitle, 500)}")
        _list_line(lines, "Concepts", obs.concepts)
        _list_line(lines, "Files read", obs.files_read)
        _list_line(lines, "Files modified", obs.files_modified)
        if obs.tool_use_ids:
            lines.append("- Tool uses: " + ", ".join(str(i) for i in obs.tool_use_ids))
        if obs.narrative:
            lines += ["", "Narrative:"] + block(obs.narrative)
        elif obs.text:
            lines += ["", "Text:"] + block(obs.text)
        if obs.facts:
            lines += ["", "Facts:"] + [f"- {inline(fact, 1000)}" for fact in obs.facts]
        return lines

    def observations(self, observations: Sequence[common_pb2.Observation], missing: Sequence[int],
                     wrong: Sequence[int] = ()) -> str:
        lines = [EVIDENCE_NOTICE, ""]
        if not observations:
            lines.append("No observations found for these ids.")
        for obs in observations:
            lines += self.observation(obs) + [""]
        if wrong:
            lines.append("Marked wrong by the owner (not shown): " + ", ".join(f"#{i}" for i in wrong))
        if missing:
            lines.append("Not found (deleted, another project, or never existed): "
                         + ", ".join(f"#{i}" for i in missing))
        return "\n".join(lines).rstrip() + "\n"


    # -- compact renderings (mem_search, get_tool_uses) ----------------------------------
    def day(self, epoch_ms: int) -> str:
        """The date of a record in the display time zone (`2026-01-15`): the index needs no more."""
        return self.time(epoch_ms)[:10]

    def compact_index(self, rows: Iterable[common_pb2.IndexRow]) -> list[str]:
        """The compact index of mem_search: a few dozen tokens per row."""
        lines = ["| ID | Date | Type | Title | ~Tokens |", "|---|---|---|---|---|"]
        for row in rows:
            tokens = f"~{row.token_estimate}" if row.token_estimate else "-"
            title = inline(row.title, INDEX_TITLE_CHARS) or "(untitled)"
            lines.append(f"| {row.display_id} | {self.day(row.created_at_epoch)} | "
                         f"{inline(row.type, 20) or '-'} | {title} | {tokens} |")
        return lines

    def context_line(self, row: common_pb2.IndexRow) -> str:
        """One timeline neighbour of a detail, as compact as an index row."""
        return (f"- {row.display_id} {self.day(row.created_at_epoch)} {inline(row.type, 20) or '-'}: "
                f"{inline(row.title, CONTEXT_TITLE_CHARS) or '(untitled)'}")

    def compact_observation(self, obs: common_pb2.Observation) -> list[str]:
        """A full observation, compact: every field once, contents inside labelled lines or quotes."""
        ref = common_pb2.Ref(kind=common_pb2.DOC_KIND_OBSERVATION, id=obs.id)
        title = inline(obs.title, 300) or "(untitled)"
        lines = [f"## {display_id(ref)} · {inline(obs.type, 24) or 'observation'} · {title}",
                 f"{self.time(obs.created_at_epoch)} · project {inline(obs.project, 256) or '-'}"]
        if obs.subtitle.strip():
            lines.append(f"Subtitle: {inline(obs.subtitle, 500)}")
        lines += _files_line(obs)
        if obs.concepts:
            lines.append(f"Concepts: {', '.join(inline(concept, 100) for concept in obs.concepts)}")
        lines += _labelled_block("Narrative", obs.narrative if obs.narrative.strip() else obs.text)
        if obs.facts:
            lines += ["Facts:", *(f"- {inline(fact, 1000)}" for fact in obs.facts)]
        return lines

    def compact_record(self, record: common_pb2.Record) -> list[str]:
        """A full record: a heading made by mnemo, then labelled fields; contents stay inside them."""
        which = record.WhichOneof("record")
        if which == "observation":
            return self.compact_observation(record.observation)
        lines = [f"## {display_id(record_ref(record))} · "
                 f"{'session summary' if which == 'summary' else 'user prompt'}"]
        if which == "summary":
            summary = record.summary
            lines.append(f"{self.time(summary.created_at_epoch)} · project {inline(summary.project, 256) or '-'}")
            for label, value in (("Request", summary.request), ("Investigated", summary.investigated),
                                 ("Learned", summary.learned), ("Completed", summary.completed),
                                 ("Next steps", summary.next_steps), ("Notes", summary.notes)):
                lines += _labelled_block(label, value)
            return lines
        prompt = record.prompt
        return lines + [f"{self.time(prompt.created_at_epoch)} · project {inline(prompt.project, 256) or '-'}",
                        f"Session: {inline(prompt.content_session_id, 256)}",
                        *_labelled_block("Prompt", prompt.prompt_text)]

    def tool_use(self, use: common_pb2.ToolUse) -> list[str]:
        observations = ", ".join(f"#{value}" for value in use.observation_ids) or "-"
        when = self.time(use.created_at_epoch, seconds=True)
        lines = [f"## Tool use {use.id} · {inline(use.tool_name, 60) or '-'}",
                 f"{when} · project {inline(use.project, 256) or '-'} · "
                 f"session {inline(use.content_session_id, 256) or '-'}",
                 f"Host tool_use_id: {inline(use.tool_use_id, 256) or '-'} · observations: {observations}"]
        lines += _raw_text("Input", use.tool_input, use.input_truncated, use.input_size)
        lines += _raw_text("Response", use.tool_response, use.response_truncated, use.response_size)
        return lines + [""]


def record_ref(record: common_pb2.Record) -> common_pb2.Ref:
    """The reference of a record of any kind."""
    which = record.WhichOneof("record")
    kind = {"observation": common_pb2.DOC_KIND_OBSERVATION, "summary": common_pb2.DOC_KIND_SUMMARY,
            "prompt": common_pb2.DOC_KIND_PROMPT}.get(which or "", common_pb2.DOC_KIND_UNSPECIFIED)
    return common_pb2.Ref(kind=kind, id=getattr(record, which).id if which else 0)


def cap_text(text: str, cap: int = TOOL_USE_TEXT_CAP) -> str:
    """Text cut at `cap` characters, the cut marked with how much was left out."""
    if len(text) <= cap:
        return text
    return f"{text[:cap]}… [cut: {len(text) - cap:,} more chars]"


def corpus_markdown(obs: common_pb2.Observation) -> str:
    """One observation as corpus markdown: what a corpus's token estimate measures. Never shown
    to a model (query_corpus shows passages), so the text is measured as written."""
    lines = [f"## [{(obs.type or 'observation').upper()}] #{obs.id} {obs.title}".rstrip(),
             f"*{obs.created_at[:10]}* | Project: {obs.project}"]
    if obs.subtitle:
        lines.append(f"> {obs.subtitle}")
    body = obs.narrative or obs.text
    if body:
        lines += ["", body]
    if obs.facts:
        lines += ["", "**Facts:**", *(f"- {fact}" for fact in obs.facts)]
    for label, values in (("Concepts", obs.concepts), ("Files Read", obs.files_read),
                          ("Files Modified", obs.files_modified)):
        if values:
            lines.append(f"**{label}:** {', '.join(values)}")
    lines += ["", "---", ""]
    return "\n".join(lines)


def _labelled_block(label: str, value: str) -> list[str]:
    return [f"{label}:", *block(value)] if value and value.strip() else []


def _files_line(obs: common_pb2.Observation) -> list[str]:
    modified = [inline(path, 200) for path in obs.files_modified]
    read = [inline(path, 200) for path in obs.files_read if path not in obs.files_modified]
    labelled = (("modified", modified), ("read", read))
    parts = [f"{label} {', '.join(paths)}" for label, paths in labelled if paths]
    return [f"Files: {'; '.join(parts)}"] if parts else []


def _raw_text(label: str, text: str, cut_at_capture: bool, original_size: int) -> list[str]:
    note = f", cut at capture from {original_size:,} bytes" if cut_at_capture else ""
    return ["", f"{label} ({len(text):,} chars{note}; shown up to {TOOL_USE_TEXT_CAP:,}):",
            *block(cap_text(text) or "(empty)")]


def _list_line(lines: list[str], label: str, values: Iterable[str]) -> None:
    values = [inline(v, 300) for v in values]
    if values:
        lines.append(f"- {label}: " + ", ".join(values))


def _filter_and_notice(ctx: ReplyContext) -> list[str]:
    lines = []
    if ctx.filters_text:
        lines.append(f"Filters: {ctx.filters_text}")
    if ctx.notice:
        lines.append(f"Note: {ctx.notice}")
    return lines
