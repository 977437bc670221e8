"""`augure invocations|approvals|approve|reject|rules`: the audit trail and approvals
(docs/reference/commands.md#augure-invocations---status-s---tool-t---limit-n---json).

These commands only touch the SQLite store, never the whole app: a running bot polls the
database and picks up a decision written here within a second (see ApprovalGate._watch).
"""

from __future__ import annotations

import argparse
import json
from datetime import UTC, datetime
from typing import Any

from augure.approval.shown import visible
from augure.common.errors import UsageError
from augure.common.ports import Decision
from augure.config.settings import Config
from augure.core.door.types import INVOCATION_STATUSES as STATUSES
from augure.core.door.types import Record, Rule

DEFAULT_LIMIT = 20
ERROR_WIDTH = 60  # characters of an invocation's error shown in the text listing
ARGUMENTS_WIDTH = 80  # characters of a pending request's arguments shown in the text listing
DECIDED_BY = "cli"
DIGEST_WIDTH = 12  # hex digits of the approved digest in the text listing (all in --json)


# -- invocations ---------------------------------------------------------------------------


async def invocations(config: Config, args: argparse.Namespace) -> int:
    from augure.core.lifespan import Augure

    if args.status is not None and args.status not in STATUSES:
        raise UsageError(f"unknown status {args.status!r}; one of: {', '.join(STATUSES)}")
    limit = _positive(args.limit, "--limit")
    async with Augure.reading(config) as door:
        rows = await door.reports.records(status=args.status, tool=args.tool, limit=limit)
    if args.json:
        print(json.dumps([_invocation_json(row) for row in rows], ensure_ascii=False))
        return 0
    if not rows:
        print("No invocations.")
    for row in rows:
        line = (
            f"{row.id}  {_local(row.created_at)}  {row.tool:<14} {row.origin:<8} "
            f"{row.status:<10} {row.approval_status:<12}"
        )
        if row.approval_digest:  # what the request showed, so what was approved
            line += f"  sha256:{row.approval_digest[:DIGEST_WIDTH]}"
        if row.parent:  # made from inside another call (a batch, a snippet)
            line += f"  in:{row.parent}"
        if row.error:
            line += f"  {_shorten(row.error, ERROR_WIDTH)}"
        print(line.rstrip())
    return 0


def _invocation_json(row: Record) -> dict[str, Any]:
    return {
        "id": row.id,
        "tool": row.tool,
        "origin": row.origin,
        "status": row.status,
        "approval_status": row.approval_status,
        "created_at": _utc(row.created_at),
        "completed_at": _utc(row.completed_at),
        "error": row.error,
        "approval_digest": row.approval_digest,
        "parent": row.parent,
    }


# -- approvals -----------------------------------------------------------------------------


async def approvals(config: Config, args: argparse.Namespace) -> int:
    from augure.core.lifespan import Augure

    async with Augure.reading(config) as door:
        pending = await door.reports.pending_approvals(limit=-1)  # -1: no limit
        rules = [] if args.json else await door.owner.rules()
    requests = [
        {
            "id": row.id,
            "tool": row.tool,
            "arguments": json.loads(row.input),
            "created_at": _utc(row.created_at),
        }
        for row in pending
    ]
    if args.json:
        print(json.dumps(requests, ensure_ascii=False))
        return 0
    if not requests:
        print("No pending approvals.")
    for request, row in zip(requests, pending, strict=True):
        shown = visible(json.dumps(request["arguments"], ensure_ascii=False))
        print(
            f"{request['id']}  {_local(row.created_at)}  {request['tool']:<14} "
            f"{_shorten(shown, ARGUMENTS_WIDTH)}"
        )
    print()
    print("Rules:")
    _print_rules(rules, indent="  ", empty="  (none)")
    return 0


async def approve(config: Config, args: argparse.Namespace) -> int:
    tool = await _decide(config, args.id, Decision.APPROVED, None)
    print(f"Approved {args.id} ({tool}).")
    return 0


async def reject(config: Config, args: argparse.Namespace) -> int:
    tool = await _decide(config, args.id, Decision.REJECTED, args.reason or None)
    print(f"Rejected {args.id} ({tool}).")
    return 0


async def _decide(
    config: Config, invocation_id: str, decision: Decision, reason: str | None
) -> str:
    """Decide one pending request; the tool's name, or a UsageError saying why not."""
    from augure.core.lifespan import Augure

    async with Augure.reading(config) as door:
        decided = await door.owner.decide(invocation_id, decision, DECIDED_BY, reason=reason)
        row = await door.reports.invocation(invocation_id)
    if row is None:
        raise UsageError(f"no approval request with id {invocation_id}")
    if decided is None:
        raise UsageError(f"request {invocation_id} was already decided ({row.approval_status})")
    return row.tool


# -- rules ---------------------------------------------------------------------------------


async def rules(config: Config, args: argparse.Namespace) -> int:
    from augure.core.lifespan import Augure

    action = args.action or "list"
    pattern = _checked_pattern(action, args.pattern) if action in ("allow", "deny") else ""
    async with Augure.reading(config) as door:
        owner = door.owner
        existing = await owner.rules()
        if action == "list":
            _print_rules(existing, indent="", empty="No rules.")
        elif action == "revoke":
            rule = _find_rule(existing, args.rule_id)
            await owner.revoke_rule(rule.id)
            print(f"Revoked rule {rule.id} ({rule.effect} {rule.pattern}).")
        else:
            known = any(r.effect == action and r.pattern == pattern for r in existing)
            rule = await owner.add_rule(action, pattern, DECIDED_BY)
            verb = "Already have" if known else "Added"
            print(f"{verb} rule {rule.id}: {rule.effect} {rule.pattern}")
    return 0


def _checked_pattern(effect: str, pattern: str) -> str:
    """The pattern to store, or a UsageError: a rule must be narrow enough to mean something."""
    pattern = pattern.strip()
    if not pattern:
        raise UsageError("the pattern is empty")
    tool_part = pattern.split(":", 1)[0]
    if effect == "allow" and not tool_part.strip("*?"):
        raise UsageError(
            f"refusing to allow {pattern!r}: an allow rule must name its tool, "
            "e.g. memory_write:path=notes/*"
        )
    return pattern


def _find_rule(existing: list[Rule], rule_id: str) -> Rule:
    for rule in existing:
        if str(rule.id) == rule_id.strip():
            return rule
    raise UsageError(f"no rule with id {rule_id}; see `augure rules`")


def _print_rules(rules: list[Rule], *, indent: str, empty: str) -> None:
    if not rules:
        print(empty)
    for rule in rules:
        print(f"{indent}{rule.id:>3}  {rule.effect:<5}  {rule.pattern}")


# -- formatting ----------------------------------------------------------------------------


def _positive(value: str, option: str) -> int:
    try:
        number = int(value)
    except ValueError:
        number = 0
    if number < 1:
        raise UsageError(f"{option} must be a positive whole number, not {value!r}")
    return number


def _local(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp).isoformat(timespec="seconds")


def _utc(timestamp: float | None) -> str | None:
    if timestamp is None:
        return None
    moment = datetime.fromtimestamp(timestamp, UTC).isoformat(timespec="milliseconds")
    return moment.replace("+00:00", "Z")


def _shorten(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"
