"""Index: one Qdrant collection (dense + sparse) and one bm25s index per corpus."""

from rag_lab.index.build import BuildResult, build_index
from rag_lab.index.handle import CorpusIndex
from rag_lab.index.manifest import IndexManifest

__all__ = ["BuildResult", "CorpusIndex", "IndexManifest", "build_index"]
