"""Gradle builds (``build.gradle`` / ``build.gradle.kts``): the jar they produce and the Java
version they compile for.

Gradle names its jar ``build/libs/<rootProject.name>-<version>.jar``; Spring Boot's
``bootJar`` is the runnable one (the ``-plain.jar`` next to it has no dependencies). The
wrapper (``gradlew``) is the project's own pinned Gradle and is preferred over the image's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from backend.planner.manifest_files import read_text

GRADLE_FILES = ("build.gradle.kts", "build.gradle")
GRADLE_IMAGES = {"17": "gradle:8.10.2-jdk17", "21": "gradle:8.10.2-jdk21"}


@dataclass(frozen=True)
class GradleBuild:
    """What the planner needs from one Gradle module."""

    script: str
    """``build.gradle`` or ``build.gradle.kts``."""
    jar: str
    """The runnable jar's path under the module, or a glob when the name is unknown."""
    task: str
    """``bootJar`` for Spring Boot, else ``jar``."""
    wrapper: bool
    java_version: str | None
    spring_web: bool


def gradle_build(path: Path) -> GradleBuild | None:
    """The Gradle build of the module at ``path``, or None when it has none."""
    script = next((name for name in GRADLE_FILES if (path / name).is_file()), None)
    if script is None:
        return None
    text = read_text(path / script)
    settings = read_text(path / "settings.gradle.kts") or read_text(path / "settings.gradle")
    name_match = re.search(r"rootProject\.name\s*=\s*[\"']([^\"']+)[\"']", settings)
    version_match = re.search(r"^\s*version\s*=\s*[\"']([^\"']+)[\"']", text, re.MULTILINE)
    name = name_match.group(1) if name_match else path.resolve().name
    spring = "org.springframework.boot" in text
    jar = f"build/libs/{name}-{version_match.group(1)}.jar" if version_match else ""
    java = re.search(
        r"(?:JavaLanguageVersion\.of\(\s*|VERSION_|(?:source|target)Compatibility\s*=\s*[\"']?)"
        r"(\d+)",
        text,
    )
    return GradleBuild(
        script=script,
        jar=jar,
        task="bootJar" if spring else "jar",
        wrapper=(path / "gradlew").is_file(),
        java_version=java.group(1) if java else None,
        spring_web="spring-boot-starter-web" in text,
    )


def build_stage(build: GradleBuild, version: str) -> tuple[str, list[str]]:
    """The build stage's image and lines; the runnable jar ends up at ``/tmp/app.jar``."""
    gradle = "./gradlew" if build.wrapper else "gradle"
    copy = (
        f"cp {build.jar} /tmp/app.jar"
        if build.jar
        else "find build/libs -name '*.jar' ! -name '*-plain.jar' -exec cp {} /tmp/app.jar ';'"
    )
    return GRADLE_IMAGES[version], [
        "WORKDIR /src",
        "COPY . .",
        f"RUN {gradle} --no-daemon -q {build.task} -x test && {copy}",
    ]
