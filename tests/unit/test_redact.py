"""``redact_url`` / ``redact_text``: credentials out, the host kept."""

from __future__ import annotations

import pytest

from backend.redact import redact_text, redact_url


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        (
            "http://user:PASS@127.0.0.1:8080/v1?key=K&mode",
            "http://***@127.0.0.1:8080/v1?key=***&mode",
        ),
        ("https://TOKEN@git.example/repo.git", "https://***@git.example/repo.git"),
        ("https://api.openai.com/v1", "https://api.openai.com/v1"),
        ("http://h/cb#access_token=abc", "http://h/cb#access_token=***"),
        ("postgresql://a:p@ss@db:5432/x", "postgresql://***@db:5432/x"),
        ("http://u:p@h:notaport/x?k=v", "http://***@h:notaport/x?***"),
        ("planner", "planner"),
    ],
)
def test_redact_url(url: str, shown: str) -> None:
    assert redact_url(url) == shown


def test_redact_text_finds_urls_inside_specs_and_messages() -> None:
    text = "openai:m@http://u:PASS@h:1/v1?key=K/chat/completions could not be reached"
    assert redact_text(text) == "openai:m@http://***@h:1/v1?key=*** could not be reached"
    assert redact_text("no url here: a:b@c") == "no url here: a:b@c"
