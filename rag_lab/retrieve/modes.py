"""The retrieval mode names (no heavy imports: the CLI's argument parser reads them)."""

INDEX_MODES = ("dense", "bm25", "fusion", "hybrid")
ALL_MODES = (*INDEX_MODES, "kendra")
