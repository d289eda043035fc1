"""The tokenizer of multilingual-e5-small, rebuilt from the weights file (:class:`E5Tokenizer`)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from reverie.errors import EmbeddingError, MissingDependencyError

if TYPE_CHECKING:
    from reverie.embed.e5 import Q4File


class E5Tokenizer:
    """XLM-RoBERTa's SentencePiece Unigram tokenizer rebuilt from the weights file, run by ``tokenizers``.

    Normalisation is the file's per-character map (SentencePiece's NMT-NFKC rules: control
    characters dropped, every kind of space and line break to a space, compatibility forms folded),
    then runs of spaces become one; the word-boundary mark ``▁`` goes before every word (a
    ``Metaspace`` pre-tokenizer) and the Unigram model over the file's pieces and scores segments each
    word (``tokenizers.models.Unigram``, which fuses a run of unknown characters into one ``<unk>`` as
    SentencePiece does). The control pieces (``<s>``, ``<pad>``, ``</s>``, ``<mask>``) and ``<unk>`` are
    never read from text: their entries are renamed with a leading U+0001, which the normalisation drops
    from every text. The ids equal the ``sentencepiece`` library's on LoCoMo's 4,000 texts and on 20,000
    random strings of mixed scripts, emoji and markup, but for 3 strings where two segmentations score
    the same (runs like "B.…"). Building it needs no protobuf (an earlier version built a SentencePiece
    model proto, whose generated code breaks beside protobuf < 7). ``content_ids`` is thread-safe.
    """

    _SPACES = re.compile(" {2,}")
    #: dropped by the file's normalisation, so a piece starting with it is never matched in a text
    _HIDE = "\x01"

    def __init__(self, model: Q4File) -> None:
        try:
            from tokenizers import Tokenizer, models, pre_tokenizers
        except ImportError as exc:  # pragma: no cover - a core dependency
            raise MissingDependencyError("the local embedder needs tokenizers: pip install tokenizers") from exc
        self.bos, self.eos = model.bos, model.eos
        self._table = str.maketrans(model.normalisation)
        if model.normalisation.get(ord(self._HIDE)) != "":
            raise EmbeddingError(
                f"{model.path}: the tokenizer's normalisation keeps U+0001; cannot hide control pieces"
            )
        hidden = {model.bos, model.eos, model.pad, model.unk}
        vocab = [
            (self._HIDE + piece if i in hidden or piece == "<mask>" else piece, score)
            for i, (piece, score) in enumerate(model.vocabulary())
        ]
        try:
            self._tok = Tokenizer(models.Unigram(vocab, unk_id=model.unk, byte_fallback=False))
            self._tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always", split=True)
        except Exception as exc:  # tokenizers raises its own exception types on a bad vocabulary
            raise EmbeddingError(f"cannot build the tokenizer of {model.path}: {exc}") from exc

    def content_ids(self, texts: Sequence[str]) -> list[list[int]]:
        """Token ids of each text, without ``<s>``/``</s>`` and without truncation."""
        prepared = []
        for text in texts:
            norm = self._SPACES.sub(" ", text.translate(self._table))
            prepared.append(norm[1:] if norm.startswith(" ") else norm)  # the mark replaces a leading space
        try:
            encoded = self._tok.encode_batch(prepared, add_special_tokens=False)
        except Exception as exc:
            raise EmbeddingError(f"tokenisation failed: {exc}") from exc
        return [list(e.ids) for e in encoded]


__all__ = ["E5Tokenizer"]
