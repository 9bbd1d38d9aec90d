"""Retention: move old events to a gzip'd JSON-lines file, and put them back.

``archive`` moves the events older than a date out of the log; ``restore`` puts them back
with their ids. Only ``events`` rows move: projections, the ledger and every state table
stay as they are, so what an operator sees now does not change. An event that live
behaviour still reads (an open session's history, the newest event of each roster key)
stays however old it is: :func:`archive` says what is kept and what is forgotten.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from backend.events.archive_file import (
    ArchiveWriter,
    canonical_ts,
    check_archive_path,
    check_new_path,
    read_lines,
)
from backend.events.catalog import GATE_EVENTS, EventType
from backend.events.log import EventLog
from backend.exceptions import ValidationError
from backend.store.db import Tx, dumps, loads

BATCH = 2000
"""Rows per read, delete and insert: memory stays bounded, transactions stay short."""

SUBJECT_TYPES: tuple[str, ...] = (
    # Gate events: the roster's gate state is per PR.
    *sorted(GATE_EVENTS),
    # An accepted handoff per target agent: infra joins the roster with its own.
    EventType.HANDOFF_ACCEPTED,
)
"""Event types whose roster key also has a subject (PR id, task id, or handoff target)."""

Progress = Callable[[str, int, int | None], None]
"""``(phase, done, total)`` — the command draws it; ``None`` total: unknown."""


@dataclass(frozen=True)
class ArchiveResult:
    """What ``archive`` did."""

    path: Path | None  # None: nothing was old enough, no file was written
    before: date
    archived: int
    kept: int  # old events kept because live state still reads them
    first_id: int | None
    last_id: int | None


@dataclass(frozen=True)
class RestoreResult:
    """What ``restore`` did."""

    path: Path
    restored: int
    skipped: int  # ids already in the log


def parse_before(text: str, *, today: date | None = None) -> date:
    """``--before``: a ``YYYY-MM-DD`` date, not after today (UTC).

    Raises:
        ValidationError: not that form, not a date, or in the future.
    """
    try:
        if len(text) != 10:
            raise ValueError(text)
        day = date.fromisoformat(text)
    except ValueError:
        raise ValidationError(f"--before must be a date YYYY-MM-DD, not {text!r}") from None
    today = today or datetime.now(UTC).date()
    if day > today:
        raise ValidationError(
            f"--before {day} is in the future (today is {today} UTC): "
            "that would archive events still being written"
        )
    return day


def _cutoff(day: date) -> str:
    return f"{day.isoformat()}T00:00:00.000Z"


def kept_by_live_state(tx: Tx, day: date) -> tuple[set[int], set[str]]:
    """The ids of roster-key events and the open sessions (see :func:`archive`)."""
    before = _cutoff(day)
    newest = tx.all("events_newest_per_key", {"subject_types": json.dumps(SUBJECT_TYPES)})
    ids = {int(r["id"]) for r in newest}
    sessions = {str(r["session_id"]) for r in tx.all("events_archive_live_sessions")}
    first = tx.one("events_first_since", {"before": before})
    if first is not None:
        rows = tx.all("events_sessions_since", {"from_id": first["id"], "before": before})
        sessions |= {str(r["session_id"]) for r in rows}
    return ids, sessions


def _line(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": int(row["id"]),
        "type": row["type"],
        "ts": canonical_ts(row["ts"]),
        "project_id": row.get("project_id"),
        "session_id": row.get("session_id"),
        "agent": row.get("agent"),
        "payload": loads(row["payload"]),  # as stored, even a non-object older code wrote
    }


def archive(
    log: EventLog, day: date, out: Path, *, progress: Progress | None = None
) -> ArchiveResult:
    """Move the events with ``ts`` before ``day`` (00:00 UTC) into ``out``.

    The file is complete on disk (fsync'd, read back, renamed) before the first row is
    deleted; rows are then deleted in batches, by the ids the file holds.

    What an archive keeps. A few reads of the log drive live behaviour, not just display, so
    an event they need stays in the log however old it is:

    * **Open sessions and conversations keep their whole history.** An agent's turns in a
      session are its memory (``AgentRuntime.history`` replays every ``agent.turn`` of the
      session to the model, and counts its model calls); its unseen decisions are the
      ``approval.decided`` events no turn listed in ``decisions_seen``; a conversation's
      attempts (``TENTATIVA_DE_FERRAMENTA_REGISTRADA``) are what its takeover detail and the
      conversation route show. A session is open when it has an event on or after the date, or
      when live state points at it: an unresolved takeover, a pending approval, an offered
      handoff, a conversation an operator holds. Only sessions closed before the date go.
    * **The newest event of each roster key stays**: of each ``(type, project, agent)``, and of
      each PR for gate events and each target for accepted handoffs — what the roster folds the
      log down to (latest status, model, pause, gate state per PR), so the roster derived from
      what is left equals the one derived from the whole log.

    What an archive forgets (until restored): the archived turns of closed sessions (an agent
    asked to continue such a session starts it afresh), the attempts of closed conversations
    (their messages stay: they are a table), the activity feed and ``GET /api/events`` before
    the date (ids leave a gap), time travel (``?at=N``) inside the archived range beyond what
    snapshots hold, and ``cadencia projections rebuild`` sees only what is left — restore first.

    Raises:
        PathError, ConflictError: ``out`` is not a new ``*.jsonl.gz`` in an existing
            directory; nothing changes.
    """
    target = check_new_path(out)
    db = log.db
    before = _cutoff(day)
    tell = progress or (lambda *_: None)
    with db.transaction(write=False) as tx:
        keep_ids, open_sessions = kept_by_live_state(tx, day)
        row = tx.one("events_archive_count", {"before": before})
        total = int(row["n"]) if row else 0
    writer = ArchiveWriter(target)
    kept = seen = 0
    first_id: int | None = None
    last_id: int | None = None
    try:
        after = 0
        while True:
            with db.transaction(write=False) as tx:
                rows = tx.all(
                    "events_archive_batch", {"after": after, "before": before, "limit": BATCH}
                )
            if not rows:
                break
            after = int(rows[-1]["id"])
            for r in rows:
                if int(r["id"]) in keep_ids or r.get("session_id") in open_sessions:
                    kept += 1
                    continue
                writer.write(_line(r))
                first_id = first_id or int(r["id"])
                last_id = int(r["id"])
            seen += len(rows)
            tell("writing", seen, total)
        if writer.lines == 0:
            writer.abort()
            return ArchiveResult(None, day, 0, kept, None, None)
        writer.commit()
    except BaseException:
        writer.abort()
        raise
    _delete_archived(log, target, writer.lines, tell)
    log.append(
        EventType.EVENTS_ARCHIVED,
        {
            "file": target.name,
            "before": day.isoformat(),
            "archived": writer.lines,
            "kept": kept,
            "first_id": first_id,
            "last_id": last_id,
        },
    )
    return ArchiveResult(target, day, writer.lines, kept, first_id, last_id)


def _delete_archived(log: EventLog, path: Path, total: int, tell: Progress) -> None:
    """Delete, batch by batch, exactly the ids the archive on disk holds."""
    done = 0
    batch: list[int] = []
    for event in read_lines(path):
        batch.append(event.id)
        if len(batch) == BATCH:
            done += _delete(log, batch)
            batch = []
            tell("deleting", done, total)
    if batch:
        done += _delete(log, batch)
        tell("deleting", done, total)


def _delete(log: EventLog, ids: list[int]) -> int:
    with log.db.transaction() as tx:
        tx.execute("events_delete_ids", {"ids": json.dumps(ids)})
    return len(ids)


def restore(log: EventLog, path: Path, *, progress: Progress | None = None) -> RestoreResult:
    """Put an archive's events back with their ids (those already present are skipped).

    Restore checks the whole file before writing anything (a bad line is named and nothing is
    written), then inserts in batches, skipping ids already in the log: a restore that stopped
    half way (a crash, Ctrl-C) is finished by running it again.

    Raises:
        NotFoundError, PathError: no such regular file.
        ValidationError: a line is not an archived event, or the gzip is corrupt; the
            message names the line and nothing was written.
    """
    source = check_archive_path(path)
    tell = progress or (lambda *_: None)
    total = 0
    for total, _ in enumerate(read_lines(source), start=1):
        if total % BATCH == 0:
            tell("checking", total, None)
    tell("checking", total, total)
    restored = done = 0
    batch: list[dict[str, Any]] = []
    for event in read_lines(source):
        batch.append({**event.model_dump(), "payload": dumps(event.payload)})
        if len(batch) == BATCH:
            restored += _insert(log, batch)
            done += len(batch)
            batch = []
            tell("restoring", done, total)
    if batch:
        restored += _insert(log, batch)
        done += len(batch)
        tell("restoring", done, total)
    if restored:
        log.append(
            EventType.EVENTS_RESTORED,
            {"file": source.name, "restored": restored, "skipped": total - restored},
        )
    return RestoreResult(source, restored, total - restored)


def _insert(log: EventLog, rows: list[dict[str, Any]]) -> int:
    with log.db.transaction() as tx:
        inserted = tx.execute(
            "events_restore_batch", {"rows": json.dumps(rows, ensure_ascii=False)}
        )
        if tx.dialect == "postgres" and inserted:
            tx.one("events_restore_sequence")
    return inserted
