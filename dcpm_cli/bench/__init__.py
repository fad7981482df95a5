"""Benchmark harnesses (performance, LongMemEval format): scripts, not tests."""
