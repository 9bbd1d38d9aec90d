"""The top-level screens (modes) built once, before the operator first asks for them.

Textual builds a mode's screen the first time it is shown and keeps it; that first build
(compose, mount, style, the footer's keys) is most of a second on a busy machine, paid
when the operator presses ``2`` or ``3`` for the first time. The App builds them instead
right after the first data is on screen, one per frame, and reads every screen's
stylesheet once at start (see :data:`SCREEN_CSS`).
"""

from __future__ import annotations

from pathlib import Path, PurePath
from typing import TYPE_CHECKING

from textual import work

if TYPE_CHECKING:
    from textual.screen import Screen

    from console.app import CadenciaConsole

SCREENS_DIR = Path(__file__).parent / "screens"
SCREEN_CSS: list[str | PurePath] = [
    SCREENS_DIR / name
    for name in ("team.tcss", "inbox.tcss", "approvals.tcss", "detail.tcss", "fetched.tcss")
]
"""Every screen's stylesheet, for the App's ``CSS_PATH``. A screen's own ``CSS_PATH`` is
read the first time it is shown, and each new file re-parsed the whole stylesheet and
restyled every widget of every screen. The files are global, not scoped, so reading them
all up front also ends styles that depended on which screens had been visited."""


class ModesMixin:
    """Mixed into :class:`~console.app.CadenciaConsole`."""

    @work(group="prebuild", exclusive=True, exit_on_error=False)
    async def prebuild_when_ready(self: CadenciaConsole) -> None:  # type: ignore[misc]
        """Once the first snapshots are on screen, build the other modes' screens."""
        await self.ready.wait()
        self.call_after_refresh(self.prebuild_modes)

    def mode_screen(self: CadenciaConsole, mode: str) -> Screen[object] | None:  # type: ignore[misc]
        """The screen ``mode`` shows, once it is built (the same instance every time)."""
        stack = getattr(self, "_screen_stacks", {}).get(mode)
        return stack[0] if stack else None

    def prebuild_modes(self: CadenciaConsole) -> None:  # type: ignore[misc]
        """Build the next mode screen not built yet, then the next one after a frame.

        Textual has no public way to mount a screen without showing it; ``_init_mode`` is
        what ``switch_mode`` itself calls the first time. Without it (another Textual) the
        screens are simply built on first use, as before.
        """
        init = getattr(self, "_init_mode", None)
        stacks = getattr(self, "_screen_stacks", None)
        if init is None or stacks is None:
            return
        if getattr(self, "_exit", False) or not self.is_running:
            # Quitting: a screen mounted now gets no children (the App is closing), and its
            # on_mount would fail on the widgets it looks for.
            return
        for mode in self.MODES:
            if mode != self.current_mode and mode not in stacks:
                init(mode)
                self.call_after_refresh(self.prebuild_modes)
                return
