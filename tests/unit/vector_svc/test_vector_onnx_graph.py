"""The int8 model's word embeddings looked up before dequantizing (vector_svc/onnx_graph.py):
the same vectors bit for bit as the model file run as it is, and no model bytes held."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest

from vector_svc.embedders import MiniLMInt8Embedder, minilm_int8_model_path
from vector_svc.onnx_graph import WORD_EMBEDDINGS, gather_before_dequantize

pytestmark = pytest.mark.unit

TEXTS = [
    "the store change feed resumes after a restart",
    "login fails with 401 after the token refresh",
    "用户登录失败",
    "x",
]


def plain_file_embedder() -> MiniLMInt8Embedder:
    """The embedder as it was before the rewrite: onnxruntime on the model file itself."""
    embedder = MiniLMInt8Embedder(workers=1)

    def from_file():
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.enable_cpu_mem_arena = False
        options.enable_mem_pattern = False
        return ort.InferenceSession(str(minilm_int8_model_path()), options, providers=["CPUExecutionProvider"])

    embedder.model_memory._model = from_file()
    return embedder


def test_rewritten_model_gives_the_same_vectors_bit_for_bit():
    rewritten = MiniLMInt8Embedder(workers=1).embed(TEXTS)
    assert np.array_equal(rewritten, plain_file_embedder().embed(TEXTS))


def test_the_rewrite_applies_to_the_installed_model_and_moves_the_lookup_ahead():
    data = minilm_int8_model_path().read_bytes()
    rewritten = gather_before_dequantize(data)
    assert rewritten is not None
    assert f"{WORD_EMBEDDINGS}_q".encode() in rewritten
    assert gather_before_dequantize(rewritten) is None  # nothing dequantizes the whole table any more


def test_a_graph_of_another_shape_is_left_alone():
    data = minilm_int8_model_path().read_bytes()
    assert gather_before_dequantize(data, table="no.such.table") is None


def test_the_session_holds_no_copy_of_the_model_bytes():
    with MiniLMInt8Embedder(workers=1).model_memory.use() as session:
        assert session._model_bytes is None
