"""Every file of the gate's copy as UTF-8 text, whatever its bytes.

The scanners read UTF-8 and skip what does not decode, so one Latin-1 byte beside an
AWS key, a UTF-16 file or a binary blob would hide a secret from all of them. The copy
is therefore rewritten once, before any scanner runs: BOM-marked UTF-8/16/32 and
BOM-less UTF-16 become UTF-8, bytes that are not UTF-8 are read as Latin-1 one by one
(ASCII, where keys live, survives unchanged), and a binary file is replaced by its
printable strings, one per line, so a regex still finds what is in it.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass
from typing import Literal

EncodingKind = Literal["utf-8", "transcoded", "binary"]

_BOMS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),  # before UTF-16 LE: it starts with the same bytes
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
_MIN_STRING = 6
"""Shortest printable run kept from a binary file (``strings`` uses 4; keys are ≥ 16)."""
_ASCII_RUN = re.compile(rb"[\x20-\x7e\t]{%d,}" % _MIN_STRING)
_UTF16LE_RUN = re.compile(rb"(?:[\x20-\x7e\t]\x00){%d,}" % _MIN_STRING)
_UTF16BE_RUN = re.compile(rb"(?:\x00[\x20-\x7e\t]){%d,}" % _MIN_STRING)
_SNIFF = 4096
_ERRORS = "cadencia-latin1"


def _latin1_fallback(exc: UnicodeError) -> tuple[str, int]:
    """Map each byte that is not UTF-8 to its Latin-1 character and go on."""
    if not isinstance(exc, UnicodeDecodeError):
        raise exc
    return exc.object[exc.start : exc.end].decode("latin-1"), exc.end


codecs.register_error(_ERRORS, _latin1_fallback)


@dataclass(frozen=True)
class Decoded:
    """One file's bytes as text for the scanners.

    Attributes:
        text: what the copy holds from now on (UTF-8 when written).
        kind: ``utf-8`` (unchanged but for a UTF-8 BOM), ``transcoded`` or ``binary``.
        encoding: what the bytes were read as (``utf-16-le``, ``utf-8+latin-1``...).
    """

    text: str
    kind: EncodingKind
    encoding: str


def decode(data: bytes) -> Decoded:
    """Read any bytes as text: never raises, never drops the ASCII a secret is made of."""
    for bom, name in _BOMS:
        if data.startswith(bom):
            try:
                text = data[len(bom) :].decode(name)
            except UnicodeDecodeError:
                break  # a BOM followed by garbage: judge the bytes below
            return Decoded(text, "utf-8" if name == "utf-8" else "transcoded", name)
    if b"\x00" in data:  # valid UTF-8 too, but no text file holds NUL bytes
        wide = _bomless_utf16(data)
        if wide is not None:
            return wide
        return Decoded(printable_strings(data), "binary", "binary")
    try:
        return Decoded(data.decode("utf-8"), "utf-8", "utf-8")
    except UnicodeDecodeError:
        pass
    return Decoded(data.decode("utf-8", errors=_ERRORS), "transcoded", "utf-8+latin-1")


def _bomless_utf16(data: bytes) -> Decoded | None:
    """UTF-16 without a BOM (PowerShell, Windows tools): NUL in every other byte."""
    head = data[:_SNIFF]
    pairs = len(head) // 2
    if pairs == 0 or len(data) % 2:
        return None
    for name, nul_at in (("utf-16-le", 1), ("utf-16-be", 0)):
        nuls = sum(1 for i in range(pairs) if head[2 * i + nul_at] == 0)
        if nuls * 10 >= pairs * 7:  # mostly ASCII text in 16-bit units
            try:
                text = data.decode(name)
            except UnicodeDecodeError:
                continue
            if "\x00" not in text:
                return Decoded(text, "transcoded", name)
    return None


def printable_strings(data: bytes) -> str:
    """The printable runs of a binary file (ASCII and UTF-16), one per line, in order."""
    found = [(m.start(), m.group().decode("ascii")) for m in _ASCII_RUN.finditer(data)]
    wide: list[tuple[int, int]] = []
    for pattern, name in ((_UTF16LE_RUN, "utf-16-le"), (_UTF16BE_RUN, "utf-16-be")):
        for m in pattern.finditer(data):
            if any(m.start() < end and start < m.end() for start, end in wide):
                continue  # the same UTF-16 text seen one byte later as the other byte order
            wide.append(m.span())
            found.append((m.start(), m.group().decode(name)))
    return "".join(f"{text}\n" for _, text in sorted(found))
