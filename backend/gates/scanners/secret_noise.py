"""What the secret scanners flag that is not a secret: digests, ids and references.

detect-secrets' entropy detectors flag any long random-looking string, and on real
repositories most of those are checksums, SRI hashes, commit SHAs, PGP fingerprints and
migration ids. None grants access to anything and a PR cannot silence them, so without this
filter such a PR is blocked for good. A value is dropped only when the line *says* it is a
digest or an id, and only for the entropy and keyword detectors: :func:`is_noise` gives
the rules.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import PurePosixPath

DETECT_SECRETS_FLAGS: tuple[str, ...] = (
    "--disable-filter",
    "detect_secrets.filters.heuristic.is_lock_file",
    "--disable-filter",
    "detect_secrets.filters.heuristic.is_non_text_file",
)
"""detect-secrets options that make it read lock files and SVG (binary files are still
skipped by the tool itself: it stops at the first byte that does not decode)."""

ENTROPY_TYPES = frozenset({"Hex High Entropy String", "Base64 High Entropy String"})
KEYWORD_TYPES = frozenset({"Secret Keyword"})

_DIGEST_LENGTHS = frozenset({32, 40, 56, 64, 96, 128})
_HASH_WORDS = re.compile(
    r"(?i)(?:sha-?(?:1|224|256|384|512)|md5|blake2[bs]?|blake3|checksum|digest|hash|"
    r"integrity|fingerprint|gpg|pgp|keyid|key_id|commit|revision|rev|checkout|"
    r"\bref\b|\bsum\b|etag)"
)
_ALGO = r"(?:sha-?(?:1|224|256|384|512)|md5|blake2[bs]?|blake3|h1|xxh64|crc32)"
_ALGO_PREFIX = re.compile(rf"(?i)\b{_ALGO}[-:=]\s*$")
_ALGO_LEAD = re.compile(rf"(?i)^{_ALGO}[-:=]")
_ALEMBIC = re.compile(r"(?i)^\s*(?:#\s*)?(?:(?:down_)?revision\s*[:=]|revision id:|revises:)")
_CHECKSUM_LINE = re.compile(r"^\s*(?:[0-9a-fA-F]{32,128}|[A-Za-z0-9+/]{43,86}={0,2})\s+\*?\S")
_GIT_REF = re.compile(r"[@#]\s*$")
_CHECKSUM_FILE = re.compile(r"(?i)(?:\.(?:sha1|sha256|sha512|md5|sum|asc)$|sums$|^go\.sum$)")
_LOCK_FILE = re.compile(
    r"(?i)(?:\.lock|-lock\.json|\.lock\.json|-lock\.ya?ml|^go\.sum|^gradle\.lockfile)$"
)
_TOKEN = re.compile(r"[A-Za-z0-9+/_=.:-]{6,}")
_CREDENTIAL_WORDS = re.compile(r"(?i)(?:password|passwd|secret|token|api_?key|private|credential)")

# A value that names where the secret lives rather than holding it.
_REFERENCE = re.compile(
    r"""^(?:
        \$\{[A-Za-z_][A-Za-z0-9_]*(?:\??|:\?[^}]*|\?[^}]*)\}     # ${X} ${X:?err} ${X?err}
      | \$[A-Za-z_][A-Za-z0-9_]*                                # $X
      | \$\{\{\s*(?:secrets|vars|env|inputs)\.[A-Za-z0-9_.-]+\s*\}\}   # ${{ secrets.X }}
      | \{\{\s*[A-Za-z_][\w.|\s'"()-]*\}\}                       # {{ template }}
      | (?:var|local|module|data)\.[A-Za-z0-9_.\[\]"*-]+        # Terraform references
      | [a-z][a-z0-9]*(?:_[a-z0-9]+)+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_.\[\]"*-]+  # resource.x.attr
      | os\.(?:environ|getenv)\b.*
      | process\.env\.[A-Za-z_][A-Za-z0-9_]*
    )$""",
    re.VERBOSE,
)
_ASSIGNED = re.compile(r"""[:=]\s*(?P<q>["']?)(?P<value>.+?)(?P=q)\s*[,;]?\s*(?:#.*)?$""")


def is_noise(kind: str, file: str, line: str, hashed_secret: str | None) -> bool:
    """True when detect-secrets' finding of type ``kind`` on ``line`` is not a secret.

    detect-secrets' entropy detectors flag checksums (lock files, ``go.sum``, ``*.sha256``),
    SRI hashes (``integrity="sha384-..."``), commit SHAs, PGP fingerprints and migration ids
    (alembic revisions); allowlist pragmas are ignored on purpose. A flagged value is dropped
    only when the line *says* it is a digest or an id (a hash keyword, an
    ``<algo>-``/``<algo>:`` prefix, a checksum file's layout); a bare 40-hex string stays a
    finding, since old GitHub tokens look exactly like that.

    Only the entropy and keyword detectors are filtered: a value a specific detector
    recognises (an AWS key, a private key, a GitHub or Slack token) is a secret wherever it
    is written, lock files and SVG included. detect-secrets skips lock files and SVG by
    default; :data:`DETECT_SECRETS_FLAGS` turns those two filters off, so a key pasted into
    ``package-lock.json`` is found and the digests around it are dropped here instead.

    Args:
        kind: the detector's type (``Hex High Entropy String``...).
        file: the path, ``/``-separated, relative to the scanned root.
        line: the text of the flagged line.
        hashed_secret: the baseline's SHA-1 of the flagged value; it tells which token
            of the line was flagged. Without it (or when no token matches), the finding
            stays: unsure means a secret.
    """
    if kind in KEYWORD_TYPES:
        return is_reference_line(line)
    if kind not in ENTROPY_TYPES:
        return False
    token, start = _flagged(line, hashed_secret)
    if token is None:
        return False
    return is_digest(token, line[:start], line, file)


def is_digest(token: str, before: str, line: str, file: str) -> bool:
    """True when ``token`` (found after ``before`` on ``line``) is a checksum or an id."""
    name = PurePosixPath(file).name
    if _ALGO_PREFIX.search(before) or _ALGO_LEAD.match(token):
        return True  # sha384-…, sha256:…, h1:… (SRI, lock files, go.sum, image digests)
    if _ALEMBIC.search(line):
        return True
    if (_CHECKSUM_FILE.search(name) or _LOCK_FILE.search(name)) and _CHECKSUM_LINE.match(line):
        return True
    hexadecimal = re.fullmatch(r"[0-9a-fA-F]+", token) is not None
    if hexadecimal and _GIT_REF.search(before) and len(token) in (7, 8, 12, 40, 64):
        return True  # uses: owner/action@<sha>, repo#<sha>
    if _LOCK_FILE.search(name):
        return True  # lock files hold digests and urls; real keys are caught by the
        # specific detectors, which this filter never touches
    return bool(hexadecimal and len(token) in _DIGEST_LENGTHS and _HASH_WORDS.search(before))


def is_reference_line(line: str) -> bool:
    """True when the credential on ``line`` is a reference or a required variable."""
    match = _ASSIGNED.search(line.strip())
    if match is None:
        return False
    return is_reference(match.group("value").strip().strip("\"'"))


def is_reference(value: str) -> bool:
    """True for ``${X:?}``, ``var.x``, ``random_password.db.result``, ``os.environ[...]``..."""
    return _REFERENCE.match(value.strip()) is not None


def _flagged(line: str, hashed_secret: str | None) -> tuple[str | None, int]:
    if not hashed_secret:
        return None, 0
    for match in _TOKEN.finditer(line):
        text = match.group(0)
        # The tool hashes the quoted/delimited value; try the token and its trimmed forms.
        for cut in _candidates(text):
            if hashlib.sha1(cut.encode()).hexdigest() == hashed_secret:
                return cut, match.start() + text.find(cut)
    return None, 0


def _candidates(text: str) -> list[str]:
    out = [text, text.strip("=.-_"), text.rstrip("=")]
    for sep in ("-", "_", ".", "/", "=", ":"):
        out.extend(part for part in text.split(sep) if len(part) >= 6)
    return out


__all__ = [
    "DETECT_SECRETS_FLAGS",
    "is_digest",
    "is_noise",
    "is_reference",
    "is_reference_line",
]
