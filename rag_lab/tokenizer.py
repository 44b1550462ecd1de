"""The one tokenizer for sparse retrieval (BM25 and Qdrant sparse vectors).

Domain-preserving: money ("$4,106"), percentages ("85%"), codes ("BCY-26" ≡ "BCY26") and plain
numbers ("92,041") stay single tokens; words are lowercased, stop-words dropped and stemmed
(Snowball English). Its :class:`TokenizerSpec` is stored with every index so that queries are
tokenized exactly as the documents were.
"""

from __future__ import annotations

import re
import zlib
from collections import Counter
from dataclasses import asdict, dataclass
from functools import cached_property

import Stemmer
from bm25s.stopwords import STOPWORDS_EN

TOKENIZER_VERSION = 1

# Order matters: the first alternative that matches at a position wins.
_TOKEN_RE = re.compile(
    r"""
    (?P<money>[$€£]\s?\d[\d,]*(?:\.\d+)?)            # $4,106  $1,098,545,000  $8.50
    |(?P<percent>\d+(?:\.\d+)?\s?%)                  # 85%  8.5 %
    |(?P<code>\b[A-Za-z]{1,10}-?\d+[A-Za-z0-9]*\b)   # BCY-26  BCY26  COVID-19  Q10
    |(?P<number>\d+(?:[,.]\d+)*)                     # 92,041  302.0461  2026
    |(?P<word>[^\W\d_]+(?:['’][^\W\d_]+)?)          # words, unicode letters, one apostrophe
    """,
    re.VERBOSE | re.UNICODE,
)


@dataclass(frozen=True)
class TokenizerSpec:
    """What is stored with an index: enough to rebuild the identical tokenizer."""

    version: int = TOKENIZER_VERSION
    language: str = "english"
    lowercase: bool = True
    stem: bool = True
    stopwords: bool = True

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> "TokenizerSpec":
        return cls(**data)


class DomainTokenizer:
    """Callable ``str -> list[str]``; the same instance feeds BM25 and sparse vectors."""

    def __init__(self, spec: TokenizerSpec | None = None) -> None:
        self.spec = spec or TokenizerSpec()
        if self.spec.version != TOKENIZER_VERSION:
            raise ValueError(
                f"index was built with tokenizer v{self.spec.version}, this rag-lab has "
                f"v{TOKENIZER_VERSION}: rebuild it with `rag-lab index <dataset>`"
            )
        self._stopwords = frozenset(STOPWORDS_EN) if self.spec.stopwords else frozenset()

    @cached_property
    def _stemmer(self) -> Stemmer.Stemmer | None:
        return Stemmer.Stemmer(self.spec.language) if self.spec.stem else None

    def __call__(self, text: str) -> list[str]:
        tokens: list[str] = []
        for match in _TOKEN_RE.finditer(text):
            kind = match.lastgroup
            token = match.group()
            if kind == "word":
                word = token.lower() if self.spec.lowercase else token
                word = word.replace("’", "'")
                if word in self._stopwords:
                    continue
                if self._stemmer is not None:
                    word = self._stemmer.stemWord(word)
                tokens.append(word)
            elif kind == "code":
                tokens.append(token.replace("-", "").lower())
            elif kind in ("money", "percent"):
                tokens.append(token.replace(" ", ""))
            else:
                tokens.append(token)
        return tokens

    def batch(self, texts: list[str]) -> list[list[str]]:
        return [self(t) for t in texts]


def term_id(token: str) -> int:
    """Stable sparse-vector dimension for a token (no vocabulary to keep in sync)."""
    return zlib.crc32(token.encode("utf-8")) & 0x7FFFFFFF


def sparse_document_vector(
    tokens: list[str], doc_len: int, avg_doc_len: float, k1: float = 0.9, b: float = 0.4
) -> tuple[list[int], list[float]]:
    """BM25 term-frequency saturation per term; Qdrant's IDF modifier supplies the idf half."""
    counts = Counter(term_id(t) for t in tokens)
    norm = k1 * (1.0 - b + b * doc_len / max(avg_doc_len, 1e-9))
    indices = sorted(counts)
    values = [counts[i] * (k1 + 1.0) / (counts[i] + norm) for i in indices]
    return indices, values


def sparse_query_vector(tokens: list[str]) -> tuple[list[int], list[float]]:
    """Each distinct query term once, weight 1 (repeated query words do not count twice)."""
    indices = sorted({term_id(t) for t in tokens})
    return indices, [1.0] * len(indices)
