"""Former names of a settings section and of a write stage are still understood, with a warning."""

from __future__ import annotations

import pytest

from reverie.config import Settings


def test_former_dream_lifecycle_section_sets_dream_forgetting() -> None:
    with pytest.warns(DeprecationWarning, match=r"'lifecycle' is now 'forgetting'"):
        s = Settings.model_validate({"dream": {"lifecycle": {"rehearse_max": 7}}})
    assert s.dream.forgetting.rehearse_max == 7
    assert "lifecycle" not in type(s.dream).model_fields


def test_former_dream_lifecycle_section_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REVERIE_DREAM__LIFECYCLE__REHEARSE_MAX", "9")
    with pytest.warns(DeprecationWarning):
        s = Settings()
    assert s.dream.forgetting.rehearse_max == 9


def test_former_write_stage_name_synthesis_means_merge() -> None:
    with pytest.warns(DeprecationWarning, match="'synthesis' is now 'merge'"):
        s = Settings.model_validate({"write": {"llm_stages": ["observer", "synthesis"]}})
    assert s.write.llm_stages == ["observer", "merge"]


def test_unknown_stage_is_still_an_error() -> None:
    with pytest.raises(ValueError, match=r"unknown write\.llm_stages"):
        Settings.model_validate({"write": {"llm_stages": ["summarise"]}})
