"""Evaluation: IR metrics with ranx; (answer metrics with RAGAS live beside them)."""
