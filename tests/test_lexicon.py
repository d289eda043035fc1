"""The word lists: one data file per language, lists are unions across languages."""

from __future__ import annotations

import re
import tomllib
from importlib import resources

import pytest

from reverie import lexicon


def _files() -> dict[str, dict[str, list[str]]]:
    folder = resources.files("reverie") / "lexicons"
    return {
        f.name.removesuffix(".toml"): tomllib.loads(f.read_text(encoding="utf-8"))
        for f in folder.iterdir()
        if f.name.endswith(".toml")
    }


def test_english_and_turkish_ship() -> None:
    assert lexicon.languages()[:1] == ("en",)
    assert "tr" in lexicon.languages()


def test_every_entry_is_a_valid_fragment_and_lists_are_unions() -> None:
    files = _files()
    names = {name for table in files.values() for name in table}
    for name in names:
        expected = [t for lang in ("en", *sorted(set(files) - {"en"})) for t in files[lang].get(name, [])]
        assert list(lexicon.terms(name)) == expected
        for entry in expected:
            re.compile(entry)


def test_pattern_matches_words_of_every_language() -> None:
    marker = lexicon.pattern("temporal_marker")
    assert marker.search("We met yesterday")
    assert marker.search("Dün toplantı vardı")
    assert not marker.search("a yesterdayish feeling")


def test_unknown_list_is_a_key_error() -> None:
    with pytest.raises(KeyError, match="no word list"):
        lexicon.terms("no_such_list")
