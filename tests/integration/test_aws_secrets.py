"""AWS Secrets Manager store against moto's server over real HTTP."""

from __future__ import annotations

import uuid

import boto3
import pytest
from botocore.exceptions import ClientError

from backend.exceptions import SecretError
from backend.secrets.aws import AwsSecretStore
from backend.secrets.base import make_secret_store
from backend.settings import Settings, load_settings


@pytest.fixture
def client(moto_endpoint: str):  # type: ignore[no-untyped-def]
    return boto3.client("secretsmanager", endpoint_url=moto_endpoint, region_name="us-east-1")


def test_put_creates_then_rotates_and_get_reads_current(client) -> None:  # type: ignore[no-untyped-def]
    store = AwsSecretStore(client)
    secret_id = f"cadencia/gateway-{uuid.uuid4().hex[:8]}"
    store.put(secret_id, "sk-first")
    assert store.get(secret_id) == "sk-first"
    store.put(secret_id, "sk-second")
    assert store.get(secret_id) == "sk-second"
    # Really in Secrets Manager, not cached in the store object.
    assert client.get_secret_value(SecretId=secret_id)["SecretString"] == "sk-second"


def test_missing_secret_is_a_secret_error(client) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(SecretError) as info:
        AwsSecretStore(client).get("cadencia/does-not-exist")
    assert "not found" in str(info.value)
    assert isinstance(info.value.__cause__, ClientError)
    assert info.value.context["secret_id"] == "cadencia/does-not-exist"


def test_binary_secret_is_refused(client) -> None:  # type: ignore[no-untyped-def]
    secret_id = f"bin-{uuid.uuid4().hex[:8]}"
    client.create_secret(Name=secret_id, SecretBinary=b"\x00\x01")
    with pytest.raises(SecretError, match="no string value"):
        AwsSecretStore(client).get(secret_id)


def test_make_secret_store_aws_uses_settings_endpoint(
    moto_endpoint: str, settings: Settings
) -> None:
    configured = load_settings(
        data_dir=settings.data_dir,
        secrets_backend="aws",
        aws_endpoint_url=moto_endpoint,
        aws_region="us-east-1",
    )
    store = make_secret_store(configured)
    assert isinstance(store, AwsSecretStore)
    secret_id = f"cadencia/{uuid.uuid4().hex[:8]}"
    store.put(secret_id, "valor")
    direct = boto3.client("secretsmanager", endpoint_url=moto_endpoint, region_name="us-east-1")
    assert direct.get_secret_value(SecretId=secret_id)["SecretString"] == "valor"


def test_unreachable_endpoint_is_a_secret_error() -> None:
    from botocore.config import Config

    client = boto3.client(
        "secretsmanager",
        endpoint_url="http://127.0.0.1:9",
        region_name="us-east-1",
        aws_access_key_id="x",
        aws_secret_access_key="x",
        config=Config(retries={"total_max_attempts": 1}, connect_timeout=1),
    )
    with pytest.raises(SecretError, match="cannot reach"):
        AwsSecretStore(client).get("anything")
