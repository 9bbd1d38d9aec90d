"""Reading IAM policy JSON files.

Policies pasted from runbooks carry ``//`` and ``/* */`` comments (the Lab 87 seed
does); JSON does not allow them, so they are stripped outside strings first.
Besides a bare policy document, the output of ``aws iam get-role-policy``
(``RoleName`` + ``PolicyDocument``) is accepted, which also names the role.
"""

from __future__ import annotations

import json
from pathlib import Path

from backend.exceptions import PathError, ValidationError
from backend.posture.iam_model import PolicySource, Tool
from backend.posture.iam_tools import tool_from_text


def strip_json_comments(text: str) -> str:
    """Remove ``//`` line comments and ``/* */`` block comments outside strings."""
    out: list[str] = []
    i, n = 0, len(text)
    in_string = False
    while i < n:
        ch = text[i]
        if in_string:
            out.append(ch)
            if ch == "\\" and i + 1 < n:
                out.append(text[i + 1])
                i += 2
                continue
            if ch == '"':
                in_string = False
            i += 1
        elif ch == '"':
            in_string = True
            out.append(ch)
            i += 1
        elif text.startswith("//", i):
            end = text.find("\n", i)
            i = n if end < 0 else end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            i = n if end < 0 else end + 2
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def load_policy_file(path: Path, tool: Tool | None = None) -> PolicySource:
    """Read one policy JSON file.

    Args:
        path: the file.
        tool: the tool whose role the policy belongs to; when ``None`` it is guessed
            from the role name or the file name, else the role counts as shared.

    Raises:
        PathError: the file cannot be read.
        ValidationError: the file is not a JSON policy document.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise PathError(f"cannot read {path}: {exc}", path=str(path)) from exc
    try:
        data = json.loads(strip_json_comments(text))
    except json.JSONDecodeError as exc:
        raise ValidationError(
            f"{path}: not valid JSON (line {exc.lineno}: {exc.msg})", path=str(path)
        ) from exc
    if not isinstance(data, dict):
        raise ValidationError(f"{path}: a policy document must be a JSON object", path=str(path))
    role = data.get("RoleName") if isinstance(data.get("RoleName"), str) else None
    name = str(data.get("PolicyName") or path.name)
    document = data.get("PolicyDocument", data)
    if isinstance(document, str):  # some CLIs return the document URL-decoded as a string
        try:
            document = json.loads(document)
        except json.JSONDecodeError as exc:
            raise ValidationError(f"{path}: PolicyDocument is not JSON", path=str(path)) from exc
    if not isinstance(document, dict) or "Statement" not in document:
        raise ValidationError(f"{path}: no IAM policy Statement found", path=str(path))
    source = PolicySource(
        file=str(path),
        name=name,
        document=document,
        role=role,
        tool=tool or tool_from_text(role, path.stem),
    )
    source.statements()  # validate the shape now: exit 2, not a crash mid-audit
    return source
