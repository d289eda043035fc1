"""What the update reading makes of a text: its statement, the clauses and the values they state."""

from __future__ import annotations

from dataclasses import dataclass, field

# analysis ---------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Value:
    """A value a clause states: ``kind`` (name, number, time, day, month, date, year, code) and its
    normal form; ``anchor`` is the nearest content word before it (what it is a value of)."""

    kind: str
    norm: str
    text: str
    anchor: str = ""


@dataclass(slots=True)
class Clause:
    text: str
    words: list[str]  # folded tokens
    stems: set[str]  # content stems (values, change and correction words left out)
    values: list[Value]
    subject: tuple[str, ...]  # see read_subject
    subject_words: set[str]
    families: set[str]
    change: list[str]
    correction: list[str]
    additive: list[str]
    dropped: set[str]  # stems and value forms the clause lets go of
    denied: set[str]  # what follows "not", "instead of" …: lets go of a value only ("not Alfama")
    given_up: set[str]  # what a verb of letting go names ("gave up on VS Code"): may be a plain word
    moved_from: set[str]
    moved_to: set[str]
    negated: bool
    polarity: int
    past: bool
    question: bool
    copula: bool
    context: set[str] = field(default_factory=set)  # content stems of the whole sentence
    topic: tuple[str, str] | None = None  # (owner, head) of what a change verb acts on ("changed my phone's wallpaper")
    targets: set[str] = field(default_factory=set)  # what a change goes to ("switched to Neovim")
    resumed: bool = False  # takes something up again ("started smoking again", "back on coffee", "tekrar")
    wrong_about: set[str] = field(default_factory=set)  # what the speaker says they were wrong about
    moved_out: bool = False  # a move out said without where to ("got his own place", "moved out", "kendi evime çıktım")


@dataclass(slots=True)
class Statement:
    text: str
    speaker: str | None
    turkish: bool = False
    clauses: list[Clause] = field(default_factory=list)
    stems: set[str] = field(default_factory=set)
