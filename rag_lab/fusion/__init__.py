"""Fusion math shared by the `fusion` and `hybrid` retrievers and by the ablations.

One convention for RRF: ``1 / (k + rank / weight)`` with ranks counted from 1 (Cormack et al.
2009 and ranx for weight 1; Qdrant's weighting). See :mod:`rag_lab.fusion.rrf` for how Qdrant's convention is converted.
"""

from rag_lab.fusion.explain import Explanation, explain_fusion, explanations_frame, rank_fused, tie_key, TIE_RULE
from rag_lab.fusion.rrf import DEFAULT_RRF_K, qdrant_rrf_k, rrf_fuse, rrf_term, rrf_terms

__all__ = [
    "DEFAULT_RRF_K", "Explanation", "explain_fusion", "explanations_frame", "qdrant_rrf_k", "rank_fused", "rrf_fuse", "rrf_term", "rrf_terms", "tie_key", "TIE_RULE",
]
