"""Former names still understood for one release, and nowhere else.

Settings, a setting value and the rule ids of history events were once named after the design
documents they came from. They now say what they mean; the former spellings below are accepted
(settings, with a ``DeprecationWarning``) or translated on read (history written before the rename),
and this module goes away in the release after next. ``CHANGELOG.md`` lists the renames.
"""

from __future__ import annotations

import re
from typing import Any

#: Former setting names per settings section (class name → {former name: current name}).
RENAMED_SETTINGS: dict[str, dict[str, str]] = {
    "FsrsSettings": {
        "seed001_factor": "simple_power_factor",
        "seed001_exponent": "simple_power_exponent",
    },
    "RetentionSettings": {
        "seed003_importance_boost": "fading_importance_boost",
        "seed003_boost_cap": "fading_boost_cap",
        "seed003_min_stability": "fading_min_stability",
    },
}

#: Former names of write stages in ``write.llm_stages``.
RENAMED_STAGES: dict[str, str] = {"synthesis": "merge"}

#: Former names of settings sections (parent class name → {former name: current name}).
RENAMED_SECTIONS: dict[str, dict[str, str]] = {"DreamSettings": {"lifecycle": "forgetting"}}

#: Former values of ``dynamics.fsrs.curve``.
RENAMED_CURVES: dict[str, str] = {"seed001": "simple_power"}

#: Former rule ids in the ``rule`` of history events and in dream reports.
RENAMED_RULES: dict[str, str] = {
    "seed002_accesses": "working_accesses",
    "seed002_age": "working_age",
    "seed000_energy": "high_energy",
    "seed000_session_end": "session_end_energy",
    "seed001_access_frequency": "access_frequency",
    "seed001_sustained_utility": "sustained_utility",
    "seed001_entity_cooccurrence": "entity_cooccurrence",
    "seed002_importance_accesses": "importance_and_accesses",
    "seed001_idle_low_utility": "idle_low_utility",
    "seed002": "faded",
    "seed004_fact": "stale_fact",
    "seed003_floor": "retention_floor",
    "seed004_value": "low_value",
    "seed004_warm": "high_value",
}

#: Former leading words of history reasons written by the engine (the design a rule came from).
_REASON_PREFIX = re.compile(r"\bseed 00[0-4]:? ")
_RULE_WORD = re.compile(r"\b(" + "|".join(sorted(map(re.escape, RENAMED_RULES), key=len, reverse=True)) + r")\b")


def current_rule(rule: str) -> str:
    """The current id of a rule id (unchanged when it is not a former one)."""
    return RENAMED_RULES.get(rule, rule)


def current_reason(reason: str) -> str:
    """A history reason with former rule ids and former leading words replaced by the current ones."""
    reason = _REASON_PREFIX.sub("", reason).replace(" (seed 000)", "")
    return _RULE_WORD.sub(lambda m: RENAMED_RULES[m.group(1)], reason)


def current_event_data(data: dict[str, Any]) -> dict[str, Any]:
    """History event data with a former ``rule`` id replaced by the current one."""
    rule = data.get("rule")
    if isinstance(rule, str) and rule in RENAMED_RULES:
        return {**data, "rule": RENAMED_RULES[rule]}
    return data


__all__ = [
    "RENAMED_CURVES",
    "RENAMED_RULES",
    "RENAMED_SECTIONS",
    "RENAMED_SETTINGS",
    "RENAMED_STAGES",
    "current_event_data",
    "current_reason",
    "current_rule",
]
