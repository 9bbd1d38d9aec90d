"""The Inbox's pure view logic and the layout arithmetic, with plain asserts."""

from __future__ import annotations

from console.inbox_view import arrivals, next_attention, project_label, project_labels
from console.layout import CELL_PADDING, Column, fit_widths, too_small
from console.models_inbox import InboxAction, InboxItem


def _item(
    ident: str, state: str = "pending", project: str | None = None, name: str = ""
) -> InboxItem:
    kind, target = ident.split(":", 1)
    return InboxItem(
        id=ident,
        kind=kind,  # type: ignore[arg-type]
        target_id=target,
        project_id=project,
        project_name=name or None,
        state=state,
        actions=[InboxAction(name="approve", path=f"/api/x/{target}/approve")],
    )


def test_two_projects_of_one_name_get_a_piece_of_their_ids() -> None:
    items = [
        _item("pr:1", project="prj_000000000003", name="loja"),
        _item("pr:2", project="prj_000000000007", name="loja"),
        _item("pr:3", project="prj_ab12", name="pagamentos"),
        _item("pr:4", project="prj_000000000003", name="loja"),
        _item("interruption:9", "open"),
    ]
    labels = project_labels(items)
    assert labels["prj_ab12"] == "pagamentos"
    assert labels["prj_000000000003"] != labels["prj_000000000007"]
    assert labels["prj_000000000003"].startswith("loja·")
    assert project_label(items[-1], labels) == "—"


def test_random_ids_show_their_first_differing_characters() -> None:
    items = [
        _item("pr:1", project="prj_9f3a0c7d11", name="loja"),
        _item("pr:2", project="prj_1be2dd0a42", name="loja"),
    ]
    assert sorted(project_labels(items).values()) == ["loja·1be2dd", "loja·9f3a0c"]


def test_next_attention_skips_what_waits_on_an_agent_and_wraps() -> None:
    items = [
        _item("interruption:1", "claimed"),
        _item("pr:a", "awaiting_human"),
        _item("pr_blocked:b", "blocked"),
        _item("handoff:c", "accepted"),
    ]
    assert next_attention(items, None) == "pr:a"
    assert next_attention(items, "pr:a") == "pr_blocked:b"
    assert next_attention(items, "pr_blocked:b") == "pr:a"  # wraps past the others
    assert next_attention([_item("interruption:1", "claimed")], None) is None


def test_arrivals_are_ids_not_in_the_previous_list_and_none_on_the_first_load() -> None:
    first = [_item("pr:a"), _item("pr:b")]
    assert arrivals(None, first) == set()
    assert arrivals({"pr:a", "pr:b"}, [_item("pr:b"), _item("handoff:c")]) == {"handoff:c"}


def test_widths_keep_minimums_and_give_the_rest_by_share() -> None:
    columns = [Column("kind", 10), Column("title", 20, 3), Column("state", 8, 1)]
    base = 38 + CELL_PADDING * 3
    assert fit_widths(columns, base - 5) == {"kind": 10, "title": 20, "state": 8}
    wide = fit_widths(columns, base + 41)
    assert wide["kind"] == 10
    assert sum(wide.values()) + CELL_PADDING * 3 == base + 41  # fills the table exactly
    assert wide["title"] - 20 >= 3 * (wide["state"] - 8)


def test_too_small_below_80_by_24() -> None:
    assert too_small(79, 40)
    assert too_small(120, 23)
    assert not too_small(80, 24)


def test_the_header_counts_every_pr_kind_and_only_unclaimed_interruptions() -> None:
    from console.state import inbox_awaiting_counts

    items = [
        _item("pr:infra-1", "awaiting_human"),
        _item("pr:dev-2", "awaiting_human"),
        _item("pr_blocked:dev-3", "blocked"),
        _item("interruption:7", "open"),
        _item("interruption:8", "claimed"),
        _item("action_approval:apr_1"),
    ]
    assert inbox_awaiting_counts(items) == (2, 1)
    assert inbox_awaiting_counts([]) == (0, 0)
