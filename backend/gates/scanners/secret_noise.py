"""What the secret scanners flag that is not a secret, decided by content only.

Digests and ids (checksums, SRI hashes, commit SHAs, migration ids), references to where a
secret lives (``${X}``, ``${{ secrets.X }}``, ``vault:``/``ssm:``, secret ARNs, ``$(...)``),
placeholders (``changeme``, ``<your-key>``, ``xxxx``, ``****``) and published example keys
(AWS's ``...EXAMPLE``) grant nothing. A PEM block's body is part of the key reported at
its BEGIN line, or of a public certificate. File names and paths never decide: a real key in
``example.py`` is still a key. :func:`is_noise` and :func:`not_a_secret` give the rules;
:func:`merge_duplicates` keeps one finding per secret across the scanners.
"""

from __future__ import annotations

import hashlib
import itertools
import re
from collections.abc import Sequence
from pathlib import PurePosixPath
from typing import TypeVar

from backend.gates.findings import Finding, ScanResult

DETECT_SECRETS_FLAGS: tuple[str, ...] = (
    "--disable-filter",
    "detect_secrets.filters.heuristic.is_lock_file",
    "--disable-filter",
    "detect_secrets.filters.heuristic.is_non_text_file",
    "--disable-filter",
    "detect_secrets.filters.heuristic.is_indirect_reference",
)
"""detect-secrets options that make it read lock files and SVG (binary files are still
skipped by the tool itself: it stops at the first byte that does not decode), and keep
lines that look like a call: its ``is_indirect_reference`` drops every detector's hit on
``client = Client(api_key="SG.…")`` (:func:`is_reference` judges the value instead)."""

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
      | .*\$\{[A-Za-z_][\w.]*(?:\??|:?\?[^}]*)\}.*                # ${X} anywhere, no default
      | .*\{\{.*\}\}.*                                       # a template anywhere
      | \$\(.*\)? | `[^`\s]*\s[^`]*`?                       # $(command), `a command`
      | (?i:vault|ssm|secretsmanager|sm|gsm|azkv|op|doppler|awssm):.+   # vault:path#key, op://
      | (?i:op|vault|sm|secret)://.+
      | arn:aws[a-z-]*:(?:secretsmanager|ssm|kms):.+            # where AWS keeps it
      | [A-Za-z_][\w.]*\([^()"']*\)                           # get_secret(name)
      | [A-Za-z_][\w.]*\[["']?[\w.-]{1,64}["']?\]               # headers['apikey']
    )$""",
    re.VERBOSE,
)
_PLACEHOLDER_WORDS = re.compile(
    r"""(?ix)
      (?<![a-z0-9])(?:change[_.-]?(?:me|it|this)|replace[_.-]?(?:me|this|with)|your[_.-]?[a-z]
        | fill[_.-]?(?:me|in)|set[_.-]?me|insert[_.-]|put[_.-]?your|enter[_.-]?your|todo
        | example|dummy|placeholder|redacted|sample|fake|not[_.-]?a[_.-]?(?:real|secret))
    | ^(?:password|passw(?:or)?d|secret|token|api[_.-]?key|pass|none|null|nil|empty|true
       |false|default|test|foo|bar|foobar|string|value|undefined|hidden|masked
       |secret[_.-]?key|private[_.-]?key|access[_.-]?key|\d{1,6})$
    """
)
_PLACEHOLDER_SHAPES = re.compile(
    r"""(?x)
      ^<[^<>]+>$ | <[A-Za-z][\w .-]*> | ^\[[^\[\]]+\]$           # <your-key>, [API_KEY]
    | (?i:x){5,} | \*{3,} | •{3,} | \.\.\. | \u2026 | \#{5,}   # xxxxx, ****, sk-...
    | ^(?P<c>.)(?P=c){5,}$                                       # one character repeated
    | ^%\(?[\w.]+\)?s?$ | ^%[\w.]+%$                          # %(name)s, %NAME%
    """
)
_SEQUENCES = ("01234567890", "abcdefghijklmnopqrstuvwxyz", "qwertyuiop")
_LONGEST_PLACEHOLDER = 200
"""A longer value is judged only as a reference (so the regexes stay fast)."""
PUBLISHED_EXAMPLES: frozenset[str] = frozenset(
    {
        # AWS documentation's example access keys (IAM user guide, CLI docs)
        "AKIAIOSFODNN7EXAMPLE",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "AKIAI44QH8DHBEXAMPLE",
        "je7MtGbClwBF/2Zp9Utk/h3yCo8nvbEXAMPLEKEY",
        # Stripe's documented test-mode keys (the API reference's code samples)
        "sk_test_4eC39HqLyjWDarjtT1zdp7dc",
        "pk_test_TYooMQauvdEDq54NiTphI7jx",
    }
)
"""Keys the providers publish in their documentation: they grant nothing."""
_NAME_KEYS = re.compile(
    r"(?i)(?:[_.-]?(?:name|id|ids|length|size|file|path|url|uri|arn|variable|ref|"
    r"version|type|format|field|prefix|suffix|hint|label))[\"']?\s*$"
)
"""A credential word followed by one of these names the secret (``LLM_SECRET_NAME``,
``passwordVariable``): its value is a name, not the secret."""
_PUBLIC_KEYS = re.compile(r"(?i)(?:^|[_.-]|(?<=[a-z]))pub(?:lic|lishable)?[_.-]?(?:key|token)|csrf")
"""A value named public (``public_key``, ``publicToken``, ``publishable_key``) or a CSRF
token is published by design: no credential."""
_KEY_BEFORE = re.compile(r"""([\w.-]+)["']?\s*(?:=>|:=|::=|[:=])\s*[\w.$]*\(?\s*["'`]?$""")
_PEM = re.compile(r"-----(BEGIN|END) ([A-Z0-9 ]+?)-----")
_GPG_USE = re.compile(r"\bgpg2?\b.*--(?:recv-keys?|export|verify|keyserver|import)|fingerprint")
_ASSIGNED = re.compile(r"""[:=]\s*(?P<q>["']?)(?P<value>.+?)(?P=q)\s*[,;]?\s*(?:#.*)?$""")


def is_noise(kind: str, file: str, line: str, hashed_secret: str | None) -> bool:
    """True when detect-secrets' finding of type ``kind`` on ``line`` is not a secret.

    Every detector: the flagged value (found on the line by ``hashed_secret``) is a
    placeholder, a published example key or a reference (:func:`not_a_secret`). The
    keyword and entropy detectors also: the key names the secret rather than holding it
    (``SECRET_NAME=...``, ``passwordVariable: 'X'``) or says it is public (``public_key``,
    ``publicToken``, a CSRF token). The keyword detector also, when the flagged value is
    not found on the line: the line assigns a reference or a placeholder. The entropy
    detectors also: the value is a digest or an id and the line *says* so (a hash keyword,
    an ``<algo>-``/``<algo>:`` prefix, a checksum file's layout, a lock file); a bare
    40-hex string stays a finding, since old GitHub tokens look exactly like that.

    A value a specific detector recognises (an AWS key, a private key, a GitHub token) is
    a secret wherever it is written, lock files and SVG included, unless it is a
    placeholder or example. detect-secrets skips lock files and SVG by default;
    :data:`DETECT_SECRETS_FLAGS` turns those filters off, so a key pasted into
    ``package-lock.json`` is found and the digests around it are dropped here instead.

    Args:
        kind: the detector's type (``Hex High Entropy String``...).
        file: the path, ``/``-separated, relative to the scanned root.
        line: the text of the flagged line.
        hashed_secret: the baseline's SHA-1 of the flagged value; it tells which token
            of the line was flagged. Without it (or when no token matches), only the
            line-wide rules apply: unsure means a secret.
    """
    token, start = flagged_value(line, hashed_secret)
    if token is not None and not_a_secret(token):
        return True
    if kind not in KEYWORD_TYPES | ENTROPY_TYPES:
        return False
    if token is not None and (names_the_secret(line, start) or is_public(line, start)):
        return True
    if kind in KEYWORD_TYPES:  # the line is read only when the flagged value is not found
        return token is None and is_reference_line(line)
    return token is not None and is_digest(token, line[:start], line, file)


def not_a_secret(value: str) -> bool:
    """True for a placeholder, a published example key, or a reference (by content only).

    Examples: ``changeme``, ``<your-api-key>``, ``sk_live_xxxxxxxx``, ``********``,
    ``REPLACE_ME``, ``AKIAIOSFODNN7EXAMPLE``, ``${DB_PASSWORD}``, ``{{ .Values.x }}``,
    ``vault:secret/db#password``, ``arn:aws:secretsmanager:...:secret:x``, ``$(cat f)``.
    """
    value = value.strip().strip("\"'").strip()
    bare = value.strip("`").strip()
    if not bare:
        return True
    if len(bare) > _LONGEST_PLACEHOLDER:
        return is_reference(value[: _LONGEST_PLACEHOLDER * 10])
    return is_placeholder(bare) or is_published_example(bare) or is_reference(value)


def is_placeholder(value: str) -> bool:
    """True when ``value`` stands for a secret to fill in (``changeme``, ``<key>``, ``xxxx``)."""
    if _PLACEHOLDER_WORDS.search(value) or _PLACEHOLDER_SHAPES.search(value):
        return True
    plain = re.sub(r"[^a-z0-9]", "", value.lower())
    return len(plain) >= 8 and any(_covers(plain, seq) for seq in _SEQUENCES)


def is_published_example(value: str) -> bool:
    """True for a key a provider publishes in its documentation (AWS's ``...EXAMPLE``)."""
    return value in PUBLISHED_EXAMPLES or value.upper().endswith(("EXAMPLE", "EXAMPLEKEY"))


def names_the_secret(line: str, start: int) -> bool:
    """True when the key before the value at ``start`` names a secret (``SECRET_NAME``)."""
    match = _KEY_BEFORE.search(line[:start])
    return match is not None and _NAME_KEYS.search(match.group(1)) is not None


def is_public(line: str, start: int) -> bool:
    """True when the key before the value at ``start`` says the value is public."""
    match = _KEY_BEFORE.search(line[:start])
    return match is not None and _PUBLIC_KEYS.search(match.group(1)) is not None


def pem_noise_lines(lines: Sequence[str]) -> frozenset[int]:
    """1-based lines of ``lines`` that belong to a PEM block but are not where a private key
    starts: a block's body and END line, and the whole of a certificate or public key. A line
    where a private key begins is never one of them (a one-line JSON bundle holds the
    certificate and the key)."""
    out: set[int] = set()
    starts: set[int] = set()
    opened: tuple[int, str] | None = None
    for number, text in enumerate(lines, 1):
        for match in _PEM.finditer(text):
            edge, label = match.groups()
            if edge == "BEGIN" and opened is None:
                opened = (number, label)
                (starts if "PRIVATE KEY" in label else out).add(number)
            elif edge == "END" and opened is not None:
                out.update(range(opened[0] + 1, number + 1))
                opened = None
    return frozenset(out - starts)


def private_key_start(lines: Sequence[str], line: int, reach: int = 3) -> int | None:
    """The BEGIN line of the private key reported at ``line`` (detect-secrets reports a
    YAML block scalar's key line, ``tls.key: |``, one or more lines above it)."""
    for number in range(line, min(line + reach, len(lines)) + 1):
        for match in _PEM.finditer(lines[number - 1]):
            if match.group(1) == "BEGIN" and "PRIVATE KEY" in match.group(2):
                return number
    return None


def is_key_fingerprint(token: str, lines: Sequence[str], line: int, reach: int = 4) -> bool:
    """True when ``token`` (on 1-based ``line``) is a PGP key id or fingerprint: 16 or 40
    hex digits that a gpg command within ``reach`` lines imports, exports or verifies
    (``key='B97B…4CF8'; … gpg --recv-keys "$key"``), or that the lines just above spell
    out as a ``Key fingerprint``."""
    if len(token) not in (16, 40) or not re.fullmatch(r"[0-9A-Fa-f]+", token):
        return False
    near = lines[max(0, line - 1 - reach) : line + reach]
    upper = token.upper()
    return any(
        _GPG_USE.search(text)
        or (upper not in text.upper() and upper in re.sub(r"\s+", "", text).upper())
        for text in near
    )


SAME_SECRET: dict[tuple[str, str], str] = {
    ("detect-secrets", "Private Key"): "private-key",
    ("secret-regex", "private-key"): "private-key",
    ("semgrep", "private-key-block"): "private-key",
}
"""Rules of different scanners that report the same secret on the same line. Only private
keys are merged: the other rules overlap only in part (the regex floor reads every encoding,
semgrep every folder), and a test of each floor reads its own finding."""
G = TypeVar("G")


def merge_duplicates(
    outcomes: Sequence[tuple[G, ScanResult | None]],
) -> list[tuple[G, ScanResult | None]]:
    """One finding per secret: a finding whose (file, line, kind) (:data:`SAME_SECRET`) an
    earlier scanner of the list already reported is dropped, so a private key is one finding
    at its BEGIN line, not one per scanner. A skipped scanner drops nothing, and a result
    left without blocking findings passes (the secret is still reported by the first)."""
    seen: set[tuple[str, int | None, str]] = set()
    merged: list[tuple[G, ScanResult | None]] = []
    for gate, result in outcomes:
        if result is None or result.status == "skipped":
            merged.append((gate, result))
            continue
        kept: list[Finding] = []
        for finding in result.findings:
            kind = SAME_SECRET.get((finding.tool, finding.rule))
            key = (finding.file, finding.line, kind or "")
            if kind is not None and key in seen:
                continue
            if kind is not None:
                seen.add(key)
            kept.append(finding)
        if len(kept) == len(result.findings):
            merged.append((gate, result))
        else:
            merged.append((gate, ScanResult.from_findings(result.tool, kept, result.detail)))
    return merged


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
    """True when the credential on ``line`` is a reference, a required variable or a
    placeholder (:func:`not_a_secret` of the assigned value)."""
    match = _ASSIGNED.search(line.strip())
    if match is None:
        return False
    return not_a_secret(match.group("value").strip().strip("\"'"))


def is_reference(value: str) -> bool:
    """True for ``${X:?}``, ``var.x``, ``random_password.db.result``, ``os.environ[...]``,
    ``{{ .Values.x }}``, ``vault:…``/``ssm:…``, a secret's ARN, ``$(…)``, ``get_secret(…)``."""
    return _REFERENCE.match(value.strip()) is not None


def flagged_value(line: str, hashed_secret: str | None) -> tuple[str | None, int]:
    """The value detect-secrets hashed to ``hashed_secret`` and where it starts on ``line``."""
    if not hashed_secret:
        return None, 0
    for pattern in _SPANS:
        for match in pattern.finditer(line):
            group = 1 if pattern.groups else 0
            text = match.group(group)
            # The tool hashes the quoted/delimited value; try the token and its trimmed forms.
            for cut in _candidates(text):
                if hashlib.sha1(cut.encode()).hexdigest() == hashed_secret:
                    at = match.start(group) + text.find(cut)
                    return whole_token(line, cut, at), at
    return None, 0


def whole_token(line: str, value: str, start: int | None = None) -> str:
    """``value`` (at ``start`` on ``line``, else its first occurrence), or the whole token
    around it when it is shorter than 8: a detector that keeps only a prefix (``ghp`` of
    ``ghp_xxxx…``) is judged on the token it flagged."""
    at = line.find(value) if start is None else start
    if len(value) >= 8 or at < 0:
        return value
    for match in _WORD.finditer(line):
        if match.start() <= at < match.end():
            return match.group(0)
    return value


_SPANS = (
    _TOKEN,
    re.compile(r'"([^"]*)"'),
    re.compile(r"'([^']*)'"),
    re.compile(r"[:=]\s*([^\s\"',;]+)"),
    re.compile(r"\S+"),
    re.compile(r"[A-Za-z0-9]{3,}"),
)
_WORD = re.compile(r"[A-Za-z0-9_+/.*-]+=*")


def _covers(plain: str, sequence: str) -> bool:
    """True when one run of consecutive characters of ``sequence`` (``123456``, ``abcdef``,
    ``qwerty``) makes up at least 80% of ``plain`` (linear: one pass)."""
    following = dict(itertools.pairwise(sequence))
    best = run = 1 if plain else 0
    for a, b in itertools.pairwise(plain):
        run = run + 1 if following.get(a) == b else 1
        best = max(best, run)
    return best >= 6 and best >= 0.8 * len(plain)


def _candidates(text: str) -> list[str]:
    out = [text, text.strip("=.-_"), text.rstrip("=")]
    if len(text) < 6:
        return out
    for sep in ("-", "_", ".", "/", "=", ":"):
        out.extend(part for part in text.split(sep) if len(part) >= 6)
    return out


__all__ = [
    "DETECT_SECRETS_FLAGS",
    "PUBLISHED_EXAMPLES",
    "flagged_value",
    "is_digest",
    "is_key_fingerprint",
    "is_noise",
    "is_placeholder",
    "is_published_example",
    "is_reference",
    "is_reference_line",
    "merge_duplicates",
    "not_a_secret",
    "pem_noise_lines",
    "private_key_start",
    "whole_token",
]
