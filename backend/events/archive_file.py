"""The archive file: gzip'd JSON lines, one event per line, written so a crash never leaves
a half file under the final name.

Each line is ``{"id", "type", "ts", "project_id", "session_id", "agent", "payload"}`` with
``ts`` in the log's own form (UTC, ``Z``), in ascending id order. Writing goes to a temporary
file beside the target (mode 0600: archives hold customer messages), is fsync'd, read back
whole (gzip's CRC included), and only then linked to its final name — ``link`` fails when
the name exists, so an archive is never overwritten, not even by a race.
"""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import re
import zlib
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

from pydantic import BaseModel, ConfigDict, Field, JsonValue, field_validator
from pydantic import ValidationError as PydanticValidationError

from backend.exceptions import ConflictError, NotFoundError, PathError, ValidationError

SUFFIX = ".jsonl.gz"
_ISO = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?(Z|[+-]\d{2}:\d{2})$")


class ArchivedEvent(BaseModel):
    """One line of an archive (checked on restore, before anything is written)."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    id: int = Field(gt=0)
    # Any name, not only today's EventType: the log may hold names older code wrote.
    type: str = Field(min_length=1, max_length=200)
    ts: str
    project_id: str | None
    session_id: str | None
    agent: str | None
    payload: JsonValue

    @field_validator("ts")
    @classmethod
    def _iso(cls, value: str) -> str:
        if not _ISO.match(value):
            raise ValueError(f"not an ISO-8601 UTC timestamp: {value!r}")
        return value


def canonical_ts(value: Any) -> str:
    """``ts`` as the append path writes it (``2026-12-01T17:23:14.123Z``), whatever the
    dialect handed back (PostgreSQL: a ``+00:00`` or local offset, microseconds)."""
    text = str(value)
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return text
    if moment.tzinfo is None:
        return text
    moment = moment.astimezone(UTC)
    spec = "milliseconds" if moment.microsecond % 1000 == 0 else "microseconds"
    return moment.isoformat(timespec=spec).replace("+00:00", "Z")


def check_new_path(out: Path) -> Path:
    """The archive's target: absolute, ``*.jsonl.gz``, in an existing directory, new.

    Raises:
        PathError: wrong suffix, or the directory does not exist.
        ConflictError: something already has that name (an archive is never overwritten).
    """
    if not out.name.endswith(SUFFIX) or out.name == SUFFIX:
        raise PathError(f"--out must name a *{SUFFIX} file, not {str(out)!r}", path=str(out))
    # Not normalised: ``missing/../x.jsonl.gz`` must fail as the OS would, not become ``x``.
    target = out.absolute()
    if not target.parent.is_dir():
        raise PathError(f"directory {str(target.parent)!r} does not exist", path=str(out))
    if os.path.lexists(target):
        raise ConflictError(
            f"{str(target)!r} already exists: an archive is never overwritten", path=str(out)
        )
    return target


def check_archive_path(path: Path) -> Path:
    """An existing regular file to restore from.

    Raises:
        NotFoundError: no such file.
        PathError: it is a directory, a device or a pipe.
    """
    target = path.absolute()
    if not target.exists():
        raise NotFoundError(f"no archive at {str(path)!r}", path=str(path))
    if not target.is_file():
        raise PathError(f"{str(path)!r} is not a regular file", path=str(path))
    return target


class ArchiveWriter:
    """Writes lines to a temporary file; :meth:`commit` makes it the archive."""

    def __init__(self, target: Path) -> None:
        self.target = target
        self.tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
        fd = os.open(self.tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        self._raw: IO[bytes] = os.fdopen(fd, "wb")
        # mtime=0: the same events give the same bytes (the name is left out too).
        self._gz = gzip.GzipFile(filename="", fileobj=self._raw, mode="wb", mtime=0)
        self.lines = 0

    def write(self, event: dict[str, Any]) -> None:
        """Append one event line."""
        line = json.dumps(event, ensure_ascii=False, separators=(",", ":"), default=str)
        self._gz.write(line.encode("utf-8") + b"\n")
        self.lines += 1

    def commit(self) -> None:
        """fsync, read back whole, link to the final name, fsync the directory.

        Raises:
            ConflictError: the final name appeared meanwhile (nothing is overwritten).
            ValidationError: the file read back differs from what was written.
        """
        self._gz.close()
        self._raw.flush()
        os.fsync(self._raw.fileno())
        self._raw.close()
        read = sum(1 for _ in read_lines(self.tmp))
        if read != self.lines:
            raise ValidationError(f"archive read back {read} lines of {self.lines} written")
        try:
            os.link(self.tmp, self.target)
        except FileExistsError:
            raise ConflictError(
                f"{str(self.target)!r} appeared while archiving: nothing was deleted",
                path=str(self.target),
            ) from None
        finally:
            self.tmp.unlink(missing_ok=True)
        dir_fd = os.open(self.target.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)

    def abort(self) -> None:
        """Drop the temporary file (the archive never existed)."""
        with contextlib.suppress(Exception):
            self._gz.close()
        with contextlib.suppress(Exception):
            self._raw.close()
        self.tmp.unlink(missing_ok=True)


def read_lines(path: Path) -> Iterator[ArchivedEvent]:
    """Every line of an archive, checked, in order.

    Raises:
        ValidationError: the file is not gzip, is cut short, or a line is not an event
            (the message names the line); ids must ascend, as archive wrote them.
    """
    number = 0
    last_id = 0
    try:
        with gzip.open(path, "rb") as fh:
            for number, raw in enumerate(fh, start=1):
                event = _parse(path, number, raw)
                if event.id <= last_id:
                    raise ValidationError(
                        f"{path.name}, line {number}: id {event.id} after id {last_id} "
                        "(an archive lists each event once, in id order)",
                        line=number,
                    )
                last_id = event.id
                yield event
    except (gzip.BadGzipFile, EOFError, zlib.error, OSError) as exc:
        raise ValidationError(
            f"{path.name} is not a complete gzip archive (after line {number}): {exc}",
            line=number + 1,
        ) from exc


def _parse(path: Path, number: int, raw: bytes) -> ArchivedEvent:
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValidationError(f"{path.name}, line {number}: not JSON ({exc})", line=number) from exc
    try:
        return ArchivedEvent.model_validate(data)
    except PydanticValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(map(str, e['loc'])) or '-'}: {e['msg']}" for e in exc.errors()
        )
        raise ValidationError(
            f"{path.name}, line {number}: not an archived event ({problems})", line=number
        ) from exc
