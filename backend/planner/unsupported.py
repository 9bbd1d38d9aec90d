"""Modules the planner does not plan, found and named so they are never dropped silently.

A repository's Ruby or PHP app is as much a module as its Go service: the plan
names each one it leaves out (and a second manifest it chose not to follow in a directory
it did plan), so the operator knows the proposal is partial.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from backend.planner.detect import _MANIFESTS, SKIP_DIRS

# Manifest file name → the stack it belongs to. Suffix entries start with "*".
_UNSUPPORTED: tuple[tuple[str, str], ...] = (
    ("Gemfile", "ruby"),
    ("composer.json", "php"),
    ("mix.exs", "elixir"),
    ("build.sbt", "scala"),
    ("Package.swift", "swift"),
    ("pubspec.yaml", "dart"),
    ("deno.json", "deno"),
    ("Pipfile", "python (Pipfile)"),
    ("*.csproj", ".NET"),
    ("*.fsproj", ".NET"),
)


@dataclass(frozen=True)
class Skipped:
    """A manifest the plan does not follow, and why."""

    path: str
    manifest: str
    reason: str

    def __str__(self) -> str:
        where = self.manifest if self.path == "." else f"{self.path}/{self.manifest}"
        return f"{where}: {self.reason}"


def skipped_modules(repo: Path, planned: set[str]) -> list[Skipped]:
    """Every manifest under ``repo`` the plan leaves out; ``planned`` are the module paths."""
    out: list[Skipped] = []
    for dirpath, dirnames, filenames in os.walk(repo):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS and not d.startswith("."))
        rel = Path(dirpath).relative_to(repo).as_posix() or "."
        names = set(filenames)
        known = [(m, lang) for m, lang in _MANIFESTS if m in names]
        for manifest, stack in _UNSUPPORTED:
            hits = (
                sorted(n for n in names if n.endswith(manifest[1:]))
                if manifest.startswith("*")
                else [manifest] * (manifest in names)
            )
            for hit in hits:
                if manifest == "Pipfile" and known:
                    continue  # requirements.txt/pyproject next to it: planned from those
                out.append(Skipped(rel, hit, f"{stack} is not supported by the planner"))
        if rel in planned:
            chosen = known[0] if known else None
            for manifest, language in known[1:]:
                if language != (chosen[1] if chosen else None):
                    out.append(
                        Skipped(
                            rel,
                            manifest,
                            f"not planned: the module here is planned from {chosen[0]}"
                            if chosen
                            else "not planned",
                        )
                    )
        elif known:
            out.append(Skipped(rel, known[0][0], "not in the module map"))
    return out
