from mnemo.v1 import common_pb2 as _common_pb2
from mnemo.v1 import store_pb2 as _store_pb2
from mnemo.v1 import vector_pb2 as _vector_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class GetCapabilitiesRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class GetCapabilitiesResponse(_message.Message):
    __slots__ = ("capabilities",)
    CAPABILITIES_FIELD_NUMBER: _ClassVar[int]
    capabilities: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, capabilities: _Optional[_Iterable[str]] = ...) -> None: ...

class SearchRequest(_message.Message):
    __slots__ = ("query", "limit", "offset", "project", "platform_source", "categories", "obs_types", "date_start", "date_end", "order_by", "concepts", "files", "operators")
    QUERY_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    OFFSET_FIELD_NUMBER: _ClassVar[int]
    PROJECT_FIELD_NUMBER: _ClassVar[int]
    PLATFORM_SOURCE_FIELD_NUMBER: _ClassVar[int]
    CATEGORIES_FIELD_NUMBER: _ClassVar[int]
    OBS_TYPES_FIELD_NUMBER: _ClassVar[int]
    DATE_START_FIELD_NUMBER: _ClassVar[int]
    DATE_END_FIELD_NUMBER: _ClassVar[int]
    ORDER_BY_FIELD_NUMBER: _ClassVar[int]
    CONCEPTS_FIELD_NUMBER: _ClassVar[int]
    FILES_FIELD_NUMBER: _ClassVar[int]
    OPERATORS_FIELD_NUMBER: _ClassVar[int]
    query: str
    limit: int
    offset: int
    project: str
    platform_source: str
    categories: _containers.RepeatedScalarFieldContainer[str]
    obs_types: _containers.RepeatedScalarFieldContainer[str]
    date_start: str
    date_end: str
    order_by: str
    concepts: _containers.RepeatedScalarFieldContainer[str]
    files: _containers.RepeatedScalarFieldContainer[str]
    operators: bool
    def __init__(self, query: _Optional[str] = ..., limit: _Optional[int] = ..., offset: _Optional[int] = ..., project: _Optional[str] = ..., platform_source: _Optional[str] = ..., categories: _Optional[_Iterable[str]] = ..., obs_types: _Optional[_Iterable[str]] = ..., date_start: _Optional[str] = ..., date_end: _Optional[str] = ..., order_by: _Optional[str] = ..., concepts: _Optional[_Iterable[str]] = ..., files: _Optional[_Iterable[str]] = ..., operators: _Optional[bool] = ...) -> None: ...

class SearchCounts(_message.Message):
    __slots__ = ("total", "observations", "summaries", "prompts")
    TOTAL_FIELD_NUMBER: _ClassVar[int]
    OBSERVATIONS_FIELD_NUMBER: _ClassVar[int]
    SUMMARIES_FIELD_NUMBER: _ClassVar[int]
    PROMPTS_FIELD_NUMBER: _ClassVar[int]
    total: int
    observations: int
    summaries: int
    prompts: int
    def __init__(self, total: _Optional[int] = ..., observations: _Optional[int] = ..., summaries: _Optional[int] = ..., prompts: _Optional[int] = ...) -> None: ...

class SearchReply(_message.Message):
    __slots__ = ("text", "rows", "counts", "strategy", "notice")
    TEXT_FIELD_NUMBER: _ClassVar[int]
    ROWS_FIELD_NUMBER: _ClassVar[int]
    COUNTS_FIELD_NUMBER: _ClassVar[int]
    STRATEGY_FIELD_NUMBER: _ClassVar[int]
    NOTICE_FIELD_NUMBER: _ClassVar[int]
    text: str
    rows: _containers.RepeatedCompositeFieldContainer[_common_pb2.IndexRow]
    counts: SearchCounts
    strategy: str
    notice: str
    def __init__(self, text: _Optional[str] = ..., rows: _Optional[_Iterable[_Union[_common_pb2.IndexRow, _Mapping]]] = ..., counts: _Optional[_Union[SearchCounts, _Mapping]] = ..., strategy: _Optional[str] = ..., notice: _Optional[str] = ...) -> None: ...

class TimelineRequest(_message.Message):
    __slots__ = ("anchor", "query", "depth_before", "depth_after", "project")
    ANCHOR_FIELD_NUMBER: _ClassVar[int]
    QUERY_FIELD_NUMBER: _ClassVar[int]
    DEPTH_BEFORE_FIELD_NUMBER: _ClassVar[int]
    DEPTH_AFTER_FIELD_NUMBER: _ClassVar[int]
    PROJECT_FIELD_NUMBER: _ClassVar[int]
    anchor: str
    query: str
    depth_before: int
    depth_after: int
    project: str
    def __init__(self, anchor: _Optional[str] = ..., query: _Optional[str] = ..., depth_before: _Optional[int] = ..., depth_after: _Optional[int] = ..., project: _Optional[str] = ...) -> None: ...

class TimelineReply(_message.Message):
    __slots__ = ("text", "items", "anchor_index", "anchor")
    TEXT_FIELD_NUMBER: _ClassVar[int]
    ITEMS_FIELD_NUMBER: _ClassVar[int]
    ANCHOR_INDEX_FIELD_NUMBER: _ClassVar[int]
    ANCHOR_FIELD_NUMBER: _ClassVar[int]
    text: str
    items: _containers.RepeatedCompositeFieldContainer[_common_pb2.IndexRow]
    anchor_index: int
    anchor: str
    def __init__(self, text: _Optional[str] = ..., items: _Optional[_Iterable[_Union[_common_pb2.IndexRow, _Mapping]]] = ..., anchor_index: _Optional[int] = ..., anchor: _Optional[str] = ...) -> None: ...

class GetObservationsRequest(_message.Message):
    __slots__ = ("ids", "order_by", "project", "limit")
    IDS_FIELD_NUMBER: _ClassVar[int]
    ORDER_BY_FIELD_NUMBER: _ClassVar[int]
    PROJECT_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    ids: _containers.RepeatedScalarFieldContainer[int]
    order_by: str
    project: str
    limit: int
    def __init__(self, ids: _Optional[_Iterable[int]] = ..., order_by: _Optional[str] = ..., project: _Optional[str] = ..., limit: _Optional[int] = ...) -> None: ...

class GetObservationsReply(_message.Message):
    __slots__ = ("text", "observations")
    TEXT_FIELD_NUMBER: _ClassVar[int]
    OBSERVATIONS_FIELD_NUMBER: _ClassVar[int]
    text: str
    observations: _containers.RepeatedCompositeFieldContainer[_common_pb2.Observation]
    def __init__(self, text: _Optional[str] = ..., observations: _Optional[_Iterable[_Union[_common_pb2.Observation, _Mapping]]] = ...) -> None: ...

class MemSearchRequest(_message.Message):
    __slots__ = ("mode", "query", "project", "limit", "max_details", "depth_before", "depth_after", "continuation", "selected_ids")
    MODE_FIELD_NUMBER: _ClassVar[int]
    QUERY_FIELD_NUMBER: _ClassVar[int]
    PROJECT_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    MAX_DETAILS_FIELD_NUMBER: _ClassVar[int]
    DEPTH_BEFORE_FIELD_NUMBER: _ClassVar[int]
    DEPTH_AFTER_FIELD_NUMBER: _ClassVar[int]
    CONTINUATION_FIELD_NUMBER: _ClassVar[int]
    SELECTED_IDS_FIELD_NUMBER: _ClassVar[int]
    mode: str
    query: str
    project: str
    limit: int
    max_details: int
    depth_before: int
    depth_after: int
    continuation: str
    selected_ids: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, mode: _Optional[str] = ..., query: _Optional[str] = ..., project: _Optional[str] = ..., limit: _Optional[int] = ..., max_details: _Optional[int] = ..., depth_before: _Optional[int] = ..., depth_after: _Optional[int] = ..., continuation: _Optional[str] = ..., selected_ids: _Optional[_Iterable[str]] = ...) -> None: ...

class ToolUseRef(_message.Message):
    __slots__ = ("id", "tool_use_id", "tool_name")
    ID_FIELD_NUMBER: _ClassVar[int]
    TOOL_USE_ID_FIELD_NUMBER: _ClassVar[int]
    TOOL_NAME_FIELD_NUMBER: _ClassVar[int]
    id: int
    tool_use_id: str
    tool_name: str
    def __init__(self, id: _Optional[int] = ..., tool_use_id: _Optional[str] = ..., tool_name: _Optional[str] = ...) -> None: ...

class MemDetail(_message.Message):
    __slots__ = ("record", "row", "context", "tool_uses")
    RECORD_FIELD_NUMBER: _ClassVar[int]
    ROW_FIELD_NUMBER: _ClassVar[int]
    CONTEXT_FIELD_NUMBER: _ClassVar[int]
    TOOL_USES_FIELD_NUMBER: _ClassVar[int]
    record: _common_pb2.Record
    row: _common_pb2.IndexRow
    context: _containers.RepeatedCompositeFieldContainer[_common_pb2.IndexRow]
    tool_uses: _containers.RepeatedCompositeFieldContainer[ToolUseRef]
    def __init__(self, record: _Optional[_Union[_common_pb2.Record, _Mapping]] = ..., row: _Optional[_Union[_common_pb2.IndexRow, _Mapping]] = ..., context: _Optional[_Iterable[_Union[_common_pb2.IndexRow, _Mapping]]] = ..., tool_uses: _Optional[_Iterable[_Union[ToolUseRef, _Mapping]]] = ...) -> None: ...

class MemSearchReply(_message.Message):
    __slots__ = ("text", "rows", "total", "continuation", "details", "offset", "has_more", "strategy")
    TEXT_FIELD_NUMBER: _ClassVar[int]
    ROWS_FIELD_NUMBER: _ClassVar[int]
    TOTAL_FIELD_NUMBER: _ClassVar[int]
    CONTINUATION_FIELD_NUMBER: _ClassVar[int]
    DETAILS_FIELD_NUMBER: _ClassVar[int]
    OFFSET_FIELD_NUMBER: _ClassVar[int]
    HAS_MORE_FIELD_NUMBER: _ClassVar[int]
    STRATEGY_FIELD_NUMBER: _ClassVar[int]
    text: str
    rows: _containers.RepeatedCompositeFieldContainer[_common_pb2.IndexRow]
    total: int
    continuation: str
    details: _containers.RepeatedCompositeFieldContainer[MemDetail]
    offset: int
    has_more: bool
    strategy: str
    def __init__(self, text: _Optional[str] = ..., rows: _Optional[_Iterable[_Union[_common_pb2.IndexRow, _Mapping]]] = ..., total: _Optional[int] = ..., continuation: _Optional[str] = ..., details: _Optional[_Iterable[_Union[MemDetail, _Mapping]]] = ..., offset: _Optional[int] = ..., has_more: _Optional[bool] = ..., strategy: _Optional[str] = ...) -> None: ...

class GetToolUsesToolRequest(_message.Message):
    __slots__ = ("ids", "observation_ids", "limit", "project", "content_session_id")
    IDS_FIELD_NUMBER: _ClassVar[int]
    OBSERVATION_IDS_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    PROJECT_FIELD_NUMBER: _ClassVar[int]
    CONTENT_SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    ids: _containers.RepeatedScalarFieldContainer[str]
    observation_ids: _containers.RepeatedScalarFieldContainer[int]
    limit: int
    project: str
    content_session_id: str
    def __init__(self, ids: _Optional[_Iterable[str]] = ..., observation_ids: _Optional[_Iterable[int]] = ..., limit: _Optional[int] = ..., project: _Optional[str] = ..., content_session_id: _Optional[str] = ...) -> None: ...

class GetToolUsesReply(_message.Message):
    __slots__ = ("text", "tool_uses")
    TEXT_FIELD_NUMBER: _ClassVar[int]
    TOOL_USES_FIELD_NUMBER: _ClassVar[int]
    text: str
    tool_uses: _containers.RepeatedCompositeFieldContainer[_common_pb2.ToolUse]
    def __init__(self, text: _Optional[str] = ..., tool_uses: _Optional[_Iterable[_Union[_common_pb2.ToolUse, _Mapping]]] = ...) -> None: ...

class SaveMemoryRequest(_message.Message):
    __slots__ = ("text", "title", "type", "concepts", "files", "project")
    TEXT_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    CONCEPTS_FIELD_NUMBER: _ClassVar[int]
    FILES_FIELD_NUMBER: _ClassVar[int]
    PROJECT_FIELD_NUMBER: _ClassVar[int]
    text: str
    title: str
    type: str
    concepts: _containers.RepeatedScalarFieldContainer[str]
    files: _containers.RepeatedScalarFieldContainer[str]
    project: str
    def __init__(self, text: _Optional[str] = ..., title: _Optional[str] = ..., type: _Optional[str] = ..., concepts: _Optional[_Iterable[str]] = ..., files: _Optional[_Iterable[str]] = ..., project: _Optional[str] = ...) -> None: ...

class SaveMemoryReply(_message.Message):
    __slots__ = ("text", "id", "created")
    TEXT_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    CREATED_FIELD_NUMBER: _ClassVar[int]
    text: str
    id: int
    created: bool
    def __init__(self, text: _Optional[str] = ..., id: _Optional[int] = ..., created: _Optional[bool] = ...) -> None: ...

class WorkStateWriteRequest(_message.Message):
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

class WorkStateReadRequest(_message.Message):
    __slots__ = ("project", "key", "history")
    PROJECT_FIELD_NUMBER: _ClassVar[int]
    KEY_FIELD_NUMBER: _ClassVar[int]
    HISTORY_FIELD_NUMBER: _ClassVar[int]
    project: str
    key: str
    history: int
    def __init__(self, project: _Optional[str] = ..., key: _Optional[str] = ..., history: _Optional[int] = ...) -> None: ...

class WorkStateReply(_message.Message):
    __slots__ = ("text", "current", "history")
    TEXT_FIELD_NUMBER: _ClassVar[int]
    CURRENT_FIELD_NUMBER: _ClassVar[int]
    HISTORY_FIELD_NUMBER: _ClassVar[int]
    text: str
    current: _store_pb2.WorkState
    history: _containers.RepeatedCompositeFieldContainer[_store_pb2.WorkState]
    def __init__(self, text: _Optional[str] = ..., current: _Optional[_Union[_store_pb2.WorkState, _Mapping]] = ..., history: _Optional[_Iterable[_Union[_store_pb2.WorkState, _Mapping]]] = ...) -> None: ...

class SessionStartContextRequest(_message.Message):
    __slots__ = ("project", "token_budget")
    PROJECT_FIELD_NUMBER: _ClassVar[int]
    TOKEN_BUDGET_FIELD_NUMBER: _ClassVar[int]
    project: str
    token_budget: int
    def __init__(self, project: _Optional[str] = ..., token_budget: _Optional[int] = ...) -> None: ...

class SessionStartContextReply(_message.Message):
    __slots__ = ("text", "observations", "summaries")
    TEXT_FIELD_NUMBER: _ClassVar[int]
    OBSERVATIONS_FIELD_NUMBER: _ClassVar[int]
    SUMMARIES_FIELD_NUMBER: _ClassVar[int]
    text: str
    observations: int
    summaries: int
    def __init__(self, text: _Optional[str] = ..., observations: _Optional[int] = ..., summaries: _Optional[int] = ...) -> None: ...

class BuildCorpusRequest(_message.Message):
    __slots__ = ("name", "description", "filter", "date_start", "date_end")
    NAME_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    FILTER_FIELD_NUMBER: _ClassVar[int]
    DATE_START_FIELD_NUMBER: _ClassVar[int]
    DATE_END_FIELD_NUMBER: _ClassVar[int]
    name: str
    description: str
    filter: _store_pb2.CorpusFilter
    date_start: str
    date_end: str
    def __init__(self, name: _Optional[str] = ..., description: _Optional[str] = ..., filter: _Optional[_Union[_store_pb2.CorpusFilter, _Mapping]] = ..., date_start: _Optional[str] = ..., date_end: _Optional[str] = ...) -> None: ...

class CorpusReply(_message.Message):
    __slots__ = ("text", "corpus")
    TEXT_FIELD_NUMBER: _ClassVar[int]
    CORPUS_FIELD_NUMBER: _ClassVar[int]
    text: str
    corpus: _store_pb2.Corpus
    def __init__(self, text: _Optional[str] = ..., corpus: _Optional[_Union[_store_pb2.Corpus, _Mapping]] = ...) -> None: ...

class ListCorporaToolRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ListCorporaReply(_message.Message):
    __slots__ = ("text", "corpora")
    TEXT_FIELD_NUMBER: _ClassVar[int]
    CORPORA_FIELD_NUMBER: _ClassVar[int]
    text: str
    corpora: _containers.RepeatedCompositeFieldContainer[_store_pb2.Corpus]
    def __init__(self, text: _Optional[str] = ..., corpora: _Optional[_Iterable[_Union[_store_pb2.Corpus, _Mapping]]] = ...) -> None: ...

class CorpusNameRequest(_message.Message):
    __slots__ = ("name", "project")
    NAME_FIELD_NUMBER: _ClassVar[int]
    PROJECT_FIELD_NUMBER: _ClassVar[int]
    name: str
    project: str
    def __init__(self, name: _Optional[str] = ..., project: _Optional[str] = ...) -> None: ...

class PrimeEvent(_message.Message):
    __slots__ = ("phase", "done", "total", "message", "result_text", "final", "corpus")
    PHASE_FIELD_NUMBER: _ClassVar[int]
    DONE_FIELD_NUMBER: _ClassVar[int]
    TOTAL_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    RESULT_TEXT_FIELD_NUMBER: _ClassVar[int]
    FINAL_FIELD_NUMBER: _ClassVar[int]
    CORPUS_FIELD_NUMBER: _ClassVar[int]
    phase: str
    done: int
    total: int
    message: str
    result_text: str
    final: bool
    corpus: _store_pb2.Corpus
    def __init__(self, phase: _Optional[str] = ..., done: _Optional[int] = ..., total: _Optional[int] = ..., message: _Optional[str] = ..., result_text: _Optional[str] = ..., final: _Optional[bool] = ..., corpus: _Optional[_Union[_store_pb2.Corpus, _Mapping]] = ...) -> None: ...

class QueryCorpusToolRequest(_message.Message):
    __slots__ = ("name", "question", "limit", "project")
    NAME_FIELD_NUMBER: _ClassVar[int]
    QUESTION_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    PROJECT_FIELD_NUMBER: _ClassVar[int]
    name: str
    question: str
    limit: int
    project: str
    def __init__(self, name: _Optional[str] = ..., question: _Optional[str] = ..., limit: _Optional[int] = ..., project: _Optional[str] = ...) -> None: ...

class QueryCorpusReply(_message.Message):
    __slots__ = ("text", "passages", "answer", "citations")
    TEXT_FIELD_NUMBER: _ClassVar[int]
    PASSAGES_FIELD_NUMBER: _ClassVar[int]
    ANSWER_FIELD_NUMBER: _ClassVar[int]
    CITATIONS_FIELD_NUMBER: _ClassVar[int]
    text: str
    passages: _containers.RepeatedCompositeFieldContainer[CorpusPassageRef]
    answer: str
    citations: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, text: _Optional[str] = ..., passages: _Optional[_Iterable[_Union[CorpusPassageRef, _Mapping]]] = ..., answer: _Optional[str] = ..., citations: _Optional[_Iterable[int]] = ...) -> None: ...

class CorpusPassageRef(_message.Message):
    __slots__ = ("observation_id", "text", "score")
    OBSERVATION_ID_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    observation_id: int
    text: str
    score: float
    def __init__(self, observation_id: _Optional[int] = ..., text: _Optional[str] = ..., score: _Optional[float] = ...) -> None: ...

class ForgetToolRequest(_message.Message):
    __slots__ = ("ids", "sessions", "project")
    IDS_FIELD_NUMBER: _ClassVar[int]
    SESSIONS_FIELD_NUMBER: _ClassVar[int]
    PROJECT_FIELD_NUMBER: _ClassVar[int]
    ids: _containers.RepeatedScalarFieldContainer[str]
    sessions: _containers.RepeatedScalarFieldContainer[str]
    project: str
    def __init__(self, ids: _Optional[_Iterable[str]] = ..., sessions: _Optional[_Iterable[str]] = ..., project: _Optional[str] = ...) -> None: ...

class ForgetReply(_message.Message):
    __slots__ = ("text", "deleted", "vectors_synced")
    TEXT_FIELD_NUMBER: _ClassVar[int]
    DELETED_FIELD_NUMBER: _ClassVar[int]
    VECTORS_SYNCED_FIELD_NUMBER: _ClassVar[int]
    text: str
    deleted: _store_pb2.ForgetResponse
    vectors_synced: bool
    def __init__(self, text: _Optional[str] = ..., deleted: _Optional[_Union[_store_pb2.ForgetResponse, _Mapping]] = ..., vectors_synced: _Optional[bool] = ...) -> None: ...

class RecordDetailRequest(_message.Message):
    __slots__ = ("id",)
    ID_FIELD_NUMBER: _ClassVar[int]
    id: str
    def __init__(self, id: _Optional[str] = ...) -> None: ...

class RecordDetailReply(_message.Message):
    __slots__ = ("record", "row", "tool_uses", "corpora", "work_state", "context")
    RECORD_FIELD_NUMBER: _ClassVar[int]
    ROW_FIELD_NUMBER: _ClassVar[int]
    TOOL_USES_FIELD_NUMBER: _ClassVar[int]
    CORPORA_FIELD_NUMBER: _ClassVar[int]
    WORK_STATE_FIELD_NUMBER: _ClassVar[int]
    CONTEXT_FIELD_NUMBER: _ClassVar[int]
    record: _common_pb2.Record
    row: _common_pb2.IndexRow
    tool_uses: _containers.RepeatedCompositeFieldContainer[_common_pb2.ToolUse]
    corpora: _containers.RepeatedScalarFieldContainer[str]
    work_state: _store_pb2.WorkState
    context: _containers.RepeatedCompositeFieldContainer[_common_pb2.IndexRow]
    def __init__(self, record: _Optional[_Union[_common_pb2.Record, _Mapping]] = ..., row: _Optional[_Union[_common_pb2.IndexRow, _Mapping]] = ..., tool_uses: _Optional[_Iterable[_Union[_common_pb2.ToolUse, _Mapping]]] = ..., corpora: _Optional[_Iterable[str]] = ..., work_state: _Optional[_Union[_store_pb2.WorkState, _Mapping]] = ..., context: _Optional[_Iterable[_Union[_common_pb2.IndexRow, _Mapping]]] = ...) -> None: ...

class OverviewRequest(_message.Message):
    __slots__ = ("project", "days")
    PROJECT_FIELD_NUMBER: _ClassVar[int]
    DAYS_FIELD_NUMBER: _ClassVar[int]
    project: str
    days: int
    def __init__(self, project: _Optional[str] = ..., days: _Optional[int] = ...) -> None: ...

class OverviewReply(_message.Message):
    __slots__ = ("stats", "vector", "activity", "notice")
    STATS_FIELD_NUMBER: _ClassVar[int]
    VECTOR_FIELD_NUMBER: _ClassVar[int]
    ACTIVITY_FIELD_NUMBER: _ClassVar[int]
    NOTICE_FIELD_NUMBER: _ClassVar[int]
    stats: _store_pb2.StatsResponse
    vector: _vector_pb2.VectorStatusResponse
    activity: _store_pb2.ActivityResponse
    notice: str
    def __init__(self, stats: _Optional[_Union[_store_pb2.StatsResponse, _Mapping]] = ..., vector: _Optional[_Union[_vector_pb2.VectorStatusResponse, _Mapping]] = ..., activity: _Optional[_Union[_store_pb2.ActivityResponse, _Mapping]] = ..., notice: _Optional[str] = ...) -> None: ...

class MarkWrongToolRequest(_message.Message):
    __slots__ = ("ids", "undo", "reason")
    IDS_FIELD_NUMBER: _ClassVar[int]
    UNDO_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    ids: _containers.RepeatedScalarFieldContainer[str]
    undo: bool
    reason: str
    def __init__(self, ids: _Optional[_Iterable[str]] = ..., undo: _Optional[bool] = ..., reason: _Optional[str] = ...) -> None: ...

class MarkWrongReply(_message.Message):
    __slots__ = ("text", "changed")
    TEXT_FIELD_NUMBER: _ClassVar[int]
    CHANGED_FIELD_NUMBER: _ClassVar[int]
    text: str
    changed: _containers.RepeatedCompositeFieldContainer[_common_pb2.Ref]
    def __init__(self, text: _Optional[str] = ..., changed: _Optional[_Iterable[_Union[_common_pb2.Ref, _Mapping]]] = ...) -> None: ...

class ObservationAddRequest(_message.Message):
    __slots__ = ("project_id", "server_session_id", "kind", "content", "metadata_json")
    PROJECT_ID_FIELD_NUMBER: _ClassVar[int]
    SERVER_SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    METADATA_JSON_FIELD_NUMBER: _ClassVar[int]
    project_id: str
    server_session_id: str
    kind: str
    content: str
    metadata_json: str
    def __init__(self, project_id: _Optional[str] = ..., server_session_id: _Optional[str] = ..., kind: _Optional[str] = ..., content: _Optional[str] = ..., metadata_json: _Optional[str] = ...) -> None: ...

class ObservationAddReply(_message.Message):
    __slots__ = ("text", "id", "created")
    TEXT_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    CREATED_FIELD_NUMBER: _ClassVar[int]
    text: str
    id: int
    created: bool
    def __init__(self, text: _Optional[str] = ..., id: _Optional[int] = ..., created: _Optional[bool] = ...) -> None: ...

class ObservationEventRequest(_message.Message):
    __slots__ = ("project_id", "event_type", "source_type", "server_session_id", "content_session_id", "memory_session_id", "platform_source", "payload_json", "occurred_at_epoch", "generate")
    PROJECT_ID_FIELD_NUMBER: _ClassVar[int]
    EVENT_TYPE_FIELD_NUMBER: _ClassVar[int]
    SOURCE_TYPE_FIELD_NUMBER: _ClassVar[int]
    SERVER_SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    CONTENT_SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    MEMORY_SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    PLATFORM_SOURCE_FIELD_NUMBER: _ClassVar[int]
    PAYLOAD_JSON_FIELD_NUMBER: _ClassVar[int]
    OCCURRED_AT_EPOCH_FIELD_NUMBER: _ClassVar[int]
    GENERATE_FIELD_NUMBER: _ClassVar[int]
    project_id: str
    event_type: str
    source_type: str
    server_session_id: str
    content_session_id: str
    memory_session_id: str
    platform_source: str
    payload_json: str
    occurred_at_epoch: int
    generate: bool
    def __init__(self, project_id: _Optional[str] = ..., event_type: _Optional[str] = ..., source_type: _Optional[str] = ..., server_session_id: _Optional[str] = ..., content_session_id: _Optional[str] = ..., memory_session_id: _Optional[str] = ..., platform_source: _Optional[str] = ..., payload_json: _Optional[str] = ..., occurred_at_epoch: _Optional[int] = ..., generate: _Optional[bool] = ...) -> None: ...

class ObservationEventReply(_message.Message):
    __slots__ = ("text", "event_id", "job_id")
    TEXT_FIELD_NUMBER: _ClassVar[int]
    EVENT_ID_FIELD_NUMBER: _ClassVar[int]
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    text: str
    event_id: int
    job_id: str
    def __init__(self, text: _Optional[str] = ..., event_id: _Optional[int] = ..., job_id: _Optional[str] = ...) -> None: ...

class ObservationSearchRequest(_message.Message):
    __slots__ = ("project_id", "query", "platform_source", "limit")
    PROJECT_ID_FIELD_NUMBER: _ClassVar[int]
    QUERY_FIELD_NUMBER: _ClassVar[int]
    PLATFORM_SOURCE_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    project_id: str
    query: str
    platform_source: str
    limit: int
    def __init__(self, project_id: _Optional[str] = ..., query: _Optional[str] = ..., platform_source: _Optional[str] = ..., limit: _Optional[int] = ...) -> None: ...

class ObservationSearchReply(_message.Message):
    __slots__ = ("text", "rows", "total")
    TEXT_FIELD_NUMBER: _ClassVar[int]
    ROWS_FIELD_NUMBER: _ClassVar[int]
    TOTAL_FIELD_NUMBER: _ClassVar[int]
    text: str
    rows: _containers.RepeatedCompositeFieldContainer[_common_pb2.IndexRow]
    total: int
    def __init__(self, text: _Optional[str] = ..., rows: _Optional[_Iterable[_Union[_common_pb2.IndexRow, _Mapping]]] = ..., total: _Optional[int] = ...) -> None: ...

class ObservationContextReply(_message.Message):
    __slots__ = ("text", "observation_ids")
    TEXT_FIELD_NUMBER: _ClassVar[int]
    OBSERVATION_IDS_FIELD_NUMBER: _ClassVar[int]
    text: str
    observation_ids: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, text: _Optional[str] = ..., observation_ids: _Optional[_Iterable[int]] = ...) -> None: ...

class ObservationJobRequest(_message.Message):
    __slots__ = ("job_id",)
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    job_id: str
    def __init__(self, job_id: _Optional[str] = ...) -> None: ...

class ObservationJobReply(_message.Message):
    __slots__ = ("text", "job_id", "status", "events", "observations", "error")
    TEXT_FIELD_NUMBER: _ClassVar[int]
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    OBSERVATIONS_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    text: str
    job_id: str
    status: str
    events: int
    observations: int
    error: str
    def __init__(self, text: _Optional[str] = ..., job_id: _Optional[str] = ..., status: _Optional[str] = ..., events: _Optional[int] = ..., observations: _Optional[int] = ..., error: _Optional[str] = ...) -> None: ...
