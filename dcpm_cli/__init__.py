"""dcpm: Dual-Process Cognitive Memory, a local long-term memory for people and their agents."""

__version__ = "0.1.0"
