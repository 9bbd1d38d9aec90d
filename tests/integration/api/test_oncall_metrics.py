"""``/metrics`` on the real backend, SQLite and PostgreSQL: the on-call gauges are read from
the database at scrape time and match ``/api/inbox``; counters follow Prometheus naming."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from backend.api.app import create_app
from backend.erp.seed import upsert_pedidos
from tests.integration.api.conftest import ASKS, Live, live_backend, live_settings


@pytest.fixture(params=["sqlite", "postgres"])
def live(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Live]:
    settings = live_settings(
        request, tmp_path, reconcile_interval_s=3600, sla={"interruption": "0s"}
    )
    for running in live_backend(settings):
        upsert_pedidos(
            running.backend.db,
            [{"pedidoId": "4821", "valorPedido": "129.90", "clienteId": "c-1"}],
        )
        yield running


def _samples(live: Live) -> dict[str, dict[tuple[tuple[str, str], ...], float]]:
    answer = live.http.get("/metrics")
    assert answer.status_code == 200, answer.text
    out: dict[str, dict[tuple[tuple[str, str], ...], float]] = {}
    for family in text_string_to_metric_families(answer.text):
        for sample in family.samples:
            out.setdefault(sample.name, {})[tuple(sorted(sample.labels.items()))] = sample.value
    return out


def test_the_inbox_gauges_match_the_inbox_and_counters_end_in_total(live: Live) -> None:
    before = _samples(live)
    assert (
        before["cadencia_inbox_items"][(("kind", "interruption"), ("sla_state", "breached"))] == 0
    )
    for text in ASKS:  # the teto de voltas hands the conversation to a person
        sent = live.http.post(
            "/api/conversations/conv-m/messages", json={"text": text, "cliente_id": "c-1"}
        )
        assert sent.is_success, sent.text

    after = _samples(live)
    inbox = live.http.get("/api/inbox").json()
    expected = Counter((i["kind"], i["sla_state"]) for i in inbox)
    assert expected[("interruption", "breached")] == 1  # its SLA is 0s
    gauges = {
        (dict(k)["kind"], dict(k)["sla_state"]): v for k, v in after["cadencia_inbox_items"].items()
    }
    assert {k: v for k, v in gauges.items() if v} == dict(expected)
    oldest = after["cadencia_inbox_oldest_age_seconds"][(("kind", "interruption"),)]
    # Read before the inbox was: as old as the takeover was then, never older.
    assert 0 <= oldest <= max(i["age_s"] for i in inbox if i["kind"] == "interruption")
    assert set(dict(k)["status"] for k in after["cadencia_agents"]) >= {
        "working",
        "idle",
        "error",
        "paused",
        "budget",
    }
    assert sum(after["cadencia_agents"].values()) >= 1
    claims = {dict(k)["state"]: v for k, v in after["cadencia_ledger_claims"].items()}
    assert set(claims) == {"tentando", "executado", "falhou", "resultado_incerto"}
    teto = after["cadencia_interrupcoes_por_teto_total"]
    assert sum(teto.values()) >= 1
    counters = [n for n in after if n.startswith("cadencia_") and "_total" in n]
    assert "cadencia_tentativas_de_ferramenta_total" in counters


def test_two_backends_on_one_database_report_the_same_gauges(
    live: Live, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    for text in ASKS:
        live.http.post(
            "/api/conversations/conv-n/messages", json={"text": text, "cliente_id": "c-1"}
        )
    other_settings = live.settings.model_copy(update={"data_dir": tmp_path / "other"})
    for other in live_backend(other_settings):
        mine, theirs = _samples(live), _samples(other)
        for name in ("cadencia_inbox_items", "cadencia_ledger_claims"):
            assert mine[name] == theirs[name], name
    assert create_app  # the same app factory serves both
