"""A transformer encoder from fp32 safetensors, written as an ONNX graph and run by onnxruntime.

What every such encoder shares (`minilm.py`, `mpnet.py` say only how their architecture
differs): reading safetensors without a copy, the graph-building helpers, and a session that
takes the weights as arrays. The graph holds no weights: its initializers are stubs that name
the safetensors tensors, and the session takes the numpy arrays themselves
(`add_external_initializers`), so loading neither copies nor serialises hundreds of MB of
weights. Weight reshaping (transposes, constant sums) is in the graph too, and onnxruntime folds
it once at session start. The weightless graph (a few KB) is kept under `$DCPM_HOME/cache/`,
keyed by the code that builds it and the weights' header: building it needs `import onnx`, which
cost a cold `dcpm add` about a fifth of its start-up.
"""

from __future__ import annotations

import json
import os
import struct
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np


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


class GraphBuilder:
    """Nodes of an encoder graph over named safetensors weights, one helper per building block.

    Inputs `input_ids`, `attention_mask` (int64, batch × tokens); `finish(x)` names `x` the output
    `last_hidden_state` (float32, batch × tokens × hidden).
    """

    def __init__(self, weights: dict[str, np.ndarray], hidden: int, heads: int, ln_eps: float) -> None:
        import numpy as np

        self.weights, self.hidden, self.heads, self.ln_eps = weights, hidden, heads, ln_eps
        self.inits: list[Any] = []
        self.nodes: list[Any] = []
        self._count = 0
        head_dim = hidden // heads
        self.zero, self.one, self.two = self.const("i0", [0]), self.const("i1", [1]), self.const("i2", [2])
        self.f_one = self.const("f_one", 1.0, np.float32)
        self._split_heads = self.const("split_heads", [0, 0, heads, head_dim])
        self._merge_heads = self.const("merge_heads", [0, 0, hidden])
        self._sqrt_d = self.const("sqrt_d", np.sqrt(head_dim), np.float32)
        self._sqrt_2 = self.const("sqrt_2", np.sqrt(2.0), np.float32)
        self._f_half = self.const("f_half", 0.5, np.float32)

    def node(self, op: str, *inputs: str, **attrs: Any) -> str:
        from onnx import helper

        self._count += 1
        out = f"{op}_{self._count}"
        self.nodes.append(helper.make_node(op, list(inputs), [out], name=out, **attrs))
        return out

    def const(self, name: str, value: Any, dtype: Any = None) -> str:
        import numpy as np
        from onnx import numpy_helper

        self.inits.append(numpy_helper.from_array(np.asarray(value, dtype=dtype or np.int64), name))
        return name

    def weight(self, name: str) -> str:
        from onnx import TensorProto

        t = TensorProto(name=name, data_type=TensorProto.FLOAT, dims=self.weights[name].shape)
        t.data_location = TensorProto.EXTERNAL
        t.external_data.add(key="location", value="supplied-by-session-options")
        self.inits.append(t)
        return name

    def linear(self, x: str, prefix: str) -> str:
        # torch's Linear stores (out, in); the Transpose of a constant is folded at session start.
        w_t = self.node("Transpose", self.weight(prefix + ".weight"), perm=[1, 0])
        return self.node("Add", self.node("MatMul", x, w_t), self.weight(prefix + ".bias"))

    def layer_norm(self, x: str, prefix: str) -> str:
        w, b = self.weight(prefix + ".weight"), self.weight(prefix + ".bias")
        return self.node("LayerNormalization", x, w, b, axis=-1, epsilon=self.ln_eps)

    def tokens(self) -> str:
        """The number of tokens, a 1-element int64 tensor."""
        return self.node("Slice", self.node("Shape", "input_ids"), self.one, self.two)

    def mask_bias(self) -> str:
        """Additive attention mask, batch × 1 × 1 × tokens: 0 where attended, -1e9 on padding."""
        import numpy as np
        from onnx import TensorProto

        pad = self.node("Sub", self.f_one, self.node("Cast", "attention_mask", to=TensorProto.FLOAT))
        neg = self.const("fneg", -1e9, np.float32)
        return self.node("Unsqueeze", self.node("Mul", pad, neg), self.const("ax12", [1, 2]))

    def attention(self, x: str, bias: str, q: str, k: str, v: str) -> str:
        """Multi-head self-attention of `x` (the projections named by their weight prefixes), with
        `bias` added to the scores; the heads merged again, before the output projection."""
        q, k, v = (
            self.node("Transpose", self.node("Reshape", self.linear(x, name), self._split_heads), perm=perm)
            for name, perm in (
                (q, [0, 2, 1, 3]),  # b, h, t, d
                (k, [0, 2, 3, 1]),  # b, h, d, t
                (v, [0, 2, 1, 3]),  # b, h, t, d
            )
        )
        scores = self.node("Add", self.node("Div", self.node("MatMul", q, k), self._sqrt_d), bias)
        context = self.node("MatMul", self.node("Softmax", scores, axis=-1), v)
        return self.node("Reshape", self.node("Transpose", context, perm=[0, 2, 1, 3]), self._merge_heads)

    def gelu(self, h: str) -> str:
        # The exact GELU: 0.5·h·(1 + erf(h/√2)); onnxruntime fuses it into one kernel.
        erf = self.node("Erf", self.node("Div", h, self._sqrt_2))
        return self.node("Mul", self.node("Mul", h, self.node("Add", erf, self.f_one)), self._f_half)

    def finish(self, x: str, name: str) -> Any:
        """The onnx ModelProto whose output `last_hidden_state` is `x`."""
        from onnx import TensorProto, helper

        self.nodes.append(helper.make_node("Identity", [x], ["last_hidden_state"], name="output"))
        ids, mask = (
            helper.make_tensor_value_info(n, TensorProto.INT64, ["batch", "tokens"])
            for n in ("input_ids", "attention_mask")
        )
        out = helper.make_tensor_value_info(
            "last_hidden_state", TensorProto.FLOAT, ["batch", "tokens", self.hidden]
        )
        graph = helper.make_graph(self.nodes, name, [ids, mask], [out], self.inits)
        # IR 8 / opset 17 (LayerNormalization): loadable by onnxruntime >= 1.14.
        return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


class OnnxEncoder:
    """An encoder built by `build` from the safetensors at `weights_path`; call it with token ids
    and attention mask (int64, batch × tokens) for the last hidden state (float32).

    `sources` are the files of the code that builds the graph: the cached graph is reused only
    while they are unchanged."""

    def __init__(
        self,
        weights_path: Path,
        build: Callable[[dict[str, np.ndarray]], Any],
        cache_name: str,
        sources: Sequence[str],
        threads: int | None = None,
    ) -> None:
        import numpy as np
        import onnxruntime as ort

        weights = load_safetensors(weights_path)
        graph, names = _weightless_graph(weights_path, weights, build, cache_name, [__file__, *sources])
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
        """Last hidden state, (batch, tokens, hidden) float32."""
        import numpy as np

        feed = {"input_ids": np.asarray(ids, np.int64), "attention_mask": np.asarray(mask, np.int64)}
        return self._session.run(None, feed)[0]


def _weightless_graph(
    weights_path: Path,
    weights: dict[str, np.ndarray],
    build: Callable[[dict[str, np.ndarray]], Any],
    cache_name: str,
    sources: Sequence[str],
) -> tuple[bytes, list[str]]:
    """The serialised graph and the names of the weights it takes, from the cache when built
    before by this same code for weights of the same layout."""
    import hashlib

    from dcpm_cli.config import dcpm_home

    with open(weights_path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        layout = f.read(n)
    code = b"".join(Path(s).read_bytes() for s in sources)
    key = hashlib.sha256(code + layout).hexdigest()[:16]
    cached = dcpm_home() / "cache" / f"{cache_name}-graph-{key}"
    try:
        names = json.loads(cached.with_suffix(".json").read_text(encoding="utf-8"))
        return cached.with_suffix(".onnx").read_bytes(), names
    except (OSError, ValueError):
        pass  # not built yet (or unreadable): build it
    model = build(weights)
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
