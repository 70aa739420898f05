"""Embedders: shape, unit norm, determinism, and (once) the real int8 MiniLM model's semantics."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from mnemo.errors import InvalidArgument
from vector_svc.embedders import (
    DIMENSION,
    ONNX_BATCH,
    HashEmbedder,
    MiniLMFp32Embedder,
    MiniLMInt8Embedder,
    MnemoEmbeddingFunction,
    make_embedder,
)

pytestmark = pytest.mark.unit


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.dot(a, b))


def test_hash_embedder_rows_are_unit_vectors_of_the_declared_dimension():
    vectors = HashEmbedder().embed(["the store change feed", "", "!!!", "用户登录失败"])
    assert vectors.shape == (4, DIMENSION)
    assert vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_hash_embedder_is_deterministic_across_instances():
    text = "the vector index resumes after a restart"
    assert np.array_equal(HashEmbedder().embed([text]), HashEmbedder().embed([text]))


def test_hash_embedder_puts_texts_sharing_words_closer_than_unrelated_ones():
    query, near, far = HashEmbedder().embed(
        ["sqlite database locked error", "the database was locked by sqlite", "bananas are yellow fruit"]
    )
    assert cosine(query, near) > cosine(query, far) + 0.2


def test_hash_embedder_matches_cjk_substrings():
    query, near, far = HashEmbedder().embed(["登录", "用户登录失败", "数据库连接超时"])
    assert cosine(query, near) > cosine(query, far)


def test_embedder_counts_calls_and_texts():
    embedder = HashEmbedder()
    embedder.embed(["a", "b"])
    embedder.embed([])
    assert (embedder.calls, embedder.texts_embedded) == (2, 2)


def test_unknown_embedder_is_refused_with_the_choices():
    with pytest.raises(InvalidArgument) as err:
        make_embedder("word2vec")
    assert "hash" in str(err.value) and "minilm-int8" in str(err.value)


def test_embedding_function_config_round_trips_and_embeds_with_the_named_model():
    function = MnemoEmbeddingFunction.for_embedder(HashEmbedder())
    rebuilt = MnemoEmbeddingFunction.build_from_config(function.get_config())
    assert rebuilt.get_config() == {"embedder": "hash", "model": "mnemo-hash-v1", "dimension": 384}
    assert MnemoEmbeddingFunction.name() == "mnemo" and rebuilt.default_space() == "cosine"
    assert not rebuilt.is_legacy()
    (vector,) = rebuilt(["some text"])
    assert np.allclose(vector, HashEmbedder().embed(["some text"])[0])


def test_minilm_int8_ranks_a_paraphrase_above_an_unrelated_sentence():
    embedder = MiniLMInt8Embedder()
    query, paraphrase, unrelated = embedder.embed(
        [
            "How do I fix the database lock error?",
            "Resolving the SQLite 'database is locked' failure",
            "The recipe needs two cups of flour and an egg.",
        ]
    )
    assert np.allclose(np.linalg.norm([query, paraphrase, unrelated], axis=1), 1.0, atol=1e-5)
    assert cosine(query, paraphrase) > cosine(query, unrelated) + 0.2
    # Long input is truncated at the model's window, not refused; spans cover the text's tokens.
    long_text = "word " * 600
    assert embedder.embed([long_text]).shape == (1, DIMENSION)
    spans = embedder.token_spans("database locked")
    assert [("database locked")[a:b] for a, b in spans] == ["database", "locked"]


def test_minilm_fp32_numpy_forward_agrees_with_the_int8_model():
    texts = ["How do I fix the database lock error?", "bananas", "grpc deadline exceeded on stream"]
    exact = MiniLMFp32Embedder().embed(texts)
    quantised = MiniLMInt8Embedder().embed(texts)
    assert exact.shape == (3, DIMENSION)
    assert np.allclose(np.linalg.norm(exact, axis=1), 1.0, atol=1e-5)
    assert (exact * quantised).sum(axis=1).min() > 0.998  # int8 is measured at >= 0.999 of fp32


def test_minilm_int8_embeds_sub_batches_at_once_with_the_same_vectors_as_one_at_a_time():
    # More texts than one ONNX batch, of many lengths, so the sub-batches differ in width.
    texts = [" ".join(["token"] * (1 + i % 37)) + f" number {i}" for i in range(3 * ONNX_BATCH + 5)]
    parallel = MiniLMInt8Embedder(workers=2)
    forward = parallel._forward
    threads_used: set[str] = set()
    # Each thread's first sub-batch waits here for another's: the embed fails (BrokenBarrierError
    # after the timeout) unless two sub-batches run at the same moment.
    met = threading.Barrier(2, timeout=30)

    def watched_forward(model, ids, mask):
        name = threading.current_thread().name
        if name not in threads_used:
            threads_used.add(name)
            met.wait()
        return forward(model, ids, mask)

    parallel._forward = watched_forward  # type: ignore[method-assign]
    together = parallel.embed(texts)
    assert np.array_equal(together, MiniLMInt8Embedder(workers=1).embed(texts))
    assert len(threads_used) == 2 and all(name.startswith("embed") for name in threads_used)
    # A single text (a query) runs on the caller's thread: no hand-off to the pool.
    callers: list[str] = []

    def recorded_forward(model, ids, mask):
        callers.append(threading.current_thread().name)
        return forward(model, ids, mask)

    parallel._forward = recorded_forward  # type: ignore[method-assign]
    parallel.embed(["one query"])
    assert callers == [threading.current_thread().name]


def test_one_tokenizer_cuts_to_the_window_as_the_tokenizers_own_truncation_does():
    """The embedder keeps one tokenizer without truncation (spans need every token) and cuts ids
    itself: the ids must be exactly those of the tokenizer truncating at the model's window."""
    import random

    from tokenizers import Tokenizer

    from vector_svc.embedders import MAX_TOKENS, _ids, minilm_tokenizer_path

    truncating = Tokenizer.from_file(str(minilm_tokenizer_path()))
    truncating.enable_truncation(MAX_TOKENS)
    truncating.no_padding()
    whole = Tokenizer.from_file(str(minilm_tokenizer_path()))
    whole.no_truncation()
    whole.no_padding()
    rng = random.Random(3)
    words = ["naïve", "日本語のテキスト", "emoji😀", "x" * 300, "don't", "a-b_c", "İstanbul", "token", "refresh"]
    texts = ["", " ", "a"] + [" ".join(rng.choice(words) for _ in range(rng.randint(1, 400))) for _ in range(200)]
    cut = [_ids(e.ids) for e in whole.encode_batch(texts)]
    assert cut == [e.ids for e in truncating.encode_batch(texts)]
    assert any(len(e.ids) > MAX_TOKENS for e in whole.encode_batch(texts))
