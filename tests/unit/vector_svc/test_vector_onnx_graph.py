"""The int8 model's graph rewrites (vector_svc/onnx_graph.py): the word embeddings looked up before
dequantizing give the same vectors bit for bit as the model file run as it is, and the fused GELUs
the same within float rounding; the encoder's MatMuls on int8 weights (the `minilm-int8q` embedder)
replace all 36 dequantized MatMuls and stay close to the exact fp32 vectors; a graph a rewrite does
not know is left alone; no model bytes are held."""

from __future__ import annotations

import math
import struct
from collections import Counter

import numpy as np
import onnxruntime as ort
import pytest
from structlog.testing import capture_logs

from vector_svc import embedders
from vector_svc.embedders import MiniLMFp32Embedder, MiniLMInt8Embedder, MiniLMInt8QEmbedder, minilm_int8_model_path
from vector_svc.onnx_graph import (
    MS_DOMAIN,
    WORD_EMBEDDINGS,
    fuse_gelu,
    gather_before_dequantize,
    graph_ops,
    parse,
    quantize_matmuls,
)

pytestmark = pytest.mark.unit

TEXTS = [
    "the store change feed resumes after a restart",
    "login fails with 401 after the token refresh",
    "用户登录失败",
    "x",
]
# Measured against the exact fp32 model, each text alone: 300 LoCoMo questions mean 0.995, min 0.990;
# 300 texts of 1-4 words mean 0.990, min 0.974 (the float32 int8 run: min 0.9994 / 0.9975); 200
# README lines embedded in batches mean 0.993, min 0.985. Short texts move most: one token's
# activations set the whole quantization range.
QUANTIZED_TO_FP32_MIN = 0.97


def session_of(data: bytes | str) -> ort.InferenceSession:
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.enable_cpu_mem_arena = False
    options.enable_mem_pattern = False
    return ort.InferenceSession(data, options, providers=["CPUExecutionProvider"])


def embedder_on(session: ort.InferenceSession) -> MiniLMInt8Embedder:
    embedder = MiniLMInt8Embedder(workers=1)
    embedder.model_memory._model = session
    return embedder


def test_the_default_embedder_gives_the_model_files_vectors_within_float_rounding():
    """The lookup rewrite is bit for bit; the fused GELU computes the same formula in another order."""
    rewritten = MiniLMInt8Embedder(workers=1).embed(TEXTS)
    as_shipped = embedder_on(session_of(str(minilm_int8_model_path()))).embed(TEXTS)
    assert np.allclose(rewritten, as_shipped, rtol=0, atol=1e-6)
    assert not np.array_equal(rewritten, as_shipped)  # the fused graph is the one that ran


def test_the_lookup_rewrite_alone_gives_the_model_files_vectors_bit_for_bit():
    rewritten = gather_before_dequantize(minilm_int8_model_path().read_bytes())
    assert rewritten is not None
    as_shipped = embedder_on(session_of(str(minilm_int8_model_path()))).embed(TEXTS)
    assert np.array_equal(embedder_on(session_of(rewritten)).embed(TEXTS), as_shipped)


def with_scalars(data: bytes, old: float, new: float) -> bytes:
    """The model with every float32 scalar constant equal to `old` (as float32 holds it) set to `new`."""
    model = parse(data)
    for tensor in model.graph.initializer:
        value = struct.unpack("<f", tensor.raw_data)[0] if len(tensor.raw_data) == 4 else None
        if tensor.data_type == 1 and value is not None and math.isclose(value, old, rel_tol=1e-6):
            tensor.raw_data = struct.pack("<f", new)
    return model.SerializeToString()


def test_all_six_gelus_become_one_operator_with_their_bias():
    data = minilm_int8_model_path().read_bytes()
    fused = fuse_gelu(data)
    assert fused is not None
    rewritten, count = fused
    ops = Counter(graph_ops(rewritten))
    assert count == 6 and ops[(MS_DOMAIN, "BiasGelu")] == 6 and not ops[("", "Erf")] and not ops[("", "Div")]
    before = Counter(graph_ops(data))
    # Each GELU's Div, Erf, Add(1), Mul(0.5), Mul(x) and the bias Add before it: six nodes become one.
    assert sum(before.values()) - sum(ops.values()) == 6 * 5
    model = parse(rewritten)
    read = {name for node in model.graph.node for name in node.input}
    assert all(t.name in read for t in model.graph.initializer)  # sqrt 2, 1 and 0.5 went with the nodes
    assert fuse_gelu(rewritten) is None  # nothing left to fuse


def test_a_gelu_is_fused_only_with_its_own_constants():
    """Another constant (here 0.6 for 0.5) is another function: nothing is fused."""
    data = minilm_int8_model_path().read_bytes()
    assert fuse_gelu(with_scalars(data, 0.5, 0.6)) is None
    assert fuse_gelu(with_scalars(data, 2 ** 0.5, 1.5)) is None


def test_a_gelu_whose_input_is_read_elsewhere_keeps_its_bias_add():
    model = parse(minilm_int8_model_path().read_bytes())
    erf = next(n for n in model.graph.node if n.op_type == "Erf")
    div_input = next(n for n in model.graph.node if list(n.output) == [erf.input[0]]).input[0]
    reader = model.graph.node.add(op_type="Identity", name="extra_reader", input=[div_input], output=["extra"])
    assert reader.input[0] == div_input
    fused = fuse_gelu(model.SerializeToString())
    assert fused is not None
    ops = Counter(graph_ops(fused[0]))
    assert fused[1] == 6 and ops[(MS_DOMAIN, "Gelu")] == 1 and ops[(MS_DOMAIN, "BiasGelu")] == 5
    gelu = next(n for n in parse(fused[0]).graph.node if n.op_type == "Gelu")
    assert list(gelu.input) == [div_input]  # x itself: the Add that makes it stays for its other reader


def test_the_gather_rewrite_applies_to_the_installed_model_and_moves_the_lookup_ahead():
    data = minilm_int8_model_path().read_bytes()
    rewritten = gather_before_dequantize(data)
    assert rewritten is not None
    assert f"{WORD_EMBEDDINGS}_q".encode() in rewritten
    assert gather_before_dequantize(rewritten) is None  # nothing dequantizes the whole table any more


def test_a_graph_of_another_shape_is_left_alone():
    data = minilm_int8_model_path().read_bytes()
    assert gather_before_dequantize(data, table="no.such.table") is None


def test_all_36_encoder_matmuls_run_on_int8_and_none_is_left_dequantized():
    before = gather_before_dequantize(minilm_int8_model_path().read_bytes())
    assert before is not None
    quantized = quantize_matmuls(before)
    assert quantized is not None
    data, replaced = quantized
    ops = Counter(graph_ops(data))
    assert replaced == 36 and ops[(MS_DOMAIN, "DynamicQuantizeMatMul")] == 36
    # Left: the attention's 12 products of two activations, and the 3 Casts/Muls of the embedding
    # rows and the position table; no weight is dequantized for a MatMul any more.
    assert ops[("", "MatMul")] == Counter(graph_ops(before))[("", "MatMul")] - 36 == 12
    model = parse(data)
    weights = {n.output[0] for n in model.graph.node if n.op_type == "Mul" and n.input[-1].endswith("_scale")}
    assert not [n for n in model.graph.node if n.op_type == "MatMul" and set(n.input) & weights]
    assert [(o.domain, o.version) for o in model.opset_import if o.domain == MS_DOMAIN] == [(MS_DOMAIN, 1)]
    assert quantize_matmuls(data) is None  # nothing left to rewrite


def test_fields_the_schema_does_not_declare_round_trip():
    """Parsed and written back with the minimal schema, the model keeps its size (protobuf may put
    the undeclared fields in another order) and gives the file's vectors bit for bit."""
    data = minilm_int8_model_path().read_bytes()
    again = parse(data).SerializeToString()
    assert len(again) == len(data)
    assert np.array_equal(embedder_on(session_of(again)).embed(TEXTS), embedder_on(session_of(data)).embed(TEXTS))


def test_quantized_vectors_stay_close_to_the_exact_fp32_model():
    quantized = MiniLMInt8QEmbedder(workers=1).embed(TEXTS)
    exact = MiniLMFp32Embedder().embed(TEXTS)
    assert np.allclose(np.linalg.norm(quantized, axis=1), 1.0, atol=1e-5)
    assert (quantized * exact).sum(axis=1).min() > QUANTIZED_TO_FP32_MIN
    assert not np.array_equal(quantized, MiniLMInt8Embedder(workers=1).embed(TEXTS))  # hence a model name of its own
    assert MiniLMInt8QEmbedder.model != MiniLMInt8Embedder.model


def unknown_graph() -> bytes:
    """The model with each dequantized weight's float tensor renamed: a valid graph, but not the
    Cast(W_q) -> W_f -> Mul(W_f, W_scale) -> W pattern the MatMul rewrite knows."""
    model = parse(minilm_int8_model_path().read_bytes())
    for node in model.graph.node:
        for i, name in enumerate(node.input):
            if name.endswith("_f"):
                node.input[i] = f"{name}loat"
        for i, name in enumerate(node.output):
            if name.endswith("_f"):
                node.output[i] = f"{name}loat"
    return model.SerializeToString()


def embedded_with_model_file(data: bytes, embedder: type[MiniLMInt8Embedder], tmp_path, monkeypatch
                             ) -> tuple[np.ndarray, list[str]]:
    """TEXTS embedded by `embedder` with `data` installed as the int8 model file, and the reasons
    of the rewrites it skipped."""
    path = tmp_path / "model.onnx"
    path.write_bytes(data)
    monkeypatch.setattr(embedders, "minilm_int8_model_path", lambda: path)
    with capture_logs() as logs:
        vectors = embedder(workers=1).embed(TEXTS)
    return vectors, [e["reason"] for e in logs if e["event"] == "int8_model_not_rewritten"]


def test_an_unknown_graph_falls_back_to_the_file_with_a_warning(tmp_path, monkeypatch):
    data = unknown_graph()
    assert quantize_matmuls(data) is None and gather_before_dequantize(data) is None
    fallback, reasons = embedded_with_model_file(data, MiniLMInt8QEmbedder, tmp_path, monkeypatch)
    assert len(reasons) == 2 and "MatMuls stay float32" in reasons[1]
    # Run as the file says: the float32 run's vectors.
    assert np.allclose(fallback, embedder_on(session_of(data)).embed(TEXTS), atol=1e-6)


def test_a_graph_without_the_gelu_formula_runs_unfused_with_a_warning(tmp_path, monkeypatch):
    data = with_scalars(minilm_int8_model_path().read_bytes(), 2 ** 0.5, 1.5)
    fallback, reasons = embedded_with_model_file(data, MiniLMInt8Embedder, tmp_path, monkeypatch)
    assert reasons == ["unexpected graph: its GELUs stay five operators"]
    assert np.array_equal(fallback, embedder_on(session_of(data)).embed(TEXTS))


def test_the_session_holds_no_copy_of_the_model_bytes():
    for embedder in (MiniLMInt8Embedder(workers=1), MiniLMInt8QEmbedder(workers=1)):
        with embedder.model_memory.use() as session:
            assert session._model_bytes is None
