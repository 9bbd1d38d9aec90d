"""The secret store protocol and the embedded default: files in the data dir, mode 0600."""

from __future__ import annotations

import os
import re
import secrets as _secrets
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from backend.exceptions import SecretError

if TYPE_CHECKING:
    from backend.settings import Settings

_SAFE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/-]{0,200}$")


class SecretStore(Protocol):
    """Reads (and, for set-up commands, writes) named secrets."""

    def get(self, secret_id: str) -> str:
        """The secret's value; :class:`SecretError` when absent or unreadable."""
        ...

    def put(self, secret_id: str, value: str) -> None:
        """Create or replace the secret."""
        ...


class FileSecretStore:
    """One file per secret under ``<data_dir>/secrets``; directory 0700, files 0600."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def _path(self, secret_id: str) -> Path:
        if not _SAFE_ID.match(secret_id) or ".." in secret_id.split("/"):
            raise SecretError(f"invalid secret id {secret_id!r}", secret_id=secret_id)
        return self.root / secret_id.replace("/", "__")

    def get(self, secret_id: str) -> str:
        path = self._path(secret_id)
        try:
            mode = path.stat().st_mode & 0o777
            if mode & 0o077:
                raise SecretError(
                    f"secret file {path} is readable by others (mode {mode:o}); chmod 600 it",
                    secret_id=secret_id,
                )
            return path.read_text(encoding="utf-8").strip()
        except FileNotFoundError as exc:
            raise SecretError(f"secret {secret_id!r} not found in {self.root}") from exc

    def put(self, secret_id: str, value: str) -> None:
        path = self._path(secret_id)
        self.root.mkdir(parents=True, exist_ok=True, mode=0o700)
        os.chmod(self.root, 0o700)
        tmp = path.with_suffix(".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(value)
        os.replace(tmp, path)

    def ensure(self, secret_id: str) -> str:
        """Return the secret, generating a random one first if it does not exist."""
        try:
            return self.get(secret_id)
        except SecretError:
            value = _secrets.token_urlsafe(32)
            self.put(secret_id, value)
            return value


class CountingSecretStore:
    """Wraps a store and counts reads: proves which paths never touch a secret."""

    def __init__(self, inner: SecretStore) -> None:
        self.inner = inner
        self.reads: list[str] = []

    def get(self, secret_id: str) -> str:
        self.reads.append(secret_id)
        return self.inner.get(secret_id)

    def put(self, secret_id: str, value: str) -> None:
        self.inner.put(secret_id, value)


def make_secret_store(settings: Settings) -> SecretStore:
    """The store named by ``settings.secrets_backend`` (``file`` or ``aws``)."""
    if settings.secrets_backend == "file":
        return FileSecretStore(settings.data_dir / "secrets")
    if settings.secrets_backend == "aws":
        from backend.secrets.aws import AwsSecretStore

        return AwsSecretStore.from_settings(settings)
    raise SecretError(f"unknown secrets backend {settings.secrets_backend!r}: use file or aws")
