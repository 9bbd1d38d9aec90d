"""A floor under the secret scanners: AWS keys and PEM private keys by regex.

Runs in-process, so it still catches the worst leaks if detect-secrets or semgrep is
missing, and no comment or config in the PR can turn it off. A placeholder or a published
example key (``AKIAXXXXXXXXXXXXXXXX``, ``AKIAIOSFODNN7EXAMPLE``) is not reported, judged by
the value alone (:func:`~backend.gates.scanners.secret_noise.not_a_secret`); a private key
is reported once, on its BEGIN line.
"""

from __future__ import annotations

import re

from backend.gates.encodings import decode
from backend.gates.findings import Finding, ScanResult
from backend.gates.scanners._base import ScanContext
from backend.gates.scanners.secret_noise import not_a_secret

TOOL = "secret-regex"
PATTERNS: tuple[tuple[str, re.Pattern[str], str], ...] = (
    (
        "aws-access-key-id",
        re.compile(
            r"(?<![A-Z0-9])(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AIPA|ANPA|ANVA|AROA|APKA)[A-Z0-9]{16}(?![A-Z0-9])"
        ),
        "AWS access key id",
    ),
    (
        "aws-secret-access-key",
        re.compile(
            r"(?i)aws[_\-. ]?(?:secret[_\-. ]?(?:access[_\-. ]?)?key|secret)[\"']?\s*[:=]\s*[\"']?"
            r"(?P<value>(?-i:[A-Za-z0-9/+]{40}))(?![A-Za-z0-9/+=])"
        ),
        "AWS secret access key",
    ),
    (
        "private-key",
        re.compile(
            r"-----BEGIN (?:RSA |DSA |EC |OPENSSH |ENCRYPTED |PGP )?PRIVATE KEY(?: BLOCK)?-----"
        ),
        "private key",
    ),
)


def scan(ctx: ScanContext) -> ScanResult | None:
    """Scan every file of the copy (whatever its encoding); ``None`` when the copy is empty."""
    if not ctx.files:
        return None
    findings: list[Finding] = []
    for rel in ctx.files:
        try:
            data = (ctx.root / rel).read_bytes()
        except OSError:
            continue
        # the gate's copy is UTF-8 already; anything else is still read, never skipped
        text = decode(data).text
        findings.extend(find_secrets(text, rel))
    return ScanResult.from_findings(TOOL, findings)


def find_secrets(text: str, file: str = "") -> list[Finding]:
    """Every AWS key or private key header in ``text``, one finding per match, except
    placeholders and published example keys."""
    findings = []
    for rule, pattern, label in PATTERNS:
        for match in pattern.finditer(text):
            if rule != "private-key" and not_a_secret(match.groupdict().get("value") or match[0]):
                continue
            line = text.count("\n", 0, match.start()) + 1
            findings.append(
                Finding(
                    file=file,
                    line=line,
                    tool=TOOL,
                    rule=rule,
                    severity="error",
                    message=f"{label} committed in plain text; remove it and rotate it",
                )
            )
    return findings
