from mnemo.v1 import common_pb2 as _common_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class VectorQueryRequest(_message.Message):
    __slots__ = ("text", "filters", "limit")
    TEXT_FIELD_NUMBER: _ClassVar[int]
    FILTERS_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    text: str
    filters: _common_pb2.Filters
    limit: int
    def __init__(self, text: _Optional[str] = ..., filters: _Optional[_Union[_common_pb2.Filters, _Mapping]] = ..., limit: _Optional[int] = ...) -> None: ...

class VectorHit(_message.Message):
    __slots__ = ("ref", "distance", "chunk_id")
    REF_FIELD_NUMBER: _ClassVar[int]
    DISTANCE_FIELD_NUMBER: _ClassVar[int]
    CHUNK_ID_FIELD_NUMBER: _ClassVar[int]
    ref: _common_pb2.Ref
    distance: float
    chunk_id: str
    def __init__(self, ref: _Optional[_Union[_common_pb2.Ref, _Mapping]] = ..., distance: _Optional[float] = ..., chunk_id: _Optional[str] = ...) -> None: ...

class VectorQueryResponse(_message.Message):
    __slots__ = ("hits",)
    HITS_FIELD_NUMBER: _ClassVar[int]
    hits: _containers.RepeatedCompositeFieldContainer[VectorHit]
    def __init__(self, hits: _Optional[_Iterable[_Union[VectorHit, _Mapping]]] = ...) -> None: ...

class VectorCountRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class VectorCountResponse(_message.Message):
    __slots__ = ("count",)
    COUNT_FIELD_NUMBER: _ClassVar[int]
    count: int
    def __init__(self, count: _Optional[int] = ...) -> None: ...

class VectorStatusRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class VectorStatusResponse(_message.Message):
    __slots__ = ("watermark", "head_seq", "lag", "model", "dimension", "documents", "backend", "model_loaded")
    WATERMARK_FIELD_NUMBER: _ClassVar[int]
    HEAD_SEQ_FIELD_NUMBER: _ClassVar[int]
    LAG_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    DIMENSION_FIELD_NUMBER: _ClassVar[int]
    DOCUMENTS_FIELD_NUMBER: _ClassVar[int]
    BACKEND_FIELD_NUMBER: _ClassVar[int]
    MODEL_LOADED_FIELD_NUMBER: _ClassVar[int]
    watermark: int
    head_seq: int
    lag: int
    model: str
    dimension: int
    documents: int
    backend: str
    model_loaded: bool
    def __init__(self, watermark: _Optional[int] = ..., head_seq: _Optional[int] = ..., lag: _Optional[int] = ..., model: _Optional[str] = ..., dimension: _Optional[int] = ..., documents: _Optional[int] = ..., backend: _Optional[str] = ..., model_loaded: _Optional[bool] = ...) -> None: ...

class VectorSyncRequest(_message.Message):
    __slots__ = ("max_changes",)
    MAX_CHANGES_FIELD_NUMBER: _ClassVar[int]
    max_changes: int
    def __init__(self, max_changes: _Optional[int] = ...) -> None: ...

class VectorSyncResponse(_message.Message):
    __slots__ = ("applied", "watermark", "documents")
    APPLIED_FIELD_NUMBER: _ClassVar[int]
    WATERMARK_FIELD_NUMBER: _ClassVar[int]
    DOCUMENTS_FIELD_NUMBER: _ClassVar[int]
    applied: int
    watermark: int
    documents: int
    def __init__(self, applied: _Optional[int] = ..., watermark: _Optional[int] = ..., documents: _Optional[int] = ...) -> None: ...

class VectorRebuildRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class CorpusDocument(_message.Message):
    __slots__ = ("id", "text", "observation_id")
    ID_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    OBSERVATION_ID_FIELD_NUMBER: _ClassVar[int]
    id: str
    text: str
    observation_id: int
    def __init__(self, id: _Optional[str] = ..., text: _Optional[str] = ..., observation_id: _Optional[int] = ...) -> None: ...

class UpsertCorpusDocumentsRequest(_message.Message):
    __slots__ = ("corpus", "documents", "reset", "generation", "project")
    CORPUS_FIELD_NUMBER: _ClassVar[int]
    DOCUMENTS_FIELD_NUMBER: _ClassVar[int]
    RESET_FIELD_NUMBER: _ClassVar[int]
    GENERATION_FIELD_NUMBER: _ClassVar[int]
    PROJECT_FIELD_NUMBER: _ClassVar[int]
    corpus: str
    documents: _containers.RepeatedCompositeFieldContainer[CorpusDocument]
    reset: bool
    generation: str
    project: str
    def __init__(self, corpus: _Optional[str] = ..., documents: _Optional[_Iterable[_Union[CorpusDocument, _Mapping]]] = ..., reset: _Optional[bool] = ..., generation: _Optional[str] = ..., project: _Optional[str] = ...) -> None: ...

class UpsertCorpusDocumentsResponse(_message.Message):
    __slots__ = ("documents",)
    DOCUMENTS_FIELD_NUMBER: _ClassVar[int]
    documents: int
    def __init__(self, documents: _Optional[int] = ...) -> None: ...

class QueryCorpusRequest(_message.Message):
    __slots__ = ("corpus", "text", "limit", "project")
    CORPUS_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    PROJECT_FIELD_NUMBER: _ClassVar[int]
    corpus: str
    text: str
    limit: int
    project: str
    def __init__(self, corpus: _Optional[str] = ..., text: _Optional[str] = ..., limit: _Optional[int] = ..., project: _Optional[str] = ...) -> None: ...

class CorpusPassage(_message.Message):
    __slots__ = ("id", "text", "observation_id", "distance")
    ID_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    OBSERVATION_ID_FIELD_NUMBER: _ClassVar[int]
    DISTANCE_FIELD_NUMBER: _ClassVar[int]
    id: str
    text: str
    observation_id: int
    distance: float
    def __init__(self, id: _Optional[str] = ..., text: _Optional[str] = ..., observation_id: _Optional[int] = ..., distance: _Optional[float] = ...) -> None: ...

class QueryCorpusResponse(_message.Message):
    __slots__ = ("passages",)
    PASSAGES_FIELD_NUMBER: _ClassVar[int]
    passages: _containers.RepeatedCompositeFieldContainer[CorpusPassage]
    def __init__(self, passages: _Optional[_Iterable[_Union[CorpusPassage, _Mapping]]] = ...) -> None: ...

class DropCorpusRequest(_message.Message):
    __slots__ = ("corpus", "project")
    CORPUS_FIELD_NUMBER: _ClassVar[int]
    PROJECT_FIELD_NUMBER: _ClassVar[int]
    corpus: str
    project: str
    def __init__(self, corpus: _Optional[str] = ..., project: _Optional[str] = ...) -> None: ...

class DropCorpusResponse(_message.Message):
    __slots__ = ("dropped",)
    DROPPED_FIELD_NUMBER: _ClassVar[int]
    dropped: bool
    def __init__(self, dropped: _Optional[bool] = ...) -> None: ...
