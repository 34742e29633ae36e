"""One text analysis for full-text search on every backend (issue #13).

Both backends store the *analysed* text of a memory's title, body and type fields (space-separated
terms) and look candidates up by analysed query terms; the final text score is computed in Python
(`ccmemory.text.bm25`). So SQLite (FTS5, plain ``unicode61`` tokenizer) and Neo4j (Lucene
``whitespace`` analyzer) index exactly the same terms and rank identically.

Analysis: unicode compatibility fold (NFKD, combining marks dropped), lower case, words of letters
and digits (``_`` and punctuation split words, so ``CELERY_BROKER_URL`` is three words and the
possessive ``'s`` becomes the stopword ``s``), stopwords dropped, each word stemmed with Snowball
English (Porter2; `snowballstemmer`, BSD-3, pure Python, imported on first use: ~15 ms).
Words longer than MAX_WORD characters (hashes, base64) are dropped.
"""

from __future__ import annotations

import re
import threading
import unicodedata
from collections.abc import Callable
from functools import lru_cache

from ccmemory.text.fusion import STOPWORDS

MAX_WORD = 64
MAX_QUERY_TERMS = 32
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_stemmer: Callable[[str], str] | None = None
_lock = threading.Lock()  # a Snowball stemmer object keeps its state between calls


def fold(text: str) -> str:
    """Compatibility-decomposed, combining marks removed, case-folded."""
    if text.isascii():
        return text.lower()
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()


def _load_stemmer() -> Callable[[str], str]:
    global _stemmer
    if _stemmer is None:
        from snowballstemmer.english_stemmer import EnglishStemmer

        _stemmer = EnglishStemmer().stemWord
    return _stemmer


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    if len(word) <= 2 or word.isdigit():
        return word
    with _lock:
        return _load_stemmer()(word)


def words(text: str) -> list[str]:
    """The folded words of ``text`` that are not stopwords, in order, before stemming."""
    return [w for w in _WORD.findall(fold(text)) if len(w) <= MAX_WORD and w not in STOPWORDS]


def terms(text: str) -> list[str]:
    """The analysed terms of ``text`` in order, repeats kept (what the index stores)."""
    return [stem(w) for w in words(text)]


def analyse(text: str) -> str:
    """The analysed text a backend's full-text field holds: terms joined by single spaces."""
    return " ".join(terms(text))


def query_terms(text: str) -> list[str]:
    """Distinct analysed terms of a query, in order, at most MAX_QUERY_TERMS.

    A query made only of stopwords has no terms (nothing indexed could match it)."""
    return list(dict.fromkeys(terms(text)))[:MAX_QUERY_TERMS]


def memory_fields(title: str, body: str, fields_text: str) -> tuple[str, str, str]:
    """The analysed title, body and type-field text both backends store for full-text search."""
    return analyse(title), analyse(body), analyse(fields_text)
