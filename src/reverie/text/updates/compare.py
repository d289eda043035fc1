"""Comparing values: whether two values are the same, whether they are of one kind, and which old value a new one
replaces.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Set as AbstractSet

from reverie.text.updates.statement import Clause, Value
from reverie.text.updates.tokens import stem
from reverie.text.updates.vocabulary import THOUSANDS


def same_value(x: Value, y: Value) -> bool:
    """Whether two values are the same (names sharing a word, numbers and times alike, a date and its month)."""
    if x.norm == y.norm:
        return True
    if x.kind.startswith("obj") and y.kind.startswith("obj") and head_of(x) == head_of(y):
        xs, ys = set(x.norm.split()), set(y.norm.split())
        return xs <= ys or ys <= xs  # "the library" / "the public library": one names the other more closely
    if x.kind == "name" and y.kind == "name":
        if _numbered_apart(x.norm.split(), y.norm.split()):
            return False  # "Year 3" / "Year 4", "Room 12" / "Room 14": one name, another number
        xs, ys = set(x.norm.split()), set(y.norm.split())
        return bool(xs & ys) or bool({stem(w) for w in xs} & {stem(w) for w in ys})  # "Rockies" / "Rocky Mountains"
    if {x.kind, y.kind} <= {"number", "time"}:
        return _num_core(x) == _num_core(y) and _units_agree(x, y)
    if {x.kind, y.kind} == {"date", "month"}:
        return x.norm.split("-")[0] == y.norm.split("-")[0]
    return False


def _numbered_apart(xs: list[str], ys: list[str]) -> bool:
    return xs[-1:] != ys[-1:] and xs[-1:][0].isdigit() and ys[-1:][0].isdigit() if xs and ys else False


def head_of(v: Value) -> str:
    """The head word of a value's phrase (its last word, stemmed): "team" of "the sales team"."""
    last = v.text.split()[-1] if v.text.split() else ""
    return stem(last) if last else ""


def value_in(value: Value, clause: Clause) -> bool:
    return any(same_value(value, v) for v in clause.values)


def _num_core(v: Value) -> str:
    if v.kind == "time":
        h, m = v.norm.split(":")
        return f"#{int(h) % 12}" + ("" if m == "00" else f":{m}")
    core = v.norm.split("@", 1)[0]
    if core.startswith("#"):
        try:
            return f"#{float(core[1:]) % 12:g}" if False else core
        except ValueError:
            return core
    return core


def _units_agree(x: Value, y: Value) -> bool:
    ux = x.norm.split("@", 1)[1] if "@" in x.norm else None
    uy = y.norm.split("@", 1)[1] if "@" in y.norm else None
    return ux is None or uy is None or _one_unit(ux, uy)


def _one_unit(ux: str, uy: str) -> bool:
    """Two units of one kind: the same, or an amount in thousands ("45k") and a sum of money."""
    return ux == uy or {ux.split("/")[0], uy.split("/")[0]} == {THOUSANDS, "money"}


def kind_of(v: Value) -> str:
    if v.kind == "number":
        return "number@" + v.norm.split("@", 1)[1] if "@" in v.norm else "number"
    return "date" if v.kind == "month" else v.kind


def _compatible_kinds(x: Value, y: Value) -> bool:
    kx, ky = kind_of(x), kind_of(y)
    if kx == ky:
        return True
    if kx.startswith("number") and ky.startswith("number"):
        return "@" not in kx or "@" not in ky or _one_unit(kx.split("@", 1)[1], ky.split("@", 1)[1])
    if kx.startswith("obj") and ky.startswith("obj"):
        return kx == ky or {kx, ky} == {"obj", "obj:to"}  # "drinks coffee" / "switched to tea"
    if {kx.split("@")[0], ky.split("@")[0]} == {"number", "time"}:
        number = x if kx.startswith("number") else y
        return number.text[:1].isdigit()  # "at 5pm" / "not 5"; "two kids" is no time
    return False


def held_in(v: Value, terms: AbstractSet[str]) -> bool:
    """Whether ``v`` is among the terms a change lets go of."""
    if v.norm in terms:
        return True
    if v.kind == "name":
        return any(part in terms or stem(part) in terms for part in v.norm.split())
    if v.kind in ("number", "time"):
        core = _num_core(v)  # "not 7" lets go of "7:30"; a ratio ("5:2") is let go whole
        return core in terms or (v.kind == "time" and core.split(":")[0] in terms)
    if v.kind == "day":
        return f"day:{v.norm}" in terms
    if v.kind.startswith(("obj", "family")):
        return bool(set(v.norm.split()) & terms)
    return False


def substitutions(
    old_values: list[Value],
    new_values: list[Value],
    targets: AbstractSet[str] = frozenset(),
    fits: Callable[[Value, Value], bool] | None = None,
) -> list[tuple[Value, Value]]:
    """(old value, new value) pairs of one kind: the new clause no longer holds the old value and the
    old clause does not hold the new one. Where a change goes ("switched to tea", ``targets``) may
    replace a name or the object of the old clause ("uses Vim", "drinks coffee")."""
    gone = [v for v in old_values if not any(same_value(v, n) for n in new_values)]
    fresh = [v for v in new_values if not any(same_value(v, o) for o in old_values)]
    out: list[tuple[Value, Value]] = []
    used: set[int] = set()
    for o in gone:
        for i, n in enumerate(fresh):
            target = (
                kind_of(n) == "obj:to"
                and held_in(n, targets)
                and (kind_of(o) in ("name", "obj") or (kind_of(o).startswith("obj:") and head_of(o) == head_of(n)))
            )  # "switched to tea" for "drinks coffee"; "transferred to the sales team" for "on the marketing team"
            if i not in used and (_compatible_kinds(o, n) or target) and (fits is None or fits(o, n)):
                out.append((o, n))
                used.add(i)
                break
    return out
