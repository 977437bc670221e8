"""The outside sources an answer drew on, named for the owner.

A turn's `Reading` knows whether it read outside content and from which tools (its
provenance); the owner knows places, not tools. So each source is named by the hosts of the
addresses its calls were given (`news.example`), or by what it is (`mail`, `a web search`);
a forwarded message is named by its sender already. The channel shows them: links with their
addresses, no link preview, and a last line naming them (docs/security.md, "The reply is a
way out").
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

from augure.common.caller import Reading
from augure.common.ports import Sources

# What a source is, where the calls that read it name no address.
KINDS = {
    "http": "a web page",
    "browser": "a web page",
    "web_search": "a web search",
    "email": "mail",
    "calendar": "a calendar invitation",
    "github": "GitHub",
    "sandbox_exec": "the network, from the sandbox",
    "opencode": "the network, from the sandbox",
}
RELAYED = ": "  # "batch: http, email" (augure.tools.result.relayed_source)


def sources_of(reading: Reading | None, messages: list[dict[str, Any]]) -> Sources:
    """The sources of a unit's answer, from its reading and the calls of its conversation."""
    if reading is None or not reading.tainted:
        return Sources()
    hosts = _hosts(messages)
    read = dict.fromkeys(source for _, source in reading.outside)
    names: dict[str, None] = {}
    for source in [*read, *sorted(reading.sources - read.keys())]:
        tool, relayed, parts = source.partition(RELAYED)
        found = hosts.get(tool) or hosts.get(source)
        if found:
            names.update(dict.fromkeys(found))
        elif relayed:
            names.update(dict.fromkeys(KINDS.get(part, part) for part in parts.split(", ")))
        else:
            names[KINDS.get(source, source)] = None
    return Sources(tuple(names))


def _hosts(messages: list[dict[str, Any]]) -> dict[str, list[str]]:
    """Each tool's calls in the conversation, by the hosts of the addresses they were given
    (a relaying tool's too: a batch's sub-calls are in its arguments)."""
    hosts: dict[str, list[str]] = {}
    for message in messages:
        for call in message.get("tool_calls") or []:
            function = call.get("function") or {}
            try:
                arguments = json.loads(function.get("arguments") or "{}")
            except ValueError:
                continue
            for url in _urls(arguments):
                host = urlsplit(url).hostname
                seen = hosts.setdefault(str(function.get("name")), [])
                if host and host not in seen:
                    seen.append(host)
    return hosts


def _urls(value: Any) -> Iterator[str]:
    if isinstance(value, dict):
        for key, inner in value.items():
            if key == "url" and isinstance(inner, str):
                yield inner
            else:
                yield from _urls(inner)
    elif isinstance(value, list):
        for inner in value:
            yield from _urls(inner)
