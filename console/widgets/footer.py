"""The key bar at the bottom of every screen: Textual's ``Footer``, rebuilt only when the
keys it shows change."""

from __future__ import annotations

from collections.abc import Hashable

from textual.screen import Screen
from textual.widgets import Footer


class KeysFooter(Footer):
    """A ``Footer`` that skips the rebuild when the keys it would show are the ones shown.

    Textual's footer recomposes (one widget per key, each styled anew) whenever its screen
    says its bindings were updated: on every screen switch, every focus change and every
    ``refresh_bindings``, even when nothing it shows changed. On a screen switch that was
    most of the time the switch took. What the footer draws depends only on the shown
    bindings (key, description, enabled, tooltip, group), so an equal signature means an
    identical footer.
    """

    _shown: tuple[Hashable, ...] | None = None

    def bindings_changed(self, screen: Screen[object]) -> None:
        """Rebuild only when the keys differ from the ones on screen."""
        if self.is_attached and screen is self.screen and screen.app.app_focus:
            signature = self._signature(screen)
            if signature == self._shown and self._bindings_ready:
                return
            self._shown = signature
        super().bindings_changed(screen)

    def _signature(self, screen: Screen[object]) -> tuple[Hashable, ...]:
        app = screen.app
        keys = tuple(
            (
                binding.key,
                app.get_key_display(binding),
                binding.description,
                binding.action,
                enabled,
                tooltip,
                binding.group,
            )
            for _, binding, enabled, tooltip in screen.active_bindings.values()
            if binding.show or binding.action == "command_palette"
        )
        return (keys, self.compact, self.show_command_palette)
