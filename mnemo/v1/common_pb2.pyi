from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class DocKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    DOC_KIND_UNSPECIFIED: _ClassVar[DocKind]
    DOC_KIND_OBSERVATION: _ClassVar[DocKind]
    DOC_KIND_SUMMARY: _ClassVar[DocKind]
    DOC_KIND_PROMPT: _ClassVar[DocKind]

class Order(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    ORDER_RELEVANCE: _ClassVar[Order]
    ORDER_DATE_DESC: _ClassVar[Order]
    ORDER_DATE_ASC: _ClassVar[Order]
DOC_KIND_UNSPECIFIED: DocKind
DOC_KIND_OBSERVATION: DocKind
DOC_KIND_SUMMARY: DocKind
DOC_KIND_PROMPT: DocKind
ORDER_RELEVANCE: Order
ORDER_DATE_DESC: Order
ORDER_DATE_ASC: Order

class Ref(_message.Message):
    __slots__ = ("kind", "id")
    KIND_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    kind: DocKind
    id: int
    def __init__(self, kind: _Optional[_Union[DocKind, str]] = ..., id: _Optional[int] = ...) -> None: ...

class Session(_message.Message):
    __slots__ = ("id", "content_session_id", "memory_session_id", "project", "platform_source", "user_prompt", "status", "started_at", "started_at_epoch", "completed_at", "completed_at_epoch", "prompt_counter", "custom_title", "external_id", "writer")
    ID_FIELD_NUMBER: _ClassVar[int]
    CONTENT_SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    MEMORY_SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    PROJECT_FIELD_NUMBER: _ClassVar[int]
    PLATFORM_SOURCE_FIELD_NUMBER: _ClassVar[int]
    USER_PROMPT_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    STARTED_AT_FIELD_NUMBER: _ClassVar[int]
    STARTED_AT_EPOCH_FIELD_NUMBER: _ClassVar[int]
    COMPLETED_AT_FIELD_NUMBER: _ClassVar[int]
    COMPLETED_AT_EPOCH_FIELD_NUMBER: _ClassVar[int]
    PROMPT_COUNTER_FIELD_NUMBER: _ClassVar[int]
    CUSTOM_TITLE_FIELD_NUMBER: _ClassVar[int]
    EXTERNAL_ID_FIELD_NUMBER: _ClassVar[int]
    WRITER_FIELD_NUMBER: _ClassVar[int]
    id: int
    content_session_id: str
    memory_session_id: str
    project: str
    platform_source: str
    user_prompt: str
    status: str
    started_at: str
    started_at_epoch: int
    completed_at: str
    completed_at_epoch: int
    prompt_counter: int
    custom_title: str
    external_id: str
    writer: str
    def __init__(self, id: _Optional[int] = ..., content_session_id: _Optional[str] = ..., memory_session_id: _Optional[str] = ..., project: _Optional[str] = ..., platform_source: _Optional[str] = ..., user_prompt: _Optional[str] = ..., status: _Optional[str] = ..., started_at: _Optional[str] = ..., started_at_epoch: _Optional[int] = ..., completed_at: _Optional[str] = ..., completed_at_epoch: _Optional[int] = ..., prompt_counter: _Optional[int] = ..., custom_title: _Optional[str] = ..., external_id: _Optional[str] = ..., writer: _Optional[str] = ...) -> None: ...

class UserPrompt(_message.Message):
    __slots__ = ("id", "content_session_id", "prompt_number", "prompt_text", "created_at", "created_at_epoch", "project", "memory_session_id", "platform_source", "external_id", "writer")
    ID_FIELD_NUMBER: _ClassVar[int]
    CONTENT_SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    PROMPT_NUMBER_FIELD_NUMBER: _ClassVar[int]
    PROMPT_TEXT_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_EPOCH_FIELD_NUMBER: _ClassVar[int]
    PROJECT_FIELD_NUMBER: _ClassVar[int]
    MEMORY_SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    PLATFORM_SOURCE_FIELD_NUMBER: _ClassVar[int]
    EXTERNAL_ID_FIELD_NUMBER: _ClassVar[int]
    WRITER_FIELD_NUMBER: _ClassVar[int]
    id: int
    content_session_id: str
    prompt_number: int
    prompt_text: str
    created_at: str
    created_at_epoch: int
    project: str
    memory_session_id: str
    platform_source: str
    external_id: str
    writer: str
    def __init__(self, id: _Optional[int] = ..., content_session_id: _Optional[str] = ..., prompt_number: _Optional[int] = ..., prompt_text: _Optional[str] = ..., created_at: _Optional[str] = ..., created_at_epoch: _Optional[int] = ..., project: _Optional[str] = ..., memory_session_id: _Optional[str] = ..., platform_source: _Optional[str] = ..., external_id: _Optional[str] = ..., writer: _Optional[str] = ...) -> None: ...

class Observation(_message.Message):
    __slots__ = ("id", "memory_session_id", "project", "type", "title", "subtitle", "narrative", "facts", "concepts", "files_read", "files_modified", "prompt_number", "discovery_tokens", "created_at", "created_at_epoch", "content_hash", "external_id", "text", "platform_source", "tool_use_ids", "writer")
    ID_FIELD_NUMBER: _ClassVar[int]
    MEMORY_SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    PROJECT_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    SUBTITLE_FIELD_NUMBER: _ClassVar[int]
    NARRATIVE_FIELD_NUMBER: _ClassVar[int]
    FACTS_FIELD_NUMBER: _ClassVar[int]
    CONCEPTS_FIELD_NUMBER: _ClassVar[int]
    FILES_READ_FIELD_NUMBER: _ClassVar[int]
    FILES_MODIFIED_FIELD_NUMBER: _ClassVar[int]
    PROMPT_NUMBER_FIELD_NUMBER: _ClassVar[int]
    DISCOVERY_TOKENS_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_EPOCH_FIELD_NUMBER: _ClassVar[int]
    CONTENT_HASH_FIELD_NUMBER: _ClassVar[int]
    EXTERNAL_ID_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    PLATFORM_SOURCE_FIELD_NUMBER: _ClassVar[int]
    TOOL_USE_IDS_FIELD_NUMBER: _ClassVar[int]
    WRITER_FIELD_NUMBER: _ClassVar[int]
    id: int
    memory_session_id: str
    project: str
    type: str
    title: str
    subtitle: str
    narrative: str
    facts: _containers.RepeatedScalarFieldContainer[str]
    concepts: _containers.RepeatedScalarFieldContainer[str]
    files_read: _containers.RepeatedScalarFieldContainer[str]
    files_modified: _containers.RepeatedScalarFieldContainer[str]
    prompt_number: int
    discovery_tokens: int
    created_at: str
    created_at_epoch: int
    content_hash: str
    external_id: str
    text: str
    platform_source: str
    tool_use_ids: _containers.RepeatedScalarFieldContainer[int]
    writer: str
    def __init__(self, id: _Optional[int] = ..., memory_session_id: _Optional[str] = ..., project: _Optional[str] = ..., type: _Optional[str] = ..., title: _Optional[str] = ..., subtitle: _Optional[str] = ..., narrative: _Optional[str] = ..., facts: _Optional[_Iterable[str]] = ..., concepts: _Optional[_Iterable[str]] = ..., files_read: _Optional[_Iterable[str]] = ..., files_modified: _Optional[_Iterable[str]] = ..., prompt_number: _Optional[int] = ..., discovery_tokens: _Optional[int] = ..., created_at: _Optional[str] = ..., created_at_epoch: _Optional[int] = ..., content_hash: _Optional[str] = ..., external_id: _Optional[str] = ..., text: _Optional[str] = ..., platform_source: _Optional[str] = ..., tool_use_ids: _Optional[_Iterable[int]] = ..., writer: _Optional[str] = ...) -> None: ...

class Summary(_message.Message):
    __slots__ = ("id", "memory_session_id", "project", "request", "investigated", "learned", "completed", "next_steps", "notes", "prompt_number", "discovery_tokens", "created_at", "created_at_epoch", "external_id", "files_read", "files_edited", "platform_source", "writer")
    ID_FIELD_NUMBER: _ClassVar[int]
    MEMORY_SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    PROJECT_FIELD_NUMBER: _ClassVar[int]
    REQUEST_FIELD_NUMBER: _ClassVar[int]
    INVESTIGATED_FIELD_NUMBER: _ClassVar[int]
    LEARNED_FIELD_NUMBER: _ClassVar[int]
    COMPLETED_FIELD_NUMBER: _ClassVar[int]
    NEXT_STEPS_FIELD_NUMBER: _ClassVar[int]
    NOTES_FIELD_NUMBER: _ClassVar[int]
    PROMPT_NUMBER_FIELD_NUMBER: _ClassVar[int]
    DISCOVERY_TOKENS_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_EPOCH_FIELD_NUMBER: _ClassVar[int]
    EXTERNAL_ID_FIELD_NUMBER: _ClassVar[int]
    FILES_READ_FIELD_NUMBER: _ClassVar[int]
    FILES_EDITED_FIELD_NUMBER: _ClassVar[int]
    PLATFORM_SOURCE_FIELD_NUMBER: _ClassVar[int]
    WRITER_FIELD_NUMBER: _ClassVar[int]
    id: int
    memory_session_id: str
    project: str
    request: str
    investigated: str
    learned: str
    completed: str
    next_steps: str
    notes: str
    prompt_number: int
    discovery_tokens: int
    created_at: str
    created_at_epoch: int
    external_id: str
    files_read: _containers.RepeatedScalarFieldContainer[str]
    files_edited: _containers.RepeatedScalarFieldContainer[str]
    platform_source: str
    writer: str
    def __init__(self, id: _Optional[int] = ..., memory_session_id: _Optional[str] = ..., project: _Optional[str] = ..., request: _Optional[str] = ..., investigated: _Optional[str] = ..., learned: _Optional[str] = ..., completed: _Optional[str] = ..., next_steps: _Optional[str] = ..., notes: _Optional[str] = ..., prompt_number: _Optional[int] = ..., discovery_tokens: _Optional[int] = ..., created_at: _Optional[str] = ..., created_at_epoch: _Optional[int] = ..., external_id: _Optional[str] = ..., files_read: _Optional[_Iterable[str]] = ..., files_edited: _Optional[_Iterable[str]] = ..., platform_source: _Optional[str] = ..., writer: _Optional[str] = ...) -> None: ...

class ToolUse(_message.Message):
    __slots__ = ("id", "content_session_id", "memory_session_id", "project", "tool_use_id", "tool_name", "tool_input", "tool_response", "input_truncated", "response_truncated", "input_size", "response_size", "cwd", "prompt_number", "created_at", "created_at_epoch", "observation_ids", "writer")
    ID_FIELD_NUMBER: _ClassVar[int]
    CONTENT_SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    MEMORY_SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    PROJECT_FIELD_NUMBER: _ClassVar[int]
    TOOL_USE_ID_FIELD_NUMBER: _ClassVar[int]
    TOOL_NAME_FIELD_NUMBER: _ClassVar[int]
    TOOL_INPUT_FIELD_NUMBER: _ClassVar[int]
    TOOL_RESPONSE_FIELD_NUMBER: _ClassVar[int]
    INPUT_TRUNCATED_FIELD_NUMBER: _ClassVar[int]
    RESPONSE_TRUNCATED_FIELD_NUMBER: _ClassVar[int]
    INPUT_SIZE_FIELD_NUMBER: _ClassVar[int]
    RESPONSE_SIZE_FIELD_NUMBER: _ClassVar[int]
    CWD_FIELD_NUMBER: _ClassVar[int]
    PROMPT_NUMBER_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_EPOCH_FIELD_NUMBER: _ClassVar[int]
    OBSERVATION_IDS_FIELD_NUMBER: _ClassVar[int]
    WRITER_FIELD_NUMBER: _ClassVar[int]
    id: int
    content_session_id: str
    memory_session_id: str
    project: str
    tool_use_id: str
    tool_name: str
    tool_input: str
    tool_response: str
    input_truncated: bool
    response_truncated: bool
    input_size: int
    response_size: int
    cwd: str
    prompt_number: int
    created_at: str
    created_at_epoch: int
    observation_ids: _containers.RepeatedScalarFieldContainer[int]
    writer: str
    def __init__(self, id: _Optional[int] = ..., content_session_id: _Optional[str] = ..., memory_session_id: _Optional[str] = ..., project: _Optional[str] = ..., tool_use_id: _Optional[str] = ..., tool_name: _Optional[str] = ..., tool_input: _Optional[str] = ..., tool_response: _Optional[str] = ..., input_truncated: _Optional[bool] = ..., response_truncated: _Optional[bool] = ..., input_size: _Optional[int] = ..., response_size: _Optional[int] = ..., cwd: _Optional[str] = ..., prompt_number: _Optional[int] = ..., created_at: _Optional[str] = ..., created_at_epoch: _Optional[int] = ..., observation_ids: _Optional[_Iterable[int]] = ..., writer: _Optional[str] = ...) -> None: ...

class Record(_message.Message):
    __slots__ = ("observation", "summary", "prompt", "marked_wrong")
    OBSERVATION_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    PROMPT_FIELD_NUMBER: _ClassVar[int]
    MARKED_WRONG_FIELD_NUMBER: _ClassVar[int]
    observation: Observation
    summary: Summary
    prompt: UserPrompt
    marked_wrong: WrongMark
    def __init__(self, observation: _Optional[_Union[Observation, _Mapping]] = ..., summary: _Optional[_Union[Summary, _Mapping]] = ..., prompt: _Optional[_Union[UserPrompt, _Mapping]] = ..., marked_wrong: _Optional[_Union[WrongMark, _Mapping]] = ...) -> None: ...

class WrongMark(_message.Message):
    __slots__ = ("marked_at_epoch", "reason")
    MARKED_AT_EPOCH_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    marked_at_epoch: int
    reason: str
    def __init__(self, marked_at_epoch: _Optional[int] = ..., reason: _Optional[str] = ...) -> None: ...

class Filters(_message.Message):
    __slots__ = ("project", "platform_source", "kinds", "obs_types", "concepts", "files", "date_start_epoch", "date_end_epoch", "include_marked_wrong", "scope_projects")
    PROJECT_FIELD_NUMBER: _ClassVar[int]
    PLATFORM_SOURCE_FIELD_NUMBER: _ClassVar[int]
    KINDS_FIELD_NUMBER: _ClassVar[int]
    OBS_TYPES_FIELD_NUMBER: _ClassVar[int]
    CONCEPTS_FIELD_NUMBER: _ClassVar[int]
    FILES_FIELD_NUMBER: _ClassVar[int]
    DATE_START_EPOCH_FIELD_NUMBER: _ClassVar[int]
    DATE_END_EPOCH_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_MARKED_WRONG_FIELD_NUMBER: _ClassVar[int]
    SCOPE_PROJECTS_FIELD_NUMBER: _ClassVar[int]
    project: str
    platform_source: str
    kinds: _containers.RepeatedScalarFieldContainer[DocKind]
    obs_types: _containers.RepeatedScalarFieldContainer[str]
    concepts: _containers.RepeatedScalarFieldContainer[str]
    files: _containers.RepeatedScalarFieldContainer[str]
    date_start_epoch: int
    date_end_epoch: int
    include_marked_wrong: bool
    scope_projects: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, project: _Optional[str] = ..., platform_source: _Optional[str] = ..., kinds: _Optional[_Iterable[_Union[DocKind, str]]] = ..., obs_types: _Optional[_Iterable[str]] = ..., concepts: _Optional[_Iterable[str]] = ..., files: _Optional[_Iterable[str]] = ..., date_start_epoch: _Optional[int] = ..., date_end_epoch: _Optional[int] = ..., include_marked_wrong: _Optional[bool] = ..., scope_projects: _Optional[_Iterable[str]] = ...) -> None: ...

class Page(_message.Message):
    __slots__ = ("limit", "offset")
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    OFFSET_FIELD_NUMBER: _ClassVar[int]
    limit: int
    offset: int
    def __init__(self, limit: _Optional[int] = ..., offset: _Optional[int] = ...) -> None: ...

class IndexRow(_message.Message):
    __slots__ = ("ref", "display_id", "type", "title", "created_at", "created_at_epoch", "token_estimate", "score", "project", "file", "asks", "specificity", "evidence")
    REF_FIELD_NUMBER: _ClassVar[int]
    DISPLAY_ID_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_EPOCH_FIELD_NUMBER: _ClassVar[int]
    TOKEN_ESTIMATE_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    PROJECT_FIELD_NUMBER: _ClassVar[int]
    FILE_FIELD_NUMBER: _ClassVar[int]
    ASKS_FIELD_NUMBER: _ClassVar[int]
    SPECIFICITY_FIELD_NUMBER: _ClassVar[int]
    EVIDENCE_FIELD_NUMBER: _ClassVar[int]
    ref: Ref
    display_id: str
    type: str
    title: str
    created_at: str
    created_at_epoch: int
    token_estimate: int
    score: float
    project: str
    file: str
    asks: bool
    specificity: float
    evidence: float
    def __init__(self, ref: _Optional[_Union[Ref, _Mapping]] = ..., display_id: _Optional[str] = ..., type: _Optional[str] = ..., title: _Optional[str] = ..., created_at: _Optional[str] = ..., created_at_epoch: _Optional[int] = ..., token_estimate: _Optional[int] = ..., score: _Optional[float] = ..., project: _Optional[str] = ..., file: _Optional[str] = ..., asks: _Optional[bool] = ..., specificity: _Optional[float] = ..., evidence: _Optional[float] = ...) -> None: ...
