"""Database passwords that never need the command line, and a command line scrubbed of them.

A password in ``--database postgresql://user:pw@host/db`` sits in ``/proc/PID/cmdline``,
which every local user can read. The password can instead come from
``CADENCIA_DATABASE_PASSWORD``, a file named by ``CADENCIA_DATABASE_PASSWORD_FILE`` (put
into the URL in memory only), or libpq's own ``PGPASSWORD`` / ``PGPASSFILE`` (libpq reads
those itself, for every connection). One given in argv anyway is overwritten in the
process's argument memory at start, so ``/proc/PID/cmdline`` shows ``***`` from then on,
and the operator is warned (it was visible until then).
"""

from __future__ import annotations

import logging
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import quote, urlsplit, urlunsplit

from backend.exceptions import ConfigError

log = logging.getLogger(__name__)

_URL_PASSWORD = re.compile(r"(?P<head>[A-Za-z][A-Za-z0-9+.-]*://[^/@:\s]*:)(?P<pw>[^@/\s]+)@")
"""``scheme://user:PASSWORD@`` anywhere in an argument."""

WARNING = (
    "a database password was given on the command line: other local users could read it in "
    "/proc/{pid}/cmdline until now (it is masked from here on). Give it with "
    "CADENCIA_DATABASE_PASSWORD_FILE, PGPASSFILE or CADENCIA_DATABASE_PASSWORD instead."
)


def masked(arg: str) -> str:
    """``arg`` with every URL password replaced by as many ``*`` (same length)."""
    return _URL_PASSWORD.sub(lambda m: m["head"] + "*" * len(m["pw"]) + "@", arg)


def scrub_process_title(argv: Sequence[str] | None = None) -> bool:
    """Mask URL passwords in this process's argument memory; True when one was found.

    Linux: the kernel serves ``/proc/PID/cmdline`` from the argument area whose bounds are
    fields 48-49 of ``/proc/self/stat``; writing the masked bytes (same length, so nothing
    moves) through ``/proc/self/mem`` changes what every reader sees. Elsewhere, or if that
    fails, the ``setproctitle`` library when installed; else only the warning.
    """
    args = list(sys.argv if argv is None else argv)
    if not any(_URL_PASSWORD.search(a) for a in args):
        return False
    import os

    pid = os.getpid()
    # Warned before the masking: whoever sees the masked title has the warning already.
    log.warning(WARNING.format(pid=pid))
    sys.stderr.write("warning: " + WARNING.format(pid=pid) + "\n")
    sys.stderr.flush()
    if not (_scrub_proc_mem() or _scrub_setproctitle(args)):
        log.warning("could not mask the password in the process title")
    return True


def _scrub_proc_mem() -> bool:
    try:
        stat = Path("/proc/self/stat").read_bytes()
        fields = stat[stat.rindex(b")") + 2 :].split()
        start, end = int(fields[45]), int(fields[46])  # arg_start, arg_end (fields 48, 49)
        with open("/proc/self/mem", "r+b", buffering=0) as mem:
            mem.seek(start)
            area = mem.read(end - start)
            clean = b"\0".join(
                masked(a.decode("utf-8", "surrogateescape")).encode("utf-8", "surrogateescape")
                for a in area.split(b"\0")
            )
            if clean != area and len(clean) == len(area):
                mem.seek(start)
                mem.write(clean)
        return (
            _URL_PASSWORD.search(Path("/proc/self/cmdline").read_text("utf-8", "replace")) is None
        )
    except (OSError, ValueError, IndexError):
        return False


def _scrub_setproctitle(args: list[str]) -> bool:
    try:
        import setproctitle  # type: ignore[import-not-found]
    except ImportError:
        return False
    setproctitle.setproctitle(" ".join(masked(a) for a in args))
    return True


def with_password(url: str, password: str | None, password_file: Path | None) -> str:
    """``url`` with the password from settings put in, unless it has one already.

    Only PostgreSQL URLs; none of the two set leaves the URL alone (libpq still reads
    ``PGPASSWORD`` and ``PGPASSFILE`` itself).
    """
    parts = urlsplit(url)
    if parts.scheme not in ("postgresql", "postgres") or parts.password is not None:
        return url
    if password is None and password_file is not None:
        try:
            password = password_file.expanduser().read_text(encoding="utf-8").strip()
        except OSError as exc:
            raise ConfigError(
                f"cannot read CADENCIA_DATABASE_PASSWORD_FILE {password_file}: {exc}"
            ) from exc
    if not password:
        return url
    userinfo, _, host = parts.netloc.rpartition("@")
    user = userinfo or ""
    netloc = f"{user}:{quote(password, safe='')}@{host}"
    return urlunsplit(parts._replace(netloc=netloc))
