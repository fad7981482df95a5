"""The read path: recall and inspection. Never calls an LLM."""
