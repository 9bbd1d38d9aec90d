"""The gate job lease and attempts settings, as ``cadencia serve`` reads them from the env."""

from __future__ import annotations

import pytest

from backend.exceptions import ConfigError
from backend.settings import load_settings


def test_the_lease_and_attempts_come_from_the_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CADENCIA_GATE_LEASE_S", "8")
    monkeypatch.setenv("CADENCIA_GATE_MAX_ATTEMPTS", "5")
    settings = load_settings()
    assert (settings.gate_lease_s, settings.gate_max_attempts) == (8.0, 5)


def test_defaults_and_bounds(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("CADENCIA_GATE_LEASE_S", "CADENCIA_GATE_MAX_ATTEMPTS"):
        monkeypatch.delenv(name, raising=False)
    settings = load_settings()
    assert (settings.gate_lease_s, settings.gate_max_attempts) == (60.0, 3)
    # A wrong setting stops the start with its own name (ConfigError: exit 2, no traceback).
    with pytest.raises(ConfigError, match="gate_lease_s"):
        load_settings(gate_lease_s=0)
    with pytest.raises(ConfigError, match="gate_max_attempts"):
        load_settings(gate_max_attempts=0)
