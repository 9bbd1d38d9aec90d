"""What every console screen shares: the view it was built with, the status bar, the
too-small banner and the filter line."""

from __future__ import annotations

import contextlib

from textual import events
from textual.screen import Screen
from textual.widgets import Input, Static

from console.layout import MIN_HEIGHT, MIN_WIDTH, too_small
from console.view import ConsoleView
from console.widgets.footer import KeysFooter
from console.widgets.status_bar import StatusBar


class ConsoleScreen(Screen[None]):
    """Base screen: reads the console through its view; keeps its :class:`StatusBar` in
    sync with it."""

    def __init__(self, view: ConsoleView) -> None:
        super().__init__()
        self.view = view
        """The console's data and signals, and the operator actions (read, never written)."""
        # Textual re-parses the whole stylesheet and restyles every screen twice when a
        # mode's screen is shown the first time, because a new screen's "CSS generation"
        # starts at -1 (the app's only changes with the theme). This one is built with the
        # stylesheet as it stands (every screen's CSS is read at start, see the App's
        # CSS_PATH), so it starts current; a later theme change still refreshes it.
        with contextlib.suppress(RuntimeError):  # no running App: nothing to match
            self._css_update_count = self.app._css_update_count
            # Likewise the width class (-narrow, -wide...) the first Resize would add: given
            # now, that Resize finds it set and does not restyle the whole screen once more
            # just before the first frame. Textual's own rule picks it, so a resize agrees.
            width, breakpoints = self.app.size.width, self.app.HORIZONTAL_BREAKPOINTS or []
            self.add_class(*self._get_breakpoint_classes(width, breakpoints), update=False)

    def on_mount(self) -> None:
        """Follow the App's status; cover the screen while the terminal is too small."""
        self._check_size(self.app.size.width, self.app.size.height)
        self.view.status_changed.subscribe(self, self._sync_status)
        self._sync_status(None)

    def on_resize(self, event: events.Resize) -> None:
        """Re-check the size (and let subclasses refit their columns)."""
        self._check_size(event.size.width, event.size.height)
        self.fit(event.size.width)

    def fit(self, width: int) -> None:
        """Subclasses widen their table columns to ``width``."""

    async def filter_box(self, placeholder: str) -> Input:
        """The screen's filter line (``/``), mounted the first time it is asked for, where
        compose would have put it (above the footer).

        Composed hidden with the screen, it cost every first paint the styling and layout
        of a widget most sessions never show.
        """
        found = self.query("#filter")
        if found:
            return found.first(Input)
        box = Input(placeholder=placeholder, id="filter", classes="hidden")
        await self.mount(box, before=self.query_one(KeysFooter))
        return box

    def hide_filter(self) -> None:
        """Clear the filter line and hide it (nothing to do if it was never shown)."""
        for box in self.query("#filter").results(Input):
            box.value = ""
            box.add_class("hidden")

    def _check_size(self, width: int, height: int) -> None:
        # Saying so beats silently dropping columns an operator then never knows exist.
        small = too_small(width, height)
        if small:
            self._too_small_banner().update(
                f"Terminal too small: {width}×{height}.\n"
                f"The console needs at least {MIN_WIDTH}×{MIN_HEIGHT}; enlarge the window."
            )
        self.set_class(small, "-too-small")

    def _too_small_banner(self) -> Static:
        # Mounted the first time the terminal is too small, not with every screen: most never
        # are, and a widget mounted after compose costs the first frame one more styling pass.
        found = self.query("#too-small")
        if found:
            return found.first(Static)
        banner = Static(id="too-small")
        self.mount(banner)
        return banner

    def on_screen_resume(self) -> None:
        """A screen coming back shows the current status, not the one it left with."""
        self._sync_status(None)
        self.fit(self.size.width or self.app.size.width)

    def _sync_status(self, _: object) -> None:
        app = self.view
        for bar in self.query(StatusBar):
            bar.url = app.client.base_url
            bar.connection = app.connection
            bar.stale_seconds = app.stale_seconds
            bar.prs_waiting, bar.interruptions_waiting = app.awaiting()
            bar.inbox_waiting = len(app.inbox)
            bar.breached = app.breached_count()
            bar.paused = app.paused_count if app.paused else None
            bar.readonly = app.actions.readonly
            bar.operator = app.actions.operator
            bar.me = app.me or ""
            bar.problem = "; ".join(
                f"{route} {field}" for route, (field, _) in app.contract_errors.items()
            )
