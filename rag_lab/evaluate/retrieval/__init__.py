"""Retrieval (IR) evaluation with ranx: mode runs and their checkpoints, pooling of unjudged
documents, ranx ids, which fused leg finds what, and plain vs contextual indexes."""
