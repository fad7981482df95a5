"""Prompts and the reply schemas the LLM must follow, one module per LLM call of the paper."""
