"""Every file of the gate's copy becomes text a scanner reads, whatever its bytes."""

from __future__ import annotations

from pathlib import Path

import pytest

from backend.gates.encodings import decode
from backend.gates.scanners import regex_secrets
from backend.gates.scanners._base import ScanContext
from backend.gates.workspace import prepared_copy

KEY = "AKIA" + "QWERTYUIOPASDFGH"  # built at runtime so this file holds no key
LINE = f'aws_key = "{KEY}"\n'


@pytest.mark.parametrize(
    ("data", "kind", "encoding"),
    [
        (LINE.encode(), "utf-8", "utf-8"),
        (b"\xef\xbb\xbf" + LINE.encode(), "utf-8", "utf-8"),
        (b"caf\xe9 " + LINE.encode(), "transcoded", "utf-8+latin-1"),
        ("café ".encode() + b"\xff" + LINE.encode(), "transcoded", "utf-8+latin-1"),
        (LINE.encode("utf-16"), "transcoded", "utf-16-le"),
        (b"\xfe\xff" + LINE.encode("utf-16-be"), "transcoded", "utf-16-be"),
        (LINE.encode("utf-16-le"), "transcoded", "utf-16-le"),
        (LINE.encode("utf-16-be"), "transcoded", "utf-16-be"),
        (LINE.encode("utf-32"), "transcoded", "utf-32-le"),
    ],
)
def test_text_in_any_encoding_reads_as_its_characters(
    data: bytes, kind: str, encoding: str
) -> None:
    decoded = decode(data)
    assert (decoded.kind, decoded.encoding) == (kind, encoding)
    assert decoded.text.endswith(LINE)
    assert not decoded.text.startswith("\ufeff")


def test_a_utf8_file_keeps_its_characters_when_one_byte_is_not_utf8() -> None:
    assert decode("ação ".encode() + b"\xe9\n").text == "ação é\n"


def test_binary_files_become_their_printable_strings() -> None:
    blob = b"\x89PNG\r\n\x1a\n\x00\x00\x01" + KEY.encode() + b"\x00\xff\x10"
    blob += "password=hunter22".encode("utf-16-le") + b"\x00\x00"
    decoded = decode(blob)
    assert decoded.kind == "binary"
    assert decoded.text.splitlines() == [KEY, "password=hunter22"]


def _write(root: Path, files: dict[str, bytes]) -> Path:
    for rel, data in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return root


ENCODED = {
    "latin.env": b"caf\xe9 " + LINE.encode(),
    "win/profile.ps1": LINE.encode("utf-16"),
    "assets/logo.png": b"\x89PNG\x00\x00" + KEY.encode() + b"\x00\x01",
    "plain.txt": b"nothing here\n",
}


def test_the_copy_is_utf8_and_says_what_it_transcoded(tmp_path: Path) -> None:
    with prepared_copy(_write(tmp_path / "repo", ENCODED)) as ws:
        for rel in ("latin.env", "win/profile.ps1", "assets/logo.png"):
            assert KEY in (ws.root / rel).read_text(encoding="utf-8")
        notes = {(f.file, f.rule, f.severity) for f in ws.findings}
    assert notes == {
        ("latin.env", "encoding-transcoded", "info"),
        ("win/profile.ps1", "encoding-transcoded", "info"),
        ("assets/logo.png", "binary-as-strings", "info"),
    }


def test_suppression_pragmas_are_stripped_in_any_encoding(tmp_path: Path) -> None:
    src = _write(
        tmp_path / "repo", {"a.env": f"K={KEY}  # pragma: allowlist secret\n".encode("utf-16")}
    )
    with prepared_copy(src) as ws:
        assert (ws.root / "a.env").read_text(encoding="utf-8") == f"K={KEY}  \n"


def test_the_regex_floor_finds_keys_in_every_encoding(tmp_path: Path) -> None:
    with prepared_copy(_write(tmp_path / "repo", ENCODED)) as ws:
        result = regex_secrets.scan(ScanContext(root=ws.root, files=ws.files))
    assert result is not None
    assert {f.file for f in result.findings} == {"latin.env", "win/profile.ps1", "assets/logo.png"}


def test_the_regex_floor_reads_bytes_that_are_not_utf8(tmp_path: Path) -> None:
    """Outside the gate's copy too: a file the scanner cannot decode is still scanned."""
    _write(tmp_path, {"latin.env": b"\xe9" + KEY.encode() + b"\n"})
    result = regex_secrets.scan(ScanContext(root=tmp_path, files=("latin.env",)))
    assert result is not None
    assert [(f.file, f.rule) for f in result.findings] == [("latin.env", "aws-access-key-id")]


def test_a_payload_string_that_is_not_valid_unicode_is_scanned_not_a_crash() -> None:
    with prepared_copy({"x.env": f"\udce9 {KEY}\n"}) as ws:
        assert KEY in (ws.root / "x.env").read_text(encoding="utf-8")
