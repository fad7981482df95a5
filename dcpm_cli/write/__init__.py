"""System 1, the writer: persist the raw input, extract, reconcile, apply."""
