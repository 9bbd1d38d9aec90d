"""Untrusted text made inert for a terminal. Pure: no Textual, no I/O.

Customer messages, model output, PR file names and contents, agent details and every
other string the backend relays were written by someone other than the operator. Written
to a terminal raw, an escape sequence in them acts: OSC 52 writes the operator's
clipboard, OSC 0 retitles the window, CSI sequences move the cursor or repaint what the
screen claims. :func:`inert` turns every such character into a visible stand-in, so the
operator sees that it was there and the terminal never receives it. Rich markup is the
other half: untrusted text goes into a ``Text`` (or through ``rich.markup.escape``), never
into a markup string — :func:`inert_text` does both at once.
"""

from __future__ import annotations

from rich.text import Text

_BIDI = (0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A))
"""Bidirectional controls: they reorder what follows, so a name can read as another."""


def _visible() -> dict[int, str]:
    table = {code: chr(0x2400 + code) for code in range(0x20)}  # ␀ … ␛ … ␟
    table[0x7F] = "\u2421"  # ␡
    table.update({code: f"\\x{code:02x}" for code in range(0x80, 0xA0)})  # C1: CSI, OSC…
    table.update({code: f"\\u{code:04x}" for code in _BIDI})
    return table


_SINGLE_LINE = {**_visible(), ord("\t"): " "}
_MULTILINE = {code: shown for code, shown in _SINGLE_LINE.items() if code not in (9, 10)}


def inert(text: str, *, multiline: bool = True) -> str:
    """``text`` with every control character shown instead of obeyed.

    C0 controls and DEL become their Unicode control pictures (ESC → ``␛``, BEL → ``␇``),
    C1 controls and bidirectional overrides their escaped code (``\\x9b``, ``\\u202e``).
    ``multiline`` keeps newlines and tabs (a CRLF counts as one newline); otherwise a
    newline shows as ``␊`` and a tab as a space, so one row stays one row.
    """
    if multiline:
        return text.replace("\r\n", "\n").translate(_MULTILINE)
    return text.translate(_SINGLE_LINE)


def inert_text(text: object, style: str = "", *, multiline: bool = False) -> Text:
    """A Rich ``Text`` of ``text`` made :func:`inert`: its ``[brackets]`` are never markup.

    ``None`` shows as an empty text; anything else as its ``str``.
    """
    return Text(inert("" if text is None else str(text), multiline=multiline), style=style)


def inert_assemble(*parts: str | tuple[str, str] | Text) -> Text:
    """``Text.assemble`` with every string part made :func:`inert` (newlines kept);
    ``(text, style)`` pairs keep their style, ``Text`` parts are taken as they are."""
    clean: list[str | tuple[str, str] | Text] = []
    for part in parts:
        if isinstance(part, str):
            clean.append(inert(part))
        elif isinstance(part, tuple):
            clean.append((inert(part[0]), part[1]))
        else:
            clean.append(part)
    return Text.assemble(*clean)
