"""Downloads a Dockerfile runs, extracts or installs must be verified; pipes need pipefail.

Shapes from the official images (docker-library's python, golang, postgres; nodejs'
docker-node) pass; the install one-liners of READMEs (``curl | sh``, ``sh -c "$(curl)"``),
and verifications of something other than what is then used, fail.
"""

from __future__ import annotations

import pytest

from backend.gates.scanners.dockerfile import check_dockerfile

SHA = "ffb5f8de10c62550dfddab66b36b57030721e0a44a3218e9e1181d7b59f121ca"
UNVERIFIED = "dockerfile-unverified-download"
PIPEFAIL = "dockerfile-pipefail"


def rules(run: str, *, head: str = "") -> set[str]:
    text = f"FROM debian:12.5-slim\n{head}{run}\nUSER 10001\n"
    return {f.rule for f in check_dockerfile(text, "Dockerfile")}


@pytest.mark.parametrize(
    "run",
    [
        f'RUN curl -fsSLo /tmp/x.tgz https://e.example/x.tgz && echo "{SHA}  /tmp/x.tgz" '
        "| sha256sum -c - && tar -xzf /tmp/x.tgz -C /usr/local && rm /tmp/x.tgz",
        f'RUN curl -fsSLo x.tgz https://e.example/x.tgz && echo "{SHA} *x.tgz" '
        "| sha256sum --check --strict && tar xzf x.tgz",
        f'RUN wget -O f https://e.example/f && echo "{SHA}{SHA}  f" | sha512sum -c && sh f',
        'RUN wget -qO go.tgz "$url" && echo "$sha256 *go.tgz" | sha256sum -c - '
        "&& tar -C /usr/local -xzf go.tgz",
        f'RUN printf "%s  %s\\n" "{SHA}" app.bin > app.sha256 && curl -fsSLo app.bin '
        "https://e.example/app.bin && sha256sum -c app.sha256 && chmod +x app.bin",
        "RUN curl -fsSLO https://e.example/t.tgz && curl -fsSLO https://e.example/t.tgz.asc "
        "&& gpg --batch --verify t.tgz.asc t.tgz && tar -xzf t.tgz",
        'RUN curl -fsSLO "https://nodejs.org/dist/v$V/node-v$V-linux-x64.tar.xz" '
        '&& curl -fsSLO "https://nodejs.org/dist/v$V/SHASUMS256.txt.asc" '
        "&& gpg --batch --decrypt --output SHASUMS256.txt SHASUMS256.txt.asc "
        '&& grep " node-v$V-linux-x64.tar.xz\\$" SHASUMS256.txt | sha256sum -c - '
        '&& tar -xJf "node-v$V-linux-x64.tar.xz" -C /usr/local --strip-components=1',
        'RUN set -eux; wget -O /usr/local/bin/gosu "https://e.example/gosu-$arch"; '
        'wget -O /usr/local/bin/gosu.asc "https://e.example/gosu-$arch.asc"; '
        "gpg --batch --verify /usr/local/bin/gosu.asc /usr/local/bin/gosu; "
        "chmod +x /usr/local/bin/gosu; gosu --version",
        f'RUN set -eux; wget "$url"; echo "{SHA} *rustup-init" | sha256sum -c -; '
        "chmod +x rustup-init; "
        "./rustup-init -y",
        "RUN curl -fsSL https://e.example/docker.asc -o /etc/apt/keyrings/docker.asc "
        "&& chmod a+r /etc/apt/keyrings/docker.asc",
    ],
    ids=[
        "sha256sum-c",
        "check-strict",
        "sha512sum",
        "golang-variable",
        "printf-list-file",
        "gpg-verify",
        "node-signed-shasums",
        "postgres-gosu",
        "rustup-init",
        "apt-key-not-run",
    ],
)
def test_a_verified_download_passes(run: str) -> None:
    assert rules(run) == set()


def test_a_signed_remote_add_passes() -> None:
    add = (
        "ADD https://github.com/krallin/tini/releases/download/v0.19.0/tini /tini\n"
        "ADD https://github.com/krallin/tini/releases/download/v0.19.0/tini.asc /tini.asc\n"
        "RUN gpg --batch --verify /tini.asc /tini\n"
    )
    assert rules("RUN chmod +x /tini", head=add) == set()


@pytest.mark.parametrize(
    "run",
    [
        "RUN curl -fsSL https://get.example.com/install.sh | sh",
        'RUN curl "https://get.example.com/install.sh"|"sh"',
        "RUN curl -o- https://e.example/install.sh | PROFILE=/x bash",
        "RUN wget -qO- https://e.example/install.sh | sudo -E bash -",
        "RUN curl -fsSL https://e.example/i.py | python3 -",
        "RUN curl -fsSL https://e.example/x.tgz | tar -xz -C /usr/local/bin",
        "RUN curl -fsSL https://e.example/x | tee /usr/local/bin/x > /dev/null"
        " && chmod +x /usr/local/bin/x",
        "RUN curl -fsSL https://get.docker.com -o get-docker.sh && sh get-docker.sh",
        "RUN curl -fsSLo /tmp/i.sh https://e.example/i.sh && chmod +x /tmp/i.sh && /tmp/i.sh",
        'RUN sh -c "$(curl -fsSL https://e.example/tools/install.sh)"',
        "RUN bash <(wget -qO- https://e.example/i.sh)",
        'RUN eval "$(curl -fsSL https://e.example/env)"',
        'RUN bash -c "curl -fsSL https://e.example/i.sh | sh"',
        '["sh", "-c", "curl -fsSL https://e.example/i.sh | sh"]',
        # the checksum checks something else than what runs
        "RUN curl -fsSL https://e.example/i.sh.sha256 | sha256sum -c - "
        "&& curl -fsSL https://e.example/i.sh | sh",
        "RUN curl -fsSLo i.sh https://e.example/i.sh && curl -fsSL https://e.example/i.sh.sha256"
        " | sha256sum -c - && sh i.sh",
        "RUN wget -O a.tgz https://e.example/a.tgz && wget -O b.tgz https://e.example/b.tgz"
        f' && echo "{SHA}  a.tgz" | sha256sum -c - && tar xzf b.tgz',
        f'RUN curl -fsSLo x https://e.example/x && sh x && echo "{SHA}  x" | sha256sum -c -',
        f'RUN curl -fsSLo x https://e.example/x && echo "{SHA}  x" | sha256sum -c - '
        "&& curl -fsSLo x https://e.example/y && sh x",
        # the "pinned" checksum is itself downloaded
        'RUN sha="$(curl -fsSL https://e.example/x.sha256)" && curl -fsSLo x https://e.example/x'
        ' && echo "$sha  x" | sha256sum -c - && sh x',
        "RUN wget -q https://e.example/tini-amd64 && wget -q https://e.example/tini-amd64.sha256sum"
        ' && echo "$(cat tini-amd64.sha256sum)" | sha256sum -c && chmod +x tini-amd64',
        "RUN curl -fsSLO https://e.example/SHASUMS256.txt && curl -fsSLO https://e.example/n.tar.xz"
        ' && grep " n.tar.xz$" SHASUMS256.txt | sha256sum -c - && tar -xJf n.tar.xz',
        "RUN curl -fsSLo /usr/local/bin/k https://e.example/k && chmod 0755 /usr/local/bin/k",
        "RUN curl -fsSLo /tmp/k.deb https://e.example/k.deb && dpkg -i /tmp/k.deb",
        # a name spelled through a variable the script set ($ARCH) is the same file
        'RUN ARCH=x64 && curl -fsSLO "https://e.example/n-$ARCH.tgz" && tar -xzf n-x64.tgz',
    ],
)
def test_an_unverified_download_fails(run: str) -> None:
    if run.startswith("["):
        run = f"RUN {run}"
    assert UNVERIFIED in rules(run)


def test_the_use_is_found_in_a_later_run() -> None:
    head = "RUN curl -fsSLo /opt/i.sh https://e.example/i.sh\n"
    assert UNVERIFIED in rules("RUN sh /opt/i.sh", head=head)


def test_a_remote_add_nothing_verifies_fails() -> None:
    add = "ADD https://github.com/krallin/tini/releases/download/v0.19.0/tini /tini\n"
    assert {"dockerfile-add-url", UNVERIFIED} <= rules("RUN chmod +x /tini", head=add)


@pytest.mark.parametrize(
    ("run", "head", "flagged"),
    [
        ("RUN wget -O - https://some.site | wc -l > /number", "", True),
        ("RUN dpkg --print-architecture | awk -F- '{ print $NF }' > /arch", "", True),
        (
            "RUN wget -O - https://some.site | wc -l > /number",
            'SHELL ["/bin/sh", "-o", "pipefail", "-c"]\n',
            True,
        ),
        (
            "RUN wget -O - https://some.site | wc -l > /number",
            'SHELL ["/bin/bash", "-o", "pipefail", "-c"]\n',
            False,
        ),
        (
            "RUN wget -O - https://some.site | wc -l > /number",
            'SHELL ["/usr/local/bin/zsh", "-eo", "pipefail", "-c"]\n',
            False,
        ),
        ("RUN set -euxo pipefail; dpkg --print-architecture | awk '{ print $1 }'", "", False),
        (f'RUN echo "{SHA}  f" | sha256sum -c -', "", False),
        ("RUN grep ' f$' SUMS | sha256sum -c -", "", False),
        ("RUN Get-Item x | Select-Object", 'SHELL ["pwsh", "-c"]\n', False),
        # "|" in case patterns, quoted or escaped operators: no pipe
        ('RUN case "$a" in amd64 | arm64) echo 64 ;; armhf | i386) echo 32 ;; esac', "", False),
        ("RUN tr '|' ' ' < /etc/a > /b && find / -exec ldd '{}' ';' -o \\( -name x \\)", "", False),
        ("RUN find /usr -exec ldd '{}' ';' | awk '{ print $1 }'", "", True),
    ],
)
def test_pipes_without_pipefail(run: str, head: str, flagged: bool) -> None:
    assert (PIPEFAIL in rules(run, head=head)) is flagged


def test_pipefail_of_one_stage_does_not_carry_to_the_next() -> None:
    text = (
        'FROM debian:12.5 AS a\nSHELL ["/bin/bash", "-o", "pipefail", "-c"]\n'
        "RUN wget -O - https://some.site | wc -l > /n\n"
        "FROM debian:12.5\nRUN wget -O - https://some.site | wc -l > /n\nUSER 1\n"
    )
    assert [(f.rule, f.line) for f in check_dockerfile(text)] == [(PIPEFAIL, 5)]


@pytest.mark.parametrize(
    ("run", "flagged"),
    [
        # a failed check stops the script only with "&&", "set -e", "|| exit" or "if !"
        (
            f'RUN curl -fsSLo x.tgz https://e.example/x.tgz; echo "{SHA}  x.tgz" | sha256sum -c -;'
            " tar xzf x.tgz",
            True,
        ),
        (
            f'RUN set -eux; curl -fsSLo x.tgz https://e.example/x.tgz; echo "{SHA}  x.tgz" '
            "| sha256sum -c -; tar xzf x.tgz",
            False,
        ),
        (
            f'RUN curl -fsSLo x.tgz https://e.example/x.tgz; echo "{SHA}  x.tgz" | sha256sum -c -'
            " || echo mismatch; tar xzf x.tgz",
            True,
        ),
        (
            f'RUN curl -fsSLo x.tgz https://e.example/x.tgz; echo "{SHA}  x.tgz" | sha256sum -c -'
            " || exit 1; tar xzf x.tgz",
            False,
        ),
        (
            f'RUN curl -fsSLo x.tgz https://e.example/x.tgz && if ! echo "{SHA}  x.tgz" | '
            "sha256sum -c -; then exit 1; fi && tar xzf x.tgz",
            False,
        ),
        # other spellings of a pinned check
        (
            f'RUN curl -fsSLo x.tgz https://e.example/x.tgz && sha256sum -c <<< "{SHA}  x.tgz" '
            "&& tar xzf x.tgz",
            False,
        ),
        (
            f'RUN curl -fsSLo x.tgz https://e.example/x.tgz && shasum -a 256 -c <<< "{SHA}  x.tgz"'
            " && tar xzf x.tgz",
            False,
        ),
        (
            'RUN curl -fsSLo x.tgz https://e.example/x.tgz && [ "$(sha256sum x.tgz | cut -d" " '
            '-f1)" = "$X_SHA256" ] && tar xzf x.tgz',
            False,
        ),
        (
            'RUN curl -fsSLo x.tgz https://e.example/x.tgz && [ "$(sha256sum x.tgz | cut -d" " '
            '-f1)" = "$(curl -fsSL https://e.example/x.tgz.sha256)" ] && tar xzf x.tgz',
            True,
        ),
        # the file name comes from a URL set earlier in the script
        (
            'RUN set -eux; url="https://e.example/a/rustup-init"; wget "$url"; '
            "chmod +x rustup-init; ./rustup-init -y",
            True,
        ),
    ],
)
def test_what_a_check_binds(run: str, flagged: bool) -> None:
    assert (UNVERIFIED in rules(run)) is flagged


@pytest.mark.parametrize(
    ("body", "flagged"),
    [
        ("RUN <<EOF\ncurl -fsSL https://e.example/i.sh | sh\nEOF", True),
        ("RUN bash -ex <<-EOT\n\tcurl -fsSLo f https://e.example/f && sh f\n\tEOT", True),
        (
            f"RUN <<EOF\nset -e\ncurl -fsSLo g https://e.example/g\n"
            f'echo "{SHA}  g" | sha256sum -c -\nsh g\nEOF',
            False,
        ),
        ("RUN python3 <<EOF\nprint('curl https://e.example/i.sh | sh')\nEOF", False),
    ],
)
def test_heredoc_scripts_are_read(body: str, flagged: bool) -> None:
    assert (UNVERIFIED in rules(body)) is flagged
