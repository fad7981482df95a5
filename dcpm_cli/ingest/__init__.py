"""Input formats (plain text, JSONL, dated Markdown) and chat exports (ChatGPT, Claude, daily notes)."""
