"""The ERP's field values as annotated types, one definition each.

A seed line (:mod:`backend.erp.seed`) and a tool's arguments
(:mod:`backend.tools.specs`) write the same ERP columns, so they validate them with the
same types: an address, phone or e-mail a tool may set is one a seed file may load.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import StringConstraints

EntityId = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")]
"""A pedido's or cliente's id."""

Endereco = Annotated[str, StringConstraints(min_length=1, max_length=300)]
Telefone = Annotated[str, StringConstraints(pattern=r"^\+?[0-9 ()-]{6,25}$")]
Email = Annotated[str, StringConstraints(pattern=r"^[^@\s]+@[^@\s]+\.[^@\s]+$", max_length=254)]
