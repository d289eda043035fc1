"""Settings of the live markdown mirror: the memory as files people can read, edit, grep and keep in git."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field

from reverie.config.core import Section
from reverie.config.sources import LIFECYCLE, REVERIE, source


class MirrorSettings(Section):
    """A live markdown mirror of the memory (the lifecycle design's markdown files, kept in step both ways)."""

    SOURCE = LIFECYCLE

    dir: Path | None = Field(
        default=None,
        description="Directory of the live markdown mirror. When set, every change to a memory is written "
        "there as it happens, in the layout of `reverie export --markdown`: one file per memory under "
        "facts/YYYY-MM-DD/, each sealed memory box under boxes/, the documents the dream cycle writes under "
        "users/ and topics.md. `reverie sync` reads back what people edited there. Off when unset; "
        "`reverie mirror DIR` writes a mirror of an existing store.",
    )
    lock_timeout_s: float = Field(
        default=30.0,
        gt=0,
        description="How long a process waits for another one writing the same mirror (the mirror's lock "
        "file) before it reports the mirror as failed. The memory's own write is kept either way; "
        "`reverie sync` catches the mirror up.",
        json_schema_extra=source(REVERIE),
    )
    max_file_bytes: int = Field(
        default=1_000_000,
        ge=1024,
        description="Largest mirror file `reverie sync` reads; a larger file is reported and left as it is.",
        json_schema_extra=source(REVERIE),
    )
    watch_debounce_ms: int = Field(
        default=300,
        ge=10,
        le=60_000,
        description="`reverie sync --watch` syncs this long after the last change it saw (an editor's save "
        "can touch a file several times).",
        json_schema_extra=source(REVERIE),
    )
