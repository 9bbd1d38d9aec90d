"""``in_ci`` / ``require``: every CI spelling turns a missing component into a failure."""

from __future__ import annotations

import pytest

from tests.ci import in_ci, require


@pytest.mark.parametrize("value", ["1", "true", "yes", "TRUE", "Yes", " true "])
def test_ci_spellings_mean_ci(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv("CI", value)
    assert in_ci()


@pytest.mark.parametrize("value", ["", "0", "false", "no", "off"])
def test_other_values_are_local(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv("CI", value)
    assert not in_ci()


def test_unset_is_local(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    assert not in_ci()


@pytest.mark.parametrize("value", ["1", "yes", "true"])
def test_missing_component_fails_in_ci(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv("CI", value)
    with pytest.raises(pytest.fail.Exception, match="frobnicator is required in CI"):
        require(False, "frobnicator")


def test_missing_component_skips_locally(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="frobnicator not available"):
        require(False, "frobnicator")


def test_present_component_passes_anywhere(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    require(True, "frobnicator")
