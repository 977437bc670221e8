"""The `email` tool's arguments checked while they are validated, so a malformed or injected
header is refused before the owner is ever asked to approve it: one-line headers, addresses,
dates."""

from __future__ import annotations

import re
from datetime import date
from email.utils import getaddresses
from typing import Annotated, Any

from pydantic import AfterValidator, Field

from augure.tools.arguments import one_line

ADDRESS = re.compile(r"[^@\s<>()\[\],;:\"]+@[^@\s<>()\[\],;:\"]+")
QUOTE_AWARE_COMMA = re.compile(r',(?=(?:[^"]*"[^"]*")*[^"]*$)')


def is_address(address: str) -> bool:
    return ADDRESS.fullmatch(address) is not None


def parse_addresses(value: str | list[str] | None) -> list[tuple[str, str]]:
    """(name, address) pairs from `a@b.c, Name <d@e.f>` or a list of such strings."""
    items = [value] if isinstance(value, str) else list(value or [])
    pairs: list[tuple[str, str]] = []
    for item in items:
        one_line(item)
        # Split on commas outside quotes, so `"Doe, J" <j@d.e>` stays one address.
        for raw in (part for part in QUOTE_AWARE_COMMA.split(item) if part.strip()):
            parsed = getaddresses([raw])
            if len(parsed) != 1 or not is_address(parsed[0][1]):
                raise ValueError(f"{raw.strip()!r} is not one valid email address")
            if "@" in parsed[0][0]:  # `"boss@corp.com" <evil@x.y>` would mislead the approver
                raise ValueError(f"{raw.strip()!r}: a display name may not look like an address")
            pairs.append(parsed[0])
    return pairs


def _addresses(value: str | list[str] | None) -> str | list[str] | None:
    parse_addresses(value)
    return value


def iso_date(value: str | None) -> str | None:
    if value is not None:
        try:
            date.fromisoformat(value)
        except ValueError:
            raise ValueError("must be a date as YYYY-MM-DD") from None
    return value


Addresses = Annotated[
    str | list[str] | None,
    AfterValidator(_addresses),
    Field(description="comma-separated addresses, or a list"),
]


def recipients(arguments: Any) -> list[str]:
    pairs = [*parse_addresses(arguments.to), *parse_addresses(arguments.cc)]
    return sorted({address.lower() for _, address in pairs + parse_addresses(arguments.bcc)})
