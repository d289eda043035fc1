"""One settings object carrying every threshold, each with the public idea it comes from (its ``source``).

Precedence (highest first): arguments to :class:`Settings` › environment variables
(``REVERIE_`` prefix, ``__`` between nested names, e.g. ``REVERIE_DYNAMICS__ENERGY__DECAY_WORKING``)
› a TOML config file (``REVERIE_CONFIG`` or ``reverie.toml`` in the working directory) › defaults.

Invalid values raise :class:`~reverie.errors.ConfigError` listing every bad value at once.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any

from pydantic import Field, ValidationError
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from reverie.config.codebase import CodebaseSettings
from reverie.config.core import (
    EmbeddingSettings,
    LimitSettings,
    LLMSettings,
    OpsLogSettings,
    Section,
    StorageSettings,
)
from reverie.config.dream import DreamSettings
from reverie.config.dynamics import DynamicsSettings
from reverie.config.mirror import MirrorSettings
from reverie.config.read import ReadSettings
from reverie.config.sources import ENERGY, SOURCES, source
from reverie.config.write import WriteSettings
from reverie.errors import ConfigError


class Settings(BaseSettings):
    """Every reverie setting. ``Settings.load(...)`` validates and reports all errors at once."""

    model_config = SettingsConfigDict(
        env_prefix="REVERIE_",
        env_nested_delimiter="__",
        extra="forbid",
        validate_assignment=True,
    )

    instance_id: str | None = Field(
        default=None,
        description="Name of this engine instance (recorded on memories and claims).",
        json_schema_extra=source(ENERGY),
    )
    storage: StorageSettings = Field(default_factory=StorageSettings)
    embedding: EmbeddingSettings = Field(default_factory=EmbeddingSettings)
    limits: LimitSettings = Field(default_factory=LimitSettings)
    opslog: OpsLogSettings = Field(default_factory=OpsLogSettings)
    llm: LLMSettings = Field(default_factory=LLMSettings)
    dynamics: DynamicsSettings = Field(default_factory=DynamicsSettings)
    dream: DreamSettings = Field(default_factory=DreamSettings)
    write: WriteSettings = Field(default_factory=WriteSettings)
    read: ReadSettings = Field(default_factory=ReadSettings)
    codebase: CodebaseSettings = Field(default_factory=CodebaseSettings)
    mirror: MirrorSettings = Field(default_factory=MirrorSettings)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        named = os.environ.get("REVERIE_CONFIG")
        path = Path(named or "reverie.toml")
        sources: list[PydanticBaseSettingsSource] = [init_settings, env_settings]
        if named and not path.is_file():
            what = "a directory" if path.is_dir() else "not a file" if path.exists() else "no such file"
            raise ConfigError(f"REVERIE_CONFIG names {named!r}: {what}. Point it at a TOML file, or unset it")
        if path.is_file():
            _check_toml(path)
            sources.append(TomlConfigSettingsSource(settings_cls, toml_file=path))
        return tuple(sources)

    @classmethod
    def load(cls, **overrides: Any) -> Settings:
        """Build settings from arguments, environment and config file; raise ConfigError on bad values."""
        try:
            return cls(**overrides)
        except ValidationError as exc:
            raise ConfigError(_format_errors(exc)) from exc


def _check_toml(path: Path) -> None:
    """:class:`ConfigError` naming the file and the place when ``path`` is not a readable TOML file."""
    try:
        with path.open("rb") as f:
            tomllib.load(f)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"the config file {path} is not valid TOML: {exc}") from exc
    except UnicodeDecodeError as exc:
        raise ConfigError(f"the config file {path} is not UTF-8 text") from exc
    except OSError as exc:
        raise ConfigError(f"the config file {path} cannot be read: {exc.strerror or exc}") from exc


def _format_errors(exc: ValidationError) -> str:
    lines = [f"{len(exc.errors())} invalid setting(s):"]
    for err in exc.errors():
        where = ".".join(str(p) for p in err["loc"]) or "<root>"
        lines.append(f"  {where}: {err['msg']} (got {err.get('input')!r})")
    return "\n".join(lines)


def iter_settings(
    model: type[Section] | type[BaseSettings] = Settings, prefix: str = ""
) -> list[tuple[str, Any, str, str]]:
    """(dotted name, default, description, source) of every leaf setting — for the generated docs.

    ``source`` names the public idea the setting comes from (see :mod:`reverie.config.sources`)."""
    rows: list[tuple[str, Any, str, str]] = []
    for name, info in model.model_fields.items():
        ann = info.annotation
        dotted = f"{prefix}{name}"
        if isinstance(ann, type) and issubclass(ann, Section):
            rows.extend(iter_settings(ann, dotted + "."))
        else:
            default = info.get_default(call_default_factory=True)
            extra = info.json_schema_extra if isinstance(info.json_schema_extra, dict) else {}
            rows.append((dotted, default, info.description or "", str(extra.get("source", ""))))
    return rows


__all__ = ["SOURCES", "ConfigError", "Settings", "iter_settings"]
