"""A pooled view of incomplete judgements.

Each texas question names one source file, yet a near-twin document (another year's version of a
report, the state plan quoting a rate table) may state the answer too: the metrics then count a
correct retrieval as a miss. For review — never counted as relevant — this lists, per question and
mode, the retrieved documents in the top ``k`` that have *no* judgement for the question but state
every key fact of its reference answer (:mod:`rag_lab.evaluate.facts.key_facts`: numbers, amounts,
percentages, codes; facts the question itself states are not counted). A document's text is all of
its indexed chunks.
"""

from __future__ import annotations

from collections.abc import Mapping

from rag_lab.evaluate.facts.key_facts import reference_facts_stated, stated_values

POOL_K = 10


def document_texts(index) -> dict[str, str]:
    """Document key → the text of all its indexed chunks, in corpus order (from the BM25 corpus,
    which holds every chunk's node)."""
    from llama_index.core.vector_stores.utils import metadata_dict_to_node

    from rag_lab.retrieve.records import doc_key

    parts: dict[str, list[str]] = {}
    for payload in index.bm25.corpus:
        node = metadata_dict_to_node(payload)
        parts.setdefault(doc_key(payload), []).append(node.get_content())
    return {doc: "\n".join(chunks) for doc, chunks in parts.items()}


def pool_unjudged(runs: Mapping[str, Mapping[str, Mapping[str, float]]], qrels: Mapping[str, Mapping[str, int]],
                  references: Mapping[str, tuple[str, str]], texts: Mapping[str, str],
                  k: int = POOL_K) -> list[dict]:
    """``runs[mode][qid]`` = document scores; ``references[qid]`` = (question, reference answer).
    One entry per (question, mode, document) where the document is in the mode's top ``k``, has no
    judgement for the question, and states every key fact of the reference (questions whose
    reference has no key fact beyond the question's are skipped: nothing to check)."""
    from rag_lab.evaluate.retrieval.ranx_ids import ranked_documents

    values: dict[str, set[str]] = {}
    entries = []
    for mode, run in runs.items():
        for qid, docs in run.items():
            if qid not in references or qid not in qrels:
                continue
            question, reference = references[qid]
            for rank, doc in enumerate(ranked_documents(docs)[:k], start=1):
                if doc in qrels[qid] or doc not in texts:
                    continue
                if doc not in values:
                    values[doc] = stated_values(texts[doc])
                stated, total = reference_facts_stated(values[doc], reference, question)
                if total and len(stated) == total:
                    entries.append({"qid": qid, "mode": mode, "rank": rank, "document": doc,
                                    "judged": sorted(qrels[qid]), "question": question, "reference": reference,
                                    "key_facts": stated})
    return entries
