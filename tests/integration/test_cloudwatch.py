"""CloudWatch ``InterrupcoesPorTeto`` against moto's server over real HTTP."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import boto3
import pytest

from backend.metrics import METRIC_TETO, NAMESPACE, Metrics
from backend.metrics_cloudwatch import CloudWatchSink, MetricSinkError
from backend.settings import load_settings


@pytest.fixture
def client(moto_endpoint: str):  # type: ignore[no-untyped-def]
    return boto3.client("cloudwatch", endpoint_url=moto_endpoint, region_name="us-east-1")


def _sum(client, ferramenta: str) -> float:  # type: ignore[no-untyped-def]
    now = datetime.now(UTC)
    stats = client.get_metric_statistics(
        Namespace=NAMESPACE,
        MetricName=METRIC_TETO,
        Dimensions=[{"Name": "Ferramenta", "Value": ferramenta}],
        StartTime=now - timedelta(minutes=10),
        EndTime=now + timedelta(minutes=10),
        Period=60,
        Statistics=["Sum"],
    )
    return float(sum(p["Sum"] for p in stats["Datapoints"]))


def test_interruptions_are_counted_per_tool(client) -> None:  # type: ignore[no-untyped-def]
    sink = CloudWatchSink(client)
    ferramenta = f"emitir-reembolso-{uuid.uuid4().hex[:6]}"
    other = f"consultar-status-pedido-{uuid.uuid4().hex[:6]}"
    for _ in range(3):
        sink.interrupcao_por_teto(ferramenta)
    sink.interrupcao_por_teto(other)

    listed = client.list_metrics(Namespace=NAMESPACE, MetricName=METRIC_TETO)["Metrics"]
    dims = {d["Value"] for m in listed for d in m["Dimensions"] if d["Name"] == "Ferramenta"}
    assert {ferramenta, other} <= dims
    assert _sum(client, ferramenta) == 3.0
    assert _sum(client, other) == 1.0


def test_metrics_fans_out_to_cloudwatch_from_settings(moto_endpoint: str, client) -> None:  # type: ignore[no-untyped-def]
    settings = load_settings(aws_endpoint_url=moto_endpoint, cloudwatch_enabled=True)
    metrics = Metrics([CloudWatchSink.from_settings(settings)])
    ferramenta = f"atualizar-cadastro-{uuid.uuid4().hex[:6]}"
    metrics.interrupcao_por_teto(ferramenta)
    assert _sum(client, ferramenta) == 1.0
    assert f'ferramenta="{ferramenta}"' in metrics.prometheus_text().decode()


def test_cloudwatch_failure_is_translated() -> None:
    from botocore.config import Config

    client = boto3.client(
        "cloudwatch",
        endpoint_url="http://127.0.0.1:9",
        region_name="us-east-1",
        aws_access_key_id="x",
        aws_secret_access_key="x",
        config=Config(retries={"total_max_attempts": 1}, connect_timeout=1),
    )
    with pytest.raises(MetricSinkError):
        CloudWatchSink(client).interrupcao_por_teto("emitir-reembolso")
