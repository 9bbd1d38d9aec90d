"""Reading a Terraform directory and rendering its references into plausible values.

Nothing is applied and nothing is asked of AWS: ``.tf`` files are parsed with
python-hcl2 and references such as ``aws_dynamodb_table.execucoes.arn`` or
``data.aws_rds_cluster.erp.cluster_resource_id`` are replaced by synthetic values
in the real ARN formats (account ``111122223333``). That is enough for the IAM rules
and for parliament, which both judge ARN *shapes*: a cluster ARN where a ``dbuser``
ARN belongs stays visibly wrong after rendering.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from backend.exceptions import PathError, ValidationError

ACCOUNT = "111122223333"
DEFAULT_REGION = "us-east-1"
_REF = re.compile(r"\$\{\s*([A-Za-z_][\w-]*(?:\.[\w-]+|\[[^\]]*\])+)\s*\}")
_INDEX = re.compile(r"\[[^\]]*\]")


@dataclass
class Block:
    """One ``resource`` or ``data`` block.

    Attributes:
        kind: ``resource`` or ``data``.
        type: e.g. ``aws_iam_role``.
        name: the block's label, e.g. ``agente_consulta``.
        body: the parsed attributes and nested blocks.
        file: the ``.tf`` file that defines it.
    """

    kind: str
    type: str
    name: str
    body: dict[str, Any]
    file: str

    @property
    def address(self) -> str:
        """Terraform address: ``aws_iam_role.x`` or ``data.aws_iam_policy_document.x``."""
        prefix = "data." if self.kind == "data" else ""
        return f"{prefix}{self.type}.{self.name}"


@dataclass
class TerraformConfig:
    """All top-level blocks of one directory (not descending into modules)."""

    directory: Path
    blocks: dict[str, Block] = field(default_factory=dict)
    variables: dict[str, dict[str, Any]] = field(default_factory=dict)
    locals: dict[str, Any] = field(default_factory=dict)
    providers: list[dict[str, Any]] = field(default_factory=list)
    modules: dict[str, dict[str, Any]] = field(default_factory=dict)

    def of_type(self, type_: str, kind: str = "resource") -> list[Block]:
        """Blocks of one type, in address order."""
        return sorted(
            (b for b in self.blocks.values() if b.type == type_ and b.kind == kind),
            key=lambda b: b.name,
        )


def parse_hcl(text: str, origin: str) -> dict[str, Any]:
    """Parse HCL text into python-hcl2's dict form, with string quotes stripped.

    With quotes stripped, ``"${x}"`` and the bare expression ``x`` read the same,
    which is also what they mean in HCL.

    Raises:
        ValidationError: the text is not valid HCL.
    """
    import hcl2
    from hcl2.utils import SerializationOptions

    options = SerializationOptions(
        strip_string_quotes=True,
        with_comments=False,
        explicit_blocks=False,
        preserve_heredocs=False,
    )
    try:
        return dict(hcl2.loads(text, serialization_options=options))
    except Exception as exc:  # lark raises several unrelated exception classes
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ValidationError(f"{origin}: not valid HCL ({first})", file=origin) from exc


def load_directory(directory: Path) -> TerraformConfig:
    """Parse every ``*.tf`` file directly inside ``directory``.

    Raises:
        PathError: the directory holds no ``.tf`` file or one cannot be read.
        ValidationError: a file is not valid HCL.
    """
    files = sorted(directory.glob("*.tf"))
    if not files:
        raise PathError(f"{directory}: no .tf files found", path=str(directory))
    config = TerraformConfig(directory=directory)
    for path in files:
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise PathError(f"cannot read {path}: {exc}", path=str(path)) from exc
        tree = parse_hcl(text, str(path))
        for kind in ("resource", "data"):
            for entry in tree.get(kind, []):
                for type_, named in entry.items():
                    for name, body in named.items():
                        block = Block(kind, type_, name, body, str(path))
                        config.blocks[block.address] = block
        for entry in tree.get("variable", []):
            config.variables.update(entry)
        for entry in tree.get("locals", []):
            config.locals.update(entry)
        for entry in tree.get("module", []):
            config.modules.update(entry)
        for entry in tree.get("provider", []):
            config.providers.extend(body for name, body in entry.items() if name == "aws")
    return config


class Renderer:
    """Replace ``${reference}`` occurrences by synthetic values of the right shape.

    Attributes:
        unresolved: expressions that were left as they were.
    """

    def __init__(self, config: TerraformConfig) -> None:
        self.config = config
        self.unresolved: list[str] = []
        # Iteration values while one for_each/count/dynamic element is rendered:
        # "each.key", "each.value", "count.index", "statement.value"...
        self.scope: dict[str, str] = {}
        self._depth = 0
        self.region = DEFAULT_REGION
        for provider in config.providers:
            region = self.render(provider.get("region", ""))
            if isinstance(region, str) and re.fullmatch(r"[a-z]{2}(-[a-z]+)+-\d", region):
                self.region = region

    def render(self, value: Any) -> Any:
        """Render strings inside any nested list/dict structure."""
        if isinstance(value, str):
            return self._render_string(value)
        if isinstance(value, list):
            return [self.render(v) for v in value]
        if isinstance(value, dict):
            return {k: self.render(v) for k, v in value.items()}
        return value

    def _render_string(self, text: str) -> str:
        if self._depth > 10:  # a local referring to itself through others
            return text

        def replace(match: re.Match[str]) -> str:
            self._depth += 1
            try:
                value = self.reference(match.group(1))
            finally:
                self._depth -= 1
            if value is None:
                if match.group(0) not in self.unresolved:
                    self.unresolved.append(match.group(0))
                return match.group(0)
            return value

        return _REF.sub(replace, text)

    def collection(self, value: Any) -> list[tuple[str, str]] | None:
        """The ``(key, value)`` pairs of a ``for_each``/``count`` value, if static.

        Literal lists, sets, maps, ``toset([...])`` and variables/locals with such a
        default are evaluated; anything else (a resource attribute, a function of
        one) is ``None``: the caller reports the block as unevaluable.
        """
        if isinstance(value, bool):
            return None
        if isinstance(value, int):
            return [(str(i), str(i)) for i in range(value)]
        if isinstance(value, list):
            items = [self.render(v) for v in value]
            if all(isinstance(v, (str, int, float)) for v in items):
                return [(str(v), str(v)) for v in items]
            return None
        if isinstance(value, dict):
            pairs = [(str(k), self.render(v)) for k, v in value.items()]
            if all(isinstance(v, (str, int, float)) for _, v in pairs):
                return [(k, str(v)) for k, v in pairs]
            return None
        if not isinstance(value, str):
            return None
        match = re.fullmatch(
            r"\$\{\s*(?:toset|tolist)?\((.*)\)\s*\}|\$\{\s*(\[.*\])\s*\}", value, re.S
        )
        if match:
            inner = match.group(1) or match.group(2)
            try:
                return self.collection(parse_hcl(f"__v = {inner}\n", "for_each").get("__v"))
            except ValidationError:
                return None
        ref = re.fullmatch(r"\$\{\s*(var|local)\.([\w-]+)\s*\}", value)
        if ref and self._depth < 10:
            found = (
                self.config.variables.get(ref.group(2), {}).get("default")
                if ref.group(1) == "var"
                else self.config.locals.get(ref.group(2))
            )
            self._depth += 1
            try:
                return None if found is None else self.collection(found)
            finally:
                self._depth -= 1
        if re.fullmatch(r"\d+", value):
            return self.collection(int(value))
        return None

    def _name(self, block: Block, *keys: str) -> str:
        for key in keys:
            value = block.body.get(key)
            if isinstance(value, str):
                return str(self.render(value))
        return block.name

    def reference(self, expression: str) -> str | None:
        """Render one traversal such as ``local.ledger_arn`` or ``aws_x.y.arn``."""
        parts = _INDEX.sub("", expression).split(".")
        region, account = self.region, ACCOUNT
        head = parts[0]
        if ".".join(parts) in self.scope:
            return self.scope[".".join(parts)]
        if head == "var" and len(parts) >= 2:
            default = self.config.variables.get(parts[1], {}).get("default")
            return str(self.render(default)) if isinstance(default, (str, int, float)) else None
        if head == "local" and len(parts) >= 2:
            value = self.config.locals.get(parts[1])
            return str(self.render(value)) if isinstance(value, (str, int, float)) else None
        if head == "data" and len(parts) >= 4:
            type_, name, attr = parts[1], parts[2], parts[3]
            if type_ == "aws_caller_identity" and attr == "account_id":
                return account
            if type_ == "aws_region" and attr in ("name", "region", "id"):
                return region
            if type_ == "aws_partition":
                return {"partition": "aws", "dns_suffix": "amazonaws.com"}.get(attr)
            block = self.config.blocks.get(f"data.{type_}.{name}")
            if type_ == "aws_rds_cluster" and block is not None:
                if attr == "cluster_resource_id":
                    return f"cluster-{name.upper().replace('_', '')}0RESOURCEID"
                if attr == "arn":
                    ident = self._name(block, "cluster_identifier")
                    return f"arn:aws:rds:{region}:{account}:cluster:{ident}"
            return None
        if len(parts) >= 3:
            block = self.config.blocks.get(f"{parts[0]}.{parts[1]}")
            if block is not None:
                return self._resource_attr(block, parts[2], region, account)
        return None

    def _resource_attr(self, block: Block, attr: str, region: str, account: str) -> str | None:
        name = self._name(block, "name", "function_name")
        arns = {
            "aws_dynamodb_table": f"arn:aws:dynamodb:{region}:{account}:table/{name}",
            "aws_secretsmanager_secret": (
                f"arn:aws:secretsmanager:{region}:{account}:secret:{name}-AbCdEf"
            ),
            "aws_kms_key": (
                f"arn:aws:kms:{region}:{account}:key/1234abcd-12ab-34cd-56ef-1234567890ab"
            ),
            "aws_kms_alias": f"arn:aws:kms:{region}:{account}:{name}",
            "aws_cloudwatch_log_group": f"arn:aws:logs:{region}:{account}:log-group:{name}",
            "aws_iam_role": f"arn:aws:iam::{account}:role/{name}",
            "aws_iam_policy": f"arn:aws:iam::{account}:policy/{name}",
            "aws_sns_topic": f"arn:aws:sns:{region}:{account}:{name}",
            "aws_sqs_queue": f"arn:aws:sqs:{region}:{account}:{name}",
            "aws_lambda_function": f"arn:aws:lambda:{region}:{account}:function:{name}",
            "aws_s3_bucket": f"arn:aws:s3:::{self._name(block, 'bucket')}",
        }
        arn = arns.get(block.type)
        if attr == "arn":
            return arn
        if attr in ("name", "function_name", "bucket"):
            return name
        if attr == "id":
            # Secrets' id is their ARN; roles', tables' and most others' is the name.
            return arn if block.type == "aws_secretsmanager_secret" else name
        if attr == "key_id" and block.type == "aws_kms_key":
            return "1234abcd-12ab-34cd-56ef-1234567890ab"
        return None
