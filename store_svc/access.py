"""Identity and access on the store: per-user tokens and the project scope of every RPC.

store_svc is the one gatekeeper: every read and write of records reaches it, so the scope
of a token is enforced here once. `guard(method, handler)` wraps each RPC handler of the
servicer with the rule of its method (the table `RULES` below):

- writes name their project; a project outside the token's scope is PERMISSION_DENIED,
  naming the project the caller gave (it reveals nothing the caller did not say); session ids
  are each project's own (migration 15, store_svc.sessions): a write naming a session id that
  only another project holds creates the caller's own session, as for an id nobody holds;
- reads are confined to the token's projects: listings and searches get the scope as a
  filter (`Filters.scope_projects`, replaced for a confined token, so no client widens it),
  fetches by id leave other projects' records out, and a timeline anchor, corpus or cursor
  of another project (or user) is NOT_FOUND with the same message as a nonexistent one
  (corpus names are each project's own, so a name held elsewhere is simply free);
- counts (Stats, Activity) are summed over the token's projects only;
- the change feed, raw deletes, leases and token administration need the service token
  (`ADMIN_ONLY`); cursors are each user's own, and users' cursor calls run on the server's clock.

The tokens themselves are in store_svc/tokens.py.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from mnemo import identity
from mnemo.errors import NotFound, PermissionDenied
from mnemo.v1 import common_pb2, store_pb2
from mnemo.vocab import display_id
from store_svc import validate
from store_svc.validate import check_refs

if TYPE_CHECKING:  # the store is handed in
    from store_svc.core import Store

# ---------------------------------------------------------------------------- scope rules

Handler = Callable[[Any, Any], Any]
Rule = Callable[["Store", Any, Callable[[Any], Any]], Any]


def _scope() -> list[str] | None:
    """The caller's projects, sorted, when it is confined to some; None when it sees everything."""
    projects = identity.restricted_projects()
    if projects is None:
        return None
    if not projects:
        raise PermissionDenied("this token has no project; ask an administrator for one that has")
    return sorted(projects)


def _scope_filters(request: Any) -> None:
    scope = _scope()
    if scope is not None:
        del request.filters.scope_projects[:]
        request.filters.scope_projects.extend(scope)


def _in_scope(store: Store, refs: list[tuple[int, int]], scope: list[str]) -> set[tuple[int, int]]:
    """The refs that name records of the caller's projects (marked wrong or not)."""
    found: set[tuple[int, int]] = set()
    for start in range(0, len(refs), 500):
        part = [common_pb2.Ref(kind=k, id=i) for k, i in refs[start:start + 500]]  # type: ignore[arg-type]
        reply = store.hydrate(store_pb2.HydrateRequest(
            refs=part, filters=common_pb2.Filters(scope_projects=scope, include_marked_wrong=True)))
        found.update((row.ref.kind, row.ref.id) for row in reply.rows)
    return found


def _keep_refs(store: Store, request: Any, limit: int) -> list[tuple[int, int]]:
    """Drop the refs of other projects from `request.refs` (after the usual checks); returns the dropped ones."""
    scope = _scope()
    if scope is None or not request.refs:
        return []
    refs = check_refs(request.refs, limit)
    visible = _in_scope(store, refs, scope)
    kept = [r for r in request.refs if (r.kind, r.id) in visible]
    del request.refs[:]
    request.refs.extend(kept)
    return [r for r in refs if r not in visible]


# Writes: the project a request names is checked here; the session it names is looked up by the
# store among the caller's projects only (store_svc.sessions), inside its write transaction.

def _session_write(store: Store, request: Any, call: Callable[[Any], Any]) -> Any:
    if request.project:  # no project and no session: the store says the project is required
        identity.require_writable("project", request.project)
    return call(request)


def _record_tool_use(store: Store, request: Any, call: Callable[[Any], Any]) -> Any:
    if request.tool_use.project:
        identity.require_writable("tool_use.project", request.tool_use.project)
    return call(request)


def _record_writes(where: str) -> Rule:
    def rule(store: Store, request: Any, call: Callable[[Any], Any]) -> Any:
        for i, item in enumerate(getattr(request, where)):
            if item.project:  # an empty one is refused by the store's own checks, as for anyone
                identity.require_writable(f"{where}[{i}].project", item.project)
        return call(request)

    return rule


def _scoped_filters(store: Store, request: Any, call: Callable[[Any], Any]) -> Any:
    _scope_filters(request)
    return call(request)


def _get_records(store: Store, request: Any, call: Callable[[Any], Any]) -> Any:
    asked = bool(request.refs)
    _keep_refs(store, request, 200)  # other projects' records are left out, like unknown ids
    if asked and not request.refs:  # none left: the store's answer for unknown ids, not "refs: required"
        validate.project("project", request.project, needed=False)
        return store_pb2.GetRecordsResponse()
    return call(request)


def _get_tool_uses(store: Store, request: Any, call: Callable[[Any], Any]) -> Any:
    scope = _scope()
    if scope is not None and len(scope) == 1 and not request.project:
        request.project = scope[0]  # filtered in SQL, so the limit counts only visible rows
    reply = call(request)
    if scope is not None:
        kept = [t for t in reply.tool_uses if identity.may_access(t.project)]
        del reply.tool_uses[:]
        reply.tool_uses.extend(kept)
    return reply


def _stats(store: Store, request: Any, call: Callable[[Any], Any]) -> Any:
    scope = _scope()
    if scope is None:
        return call(request)
    if request.project and not identity.may_access(request.project):
        part = call(request)  # checked as for anyone, then answered like a project without records
        return store_pb2.StatsResponse(schema_version=part.schema_version)
    total = store_pb2.StatsResponse()
    for project in [request.project] if request.project else scope:
        part = call(store_pb2.StatsRequest(project=project))
        for name in ("sessions", "prompts", "observations", "summaries", "tool_uses"):
            setattr(total, name, getattr(total, name) + getattr(part, name))
        total.schema_version = part.schema_version
    # The database's size and feed position tell about every project: not for a confined token.
    return total


def _activity(store: Store, request: Any, call: Callable[[Any], Any]) -> Any:
    scope = _scope()
    if scope is None:
        return call(request)
    wanted = [request.project] if request.project else scope
    reply = store_pb2.ActivityResponse()
    for project in wanted:
        part = call(store_pb2.ActivityRequest(project=project, days=request.days))
        if not reply.days:
            reply.days.extend(store_pb2.ActivityDay(day=d.day) for d in part.days)
            reply.projects.extend(p for p in part.projects if identity.may_access(p.project))
        if not identity.may_access(project):
            continue  # its days stay zero, as for a project without records
        for total, day in zip(reply.days, part.days, strict=True):
            total.observations += day.observations
            total.summaries += day.summaries
            total.prompts += day.prompts
    return reply


def _write_work_state(store: Store, request: Any, call: Callable[[Any], Any]) -> Any:
    if request.project:
        identity.require_writable("project", request.project)
    return call(request)


def _read_work_state(store: Store, request: Any, call: Callable[[Any], Any]) -> Any:
    reply = call(request)  # validation first, as for anyone
    if not identity.may_access(request.project):
        return store_pb2.ReadWorkStateResponse()  # what a project without work state answers
    return reply


def _put_corpus(store: Store, request: Any, call: Callable[[Any], Any]) -> Any:
    if _scope() is not None:
        identity.require_writable("filter.project", request.filter.project)
    # Names are each project's own (migration 12): a name another project holds is free here.
    return call(request)


def _get_corpus(store: Store, request: Any, call: Callable[[Any], Any]) -> Any:
    reply = call(request)  # the store looks only among the caller's projects' corpora
    if not identity.may_access(reply.filter.project):  # never reached; kept as a second lock
        raise NotFound(f"corpus {request.name[:64]!r} not found; list_corpora shows the existing ones")
    return reply


def _list_corpora(store: Store, request: Any, call: Callable[[Any], Any]) -> Any:
    reply = call(request)
    if _scope() is not None:
        kept = [c for c in reply.corpora if identity.may_access(c.filter.project)]
        del reply.corpora[:]
        reply.corpora.extend(kept)
    return reply


def _export(store: Store, request: Any, call: Callable[[Any], Any]) -> Iterator[Any]:
    scope = _scope()
    if scope is None:
        yield from call(request)
        return
    # One export per project of the token: sessions still come before what refers to them.
    for project in [request.project] if request.project else scope:
        if identity.may_access(project):
            yield from call(store_pb2.ExportRequest(project=project))


def _import(store: Store, request: Any, call: Callable[[Any], Any]) -> Any:
    if _scope() is not None:
        for i, item in enumerate(request.items):
            which = item.WhichOneof("item")
            if which:
                identity.require_writable(f"items[{i}].{which}.project", getattr(item, which).project)
    return call(request)


def _forget(store: Store, request: Any, call: Callable[[Any], Any]) -> Any:
    if _scope() is None:
        return call(request)
    if request.project:
        identity.require_writable("project", request.project)
    asked = bool(request.refs or request.sessions)
    _keep_refs(store, request, 1000)  # other projects' records and sessions: as if they did not exist
    kept = [s for s in request.sessions if _forgettable_session(store, s)]
    del request.sessions[:]
    request.sessions.extend(kept)
    if asked and not (request.refs or request.sessions or request.project):
        raise NotFound("nothing to forget: no such record, session or project; search first to find valid ids")
    return call(request)


def _forgettable_session(store: Store, session: str) -> bool:
    """Unknown (the store then says so), or naming one of the caller's sessions; of a name that
    also names other projects' sessions (other platforms), the store deletes only the caller's."""
    with store.reading() as conn:
        rows = conn.execute("SELECT DISTINCT project FROM sdk_sessions WHERE content_session_id = ? "
                            "OR memory_session_id = ?", (session, session)).fetchall()
    return not rows or any(identity.may_access(str(row["project"])) for row in rows)


def _mark_wrong(store: Store, request: Any, call: Callable[[Any], Any]) -> Any:
    hidden = _keep_refs(store, request, 1000)  # unknown and other projects' refs, in the order asked
    if hidden:  # the store's own answer for unknown ids
        shown = ", ".join(display_id(k, i) for k, i in hidden)
        raise NotFound(f"no such record: {shown}; search first to find valid ids")
    return call(request)


def _purge_cursors(store: Store, request: Any, call: Callable[[Any], Any]) -> Any:
    reply = call(request)  # only expired cursors go, whoever asks; how many is not a user's business
    return reply if identity.is_admin() else store_pb2.PurgeCursorsResponse()


def _open(store: Store, request: Any, call: Callable[[Any], Any]) -> Any:
    """Open to every token: the store itself keeps the caller to its own (see the table)."""
    return call(request)


def _admin_only(method: str) -> Callable[[Store, Any, Callable[[Any], Any]], Any]:
    def rule(store: Store, request: Any, call: Callable[[Any], Any]) -> Any:
        identity.require_admin(method)
        return call(request)

    return rule


# Every StoreService RPC a per-user token may call, with its rule.
RULES: dict[str, Rule] = {
    "UpsertSession": _session_write,
    "CompleteSession": _open,  # the store answers NOT_FOUND for another project's session
    "RecordPrompt": _session_write,
    "AddObservations": _record_writes("observations"),
    "AddSummaries": _record_writes("summaries"),
    "RecordToolUse": _record_tool_use,
    "GetRecords": _get_records,
    "Hydrate": _scoped_filters,
    "GetToolUses": _get_tool_uses,
    "ListRecent": _scoped_filters,
    "Search": _scoped_filters,
    "Timeline": _scoped_filters,
    "Stats": _stats,
    "SaveCursor": _open,  # bound to the caller's user by the store itself (state.py)
    "LoadCursor": _open,  # the caller's own cursors only, on the server's clock (state.py)
    "PurgeCursors": _purge_cursors,  # expired ones only, on the server's clock for users (state.py)
    "WriteWorkState": _write_work_state,
    "ReadWorkState": _read_work_state,
    "PutCorpus": _put_corpus,
    "GetCorpus": _get_corpus,
    "ListCorpora": _list_corpora,
    "UpdateCorpus": _open,  # the store finds only the caller's projects' corpora (state.py)
    "Export": _export,
    "Import": _import,
    "Forget": _forget,
    "EditObservation": _open,  # the store answers NOT_FOUND for another project's observation
    "Activity": _activity,
    "MarkWrong": _mark_wrong,
    "WhoAmI": _open,
}
# The RPCs only the service token may call: they span every project (the change feed, raw
# deletes, the vector follower's lease, token administration). No RPC is left to a default:
# one in neither table stops the server from starting (guard), so a new RPC gets a rule first.
ADMIN_ONLY = frozenset({"DeleteRecords", "ReadChanges", "AcquireLease", "AddToken", "ListTokens", "RevokeToken"})


def guard(method: str, handler: Handler, store: Store, *, streaming: bool = False) -> Handler:
    """`handler` (a servicer method) behind the access rule of `method`."""
    if (method in RULES) == (method in ADMIN_ONLY):
        raise LookupError(f"StoreService/{method} needs exactly one access rule: add it to RULES or ADMIN_ONLY "
                          "in store_svc/access.py")
    rule = RULES.get(method) or _admin_only(method)
    open_to_users = method in RULES

    def unchecked() -> bool:
        """No rule to apply: the local stack (no tokens), the service token, or a token of
        every project calling an RPC open to users (it may read and write anything there)."""
        who = identity.get()
        return who is None or who.admin or (who.projects is None and open_to_users)

    if streaming:
        def stream(request: Any, context: Any) -> Iterator[Any]:
            if unchecked():
                yield from handler(request, context)
            else:
                yield from rule(store, request, lambda r: handler(r, context))

        return stream

    def unary(request: Any, context: Any) -> Any:
        if unchecked():
            return handler(request, context)
        return rule(store, request, lambda r: handler(r, context))

    return unary
