"""The update reading's shortcuts change no result: a guarded pattern finds what its full form finds, and a
statement is read once however its reading is asked for."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reverie.text.updates import clauses, vocabulary
from reverie.text.updates.judge import judge

_SUITE = Path(__file__).parent / "data" / "knowledge_updates.json"

_SENTENCES = [
    "I moved from Lisbon to Zurich in June.",
    "We switched the standup over to Thursday mornings.",
    "Toplantıyı salıdan perşembeye geçirdik.",
    "Ofis Kadıköy'den Levent'e taşındı.",
    "Düğünü eylüle erteledik.",
    "Mateo bought a huge telescope for 130 dollars in Mumbai.",
    "Our team migrated Cobalt from Nginx to Caddy in April.",
    "from here to there, and from Ankara'dan İzmir'e geçtik",
]


def _texts() -> list[str]:
    texts = list(_SENTENCES)
    suite = json.loads(_SUITE.read_text(encoding="utf-8"))
    for item in [*suite["updates"], *suite["compatible"]]:
        texts += [v for k, v in item.items() if isinstance(v, str) and k not in ("id", "lang")]
    return texts


@pytest.mark.parametrize("name", ["FROM_TO", "TARGET"])
def test_guarded_pattern_finds_what_the_full_pattern_finds(name: str) -> None:
    guarded = getattr(vocabulary, name)
    texts = _texts()
    found = 0
    for text in texts:
        full = [(m.span(), m.groupdict()) for m in guarded.full.finditer(text)]
        assert [(m.span(), m.groupdict()) for m in guarded.finditer(text)] == full, text
        found += bool(full)
    assert found >= 3  # the check saw matches of both alternatives, not only texts without any


def test_guard_skips_the_turkish_alternative_only_without_its_verbs() -> None:
    assert not vocabulary.FROM_TO.guard.search("I moved from Lisbon to Zurich.")
    assert vocabulary.FROM_TO.guard.search("Lizbon'dan Zürih'e taşındım.")
    m = next(vocabulary.FROM_TO.finditer("I moved from Lisbon to Zurich."))
    assert m.group("a") == "Lisbon" and m.group("c") is None


def test_a_statement_is_read_once_however_asked() -> None:
    text = "Actually I switched from oat milk to soy milk last week."
    assert clauses.analyse(text) is clauses.analyse(text, None) is clauses.analyse(text, speaker=None)
    before = clauses._analyse.cache_info().hits
    judge("I drink oat milk.", text)
    assert clauses._analyse.cache_info().hits > before  # the judge reused the reading the read path made
