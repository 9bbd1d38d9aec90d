"""What a Dockerfile's ``RUN`` scripts do with downloads and pipes.

A download (``curl``, ``wget``) that is run, extracted or installed must be verified first:
a pinned checksum (``echo "<sha256>  f" | sha256sum -c -``), a checksum list that is signed
or comes with the repository, or ``gpg --verify`` of its signature. Piping one into a shell
or ``tar`` verifies nothing. A pipe without ``pipefail`` hides a failing producer, unless it
only carries a literal (``echo``) or ends in a checksum check, which fails on short input.
Scripts are read word by word (``shlex``); only variables the script itself sets are
expanded, names compare as written (or by base name when one side is relative).
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass, field
from pathlib import PurePosixPath

UNVERIFIED = "dockerfile-unverified-download"
PIPEFAIL = "dockerfile-pipefail"

_INTERPRETER = re.compile(r"^(?:(?:ba|z|da|k|mk)?sh|ash|python[\d.]*|perl|ruby|node|php|pwsh)$")
_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ash", "ksh", "mksh"})
_SUMS = re.compile(r"^(?:sha(?:1|224|256|384|512)sum|shasum|b2sum)$")
_HASH = re.compile(r"^(?:[0-9a-fA-F]{40,128}|\$\{?(\w+)\}?)$")
_WRAPPERS = frozenset({"sudo", "env", "exec", "nohup", "time", "command", "doas"})
_SUBSTITUTED = re.compile(
    r"(?:\b(?:(?:ba|z|da|k|mk)?sh|ash|python[\d.]*|perl|ruby|node|php|eval|source)\b"
    r"|(?:^|[\s;&|(])\.)\s+(?:-\S+\s+)*[\"']?(?:\$\(|<\(|`)\s*(?:sudo\s+)?(curl|wget)\b"
)
"""``sh -c "$(curl ...)"``, ``bash <(curl ...)``, ``eval "$(wget -qO- ...)"``."""
_TAINTED = re.compile(r"\b(\w+)=[\"']?(?:\$\(|`)[^)`]{0,400}?\b(?:curl|wget)\b")
"""A variable holding a download (``sha="$(curl .../x.sha256)"``): no pinned checksum."""
_NON_POSIX = ("pwsh", "powershell", "cmd")
_KEYWORDS = frozenset({"if", "then", "else", "elif", "do", "while", "until", "!", "{", "}"})
_SUMMED = re.compile(
    r"\$\(\s*(?:sha(?:1|224|256|384|512)sum|shasum(?:\s+-a\s+\d+)?|b2sum)\s+[\"']?([^\s\"'|)]+)"
)
"""``[ "$(sha256sum f | cut -d' ' -f1)" = "$SHA" ]``: the file whose digest is compared."""
_GPG_VALUE_OPTS = frozenset(
    {"--keyserver", "--homedir", "--keyring", "--trust-model", "--recv-keys", "--local-user"}
)


@dataclass
class Stage:
    """What earlier ``RUN`` and ``SHELL`` instructions of one stage left behind.

    Attributes:
        downloaded: every file a download wrote, by name as written.
        verified: the files a pinned checksum or a signature vouches for.
        lists: checksum lists written from literals (``echo "<sha>  f" > f.sha256``).
        pipefail: the stage's ``SHELL`` sets ``-o pipefail``.
        errexit: the stage's ``SHELL`` sets ``-e`` (a failed check stops the script).
        posix: the stage's ``SHELL`` is a POSIX shell (not PowerShell or cmd).
    """

    downloaded: set[str] = field(default_factory=set)
    verified: set[str] = field(default_factory=set)
    lists: dict[str, set[str]] = field(default_factory=dict)
    pipefail: bool = False
    errexit: bool = False
    posix: bool = True

    def fetched(self, path: str) -> None:
        """Record a download to ``path`` (it replaces whatever was verified there)."""
        norm = _norm(path)
        self.downloaded.add(norm)
        self.verified.discard(norm)

    def is_verified(self, path: str) -> bool:
        """True when a checksum or signature vouches for the file at ``path``."""
        return _known(_norm(path), self.verified)


@dataclass
class _Cmd:
    words: list[str]
    stdout: str | None = None
    stdin: str | None = None  # a here-string (<<< "...")


def set_shell(stage: Stage, value: str) -> None:
    """Apply a ``SHELL ["/bin/bash", "-o", "pipefail", "-c"]`` instruction to ``stage``."""
    try:
        args = [str(a) for a in json.loads(value)]
    except (ValueError, TypeError):
        return
    name = PurePosixPath(args[0]).name.lower() if args else ""
    stage.posix = not name.startswith(_NON_POSIX)
    flagged = any(a.startswith("-") and not a.startswith("--") and "o" in a for a in args[1:])
    stage.errexit = any(a.startswith("-") and not a.startswith("--") and "e" in a for a in args[1:])
    stage.pipefail = name in {"bash", "zsh", "ash"} and flagged and "pipefail" in args


def check_run(value: str, stage: Stage) -> list[tuple[str, str]]:
    """The problems of one ``RUN`` (shell or exec form), as ``(rule, message)`` pairs.

    ``stage`` is updated with what the script downloads and verifies, for later ``RUN``s.
    """
    if not stage.posix:
        return []
    script = re.sub(r"^(?:--\S+\s+)*", "", value.strip())  # RUN --mount=... --network=...
    problems: list[tuple[str, str]] = []
    if script.startswith("["):
        try:
            argv = [str(a) for a in json.loads(script)]
        except (ValueError, TypeError):
            argv = []
        if argv:
            _Script(stage, problems, pipefail=False, errexit=True).pipeline([_Cmd(argv)])
        return _unique(problems)
    _Script(stage, problems, pipefail=stage.pipefail, errexit=stage.errexit).run(script)
    return _unique(problems)


def _unique(problems: list[tuple[str, str]]) -> list[tuple[str, str]]:
    return list(dict.fromkeys(problems))


class _Script:
    """One shell script's walk, command by command, pipeline by pipeline."""

    def __init__(
        self, stage: Stage, problems: list[tuple[str, str]], *, pipefail: bool, errexit: bool
    ) -> None:
        self.stage = stage
        self.problems = problems
        self.pipefail = pipefail
        self.errexit = errexit
        self.tainted: set[str] = set()
        self.values: dict[str, str] = {}  # url='https://...' set earlier in the script

    def run(self, script: str) -> None:
        for match in _SUBSTITUTED.finditer(script):
            self.flag(f"the output of {match.group(1)} is run as a script: nothing verifies it")
        self.tainted |= {m.group(1) for m in _TAINTED.finditer(script)}
        pipelines = _pipelines(script)
        for i, (pipeline, separator) in enumerate(pipelines):
            # a check binds only when its failure stops the script: "&&", "set -e", being
            # the script's last command (the RUN fails), "|| exit 1", "if ! ...; then exit"
            after = [_name(_unwrapped(p[0].words)) for p, _ in pipelines[i + 1 : i + 3]]
            stops = "exit" in after or "false" in after
            negated = pipeline[0].words[:2] == ["if", "!"]
            binding = (
                self.errexit
                or separator in {"&&", ""}
                or (separator == "||" and stops)
                or (negated and stops)
            )
            self.pipeline(pipeline, binding=binding)

    def flag(self, why: str) -> None:
        self.problems.append(
            (
                UNVERIFIED,
                f"{why}; download to a file, check it against a pinned sha256 "
                '(echo "<sha256>  file" | sha256sum -c -) or its gpg signature, then use it',
            )
        )

    def pipeline(self, cmds: list[_Cmd], *, binding: bool = True) -> None:
        if len(cmds) == 1 and all(re.match(r"^\w+=", w) for w in cmds[0].words):
            for word in cmds[0].words:  # url='https://...'; sha256='...'
                name, _, value = word.partition("=")
                self.values[name] = value
        cmds = [
            _Cmd([_substituted(w, self.values) for w in words], c.stdout, c.stdin)
            for c in cmds
            if (words := _unwrapped(c.words))
        ]
        if not cmds:
            return
        before = set(self.stage.verified)
        self.walk(cmds)
        if not binding:  # "check; use": the use runs whatever the check said
            self.stage.verified &= before

    def walk(self, cmds: list[_Cmd]) -> None:
        if len(cmds) > 1:
            self.pipes(cmds)
        streaming = False
        for i, cmd in enumerate(cmds):
            name = _name(cmd.words)
            if streaming and i > 0:
                self.streamed(cmd, name)
                continue
            out = _download(cmd) if name in {"curl", "wget"} else None
            if out is None:
                self.command(cmd, cmds[i - 1] if i else None)
                continue
            for path in out:
                if path == "-":
                    streaming = True
                else:
                    self.downloaded(path)
        if streaming and cmds[-1].stdout:
            self.downloaded(cmds[-1].stdout)

    def pipes(self, cmds: list[_Cmd]) -> None:
        if self.pipefail:
            return
        if all(_name(c.words) in {"echo", "printf"} for c in cmds[:-1]):
            return  # a literal cannot fail
        if _is_sums_check(cmds[-1].words):
            return  # short or empty input fails the check itself
        shown = " | ".join(_name(c.words) for c in cmds)
        self.problems.append(
            (
                PIPEFAIL,
                f"pipe '{shown}' without pipefail: a failing {_name(cmds[0].words)} is "
                'hidden; add SHELL ["/bin/bash", "-o", "pipefail", "-c"] or "set -o pipefail"',
            )
        )

    def streamed(self, cmd: _Cmd, name: str) -> None:
        """A command reading a download from the pipe."""
        if name == "tee":
            for path in _operands(cmd.words[1:]):
                self.downloaded(path)
        elif _INTERPRETER.match(name):
            self.flag(f"a download is piped into {name}")
        elif name in {"tar", "bsdtar"} and _tar_file(cmd.words) in {None, "-"}:
            self.flag(f"a download is piped into {name} and extracted")

    def downloaded(self, path: str) -> None:
        self.stage.fetched(path)

    def command(self, cmd: _Cmd, producer: _Cmd | None) -> None:
        words = cmd.words
        name = _name(words)
        args = words[1:]
        if name == "set":
            short = [a for a in args if re.fullmatch(r"[-+][a-zA-Z]+", a)]
            if "pipefail" in args:
                self.pipefail = True
            if "errexit" in args or any(a.startswith("-") and "e" in a for a in short):
                self.errexit = True
            if any(a.startswith("+") and "e" in a for a in short):
                self.errexit = False
            return
        if name in {"[", "[[", "test"}:
            self.compared(args)
            return
        if name in {"echo", "printf"} and cmd.stdout:
            self.stage.lists[_norm(cmd.stdout)] = self.pinned(_literal(words))
            return
        if _is_sums_check(words):
            self.sums_check(args, producer, cmd.stdin)
            return
        if name in {"gpg", "gpg2", "gpgv"}:
            self.gpg(name, args)
            return
        if name in {"cosign", "minisign"}:
            files = _operands(args)
            if files and ("verify-blob" in args or "-V" in args or "-Vm" in args):
                self.stage.verified.add(_norm(files[-1]))
            return
        if name in {"mv", "cp"}:
            self.copied(args)
            return
        if _INTERPRETER.match(name):
            if name in _SHELLS and "-c" in args:
                body = args[args.index("-c") + 1 : args.index("-c") + 2]
                if body:
                    self.run(body[0])
                return
            files = _operands(args)
            if files:
                self.use(files[0], f"{name} runs")
            return
        if "/" in words[0]:
            self.use(words[0], "it is run")
        for path, how in _uses(name, args):
            self.use(path, how)

    def use(self, path: str, how: str) -> None:
        norm = _norm(path)
        if _known(norm, self.stage.downloaded) and not _known(norm, self.stage.verified):
            self.flag(f"downloaded file {path} is used ({how}) but nothing verified it")

    def copied(self, args: list[str]) -> None:
        files = _operands(args)
        if len(files) < 2:
            return
        dest = _norm(files[-1])
        for src in map(_norm, files[:-1]):
            if not _known(src, self.stage.downloaded):
                continue
            for target in (dest, f"{dest.rstrip('/')}/{PurePosixPath(src).name}"):
                self.stage.downloaded.add(target)
                if _known(src, self.stage.verified):
                    self.stage.verified.add(target)

    def pinned(self, text: str) -> set[str]:
        """The files of ``<hash>  <file>`` lines whose hash is pinned (not downloaded)."""
        names = set()
        for line in text.replace("\\n", "\n").splitlines():
            fields = line.split()
            if len(fields) < 2 or not (match := _HASH.match(fields[0])):
                continue
            if match.group(1) and match.group(1) in self.tainted:
                continue
            names.add(_norm(fields[1].lstrip("*")))
        return names

    def compared(self, args: list[str]) -> None:
        """``[ "$(sha256sum f | cut ...)" = "$SHA" ]`` verifies ``f`` against a pinned hash."""
        if not any(a in {"=", "=="} for a in args):
            return
        pinned = any((m := _HASH.match(a)) and m.group(1) not in self.tainted for a in args)
        for arg in args:
            if pinned and (match := _SUMMED.search(arg)):
                self.stage.verified.add(_norm(match.group(1)))

    def sums_check(self, args: list[str], producer: _Cmd | None, stdin: str | None) -> None:
        lists = [a for a in _operands(_without(args, {"-a", "--algorithm"})) if a != "-"]
        if not lists and stdin is not None:
            self.stage.verified |= self.pinned(stdin)
            return
        if not lists and producer is not None:
            self.sums_from(producer)
            return
        for listed in map(_norm, lists):
            if listed in self.stage.lists:
                self.stage.verified |= self.stage.lists[listed]
            elif self.trusted(listed):
                self.stage.verified |= self.stage.downloaded - {listed}

    def sums_from(self, producer: _Cmd) -> None:
        name = _name(producer.words)
        if name in {"echo", "printf"}:
            self.stage.verified |= self.pinned(_literal(producer.words))
            return
        if name not in {"grep", "cat", "awk", "sed", "head", "tail"}:
            return
        operands = _operands(producer.words[1:])
        if not operands or not self.trusted(_norm(operands[-1])):
            return
        listed = _norm(operands[-1])
        if listed in self.stage.lists:
            self.stage.verified |= self.stage.lists[listed]
            return
        others = self.stage.downloaded - {listed}
        if name == "grep":  # only the lines it picks: the files its pattern names
            pattern = " ".join(operands[:-1])
            others = {d for d in others if PurePosixPath(d).name in pattern}
        self.stage.verified |= others

    def trusted(self, listed: str) -> bool:
        """A checksum list is trusted when signed, or not downloaded (the repository's)."""
        return _known(listed, self.stage.verified) or not _known(listed, self.stage.downloaded)

    def gpg(self, name: str, args: list[str]) -> None:
        files = _gpg_operands(args)
        output = _option_value(args, ("-o", "--output"))
        if any(a in {"--decrypt", "-d"} for a in args) and output:
            self.stage.fetched(output)  # what the signature vouches for, nothing more
            self.stage.verified.add(_norm(output))
        elif name == "gpgv" or "--verify" in args:
            if len(files) >= 2:  # the signature and the data it signs
                self.stage.verified |= {_norm(f) for f in files}
            elif files:
                sig = _norm(files[0])
                self.stage.verified.add(re.sub(r"\.(?:asc|sig|gpg|sign)$", "", sig))
                self.stage.verified.add(sig)  # a clearsigned file vouches for itself


_OPS = "();<>|&"
_QUOTED_OPS = re.compile(r"(?<!\S)(['\"])([();<>|&]+)\1(?!\S)|\\([();<>|&])")
_HIDDEN = {c: chr(0xE000 + i) for i, c in enumerate(_OPS)}
_SHOWN = str.maketrans({v: k for k, v in _HIDDEN.items()})


def _hide(ops: str) -> str:
    return "".join(_HIDDEN[c] for c in ops)


def _pipelines(script: str) -> list[tuple[list[_Cmd], str]]:
    """The script's pipelines in order, each a list of commands and the separator after it
    (``&&``, ``||``, ``;``...; ``""`` at the end)."""
    text = re.sub(r"\\\r?\n", " ", script).replace("\n", " ; ")
    # quoted or escaped operators are words ("find ... -exec x '{}' ';'", "\\( -name a \\)"):
    # hidden from the lexer as private-use characters, put back in the words after
    text = _QUOTED_OPS.sub(lambda m: _hide(m.group(2) or m.group(3)), text)
    lex = shlex.shlex(text, posix=True, punctuation_chars=True)
    lex.whitespace_split = True
    lex.commenters = ""
    try:
        tokens = list(lex)
    except ValueError:  # unbalanced quotes: read the words as they come
        tokens = text.split()
    pipelines: list[tuple[list[_Cmd], str]] = []
    current: list[_Cmd] = [_Cmd([])]
    redirect: str | None = None
    cases, pattern = 0, False  # inside "case x in a | b)": "|" separates patterns
    for token in tokens:
        if pattern:
            if token == ")":
                pattern = False
            elif token == "esac":
                cases, pattern = cases - 1, False
            continue
        if token == "in" and current[0].words[:1] == ["case"]:
            cases, pattern = cases + 1, True
            current[-1].words.append(token)
            continue
        if token == "esac" and cases:
            cases -= 1
        if cases and token in {";;", ";&", ";;&"}:
            pattern = True
        if redirect is not None:
            if ">" in redirect and "&" not in redirect[-1:]:
                current[-1].stdout = token
            elif redirect == "<<<":
                current[-1].stdin = token
            redirect = None
            continue
        if token and all(c in _OPS for c in token):
            if ("<" in token or ">" in token) and not token.endswith("("):
                redirect = token
            elif token in {"|", "|&"}:
                current.append(_Cmd([]))
            else:
                pipelines.append((current, token))
                current = [_Cmd([])]
            continue
        current[-1].words.append(token.translate(_SHOWN))
    pipelines.append((current, ""))
    return [(p, sep) for p, sep in pipelines if any(c.words for c in p)]


def _unwrapped(words: list[str]) -> list[str]:
    """The command behind ``VAR=x``, ``sudo -u u``, ``env -i``, ``exec`` and the like."""
    i = 0
    while i < len(words):
        word = words[i]
        if re.match(r"^\w+=", word) or word in _KEYWORDS:
            i += 1
        elif PurePosixPath(word).name in _WRAPPERS:
            i += 1
            while i < len(words) and words[i].startswith("-"):
                i += 2 if words[i] in {"-u", "-g", "-C", "-p"} else 1
        else:
            break
    return words[i:]


def _name(words: list[str]) -> str:
    return PurePosixPath(words[0]).name if words else ""


def _operands(args: list[str]) -> list[str]:
    return [a for a in args if a == "-" or not a.startswith("-")]


def _substituted(word: str, values: dict[str, str]) -> str:
    """``word`` with ``$name``/``${name}`` of plain script assignments filled in."""

    def one(match: re.Match[str]) -> str:
        return values.get(match.group(1) or match.group(2), match.group(0))

    return re.sub(r"\$\{(\w+)\}|\$(\w+)", one, word)


def _without(args: list[str], options: set[str]) -> list[str]:
    """``args`` less each of ``options`` and the value after it."""
    out, skip = [], False
    for arg in args:
        if skip:
            skip = False
        elif arg in options:
            skip = True
        else:
            out.append(arg)
    return out


def _option_value(args: list[str], names: tuple[str, ...]) -> str | None:
    for i, arg in enumerate(args):
        if arg in names and i + 1 < len(args):
            return args[i + 1]
        for name in names:
            if name.startswith("--") and arg.startswith(f"{name}="):
                return arg.split("=", 1)[1]
    return None


def _gpg_operands(args: list[str]) -> list[str]:
    out, skip = [], False
    for arg in args:
        if skip:
            skip = False
        elif arg in _GPG_VALUE_OPTS or arg in {"-o", "--output", "-u"}:
            skip = True
        elif not arg.startswith("-"):
            out.append(arg)
    return out


def _literal(words: list[str]) -> str:
    """What ``echo``/``printf`` prints (``%s`` filled in order)."""
    args = [a for a in words[1:] if not re.fullmatch(r"-[neE]+", a)]
    if _name(words) == "printf" and args:
        fmt, rest = args[0], iter(args[1:])
        return re.sub(r"%s", lambda _m: next(rest, ""), fmt)
    return " ".join(args)


def _is_sums_check(words: list[str]) -> bool:
    if not words or not _SUMS.match(_name(words)):
        return False
    return any(
        a == "--check" or (a.startswith("-") and not a.startswith("--") and "c" in a)
        for a in words[1:]
    )


def _download(cmd: _Cmd) -> list[str] | None:
    """Where a ``curl``/``wget`` writes (``-`` for the pipe); ``None``: not a download."""
    name, args = _name(cmd.words), cmd.words[1:]
    urls = [a for a in args if "://" in a] or [a for a in _operands(args) if a.startswith("$")]
    if not urls:
        return None  # "command -v curl", "curl --version": nothing is fetched
    outs: list[str] = []
    prefix = ""
    i = 0
    while i < len(args):
        arg, nxt = args[i], args[i + 1] if i + 1 < len(args) else ""
        long = name == "curl" and arg in {"--output", "--output-dir"}
        if arg.startswith("--output-document") or arg in {"--directory-prefix"} or long:
            value = arg.split("=", 1)[1] if "=" in arg else nxt
            i += 1 if "=" in arg else 2
            if arg in {"--output-dir", "--directory-prefix"}:
                prefix = value.rstrip("/") + "/"
            else:
                outs.append(value)
            continue
        if arg.startswith("--directory-prefix="):
            prefix = arg.split("=", 1)[1].rstrip("/") + "/"
        elif arg in {"--remote-name", "--remote-name-all"}:
            outs.extend(_basename(u) for u in urls)
        elif arg.startswith("-") and not arg.startswith("--") and len(arg) > 1:
            letter = "o" if name == "curl" else "O"
            if letter in arg[1:]:
                rest = arg[arg.index(letter, 1) + 1 :]
                outs.append(rest or nxt)
                i += 1 if rest else 2
                continue
            if name == "curl" and "O" in arg[1:]:
                outs.extend(_basename(u) for u in urls)
            if name == "wget" and "P" in arg[1:]:
                rest = arg[arg.index("P", 1) + 1 :]
                prefix = (rest or nxt).rstrip("/") + "/"
                i += 1 if rest else 2
                continue
        i += 1
    if "--spider" in args or "-I" in args or "--head" in args:
        return None
    if not outs:
        if name == "wget":
            outs = [_basename(u) for u in urls]
        else:
            outs = [cmd.stdout] if cmd.stdout else ["-"]
    return [o if o == "-" or o.startswith("/") else prefix + o for o in outs if o]


def _basename(url: str) -> str:
    return url.split("?", 1)[0].rstrip("/").rsplit("/", 1)[-1]


def _tar_file(words: list[str]) -> str | None:
    """The archive ``tar`` reads (``None``: standard input); ``""`` when it does not extract."""
    args = words[1:]
    mode = args[0] if args and not args[0].startswith("-") else ""
    extracting = "x" in mode or any(
        a in {"--extract", "--get"} or (a.startswith("-") and not a.startswith("--") and "x" in a)
        for a in args
    )
    if not extracting:
        return ""
    for i, arg in enumerate(args):
        if arg.startswith("--file="):
            return arg.split("=", 1)[1]
        short = (arg == mode or arg.startswith("-")) and not arg.startswith("--")
        if arg == "--file" or (short and arg.endswith("f")):
            return args[i + 1] if i + 1 < len(args) else None
    return None


def _uses(name: str, args: list[str]) -> list[tuple[str, str]]:
    """The files a command runs, extracts or installs, with how."""
    files = _operands(args)
    if name in {"tar", "bsdtar"}:
        archive = _tar_file([name, *args])
        return [(archive, "extracted")] if archive else []
    if name == "chmod" and files and re.search(r"\+\w*x|^[0-7]*[1357][0-7]{0,2}$", files[0]):
        return [(f, "made executable") for f in files[1:]]
    if name in {"unzip", "7z", "dpkg", "rpm", "install", "apk", "gunzip", "xz", "unxz"}:
        return [(f, "unpacked or installed") for f in files]
    if name in {"apt-get", "apt", "pip", "pip3", "gem", "npm"}:
        return [(f, "installed") for f in files if "/" in f or "." in f]
    if name == "java" and "-jar" in args:
        return [(f, "run") for f in files[:1]]
    return []


def _norm(path: str) -> str:
    path = re.sub(r"/+", "/", path.strip())
    while path.startswith("./"):
        path = path[2:]
    return path


def _known(path: str, names: set[str]) -> bool:
    if path in names:
        return True
    base = PurePosixPath(path).name
    return any(PurePosixPath(n).name == base and ("/" not in n or "/" not in path) for n in names)
