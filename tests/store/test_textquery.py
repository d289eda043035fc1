from __future__ import annotations

from reverie.store.textquery import MAX_QUERY_TERMS, query_terms


def test_function_words_are_dropped() -> None:
    assert query_terms("What is the name of Maya's cat?") == ["name", "maya", "cat"]
    assert query_terms("Maya'nın kedisinin adı ne ve bu nerede?") == ["maya", "nın", "kedisinin", "adı"]


def test_only_function_words_keep_them() -> None:
    assert query_terms("The Who") == ["the", "who"]


def test_syntax_never_passes_and_terms_are_bounded() -> None:
    assert query_terms('NEAR(a b) OR "x" * ^col:') == ["near", "b", "x", "col"]
    assert query_terms("") == []
    assert len(query_terms(" ".join(f"w{i}" for i in range(500)))) == MAX_QUERY_TERMS
    assert query_terms("x" * 101 + " ok") == ["ok"]
