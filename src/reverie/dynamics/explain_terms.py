"""The building blocks of :func:`reverie.dynamics.explain.explain_strength`: one entry (value, formula,
terms) made JSON-ready, the clocks of one evaluation, and numbers written into formula strings."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from enum import Enum
from typing import Any

from reverie.dynamics._util import days_between, json_number, layer_name, seconds_between
from reverie.model import MemoryRecord

#: explained quantities by name, each ``{"value": …, "formula": "…", "terms": {…}}``
Entries = dict[str, dict[str, Any]]


def safe(value: Any) -> Any:
    """``value`` as JSON-ready data: ∞ and NaN as text, enums by value, datetimes as ISO text."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, Enum):
        return safe(value.value)
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return json_number(value)
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, Mapping):
        return {str(k): safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [safe(v) for v in value]
    return str(value)


def entry(value: Any, formula: str, **terms: Any) -> dict[str, Any]:
    """One explained quantity."""
    return {"value": safe(value), "formula": formula, "terms": safe(terms)}


def num(value: float) -> str:
    """A setting's number as written in a formula (``0.05``, ``1e-05``, ``inf``)."""
    return f"{value:g}"


@dataclass(frozen=True, slots=True)
class Moment:
    """The clocks of one evaluation of a memory at ``now`` (see the module docs of ``explain``)."""

    now: datetime
    layer: str
    last: datetime  # the last access, else the creation
    since_access_days: float
    since_access_s: float
    age_days: float

    @classmethod
    def of(cls, record: MemoryRecord, now: datetime) -> Moment:
        last = record.last_accessed_at or record.created_at
        return cls(
            now=now,
            layer=layer_name(record.layer),
            last=last,
            since_access_days=days_between(last, now),
            since_access_s=seconds_between(last, now),
            age_days=days_between(record.created_at, now),
        )
