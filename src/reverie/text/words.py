"""Words of a text (EN + TR): tokens, stop words, informative words, sentences, slugs; shared by the
write path, the read path and the dream."""

from __future__ import annotations

import re
import unicodedata

from reverie import lexicon

WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)?", re.UNICODE)
SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")


#: words that carry no information on their own (EN + TR)
STOPWORDS = lexicon.words("text_stop_words")


def words(text: str) -> list[str]:
    """Lower-cased word tokens (apostrophe contractions kept whole)."""
    return [w.casefold() for w in WORD.findall(text)]


def content_words(text: str) -> set[str]:
    """Distinct informative words: not stop words, at least 3 characters (or a number)."""
    return {w for w in words(text) if w not in STOPWORDS and (len(w) >= 3 or w.isdigit())}


def new_words(old: str, new: str) -> set[str]:
    """Informative words of ``new`` that ``old`` lacks."""
    return content_words(new) - content_words(old)


def overlap(a: set[str], b: set[str]) -> float:
    """Jaccard overlap of two word sets (0 when both are empty)."""
    union = a | b
    return len(a & b) / len(union) if union else 0.0


def sentences(text: str) -> list[str]:
    """Sentences of ``text`` (split after . ! ? and at line breaks), stripped, non-empty."""
    return [s.strip() for s in SENTENCE.split(text) if s.strip()]


def slug(text: str) -> str:
    """A URL-safe lower-case slug (``entity://`` paths)."""
    folded = "".join(c for c in unicodedata.normalize("NFKD", text.casefold()) if unicodedata.category(c) != "Mn")
    return re.sub(r"[^\w.+#-]+", "-", folded, flags=re.UNICODE).strip("-")
