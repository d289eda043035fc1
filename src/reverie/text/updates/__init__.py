"""Knowledge updates: does a newer statement change what an older one says? (EN + TR, no model.)

People state changes in many ways: "I moved to Munich", "Priya left, I report to Daniel now",
"Berlin filled up so I signed up for the Chicago one instead", "it's 4:30, not 5", "VS Code'u
bıraktım, artık Neovim kullanıyorum". Two related facts are just as often both true: "Maya works
at Google in Zurich" and "Maya moved from Lisbon to Zurich"; "Ana likes tea at home" and "Ana likes
coffee at work"; "The rent is 1350 euros" and "The deposit was 2700 euros".

:func:`judge` reads both statements into clauses (:func:`analyse`) and weighs the evidence that the
new one replaces a value of the old one (:class:`Verdict` with the reason and each piece of
evidence). Evidence *for* an update:

* **the old value let go** — the new statement drops, ends or negates a value the old one asserts
  ("gave up on VS Code", "Priya left", "not Alfama", "Kahveyi bıraktım", "vegan değilim");
* **from → to** — "from LastPass to Bitwarden", "Garanti'den Akbank'a" where the old states the first;
* **a polarity flip** over the same words ("allergic to cats" → "not allergic to cats", likes → hates);
* **the same slot, another value** — the same subject and the same attribute (shared frame words, or
  one attribute family such as where someone lives, works, whom they report to) with a value of
  the same kind replaced (a name, a number with its unit, a weekday, a date, a time, the object of
  the same preposition), counted when the attribute holds one value at a time ("X is V", where
  someone lives or works) or when the new statement says that something changed ("switched",
  "moved to", "now", "instead", "artık", "geçtik") or corrects ("actually", "sorry, I meant").

Evidence *against*: different subjects ("my brother" / "my sister", "The Berlin office" / "The Lisbon
office"), the new statement adding rather than replacing ("also", "too", "again", "another", "de/da",
"bir de"), several values changing at once without a change word (another occasion, not a new value),
an old statement about the past ("I lived in Berlin for five years"), a value the old one already
holds ("moved to Zurich" against "works in Zurich").

When the reading finds the same subject and attribute, a change said, an old value no longer held and a
new one of the attribute's kind, but cannot align the values, the verdict is marked ``unaligned``:
:func:`unaligned_update` makes it an update when the embedder puts the two statements close enough (the
write gate's ``change_min``). So is a change said of the same thing in words no clause lines up with ("I've moved
to tenor in the choir, and we practise on Thursdays now" for "I sing bass in the church choir"): a change said
anywhere in the new statement, a word beyond who it is about that names something in both, a word of the old one
the new no longer says, and nothing that tells them apart (another person, attribute, part of the day or thing, an
addition, a one-off occasion).

The verdict is an *update* at ``UPDATE_SCORE``; the read path uses the weaker ``LIKELY_SCORE`` to
order two memories that both answer one question (never to hide one). Pure functions; the results of
:func:`analyse` are cached by text.
"""

from reverie.text.updates.clauses import analyse, attributes
from reverie.text.updates.compare import same_value, substitutions
from reverie.text.updates.judge import (
    NO_UPDATE,
    Verdict,
    contradicts,
    judge,
    may_say_change,
    may_update,
    other_speaker,
    says_change,
    unaligned_update,
)
from reverie.text.updates.statement import Clause, Statement, Value
from reverie.text.updates.tokens import is_turkish, stem, words
from reverie.text.updates.vocabulary import LIKELY_SCORE, UPDATE_SCORE, Family

__all__ = [
    "LIKELY_SCORE",
    "NO_UPDATE",
    "UPDATE_SCORE",
    "Clause",
    "Family",
    "Statement",
    "Value",
    "Verdict",
    "analyse",
    "attributes",
    "contradicts",
    "is_turkish",
    "judge",
    "may_say_change",
    "may_update",
    "other_speaker",
    "same_value",
    "says_change",
    "stem",
    "substitutions",
    "unaligned_update",
    "words",
]
