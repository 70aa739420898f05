from mnemo.v1 import common_pb2 as _common_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class QuerySyntax(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    QUERY_SYNTAX_PLAIN: _ClassVar[QuerySyntax]
    QUERY_SYNTAX_OPERATORS: _ClassVar[QuerySyntax]

class ChangeOp(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    CHANGE_OP_UNSPECIFIED: _ClassVar[ChangeOp]
    CHANGE_OP_UPSERT: _ClassVar[ChangeOp]
    CHANGE_OP_DELETE: _ClassVar[ChangeOp]
QUERY_SYNTAX_PLAIN: QuerySyntax
QUERY_SYNTAX_OPERATORS: QuerySyntax
CHANGE_OP_UNSPECIFIED: ChangeOp
CHANGE_OP_UPSERT: ChangeOp
CHANGE_OP_DELETE: ChangeOp

class UpsertSessionRequest(_message.Message):
    __slots__ = ("content_session_id", "project", "platform_source", "memory_session_id", "user_prompt", "custom_title", "started_at_epoch", "external_id")
    CONTENT_SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    PROJECT_FIELD_NUMBER: _ClassVar[int]
    PLATFORM_SOURCE_FIELD_NUMBER: _ClassVar[int]
    MEMORY_SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    USER_PROMPT_FIELD_NUMBER: _ClassVar[int]
    CUSTOM_TITLE_FIELD_NUMBER: _ClassVar[int]
    STARTED_AT_EPOCH_FIELD_NUMBER: _ClassVar[int]
    EXTERNAL_ID_FIELD_NUMBER: _ClassVar[int]
    content_session_id: str
    project: str
    platform_source: str
    memory_session_id: str
    user_prompt: str
    custom_title: str
    started_at_epoch: int
    external_id: str
    def __init__(self, content_session_id: _Optional[str] = ..., project: _Optional[str] = ..., platform_source: _Optional[str] = ..., memory_session_id: _Optional[str] = ..., user_prompt: _Optional[str] = ..., custom_title: _Optional[str] = ..., started_at_epoch: _Optional[int] = ..., external_id: _Optional[str] = ...) -> None: ...

class CompleteSessionRequest(_message.Message):
    __slots__ = ("content_session_id", "platform_source", "status")
    CONTENT_SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    PLATFORM_SOURCE_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    content_session_id: str
    platform_source: str
    status: str
    def __init__(self, content_session_id: _Optional[str] = ..., platform_source: _Optional[str] = ..., status: _Optional[str] = ...) -> None: ...

class RecordPromptRequest(_message.Message):
    __slots__ = ("content_session_id", "platform_source", "project", "prompt_text", "created_at_epoch", "external_id", "prompt_number")
    CONTENT_SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    PLATFORM_SOURCE_FIELD_NUMBER: _ClassVar[int]
    PROJECT_FIELD_NUMBER: _ClassVar[int]
    PROMPT_TEXT_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_EPOCH_FIELD_NUMBER: _ClassVar[int]
    EXTERNAL_ID_FIELD_NUMBER: _ClassVar[int]
    PROMPT_NUMBER_FIELD_NUMBER: _ClassVar[int]
    content_session_id: str
    platform_source: str
    project: str
    prompt_text: str
    created_at_epoch: int
    external_id: str
    prompt_number: int
    def __init__(self, content_session_id: _Optional[str] = ..., platform_source: _Optional[str] = ..., project: _Optional[str] = ..., prompt_text: _Optional[str] = ..., created_at_epoch: _Optional[int] = ..., external_id: _Optional[str] = ..., prompt_number: _Optional[int] = ...) -> None: ...

class RecordPromptResponse(_message.Message):
    __slots__ = ("prompt", "skipped", "reason")
    PROMPT_FIELD_NUMBER: _ClassVar[int]
    SKIPPED_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    prompt: _common_pb2.UserPrompt
    skipped: bool
    reason: str
    def __init__(self, prompt: _Optional[_Union[_common_pb2.UserPrompt, _Mapping]] = ..., skipped: _Optional[bool] = ..., reason: _Optional[str] = ...) -> None: ...

class AddObservationsRequest(_message.Message):
    __slots__ = ("observations",)
    OBSERVATIONS_FIELD_NUMBER: _ClassVar[int]
    observations: _containers.RepeatedCompositeFieldContainer[_common_pb2.Observation]
    def __init__(self, observations: _Optional[_Iterable[_Union[_common_pb2.Observation, _Mapping]]] = ...) -> None: ...

class AddObservationsResponse(_message.Message):
    __slots__ = ("ids", "created")
    IDS_FIELD_NUMBER: _ClassVar[int]
    CREATED_FIELD_NUMBER: _ClassVar[int]
    ids: _containers.RepeatedScalarFieldContainer[int]
    created: _containers.RepeatedScalarFieldContainer[bool]
    def __init__(self, ids: _Optional[_Iterable[int]] = ..., created: _Optional[_Iterable[bool]] = ...) -> None: ...

class AddSummariesRequest(_message.Message):
    __slots__ = ("summaries",)
    SUMMARIES_FIELD_NUMBER: _ClassVar[int]
    summaries: _containers.RepeatedCompositeFieldContainer[_common_pb2.Summary]
    def __init__(self, summaries: _Optional[_Iterable[_Union[_common_pb2.Summary, _Mapping]]] = ...) -> None: ...

class AddSummariesResponse(_message.Message):
    __slots__ = ("ids", "created")
    IDS_FIELD_NUMBER: _ClassVar[int]
    CREATED_FIELD_NUMBER: _ClassVar[int]
    ids: _containers.RepeatedScalarFieldContainer[int]
    created: _containers.RepeatedScalarFieldContainer[bool]
    def __init__(self, ids: _Optional[_Iterable[int]] = ..., created: _Optional[_Iterable[bool]] = ...) -> None: ...

class RecordToolUseRequest(_message.Message):
    __slots__ = ("tool_use",)
    TOOL_USE_FIELD_NUMBER: _ClassVar[int]
    tool_use: _common_pb2.ToolUse
    def __init__(self, tool_use: _Optional[_Union[_common_pb2.ToolUse, _Mapping]] = ...) -> None: ...

class GetRecordsRequest(_message.Message):
    __slots__ = ("refs", "project", "include_marked_wrong")
    REFS_FIELD_NUMBER: _ClassVar[int]
    PROJECT_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_MARKED_WRONG_FIELD_NUMBER: _ClassVar[int]
    refs: _containers.RepeatedCompositeFieldContainer[_common_pb2.Ref]
    project: str
    include_marked_wrong: bool
    def __init__(self, refs: _Optional[_Iterable[_Union[_common_pb2.Ref, _Mapping]]] = ..., project: _Optional[str] = ..., include_marked_wrong: _Optional[bool] = ...) -> None: ...

class GetRecordsResponse(_message.Message):
    __slots__ = ("records", "marked_wrong")
    RECORDS_FIELD_NUMBER: _ClassVar[int]
    MARKED_WRONG_FIELD_NUMBER: _ClassVar[int]
    records: _containers.RepeatedCompositeFieldContainer[_common_pb2.Record]
    marked_wrong: _containers.RepeatedCompositeFieldContainer[_common_pb2.Ref]
    def __init__(self, records: _Optional[_Iterable[_Union[_common_pb2.Record, _Mapping]]] = ..., marked_wrong: _Optional[_Iterable[_Union[_common_pb2.Ref, _Mapping]]] = ...) -> None: ...

class HydrateRequest(_message.Message):
    __slots__ = ("refs", "filters")
    REFS_FIELD_NUMBER: _ClassVar[int]
    FILTERS_FIELD_NUMBER: _ClassVar[int]
    refs: _containers.RepeatedCompositeFieldContainer[_common_pb2.Ref]
    filters: _common_pb2.Filters
    def __init__(self, refs: _Optional[_Iterable[_Union[_common_pb2.Ref, _Mapping]]] = ..., filters: _Optional[_Union[_common_pb2.Filters, _Mapping]] = ...) -> None: ...

class HydrateResponse(_message.Message):
    __slots__ = ("rows",)
    ROWS_FIELD_NUMBER: _ClassVar[int]
    rows: _containers.RepeatedCompositeFieldContainer[_common_pb2.IndexRow]
    def __init__(self, rows: _Optional[_Iterable[_Union[_common_pb2.IndexRow, _Mapping]]] = ...) -> None: ...

class GetToolUsesRequest(_message.Message):
    __slots__ = ("ids", "tool_use_ids", "observation_ids", "project", "content_session_id", "limit")
    IDS_FIELD_NUMBER: _ClassVar[int]
    TOOL_USE_IDS_FIELD_NUMBER: _ClassVar[int]
    OBSERVATION_IDS_FIELD_NUMBER: _ClassVar[int]
    PROJECT_FIELD_NUMBER: _ClassVar[int]
    CONTENT_SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    ids: _containers.RepeatedScalarFieldContainer[int]
    tool_use_ids: _containers.RepeatedScalarFieldContainer[str]
    observation_ids: _containers.RepeatedScalarFieldContainer[int]
    project: str
    content_session_id: str
    limit: int
    def __init__(self, ids: _Optional[_Iterable[int]] = ..., tool_use_ids: _Optional[_Iterable[str]] = ..., observation_ids: _Optional[_Iterable[int]] = ..., project: _Optional[str] = ..., content_session_id: _Optional[str] = ..., limit: _Optional[int] = ...) -> None: ...

class GetToolUsesResponse(_message.Message):
    __slots__ = ("tool_uses",)
    TOOL_USES_FIELD_NUMBER: _ClassVar[int]
    tool_uses: _containers.RepeatedCompositeFieldContainer[_common_pb2.ToolUse]
    def __init__(self, tool_uses: _Optional[_Iterable[_Union[_common_pb2.ToolUse, _Mapping]]] = ...) -> None: ...

class ListRecentRequest(_message.Message):
    __slots__ = ("filters", "page", "order")
    FILTERS_FIELD_NUMBER: _ClassVar[int]
    PAGE_FIELD_NUMBER: _ClassVar[int]
    ORDER_FIELD_NUMBER: _ClassVar[int]
    filters: _common_pb2.Filters
    page: _common_pb2.Page
    order: _common_pb2.Order
    def __init__(self, filters: _Optional[_Union[_common_pb2.Filters, _Mapping]] = ..., page: _Optional[_Union[_common_pb2.Page, _Mapping]] = ..., order: _Optional[_Union[_common_pb2.Order, str]] = ...) -> None: ...

class ListRecentResponse(_message.Message):
    __slots__ = ("rows", "total")
    ROWS_FIELD_NUMBER: _ClassVar[int]
    TOTAL_FIELD_NUMBER: _ClassVar[int]
    rows: _containers.RepeatedCompositeFieldContainer[_common_pb2.IndexRow]
    total: int
    def __init__(self, rows: _Optional[_Iterable[_Union[_common_pb2.IndexRow, _Mapping]]] = ..., total: _Optional[int] = ...) -> None: ...

class StoreSearchRequest(_message.Message):
    __slots__ = ("query", "syntax", "filters", "order", "page", "skip_fusion_inputs")
    QUERY_FIELD_NUMBER: _ClassVar[int]
    SYNTAX_FIELD_NUMBER: _ClassVar[int]
    FILTERS_FIELD_NUMBER: _ClassVar[int]
    ORDER_FIELD_NUMBER: _ClassVar[int]
    PAGE_FIELD_NUMBER: _ClassVar[int]
    SKIP_FUSION_INPUTS_FIELD_NUMBER: _ClassVar[int]
    query: str
    syntax: QuerySyntax
    filters: _common_pb2.Filters
    order: _common_pb2.Order
    page: _common_pb2.Page
    skip_fusion_inputs: bool
    def __init__(self, query: _Optional[str] = ..., syntax: _Optional[_Union[QuerySyntax, str]] = ..., filters: _Optional[_Union[_common_pb2.Filters, _Mapping]] = ..., order: _Optional[_Union[_common_pb2.Order, str]] = ..., page: _Optional[_Union[_common_pb2.Page, _Mapping]] = ..., skip_fusion_inputs: _Optional[bool] = ...) -> None: ...

class StoreSearchResponse(_message.Message):
    __slots__ = ("hits", "total", "observation_total", "summary_total", "prompt_total")
    HITS_FIELD_NUMBER: _ClassVar[int]
    TOTAL_FIELD_NUMBER: _ClassVar[int]
    OBSERVATION_TOTAL_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_TOTAL_FIELD_NUMBER: _ClassVar[int]
    PROMPT_TOTAL_FIELD_NUMBER: _ClassVar[int]
    hits: _containers.RepeatedCompositeFieldContainer[_common_pb2.IndexRow]
    total: int
    observation_total: int
    summary_total: int
    prompt_total: int
    def __init__(self, hits: _Optional[_Iterable[_Union[_common_pb2.IndexRow, _Mapping]]] = ..., total: _Optional[int] = ..., observation_total: _Optional[int] = ..., summary_total: _Optional[int] = ..., prompt_total: _Optional[int] = ...) -> None: ...

class StoreTimelineRequest(_message.Message):
    __slots__ = ("ref", "epoch", "depth_before", "depth_after", "filters")
    REF_FIELD_NUMBER: _ClassVar[int]
    EPOCH_FIELD_NUMBER: _ClassVar[int]
    DEPTH_BEFORE_FIELD_NUMBER: _ClassVar[int]
    DEPTH_AFTER_FIELD_NUMBER: _ClassVar[int]
    FILTERS_FIELD_NUMBER: _ClassVar[int]
    ref: _common_pb2.Ref
    epoch: int
    depth_before: int
    depth_after: int
    filters: _common_pb2.Filters
    def __init__(self, ref: _Optional[_Union[_common_pb2.Ref, _Mapping]] = ..., epoch: _Optional[int] = ..., depth_before: _Optional[int] = ..., depth_after: _Optional[int] = ..., filters: _Optional[_Union[_common_pb2.Filters, _Mapping]] = ...) -> None: ...

class StoreTimelineResponse(_message.Message):
    __slots__ = ("items", "rows", "anchor_index")
    ITEMS_FIELD_NUMBER: _ClassVar[int]
    ROWS_FIELD_NUMBER: _ClassVar[int]
    ANCHOR_INDEX_FIELD_NUMBER: _ClassVar[int]
    items: _containers.RepeatedCompositeFieldContainer[_common_pb2.Record]
    rows: _containers.RepeatedCompositeFieldContainer[_common_pb2.IndexRow]
    anchor_index: int
    def __init__(self, items: _Optional[_Iterable[_Union[_common_pb2.Record, _Mapping]]] = ..., rows: _Optional[_Iterable[_Union[_common_pb2.IndexRow, _Mapping]]] = ..., anchor_index: _Optional[int] = ...) -> None: ...

class DeleteRecordsRequest(_message.Message):
    __slots__ = ("refs",)
    REFS_FIELD_NUMBER: _ClassVar[int]
    refs: _containers.RepeatedCompositeFieldContainer[_common_pb2.Ref]
    def __init__(self, refs: _Optional[_Iterable[_Union[_common_pb2.Ref, _Mapping]]] = ...) -> None: ...

class DeleteRecordsResponse(_message.Message):
    __slots__ = ("deleted",)
    DELETED_FIELD_NUMBER: _ClassVar[int]
    deleted: int
    def __init__(self, deleted: _Optional[int] = ...) -> None: ...

class ReadChangesRequest(_message.Message):
    __slots__ = ("after_seq", "limit")
    AFTER_SEQ_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    after_seq: int
    limit: int
    def __init__(self, after_seq: _Optional[int] = ..., limit: _Optional[int] = ...) -> None: ...

class Change(_message.Message):
    __slots__ = ("seq", "ref", "op", "record")
    SEQ_FIELD_NUMBER: _ClassVar[int]
    REF_FIELD_NUMBER: _ClassVar[int]
    OP_FIELD_NUMBER: _ClassVar[int]
    RECORD_FIELD_NUMBER: _ClassVar[int]
    seq: int
    ref: _common_pb2.Ref
    op: ChangeOp
    record: _common_pb2.Record
    def __init__(self, seq: _Optional[int] = ..., ref: _Optional[_Union[_common_pb2.Ref, _Mapping]] = ..., op: _Optional[_Union[ChangeOp, str]] = ..., record: _Optional[_Union[_common_pb2.Record, _Mapping]] = ...) -> None: ...

class ReadChangesResponse(_message.Message):
    __slots__ = ("changes", "head_seq")
    CHANGES_FIELD_NUMBER: _ClassVar[int]
    HEAD_SEQ_FIELD_NUMBER: _ClassVar[int]
    changes: _containers.RepeatedCompositeFieldContainer[Change]
    head_seq: int
    def __init__(self, changes: _Optional[_Iterable[_Union[Change, _Mapping]]] = ..., head_seq: _Optional[int] = ...) -> None: ...

class StatsRequest(_message.Message):
    __slots__ = ("project",)
    PROJECT_FIELD_NUMBER: _ClassVar[int]
    project: str
    def __init__(self, project: _Optional[str] = ...) -> None: ...

class StatsResponse(_message.Message):
    __slots__ = ("sessions", "prompts", "observations", "summaries", "tool_uses", "db_bytes", "schema_version", "head_seq")
    SESSIONS_FIELD_NUMBER: _ClassVar[int]
    PROMPTS_FIELD_NUMBER: _ClassVar[int]
    OBSERVATIONS_FIELD_NUMBER: _ClassVar[int]
    SUMMARIES_FIELD_NUMBER: _ClassVar[int]
    TOOL_USES_FIELD_NUMBER: _ClassVar[int]
    DB_BYTES_FIELD_NUMBER: _ClassVar[int]
    SCHEMA_VERSION_FIELD_NUMBER: _ClassVar[int]
    HEAD_SEQ_FIELD_NUMBER: _ClassVar[int]
    sessions: int
    prompts: int
    observations: int
    summaries: int
    tool_uses: int
    db_bytes: int
    schema_version: int
    head_seq: int
    def __init__(self, sessions: _Optional[int] = ..., prompts: _Optional[int] = ..., observations: _Optional[int] = ..., summaries: _Optional[int] = ..., tool_uses: _Optional[int] = ..., db_bytes: _Optional[int] = ..., schema_version: _Optional[int] = ..., head_seq: _Optional[int] = ...) -> None: ...

class Cursor(_message.Message):
    __slots__ = ("token", "state_json", "created_at_epoch", "expires_at_epoch")
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    STATE_JSON_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_EPOCH_FIELD_NUMBER: _ClassVar[int]
    EXPIRES_AT_EPOCH_FIELD_NUMBER: _ClassVar[int]
    token: str
    state_json: str
    created_at_epoch: int
    expires_at_epoch: int
    def __init__(self, token: _Optional[str] = ..., state_json: _Optional[str] = ..., created_at_epoch: _Optional[int] = ..., expires_at_epoch: _Optional[int] = ...) -> None: ...

class LoadCursorRequest(_message.Message):
    __slots__ = ("token", "now_epoch")
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    NOW_EPOCH_FIELD_NUMBER: _ClassVar[int]
    token: str
    now_epoch: int
    def __init__(self, token: _Optional[str] = ..., now_epoch: _Optional[int] = ...) -> None: ...

class PurgeCursorsRequest(_message.Message):
    __slots__ = ("now_epoch",)
    NOW_EPOCH_FIELD_NUMBER: _ClassVar[int]
    now_epoch: int
    def __init__(self, now_epoch: _Optional[int] = ...) -> None: ...

class PurgeCursorsResponse(_message.Message):
    __slots__ = ("purged",)
    PURGED_FIELD_NUMBER: _ClassVar[int]
    purged: int
    def __init__(self, purged: _Optional[int] = ...) -> None: ...

class WorkState(_message.Message):
    __slots__ = ("project", "key", "content", "version", "updated_at", "updated_at_epoch")
    PROJECT_FIELD_NUMBER: _ClassVar[int]
    KEY_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_EPOCH_FIELD_NUMBER: _ClassVar[int]
    project: str
    key: str
    content: str
    version: int
    updated_at: str
    updated_at_epoch: int
    def __init__(self, project: _Optional[str] = ..., key: _Optional[str] = ..., content: _Optional[str] = ..., version: _Optional[int] = ..., updated_at: _Optional[str] = ..., updated_at_epoch: _Optional[int] = ...) -> None: ...

class WriteWorkStateRequest(_message.Message):
    __slots__ = ("project", "key", "content", "expected_version")
    PROJECT_FIELD_NUMBER: _ClassVar[int]
    KEY_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_VERSION_FIELD_NUMBER: _ClassVar[int]
    project: str
    key: str
    content: str
    expected_version: int
    def __init__(self, project: _Optional[str] = ..., key: _Optional[str] = ..., content: _Optional[str] = ..., expected_version: _Optional[int] = ...) -> None: ...

class ReadWorkStateRequest(_message.Message):
    __slots__ = ("project", "key", "history")
    PROJECT_FIELD_NUMBER: _ClassVar[int]
    KEY_FIELD_NUMBER: _ClassVar[int]
    HISTORY_FIELD_NUMBER: _ClassVar[int]
    project: str
    key: str
    history: int
    def __init__(self, project: _Optional[str] = ..., key: _Optional[str] = ..., history: _Optional[int] = ...) -> None: ...

class ReadWorkStateResponse(_message.Message):
    __slots__ = ("current", "history")
    CURRENT_FIELD_NUMBER: _ClassVar[int]
    HISTORY_FIELD_NUMBER: _ClassVar[int]
    current: WorkState
    history: _containers.RepeatedCompositeFieldContainer[WorkState]
    def __init__(self, current: _Optional[_Union[WorkState, _Mapping]] = ..., history: _Optional[_Iterable[_Union[WorkState, _Mapping]]] = ...) -> None: ...

class CorpusFilter(_message.Message):
    __slots__ = ("project", "types", "concepts", "files", "query", "date_start_epoch", "date_end_epoch", "limit")
    PROJECT_FIELD_NUMBER: _ClassVar[int]
    TYPES_FIELD_NUMBER: _ClassVar[int]
    CONCEPTS_FIELD_NUMBER: _ClassVar[int]
    FILES_FIELD_NUMBER: _ClassVar[int]
    QUERY_FIELD_NUMBER: _ClassVar[int]
    DATE_START_EPOCH_FIELD_NUMBER: _ClassVar[int]
    DATE_END_EPOCH_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    project: str
    types: _containers.RepeatedScalarFieldContainer[str]
    concepts: _containers.RepeatedScalarFieldContainer[str]
    files: _containers.RepeatedScalarFieldContainer[str]
    query: str
    date_start_epoch: int
    date_end_epoch: int
    limit: int
    def __init__(self, project: _Optional[str] = ..., types: _Optional[_Iterable[str]] = ..., concepts: _Optional[_Iterable[str]] = ..., files: _Optional[_Iterable[str]] = ..., query: _Optional[str] = ..., date_start_epoch: _Optional[int] = ..., date_end_epoch: _Optional[int] = ..., limit: _Optional[int] = ...) -> None: ...

class CorpusStats(_message.Message):
    __slots__ = ("observation_count", "token_estimate", "earliest", "latest", "type_breakdown")
    class TypeBreakdownEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: int
        def __init__(self, key: _Optional[str] = ..., value: _Optional[int] = ...) -> None: ...
    OBSERVATION_COUNT_FIELD_NUMBER: _ClassVar[int]
    TOKEN_ESTIMATE_FIELD_NUMBER: _ClassVar[int]
    EARLIEST_FIELD_NUMBER: _ClassVar[int]
    LATEST_FIELD_NUMBER: _ClassVar[int]
    TYPE_BREAKDOWN_FIELD_NUMBER: _ClassVar[int]
    observation_count: int
    token_estimate: int
    earliest: str
    latest: str
    type_breakdown: _containers.ScalarMap[str, int]
    def __init__(self, observation_count: _Optional[int] = ..., token_estimate: _Optional[int] = ..., earliest: _Optional[str] = ..., latest: _Optional[str] = ..., type_breakdown: _Optional[_Mapping[str, int]] = ...) -> None: ...

class CorpusJob(_message.Message):
    __slots__ = ("kind", "outcome", "message", "started_at_epoch", "finished_at_epoch", "done", "total")
    KIND_FIELD_NUMBER: _ClassVar[int]
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    STARTED_AT_EPOCH_FIELD_NUMBER: _ClassVar[int]
    FINISHED_AT_EPOCH_FIELD_NUMBER: _ClassVar[int]
    DONE_FIELD_NUMBER: _ClassVar[int]
    TOTAL_FIELD_NUMBER: _ClassVar[int]
    kind: str
    outcome: str
    message: str
    started_at_epoch: int
    finished_at_epoch: int
    done: int
    total: int
    def __init__(self, kind: _Optional[str] = ..., outcome: _Optional[str] = ..., message: _Optional[str] = ..., started_at_epoch: _Optional[int] = ..., finished_at_epoch: _Optional[int] = ..., done: _Optional[int] = ..., total: _Optional[int] = ...) -> None: ...

class CorpusTurn(_message.Message):
    __slots__ = ("question", "answer", "citations", "created_at_epoch")
    QUESTION_FIELD_NUMBER: _ClassVar[int]
    ANSWER_FIELD_NUMBER: _ClassVar[int]
    CITATIONS_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_EPOCH_FIELD_NUMBER: _ClassVar[int]
    question: str
    answer: str
    citations: _containers.RepeatedScalarFieldContainer[int]
    created_at_epoch: int
    def __init__(self, question: _Optional[str] = ..., answer: _Optional[str] = ..., citations: _Optional[_Iterable[int]] = ..., created_at_epoch: _Optional[int] = ...) -> None: ...

class Corpus(_message.Message):
    __slots__ = ("name", "description", "filter", "observation_ids", "stats", "priming_state", "last_job", "digest_json", "session_id", "history", "created_at_epoch", "updated_at_epoch")
    NAME_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    FILTER_FIELD_NUMBER: _ClassVar[int]
    OBSERVATION_IDS_FIELD_NUMBER: _ClassVar[int]
    STATS_FIELD_NUMBER: _ClassVar[int]
    PRIMING_STATE_FIELD_NUMBER: _ClassVar[int]
    LAST_JOB_FIELD_NUMBER: _ClassVar[int]
    DIGEST_JSON_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    HISTORY_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_EPOCH_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_EPOCH_FIELD_NUMBER: _ClassVar[int]
    name: str
    description: str
    filter: CorpusFilter
    observation_ids: _containers.RepeatedScalarFieldContainer[int]
    stats: CorpusStats
    priming_state: str
    last_job: CorpusJob
    digest_json: str
    session_id: str
    history: _containers.RepeatedCompositeFieldContainer[CorpusTurn]
    created_at_epoch: int
    updated_at_epoch: int
    def __init__(self, name: _Optional[str] = ..., description: _Optional[str] = ..., filter: _Optional[_Union[CorpusFilter, _Mapping]] = ..., observation_ids: _Optional[_Iterable[int]] = ..., stats: _Optional[_Union[CorpusStats, _Mapping]] = ..., priming_state: _Optional[str] = ..., last_job: _Optional[_Union[CorpusJob, _Mapping]] = ..., digest_json: _Optional[str] = ..., session_id: _Optional[str] = ..., history: _Optional[_Iterable[_Union[CorpusTurn, _Mapping]]] = ..., created_at_epoch: _Optional[int] = ..., updated_at_epoch: _Optional[int] = ...) -> None: ...

class GetCorpusRequest(_message.Message):
    __slots__ = ("name", "project")
    NAME_FIELD_NUMBER: _ClassVar[int]
    PROJECT_FIELD_NUMBER: _ClassVar[int]
    name: str
    project: str
    def __init__(self, name: _Optional[str] = ..., project: _Optional[str] = ...) -> None: ...

class ListCorporaRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ListCorporaResponse(_message.Message):
    __slots__ = ("corpora",)
    CORPORA_FIELD_NUMBER: _ClassVar[int]
    corpora: _containers.RepeatedCompositeFieldContainer[Corpus]
    def __init__(self, corpora: _Optional[_Iterable[_Union[Corpus, _Mapping]]] = ...) -> None: ...

class UpdateCorpusRequest(_message.Message):
    __slots__ = ("name", "priming_state", "last_job", "digest_json", "session_id", "append_turn", "clear_history", "expected_state", "project")
    NAME_FIELD_NUMBER: _ClassVar[int]
    PRIMING_STATE_FIELD_NUMBER: _ClassVar[int]
    LAST_JOB_FIELD_NUMBER: _ClassVar[int]
    DIGEST_JSON_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    APPEND_TURN_FIELD_NUMBER: _ClassVar[int]
    CLEAR_HISTORY_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_STATE_FIELD_NUMBER: _ClassVar[int]
    PROJECT_FIELD_NUMBER: _ClassVar[int]
    name: str
    priming_state: str
    last_job: CorpusJob
    digest_json: str
    session_id: str
    append_turn: CorpusTurn
    clear_history: bool
    expected_state: str
    project: str
    def __init__(self, name: _Optional[str] = ..., priming_state: _Optional[str] = ..., last_job: _Optional[_Union[CorpusJob, _Mapping]] = ..., digest_json: _Optional[str] = ..., session_id: _Optional[str] = ..., append_turn: _Optional[_Union[CorpusTurn, _Mapping]] = ..., clear_history: _Optional[bool] = ..., expected_state: _Optional[str] = ..., project: _Optional[str] = ...) -> None: ...

class ExportRequest(_message.Message):
    __slots__ = ("project",)
    PROJECT_FIELD_NUMBER: _ClassVar[int]
    project: str
    def __init__(self, project: _Optional[str] = ...) -> None: ...

class ExportItem(_message.Message):
    __slots__ = ("session", "prompt", "observation", "summary", "tool_use")
    SESSION_FIELD_NUMBER: _ClassVar[int]
    PROMPT_FIELD_NUMBER: _ClassVar[int]
    OBSERVATION_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    TOOL_USE_FIELD_NUMBER: _ClassVar[int]
    session: _common_pb2.Session
    prompt: _common_pb2.UserPrompt
    observation: _common_pb2.Observation
    summary: _common_pb2.Summary
    tool_use: _common_pb2.ToolUse
    def __init__(self, session: _Optional[_Union[_common_pb2.Session, _Mapping]] = ..., prompt: _Optional[_Union[_common_pb2.UserPrompt, _Mapping]] = ..., observation: _Optional[_Union[_common_pb2.Observation, _Mapping]] = ..., summary: _Optional[_Union[_common_pb2.Summary, _Mapping]] = ..., tool_use: _Optional[_Union[_common_pb2.ToolUse, _Mapping]] = ...) -> None: ...

class ImportRequest(_message.Message):
    __slots__ = ("items",)
    ITEMS_FIELD_NUMBER: _ClassVar[int]
    items: _containers.RepeatedCompositeFieldContainer[ExportItem]
    def __init__(self, items: _Optional[_Iterable[_Union[ExportItem, _Mapping]]] = ...) -> None: ...

class ImportError(_message.Message):
    __slots__ = ("index", "message")
    INDEX_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    index: int
    message: str
    def __init__(self, index: _Optional[int] = ..., message: _Optional[str] = ...) -> None: ...

class ImportResponse(_message.Message):
    __slots__ = ("imported", "skipped", "errors")
    IMPORTED_FIELD_NUMBER: _ClassVar[int]
    SKIPPED_FIELD_NUMBER: _ClassVar[int]
    ERRORS_FIELD_NUMBER: _ClassVar[int]
    imported: int
    skipped: int
    errors: _containers.RepeatedCompositeFieldContainer[ImportError]
    def __init__(self, imported: _Optional[int] = ..., skipped: _Optional[int] = ..., errors: _Optional[_Iterable[_Union[ImportError, _Mapping]]] = ...) -> None: ...

class ForgetRequest(_message.Message):
    __slots__ = ("refs", "sessions", "project")
    REFS_FIELD_NUMBER: _ClassVar[int]
    SESSIONS_FIELD_NUMBER: _ClassVar[int]
    PROJECT_FIELD_NUMBER: _ClassVar[int]
    refs: _containers.RepeatedCompositeFieldContainer[_common_pb2.Ref]
    sessions: _containers.RepeatedScalarFieldContainer[str]
    project: str
    def __init__(self, refs: _Optional[_Iterable[_Union[_common_pb2.Ref, _Mapping]]] = ..., sessions: _Optional[_Iterable[str]] = ..., project: _Optional[str] = ...) -> None: ...

class ForgetResponse(_message.Message):
    __slots__ = ("observations", "summaries", "prompts", "sessions", "tool_uses", "corpora", "refs")
    OBSERVATIONS_FIELD_NUMBER: _ClassVar[int]
    SUMMARIES_FIELD_NUMBER: _ClassVar[int]
    PROMPTS_FIELD_NUMBER: _ClassVar[int]
    SESSIONS_FIELD_NUMBER: _ClassVar[int]
    TOOL_USES_FIELD_NUMBER: _ClassVar[int]
    CORPORA_FIELD_NUMBER: _ClassVar[int]
    REFS_FIELD_NUMBER: _ClassVar[int]
    observations: int
    summaries: int
    prompts: int
    sessions: int
    tool_uses: int
    corpora: int
    refs: _containers.RepeatedCompositeFieldContainer[_common_pb2.Ref]
    def __init__(self, observations: _Optional[int] = ..., summaries: _Optional[int] = ..., prompts: _Optional[int] = ..., sessions: _Optional[int] = ..., tool_uses: _Optional[int] = ..., corpora: _Optional[int] = ..., refs: _Optional[_Iterable[_Union[_common_pb2.Ref, _Mapping]]] = ...) -> None: ...

class EditObservationRequest(_message.Message):
    __slots__ = ("id", "title", "type", "concepts", "replace_concepts")
    ID_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    CONCEPTS_FIELD_NUMBER: _ClassVar[int]
    REPLACE_CONCEPTS_FIELD_NUMBER: _ClassVar[int]
    id: int
    title: str
    type: str
    concepts: _containers.RepeatedScalarFieldContainer[str]
    replace_concepts: bool
    def __init__(self, id: _Optional[int] = ..., title: _Optional[str] = ..., type: _Optional[str] = ..., concepts: _Optional[_Iterable[str]] = ..., replace_concepts: _Optional[bool] = ...) -> None: ...

class ActivityRequest(_message.Message):
    __slots__ = ("project", "days")
    PROJECT_FIELD_NUMBER: _ClassVar[int]
    DAYS_FIELD_NUMBER: _ClassVar[int]
    project: str
    days: int
    def __init__(self, project: _Optional[str] = ..., days: _Optional[int] = ...) -> None: ...

class ActivityDay(_message.Message):
    __slots__ = ("day", "observations", "summaries", "prompts")
    DAY_FIELD_NUMBER: _ClassVar[int]
    OBSERVATIONS_FIELD_NUMBER: _ClassVar[int]
    SUMMARIES_FIELD_NUMBER: _ClassVar[int]
    PROMPTS_FIELD_NUMBER: _ClassVar[int]
    day: str
    observations: int
    summaries: int
    prompts: int
    def __init__(self, day: _Optional[str] = ..., observations: _Optional[int] = ..., summaries: _Optional[int] = ..., prompts: _Optional[int] = ...) -> None: ...

class ProjectCount(_message.Message):
    __slots__ = ("project", "sessions", "observations", "last_epoch")
    PROJECT_FIELD_NUMBER: _ClassVar[int]
    SESSIONS_FIELD_NUMBER: _ClassVar[int]
    OBSERVATIONS_FIELD_NUMBER: _ClassVar[int]
    LAST_EPOCH_FIELD_NUMBER: _ClassVar[int]
    project: str
    sessions: int
    observations: int
    last_epoch: int
    def __init__(self, project: _Optional[str] = ..., sessions: _Optional[int] = ..., observations: _Optional[int] = ..., last_epoch: _Optional[int] = ...) -> None: ...

class ActivityResponse(_message.Message):
    __slots__ = ("days", "projects")
    DAYS_FIELD_NUMBER: _ClassVar[int]
    PROJECTS_FIELD_NUMBER: _ClassVar[int]
    days: _containers.RepeatedCompositeFieldContainer[ActivityDay]
    projects: _containers.RepeatedCompositeFieldContainer[ProjectCount]
    def __init__(self, days: _Optional[_Iterable[_Union[ActivityDay, _Mapping]]] = ..., projects: _Optional[_Iterable[_Union[ProjectCount, _Mapping]]] = ...) -> None: ...

class MarkWrongRequest(_message.Message):
    __slots__ = ("refs", "undo", "reason")
    REFS_FIELD_NUMBER: _ClassVar[int]
    UNDO_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    refs: _containers.RepeatedCompositeFieldContainer[_common_pb2.Ref]
    undo: bool
    reason: str
    def __init__(self, refs: _Optional[_Iterable[_Union[_common_pb2.Ref, _Mapping]]] = ..., undo: _Optional[bool] = ..., reason: _Optional[str] = ...) -> None: ...

class MarkWrongResponse(_message.Message):
    __slots__ = ("changed",)
    CHANGED_FIELD_NUMBER: _ClassVar[int]
    changed: _containers.RepeatedCompositeFieldContainer[_common_pb2.Ref]
    def __init__(self, changed: _Optional[_Iterable[_Union[_common_pb2.Ref, _Mapping]]] = ...) -> None: ...

class AcquireLeaseRequest(_message.Message):
    __slots__ = ("name", "holder", "ttl_ms")
    NAME_FIELD_NUMBER: _ClassVar[int]
    HOLDER_FIELD_NUMBER: _ClassVar[int]
    TTL_MS_FIELD_NUMBER: _ClassVar[int]
    name: str
    holder: str
    ttl_ms: int
    def __init__(self, name: _Optional[str] = ..., holder: _Optional[str] = ..., ttl_ms: _Optional[int] = ...) -> None: ...

class Lease(_message.Message):
    __slots__ = ("name", "granted", "holder", "expires_at_epoch", "acquired_at_epoch")
    NAME_FIELD_NUMBER: _ClassVar[int]
    GRANTED_FIELD_NUMBER: _ClassVar[int]
    HOLDER_FIELD_NUMBER: _ClassVar[int]
    EXPIRES_AT_EPOCH_FIELD_NUMBER: _ClassVar[int]
    ACQUIRED_AT_EPOCH_FIELD_NUMBER: _ClassVar[int]
    name: str
    granted: bool
    holder: str
    expires_at_epoch: int
    acquired_at_epoch: int
    def __init__(self, name: _Optional[str] = ..., granted: _Optional[bool] = ..., holder: _Optional[str] = ..., expires_at_epoch: _Optional[int] = ..., acquired_at_epoch: _Optional[int] = ...) -> None: ...

class WhoAmIRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class WhoAmIResponse(_message.Message):
    __slots__ = ("user", "projects", "all_projects", "admin")
    USER_FIELD_NUMBER: _ClassVar[int]
    PROJECTS_FIELD_NUMBER: _ClassVar[int]
    ALL_PROJECTS_FIELD_NUMBER: _ClassVar[int]
    ADMIN_FIELD_NUMBER: _ClassVar[int]
    user: str
    projects: _containers.RepeatedScalarFieldContainer[str]
    all_projects: bool
    admin: bool
    def __init__(self, user: _Optional[str] = ..., projects: _Optional[_Iterable[str]] = ..., all_projects: _Optional[bool] = ..., admin: _Optional[bool] = ...) -> None: ...

class AccessToken(_message.Message):
    __slots__ = ("id", "user", "projects", "all_projects", "created_at_epoch", "revoked_at_epoch")
    ID_FIELD_NUMBER: _ClassVar[int]
    USER_FIELD_NUMBER: _ClassVar[int]
    PROJECTS_FIELD_NUMBER: _ClassVar[int]
    ALL_PROJECTS_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_EPOCH_FIELD_NUMBER: _ClassVar[int]
    REVOKED_AT_EPOCH_FIELD_NUMBER: _ClassVar[int]
    id: int
    user: str
    projects: _containers.RepeatedScalarFieldContainer[str]
    all_projects: bool
    created_at_epoch: int
    revoked_at_epoch: int
    def __init__(self, id: _Optional[int] = ..., user: _Optional[str] = ..., projects: _Optional[_Iterable[str]] = ..., all_projects: _Optional[bool] = ..., created_at_epoch: _Optional[int] = ..., revoked_at_epoch: _Optional[int] = ...) -> None: ...

class AddTokenRequest(_message.Message):
    __slots__ = ("user", "projects", "all_projects")
    USER_FIELD_NUMBER: _ClassVar[int]
    PROJECTS_FIELD_NUMBER: _ClassVar[int]
    ALL_PROJECTS_FIELD_NUMBER: _ClassVar[int]
    user: str
    projects: _containers.RepeatedScalarFieldContainer[str]
    all_projects: bool
    def __init__(self, user: _Optional[str] = ..., projects: _Optional[_Iterable[str]] = ..., all_projects: _Optional[bool] = ...) -> None: ...

class AddTokenResponse(_message.Message):
    __slots__ = ("token", "secret")
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    SECRET_FIELD_NUMBER: _ClassVar[int]
    token: AccessToken
    secret: str
    def __init__(self, token: _Optional[_Union[AccessToken, _Mapping]] = ..., secret: _Optional[str] = ...) -> None: ...

class ListTokensRequest(_message.Message):
    __slots__ = ("include_revoked",)
    INCLUDE_REVOKED_FIELD_NUMBER: _ClassVar[int]
    include_revoked: bool
    def __init__(self, include_revoked: _Optional[bool] = ...) -> None: ...

class ListTokensResponse(_message.Message):
    __slots__ = ("tokens",)
    TOKENS_FIELD_NUMBER: _ClassVar[int]
    tokens: _containers.RepeatedCompositeFieldContainer[AccessToken]
    def __init__(self, tokens: _Optional[_Iterable[_Union[AccessToken, _Mapping]]] = ...) -> None: ...

class RevokeTokenRequest(_message.Message):
    __slots__ = ("id",)
    ID_FIELD_NUMBER: _ClassVar[int]
    id: int
    def __init__(self, id: _Optional[int] = ...) -> None: ...
