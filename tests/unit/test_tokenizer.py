from rag_lab.tokenizer import DomainTokenizer, TokenizerSpec, sparse_document_vector, sparse_query_vector, term_id

tok = DomainTokenizer()


def test_money_stays_one_token():
    assert tok("The limit is $4,106 per month") == ["limit", "$4,106", "per", "month"]
    assert "$1,098,545,000" in tok("a total of $1,098,545,000 in CARES")
    assert "$8.50" in tok("costs $8.50 each")


def test_percentages_codes_and_numbers():
    assert tok("85% of SMI") == ["85%", "smi"]
    assert tok("8.5 % rate") == ["8.5%", "rate"]
    # BCY-26 and BCY26 are the same code
    assert tok("BCY-26") == tok("BCY26") == ["bcy26"]
    assert tok("family of 5 earns 92,041") == ["famili", "5", "earn", "92,041"]
    assert tok("§302.0461") == ["302.0461"]


def test_lowercase_stem_and_stopwords():
    assert tok("The Families ARE Eligible") == ["famili", "elig"]
    assert tok("the and of a") == []
    assert tok("") == []


def test_unicode_words_survive():
    assert tok("naïve café résumé") == ["naïv", "café", "résumé"]


def test_spec_roundtrip_and_version_guard():
    spec = TokenizerSpec()
    assert DomainTokenizer(TokenizerSpec.from_dict(spec.to_dict()))("Families") == ["famili"]
    try:
        DomainTokenizer(TokenizerSpec(version=999))
    except ValueError as exc:
        assert "rebuild" in str(exc)
    else:
        raise AssertionError("a tokenizer from another version must be refused")


def test_sparse_vectors_follow_bm25_saturation():
    tokens = ["a", "b", "a"]
    indices, values = sparse_document_vector(tokens, doc_len=3, avg_doc_len=3.0, k1=0.9, b=0.4)
    by_id = dict(zip(indices, values))
    # tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl)) with dl == avgdl → norm = k1
    assert by_id[term_id("a")] == 2 * 1.9 / (2 + 0.9)
    assert by_id[term_id("b")] == 1 * 1.9 / (1 + 0.9)
    assert indices == sorted(indices)
    q_indices, q_values = sparse_query_vector(["a", "a", "b"])
    assert sorted(q_indices) == sorted({term_id("a"), term_id("b")}) and q_values == [1.0, 1.0]
