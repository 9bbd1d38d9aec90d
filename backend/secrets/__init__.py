"""Secret stores. Only the refund tool is ever constructed with one (least privilege)."""

from backend.secrets.base import (
    CountingSecretStore,
    FileSecretStore,
    SecretStore,
    make_secret_store,
)

__all__ = ["CountingSecretStore", "FileSecretStore", "SecretStore", "make_secret_store"]
