"""SLA durations and deadlines: what ``CADENCIA_SLA`` accepts and where an item stands."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from backend.exceptions import ConfigError
from backend.settings import load_settings
from backend.sla import DEFAULT_SLA, Slas, parse_duration


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("90s", 90.0),
        ("5m", 300.0),
        ("4h", 14400.0),
        ("1d", 86400.0),
        ("250ms", 0.25),
        ("0", 0.0),
        (" 2.5m ", 150.0),
        (45, 45.0),
        (1.5, 1.5),
    ],
)
def test_durations(text: str | float, seconds: float) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "5x", "-5s", "m", "5 minutes", "1e3s", True, -1])
def test_bad_durations_are_refused(text: str | float) -> None:
    with pytest.raises(ValueError, match="duration"):
        parse_duration(text)


def test_deadline_states_at_75_percent_and_at_the_sla() -> None:
    slas = Slas({"interruption": 100.0})
    since = datetime(2026, 12, 5, 12, 0, tzinfo=UTC)
    at = [slas.deadline("interruption", since, since + timedelta(seconds=s)) for s in (74, 75, 100)]
    assert [d.state for d in at] == ["ok", "warning", "breached"]
    assert at[0].due_at == since + timedelta(seconds=100)
    assert slas.of("pr") == DEFAULT_SLA["pr"]  # the defaults stay for kinds not named


def test_cadencia_sla_from_the_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CADENCIA_SLA", '{"interruption": "90s", "pr": 60}')
    assert load_settings().sla == {"interruption": 90.0, "pr": 60.0}
    for bad, says in (
        ('{"nope": "5m"}', "unknown inbox kind"),
        ('{"pr": "soon"}', "not a duration"),
        ('["pr"]', "sla"),
    ):
        monkeypatch.setenv("CADENCIA_SLA", bad)
        with pytest.raises(ConfigError, match=says):
            load_settings()
