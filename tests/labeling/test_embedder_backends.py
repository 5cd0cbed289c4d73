"""The embedder's two backends: onnxruntime (the default) reads the same tokens as torch, gives the
same vectors to ~2e-7 and the same nearest task, and a text's vector does not depend on its batch."""

from __future__ import annotations

import numpy as np
import pytest

from workbank_dagster.labeling.embedder import Embedder, EmbedderUnavailable, token_counts
from workbank_dagster.sources.onet import read_task_statements


@pytest.fixture(scope="module")
def texts(source_dir) -> list[str]:
    tasks = read_task_statements(source_dir / "onet" / "task_statements_29_3.tsv")["task"].tolist()
    long_prompt = " ".join(tasks[:60])  # past the model's 256 tokens: truncated the same way
    return [*tasks[::40], long_prompt, "  leading and trailing spaces  ", "Ünïcödé café naïve", "\tTAB\nNEWLINE", "x"]


@pytest.fixture(scope="module")
def backends() -> dict[str, Embedder]:
    return {"onnx": Embedder(), "torch": Embedder(backend="torch")}


def test_onnx_is_the_default_and_each_backend_has_its_own_store_key(backends):
    assert Embedder().backend == "onnx"
    assert backends["onnx"].store_key == "all-MiniLM-L6-v2/onnx-fp32/unpadded"
    assert backends["torch"].store_key == "all-MiniLM-L6-v2/unpadded"  # the key vectors were stored under before
    with pytest.raises(EmbedderUnavailable, match="backend 'tf'"):
        Embedder(backend="tf")


def test_onnx_reads_the_tokens_torch_reads(texts, backends):
    torch_model, onnx_model = backends["torch"]._load(), backends["onnx"]._load()
    assert onnx_model.token_counts(texts) == token_counts(torch_model, texts)
    assert max(onnx_model.token_counts(texts)) == 256


def test_onnx_vectors_match_torch_and_pick_the_same_nearest_text(texts, backends):
    onnx_vectors, torch_vectors = backends["onnx"].encode(texts), backends["torch"].encode(texts)
    assert onnx_vectors.dtype == np.float32 and onnx_vectors.shape == (len(texts), 384)
    assert np.allclose(np.linalg.norm(onnx_vectors, axis=1), 1.0, atol=1e-6)
    assert float(np.abs(onnx_vectors - torch_vectors).max()) < 1e-5
    assert not np.array_equal(onnx_vectors, torch_vectors)  # close, not equal: hence a store key each
    queries = texts[: len(texts) // 2]
    nearest = {}
    for name, vectors in (("onnx", onnx_vectors), ("torch", torch_vectors)):
        similarity = vectors[: len(queries)] @ vectors[len(queries) :].T
        nearest[name] = similarity.argmax(axis=1)
    assert np.array_equal(nearest["onnx"], nearest["torch"])


def test_an_onnx_vector_is_the_same_alone_in_a_batch_or_in_another_order(texts, backends):
    embedder = backends["onnx"]
    together = embedder.encode(texts)
    alone = np.vstack([embedder.encode([text]) for text in texts])
    reversed_order = embedder.encode(texts[::-1])[::-1]
    assert np.array_equal(together, alone)
    assert np.array_equal(together, reversed_order)


def test_a_padded_batch_is_refused(backends):
    encoder = backends["onnx"]._load()
    with pytest.raises(ValueError, match="one token count"):
        encoder.encode(["short", "a much longer text than the first one"])


def test_onnx_threads_do_not_spin_while_they_wait(backends):
    """Spinning threads burned a core beside another busy process (onnx_model.OnnxEncoder)."""
    options = backends["onnx"]._load().session.get_session_options()
    assert options.get_session_config_entry("session.intra_op.allow_spinning") == "0"
