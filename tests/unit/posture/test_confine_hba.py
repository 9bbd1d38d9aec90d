"""``pg_hba.conf`` as ``db confine`` writes it and as ``audit grants`` reads it."""

from __future__ import annotations

import pytest

from backend.posture.confine import HbaRule, fix_command, hba_admits, hba_name, shown_url

ROLE = "cadencia_agente_consulta"


def _rules(*lines: str) -> list[HbaRule]:
    out = []
    for n, line in enumerate(lines, start=1):
        kind, db, user, *rest = line.split()
        address = None if kind == "local" else rest[0]
        out.append(
            HbaRule(
                line_number=n,
                type=kind,
                database=db.split(","),
                user_name=user.split(","),
                address=address,
                auth_method=rest[-1],
            )
        )
    return out


STOCK = ("local all all peer", "host all all 127.0.0.1/32 scram-sha-256")
CONFINED = (
    f"host erp {ROLE} 127.0.0.1/32 scram-sha-256",
    f"host all {ROLE} all reject",
    f"local all {ROLE} reject",
)


def test_the_first_matching_line_wins() -> None:
    assert hba_admits(_rules(*STOCK), ROLE, "postgres").line_number == 1  # type: ignore[union-attr]
    assert hba_admits(_rules(*CONFINED, *STOCK), ROLE, "postgres") is None
    assert hba_admits(_rules(*CONFINED, *STOCK), ROLE, "erp").line_number == 1  # type: ignore[union-attr]
    # the same lines BELOW the broad ones keep nothing out
    assert hba_admits(_rules(*STOCK, *CONFINED), ROLE, "postgres").line_number == 1  # type: ignore[union-attr]
    assert hba_admits(_rules(*CONFINED, *STOCK), "someone_else", "postgres") is not None


def test_a_reject_for_one_kind_of_connection_leaves_the_other_open() -> None:
    only_host = _rules(f"host all {ROLE} all reject", *STOCK)
    assert hba_admits(only_host, ROLE, "postgres").type == "local"  # type: ignore[union-attr]
    narrow = _rules(f"local all {ROLE} reject", f"host all {ROLE} 10.0.0.0/8 reject", *STOCK)
    assert hba_admits(narrow, ROLE, "postgres").line_number == 4  # type: ignore[union-attr]
    ssl_only = _rules(f"local all {ROLE} reject", f"hostssl all {ROLE} all reject", *STOCK)
    assert hba_admits(ssl_only, ROLE, "postgres") is not None


def test_no_matching_line_means_rejected_and_keywords_match_as_the_server_does() -> None:
    assert hba_admits(_rules("host erp all all scram-sha-256"), ROLE, "postgres") is None
    assert hba_admits(_rules("host replication all all trust"), ROLE, "postgres") is None
    assert hba_admits(_rules("local sameuser all peer"), ROLE, ROLE) is not None
    assert hba_admits(_rules("local sameuser all peer"), ROLE, "postgres") is None
    groups = frozenset({"tools"})
    assert hba_admits(_rules("host all +tools all md5"), ROLE, "x", groups) is not None
    assert hba_admits(_rules("host all +tools all md5"), ROLE, "x") is None
    assert hba_admits(_rules("host samerole all all md5"), ROLE, "tools", groups) is not None


@pytest.mark.parametrize(
    ("name", "field"),
    [
        ("cadencia", "cadencia"),
        ("all", '"all"'),  # a database named like the keyword
        ("Erp", '"Erp"'),
        ('erp "q"; DROP', '"erp ""q""; DROP"'),
        ("a,b", '"a,b"'),
    ],
)
def test_names_are_quoted_for_pg_hba(name: str, field: str) -> None:
    assert hba_name(name) == field


def test_the_fix_command_never_shows_a_password() -> None:
    url = "postgresql://admin:s3cret@db.internal:5432/erp?sslmode=require&password=s3cret"
    assert shown_url(url) == "postgresql://admin@db.internal:5432/erp?sslmode=require"
    assert fix_command("postgresql://a:pw@h/my db") == (
        "cadencia db confine --database 'postgresql://a@h/my db'"
    )


def test_an_address_that_is_not_a_cidr_is_refused_before_connecting() -> None:
    from backend.exceptions import ConfigError
    from backend.posture.confine import confine

    with pytest.raises(ConfigError, match="IP address or CIDR"):
        confine("postgresql://nobody@127.0.0.1:1/erp", address="10.0.0.0/8\nhost all all all trust")
    with pytest.raises(ConfigError, match="SQLite has no cluster"):
        confine("sqlite:///tmp/x.db")
