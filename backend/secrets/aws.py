"""Secrets in AWS Secrets Manager through an injected boto3 client."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from botocore.exceptions import BotoCoreError, ClientError

from backend.exceptions import SecretError

if TYPE_CHECKING:
    from backend.settings import Settings


class AwsSecretStore:
    """A :class:`~backend.secrets.base.SecretStore` over Secrets Manager (string secrets)."""

    def __init__(self, client: Any) -> None:
        self.client = client

    @classmethod
    def from_settings(cls, settings: Settings) -> AwsSecretStore:
        """A store whose client honours ``aws_region`` and ``aws_endpoint_url``."""
        import boto3

        return cls(boto3.client("secretsmanager", **settings.boto3_kwargs()))

    def get(self, secret_id: str) -> str:
        """The secret's current string value; :class:`SecretError` when absent or unreadable."""
        try:
            response = self.client.get_secret_value(SecretId=secret_id)
        except ClientError as exc:
            code = exc.response.get("Error", {}).get("Code", "")
            if code == "ResourceNotFoundException":
                raise SecretError(
                    f"secret {secret_id!r} not found in Secrets Manager", secret_id=secret_id
                ) from exc
            raise SecretError(
                f"cannot read secret {secret_id!r} from Secrets Manager: {code}",
                secret_id=secret_id,
                code=code,
            ) from exc
        except BotoCoreError as exc:
            raise SecretError(
                f"cannot reach Secrets Manager for {secret_id!r}: {exc}", secret_id=secret_id
            ) from exc
        value = response.get("SecretString")
        if value is None:
            # Binary secrets exist, but the gateway key is text; refuse to guess an encoding.
            raise SecretError(f"secret {secret_id!r} has no string value", secret_id=secret_id)
        return str(value)

    def put(self, secret_id: str, value: str) -> None:
        """Create the secret, or add a new current version when it already exists."""
        try:
            try:
                self.client.put_secret_value(SecretId=secret_id, SecretString=value)
            except ClientError as exc:
                if exc.response.get("Error", {}).get("Code") != "ResourceNotFoundException":
                    raise
                self.client.create_secret(Name=secret_id, SecretString=value)
        except ClientError as exc:
            code = exc.response.get("Error", {}).get("Code", "")
            raise SecretError(
                f"cannot write secret {secret_id!r} to Secrets Manager: {code}",
                secret_id=secret_id,
                code=code,
            ) from exc
        except BotoCoreError as exc:
            raise SecretError(
                f"cannot reach Secrets Manager for {secret_id!r}: {exc}", secret_id=secret_id
            ) from exc
