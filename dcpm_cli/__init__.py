"""dcpm: Dual-Process Cognitive Memory, a local long-term memory for people and their agents."""

import os

__version__ = "0.1.0"

# No telemetry: onnxruntime (the default embedder's runtime) otherwise records events under
# ~/.cache/Microsoft and sends them to its vendor. Only this variable, read when onnxruntime
# loads, stops it; `onnxruntime.disable_telemetry_events()` after the import does not.
os.environ["ORT_DISABLE_TELEMETRY"] = "1"
