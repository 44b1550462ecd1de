from llama_index.core.schema import NodeWithScore, TextNode

from rag_lab.fusion import explain_fusion, explanations_frame


def test_explanations_frame_has_one_row_per_result_with_terms():
    explained = explain_fusion([("a", 0.9), ("b", 0.5)], [("b", 3.0)], k=60)
    results = []
    for node_id in ("b", "a"):
        node = TextNode(id_=node_id, text="t", metadata={"doc_id": node_id, "filename": f"{node_id}.pdf", "page": 1,
                                                         "explanation": explained[node_id].to_dict()})
        results.append(NodeWithScore(node=node, score=explained[node_id].fused_score))
    frame = explanations_frame(results)
    assert list(frame["doc_id"]) == ["b", "a"]
    assert list(frame["rank"]) == [1, 2]
    assert list(frame["source"]) == ["both", "dense_only"]
    assert (frame["dense_term"] + frame["sparse_term"] == frame["fused_score"]).all()
    assert frame.loc[1, "sparse_rank"] is None or frame["sparse_rank"].isna()[1]
