"""Each tool of an MCP server as a `Tool`: named `mcp__SERVER__TOOL`, described and shaped by
the server, validated against its JSON schema, and run through the same executor."""

from __future__ import annotations

import base64
import json
import logging
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict

from augure.mcp.client import McpServer, OversizedAnswer, ServerDown
from augure.tools.arguments import strings_in
from augure.tools.base import Approval, Egress, RunContext, Running, Tool
from augure.tools.registry import ToolRegistry, enabled
from augure.tools.result import Artifact, ErrorKind, ToolError, ToolResult

if TYPE_CHECKING:
    from mcp_types import CallToolResult
    from mcp_types import Tool as ListedTool

    from augure.config.settings import Config


log = logging.getLogger(__name__)
# What the model API accepts as a function name.
TOOL_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")


class Arguments(BaseModel):
    """Whatever the server's schema accepted, kept as given."""

    model_config = ConfigDict(extra="allow", frozen=True)


def tool_name(server: str, tool: str) -> str:
    return f"mcp__{server}__{tool}"


@dataclass
class McpTool(Tool):
    schema: dict[str, Any] = field(default_factory=dict)

    @property
    def parameters(self) -> dict[str, Any]:
        return self.schema

    def validate(self, raw: dict[str, Any]) -> BaseModel | str:
        import jsonschema

        try:
            jsonschema.validate(raw, self.schema)
        except jsonschema.ValidationError as exc:
            where = ".".join(str(p) for p in exc.absolute_path) or "arguments"
            return f"invalid arguments for {self.name}: {where}: {exc.message}"
        except jsonschema.SchemaError as exc:
            return f"{self.name} has an invalid input schema: {exc.message}"
        return Arguments.model_validate(raw)

    async def invoke(self, arguments: BaseModel, ctx: RunContext) -> ToolResult:
        try:
            result = await self.function(ctx, arguments=dict(arguments.model_extra or {}))
        except ToolError as exc:
            return ToolResult.error(str(exc), exc.kind)
        except (ServerDown, OversizedAnswer) as exc:
            return ToolResult.error(str(exc))
        return result if isinstance(result, ToolResult) else ToolResult.ok(result)


def adapt(server: McpServer, listed: ListedTool) -> McpTool:
    name = tool_name(server.name, listed.name)
    settings = server.settings

    async def call(ctx: RunContext, arguments: dict[str, Any]) -> ToolResult:
        return convert(await server.call(listed.name, arguments), name)

    read_only = listed.name in settings.read_only_tools
    return McpTool(
        name=name,
        description=listed.description or listed.title or listed.name,
        model=Arguments,
        function=call,
        approval=Approval(
            egress=Egress.READ_ONLY if read_only else Egress.WRITE,
            target=lambda _arguments: f"mcp.{server.name}.{listed.name}",
            # A read-only tool may send what it is given anywhere (a fetcher, a search): all
            # of it is checked after outside content, unless the owner says it stays local.
            leaves=_strings if read_only and listed.name not in settings.local_tools else None,
        ),
        running=Running(timeout=settings.timeout_seconds),
        untrusted=True,
        deferred=settings.deferred,
        schema=_object_schema(listed.input_schema),
    )


def _strings(arguments: Any) -> list[str]:
    """Every text a read-only tool is given: any of them may travel in its request."""
    return strings_in(arguments) or [""]  # no text at all: still a request the model chose


def _object_schema(schema: dict[str, Any]) -> dict[str, Any]:
    # The model's function schema must be an object with properties, even for no arguments.
    return {"type": "object", "properties": {}, **schema}


def convert(result: CallToolResult, name: str) -> ToolResult:
    """Text blocks joined; images as artifacts; anything else as its JSON. `isError` fails."""
    texts: list[str] = []
    artifacts: list[Artifact] = []
    for index, block in enumerate(result.content):
        if block.type == "text":
            texts.append(block.text)
        elif block.type == "image":
            extension = block.mime_type.rsplit("/", 1)[-1]
            content = base64.b64decode(block.data)
            artifacts.append(Artifact("image", f"{name}-{index}.{extension}", content))
        else:
            texts.append(block.model_dump_json(exclude_none=True))
    if not texts and result.structured_content is not None:
        texts.append(json.dumps(result.structured_content))
    text = "\n".join(texts)
    if result.is_error:
        raise ToolError(text or f"{name} reported an error", ErrorKind.FAILED)
    return ToolResult.ok(text, artifacts)


def register(registry: ToolRegistry, config: Config, server: McpServer, listed: list[Any]) -> None:
    """Add the server's tools not yet known (a restarted server keeps its registered ones,
    which reach the new session through `server`)."""
    for item in listed:
        name = tool_name(server.name, item.name)
        if not TOOL_NAME.fullmatch(name):
            log.warning("MCP server %s: tool %r skipped (name not usable)", server.name, item.name)
            continue
        if registry.get(name) is None and enabled(name, config):
            registry.register(adapt(server, item))
