"""The `rag-lab` command line: thin wrappers over library calls."""

from rag_lab.cli.main import main

__all__ = ["main"]
