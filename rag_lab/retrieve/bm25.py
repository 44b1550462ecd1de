"""`bm25`: the persisted bm25s index (via llama-index-retrievers-bm25), queried with the same
domain tokenizer the documents were indexed with (the stock retriever would re-tokenize with
its own regex and stemmer, which splits "$4,106"). Equal scores are ordered by corpus position
(:mod:`rag_lab.retrieve.ties`), so a top-p list is a prefix of every deeper one."""

from __future__ import annotations

from llama_index.core.schema import NodeWithScore
from llama_index.core.vector_stores.utils import metadata_dict_to_node

from rag_lab.index import CorpusIndex
from rag_lab.retrieve.base import LabRetriever
from rag_lab.retrieve.ties import top_positions


def bm25_ranking(engine, tokens: list[str], k: int) -> list[tuple[int, float]]:
    """The ``k`` best (corpus position, score) of a bm25s engine for in-vocabulary ``tokens``,
    zero scores dropped (they did not match), ties by corpus position. bm25s's own ``retrieve``
    partitions the scores, so which tied documents make its cut depends on ``k``."""
    if not tokens:
        return []
    return top_positions(engine.get_scores(list(tokens)), k)


class BM25Retriever(LabRetriever):
    mode_name = "bm25"

    def __init__(self, index: CorpusIndex, top_k: int = 10, **kwargs) -> None:
        self.index = index
        self._stock = index.bm25  # llama_index.retrievers.bm25.BM25Retriever, loaded once per index
        super().__init__(top_k=top_k, **kwargs)

    def _search(self, query: str, top_k: int) -> list[NodeWithScore]:
        bm25 = self._stock.bm25
        vocab = bm25.vocab_dict
        tokens = [t for t in self.index.tokenizer(query) if t in vocab]
        if not tokens:
            return []
        return [NodeWithScore(node=metadata_dict_to_node(self._stock.corpus[i]), score=score)
                for i, score in bm25_ranking(bm25, tokens, top_k)]
