"""Fixtures of the dynamics tests: default settings and a fixed epoch."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from reverie.config.dynamics import DynamicsSettings

T0 = datetime(2025, 1, 1, tzinfo=UTC)


@pytest.fixture
def cfg() -> DynamicsSettings:
    return DynamicsSettings()
