"""Text heuristics shared by the write path, the read path and the dream (EN + TR, no model).

:mod:`~reverie.text.words` (tokens, stop words, informative words), :mod:`~reverie.text.classify` (category,
episode or note, sub-tier), :mod:`~reverie.text.updates` (does a newer statement update an older one?) and
:mod:`~reverie.text.llm_update` (the same question asked of an LLM).
"""
