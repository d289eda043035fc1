"""HyDE-style expansion: hypothetical documents from templates, zero LLM cost.

Seven HyDE intents (definition, howto, reasoning, lookup, technical, preference, general), each
with three EN and three TR templates. The variants of a query are embedded together with the
query in ONE embedder call (the embedding cache serves repeats), then averaged into a centroid
``normalise(w·q + Σ v_i)`` used for the vector search (``w`` = ``read.hyde_query_weight``).
"""

from __future__ import annotations

import re

import numpy as np
import numpy.typing as npt

from reverie import lexicon
from reverie.read.decompose import content_words

HYDE_INTENTS = ("definition", "howto", "reasoning", "lookup", "technical", "preference", "general")

#: the keyword patterns of the HyDE intents, tried in this order (the languages' ``read_hyde_<intent>`` lists)
_DETECT: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (name, lexicon.pattern(f"read_hyde_{name}"))
    for name in ("technical", "howto", "reasoning", "definition", "lookup", "preference")
)
# the letters without IGNORECASE: under it "ı" and "İ" match every "i" and "I" (Unicode case folding)
_TURKISH_LETTERS = re.compile(r"[çğışöüÇĞİŞÖÜ]")
_TURKISH_WORDS = re.compile(r"\b(ne|nedir|nasıl|neden|nerede|hangi|mi|mı|mu|mü|ve|bir)\b", re.IGNORECASE)

TEMPLATES: dict[str, dict[str, tuple[str, ...]]] = {
    "definition": {
        "en": ("{t} is defined as", "{t} refers to", "the meaning of {t} is"),
        "tr": ("{t} şu anlama gelir", "{t} tanımı", "{t} demek"),
    },
    "howto": {
        "en": ("to {t}, the steps are", "the way to {t} is", "{t} is done by"),
        "tr": ("{t} için adımlar", "{t} şöyle yapılır", "{t} yöntemi"),
    },
    "reasoning": {
        "en": ("{t} because", "the reason for {t} is", "{t} happened due to"),
        "tr": ("{t} çünkü", "{t} nedeni", "{t} sebebi"),
    },
    "lookup": {
        "en": ("{t} is located at", "{t} can be found in", "{t} is"),
        "tr": ("{t} şurada", "{t} burada bulunur", "{t} konumu"),
    },
    "technical": {
        "en": ("{t} configuration", "fixed {t} by", "{t} error was caused by"),
        "tr": ("{t} yapılandırması", "{t} hatası düzeltildi", "{t} ayarı"),
    },
    "preference": {
        "en": ("user prefers {t}", "user likes {t}", "favorite {t}"),
        "tr": ("kullanıcı {t} tercih ediyor", "kullanıcı {t} seviyor", "favori {t}"),
    },
    "general": {
        "en": ("{t}", "note about {t}", "remember {t}"),
        "tr": ("{t}", "{t} hakkında not", "{t} hatırla"),
    },
}


def detect_intent(text: str) -> str:
    """The first HyDE intent whose keywords occur in ``text``; 'general' otherwise."""
    for intent, pattern in _DETECT:
        if pattern.search(text):
            return intent
    return "general"


def language(text: str) -> str:
    """'tr' when the text has Turkish letters or function words, else 'en'."""
    from reverie.text.updates import is_turkish  # Turkish verb endings ("tercih ediyor")

    return "tr" if _TURKISH_LETTERS.search(text) or _TURKISH_WORDS.search(text) or is_turkish(text) else "en"


def variants(text: str, *, count: int) -> tuple[str, list[str]]:
    """(HyDE intent, up to ``count`` hypothetical documents) of a query.

    The templates are filled with the query's content words (the question words removed), so a
    variant reads like a stored statement rather than a question. Identical variants are dropped.
    """
    intent = detect_intent(text)
    topic = " ".join(content_words(text))
    if count <= 0 or not topic:
        return intent, []
    out: list[str] = []
    for template in TEMPLATES[intent][language(text)]:
        doc = template.format(t=topic)
        if doc not in out and doc != text:
            out.append(doc)
        if len(out) == count:
            break
    return intent, out


def centroid(
    query_vec: npt.NDArray[np.float32], variant_vecs: npt.NDArray[np.float32], *, query_weight: float
) -> npt.NDArray[np.float32]:
    """``normalise(query_weight·q + Σ v_i)`` (the query alone when there are no variants)."""
    total = query_vec * np.float32(query_weight)
    if len(variant_vecs):
        total = total + variant_vecs.sum(axis=0)
    norm = float(np.linalg.norm(total))
    if norm == 0.0:
        return query_vec
    out: npt.NDArray[np.float32] = (total / norm).astype(np.float32)
    return out


__all__ = ["HYDE_INTENTS", "TEMPLATES", "centroid", "detect_intent", "language", "variants"]
