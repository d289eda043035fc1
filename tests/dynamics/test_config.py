from __future__ import annotations

import pytest
from pydantic import BaseModel, ValidationError

from reverie.config import SOURCES, Settings, iter_settings
from reverie.config.dynamics import (
    FSRS6_DEFAULT_W,
    DynamicsSettings,
    FsrsSettings,
    ImportanceSettings,
    LifecycleSettings,
    UtilitySettings,
)
from reverie.legacy import RENAMED_CURVES, RENAMED_SETTINGS


def test_defaults_validate() -> None:
    s = DynamicsSettings()
    assert s.fsrs.params == FSRS6_DEFAULT_W
    assert sum(s.importance.nine_factor_weights.values()) == pytest.approx(1.0)
    assert sum(s.importance.source_factor_weights.values()) == pytest.approx(1.0)


def test_fsrs_defaults_are_the_reference_schedulers() -> None:
    from fsrs.scheduler import DEFAULT_PARAMETERS

    assert FsrsSettings().w == tuple(DEFAULT_PARAMETERS)


def test_every_setting_names_a_known_source() -> None:
    rows = iter_settings(Settings)
    assert len([r for r in rows if r[0].startswith("dynamics.")]) > 100
    unknown = [(name, src) for name, _, _, src in rows if src not in SOURCES]
    assert unknown == []
    assert dict((name, src) for name, _, _, src in rows)["dynamics.fsrs.w"] == "FSRS-6"


def test_channel_weights_must_sum_to_one() -> None:
    with pytest.raises(ValidationError, match=r"must sum to 1.0, got 1.1.*w_novelty=0.35"):
        ImportanceSettings(w_novelty=0.35)


def test_utility_weights_must_sum_to_one() -> None:
    with pytest.raises(ValidationError, match="utility score weights"):
        UtilitySettings(w_semantic=0.5)


def test_heat_weights_and_thresholds_validated() -> None:
    with pytest.raises(ValidationError, match="heat weights"):
        LifecycleSettings(heat_access=0.5)
    with pytest.raises(ValidationError, match="demotion_value"):
        LifecycleSettings(demotion_value=0.8)


def test_fsrs_weights_bounds_reported_all_at_once() -> None:
    w = list(FSRS6_DEFAULT_W)
    w[4], w[20] = 11.0, 0.9
    with pytest.raises(ValidationError) as exc:
        FsrsSettings(w=tuple(w))
    assert "w4=11.0" in str(exc.value) and "w20=0.9" in str(exc.value)
    with pytest.raises(ValidationError, match="21 weights"):
        FsrsSettings(w=(0.1, 0.2))


def test_w20_override() -> None:
    s = FsrsSettings(w20=0.5)
    assert s.params[20] == 0.5 and s.params[:20] == FSRS6_DEFAULT_W[:20]


def test_priority_order_validated() -> None:
    with pytest.raises(ValidationError, match="strictly descending"):
        ImportanceSettings(priority_high=0.9)


def test_sections_reject_unknown_keys() -> None:
    with pytest.raises(ValidationError):
        DynamicsSettings.model_validate({"fsrs": {"nope": 1}})


def test_environment_override(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REVERIE_DYNAMICS__FSRS__CURVE", "simple_power")
    assert Settings.load().dynamics.fsrs.curve == "simple_power"


def test_former_names_still_set_their_settings_for_one_release(monkeypatch: pytest.MonkeyPatch) -> None:
    for section, renamed in RENAMED_SETTINGS.items():
        for old, new in renamed.items():
            path = "RETENTION" if section == "RetentionSettings" else "FSRS"
            monkeypatch.setenv(f"REVERIE_DYNAMICS__{path}__{old.upper()}", "2.5")
            with pytest.warns(DeprecationWarning, match=new):
                loaded = Settings.load()
            assert getattr(getattr(loaded.dynamics, path.lower()), new) == 2.5
            monkeypatch.delenv(f"REVERIE_DYNAMICS__{path}__{old.upper()}")
    for old, new in RENAMED_CURVES.items():
        with pytest.warns(DeprecationWarning, match=new):
            assert Settings.load(dynamics={"fsrs": {"curve": old}}).dynamics.fsrs.curve == new


def test_sections_are_models() -> None:
    for name in DynamicsSettings.model_fields:
        assert isinstance(getattr(DynamicsSettings(), name), BaseModel)
