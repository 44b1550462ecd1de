"""`bm25`: the persisted bm25s index (via llama-index-retrievers-bm25), queried with the same
domain tokenizer the documents were indexed with (the stock retriever would re-tokenize with
its own regex and stemmer, which splits "$4,106")."""

from __future__ import annotations

import numpy as np
from llama_index.core.schema import NodeWithScore
from llama_index.core.vector_stores.utils import metadata_dict_to_node

from rag_lab.index import CorpusIndex
from rag_lab.retrieve.base import LabRetriever


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
        k = min(top_k, len(self._stock.corpus))
        ids, scores = bm25.retrieve([tokens], k=k, show_progress=False, return_as="tuple")
        results = []
        for idx, score in zip(np.asarray(ids[0]).tolist(), np.asarray(scores[0]).tolist()):
            if score <= 0:  # bm25s pads with zero-score documents; those did not match
                continue
            entry = idx if isinstance(idx, dict) else self._stock.corpus[int(idx)]
            results.append(NodeWithScore(node=metadata_dict_to_node(entry), score=float(score)))
        return results
