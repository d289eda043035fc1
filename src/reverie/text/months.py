"""Month names in English (with their abbreviations) and Turkish, and their numbers: read by the query's time
anchoring and by how far ahead a plan looks."""

from __future__ import annotations

from typing import Final

MONTHS: Final[dict[str, int]] = {
    "january": 1, "february": 2, "march": 3, "april": 4, "may": 5, "june": 6, "july": 7, "august": 8,
    "september": 9, "october": 10, "november": 11, "december": 12,
    "jan": 1, "feb": 2, "mar": 3, "apr": 4, "jun": 6, "jul": 7, "aug": 8, "sep": 9, "sept": 9, "oct": 10,
    "nov": 11, "dec": 12,
    "ocak": 1, "şubat": 2, "mart": 3, "nisan": 4, "mayıs": 5, "haziran": 6, "temmuz": 7, "ağustos": 8,
    "eylül": 9, "ekim": 10, "kasım": 11, "aralık": 12,
}  # fmt: skip
#: the Turkish names (they take case suffixes: "Haziran'da", "Mart'a")
TR_MONTHS: Final[tuple[str, ...]] = (
    "ocak", "şubat", "mart", "nisan", "mayıs", "haziran", "temmuz", "ağustos", "eylül", "ekim", "kasım", "aralık",
)  # fmt: skip

__all__ = ["MONTHS", "TR_MONTHS"]
