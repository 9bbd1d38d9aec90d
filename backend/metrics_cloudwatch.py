"""CloudWatch sink for ``InterrupcoesPorTeto`` (used when ``cloudwatch_enabled``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from botocore.exceptions import BotoCoreError, ClientError

from backend.exceptions import UnavailableError
from backend.metrics import METRIC_TETO, NAMESPACE

if TYPE_CHECKING:
    from backend.settings import Settings


class MetricSinkError(UnavailableError):
    """CloudWatch refused or could not be reached (``Metrics`` logs it, never raises it on)."""

    code = "metric_sink_error"


class CloudWatchSink:
    """A :class:`~backend.metrics.MetricSink` that calls ``PutMetricData`` once per event."""

    def __init__(self, client: Any, *, namespace: str = NAMESPACE) -> None:
        self.client = client
        self.namespace = namespace

    @classmethod
    def from_settings(cls, settings: Settings) -> CloudWatchSink:
        """A sink whose client honours ``aws_region`` and ``aws_endpoint_url``."""
        import boto3

        return cls(boto3.client("cloudwatch", **settings.boto3_kwargs()))

    def interrupcao_por_teto(self, ferramenta: str) -> None:
        """Count one attempt blocked by the teto de voltas, dimensioned by tool."""
        try:
            self.client.put_metric_data(
                Namespace=self.namespace,
                MetricData=[
                    {
                        "MetricName": METRIC_TETO,
                        "Value": 1,
                        "Unit": "Count",
                        "Dimensions": [{"Name": "Ferramenta", "Value": ferramenta}],
                    }
                ],
            )
        except (ClientError, BotoCoreError) as exc:
            raise MetricSinkError(
                f"CloudWatch PutMetricData failed: {exc}", ferramenta=ferramenta
            ) from exc
