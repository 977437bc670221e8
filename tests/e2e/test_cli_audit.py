"""`augure invocations|approvals|approve|reject|rules` as a user runs them: real processes."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from augure.store.audit import Audit
from augure.store.state import Store
from tests.e2e.helpers import augure, environment

INVOCATION_KEYS = {
    "id",
    "tool",
    "origin",
    "status",
    "approval_status",
    "created_at",
    "completed_at",
    "error",
    "approval_digest",
    "parent",  # the call it was made from (a batch, a snippet), or null
}


def utc(timestamp: float | None) -> str | None:
    if timestamp is None:
        return None
    return datetime.fromtimestamp(timestamp, UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def one_line_error(code: int, err: str, text: str) -> None:
    assert code == 1
    assert err == f"augure: {text}\n"


async def rows(home: Path, *ids: str) -> list[dict[str, Any]]:
    store = await Store.open(home / "state.db")
    try:
        audit = Audit(store)
        found = [await audit.get(invocation_id) for invocation_id in ids]
    finally:
        await store.close()
    assert all(row is not None for row in found)
    return [row for row in found if row is not None]


async def write(env: dict[str, str], path: str) -> None:
    arguments = json.dumps({"path": path, "content": "x"})
    await augure("tools", "run", "memory_write", "--args", arguments, env=env)


async def test_approve_and_reject_pending_requests(tmp_path: Path) -> None:
    env = environment(tmp_path)
    await write(env, "seed.md")  # a finished call: not pending, so never listed below
    store = await Store.open(tmp_path / "state.db")
    audit = Audit(store)
    arguments = [{"path": f"notes/{n}.md", "content": f"note {n}"} for n in range(3)]
    first, second, third = [
        await audit.create(
            tool="memory_write",
            origin="chat",
            arguments=args,
            chat_id="1001",
            turn_id=None,
            target=f"memory_write:path={args['path']}",
            approval_status="pending",
        )
        for args in arguments
    ]
    seeded = {row["id"]: row for row in await audit.listing()}
    await store.close()

    code, out, err = await augure("approvals", "--json", env=env)
    assert code == 0, err
    expected = [
        {
            "id": invocation_id,
            "tool": "memory_write",
            "arguments": args,
            "created_at": utc(seeded[invocation_id]["created_at"]),
        }
        for invocation_id, args in zip((first, second, third), arguments, strict=True)
    ]
    assert json.loads(out) == expected[::-1]  # newest first
    code, out, _ = await augure("approvals", env=env)
    assert code == 0 and out.index(third) < out.index(second) < out.index(first)
    assert "notes/0.md" in out and out.rstrip().endswith("Rules:\n  (none)")

    approved, rejected, unknown_approve, unknown_reject = await asyncio.gather(
        augure("approve", first, env=env),
        augure("reject", second, "--reason", "not now", env=env),
        augure("approve", "nope1234", env=env),
        augure("reject", "nope1234", env=env),
    )
    assert approved == (0, f"Approved {first} (memory_write).\n", "")
    assert rejected == (0, f"Rejected {second} (memory_write).\n", "")
    one_line_error(*unknown_approve[::2], "no approval request with id nope1234")
    one_line_error(*unknown_reject[::2], "no approval request with id nope1234")

    row_first, row_second, row_third = await rows(tmp_path, first, second, third)
    assert (row_first["approval_status"], row_first["status"]) == ("approved", "approved")
    assert (row_first["decided_by"], row_first["reason"]) == ("cli", None)
    assert (row_second["approval_status"], row_second["status"]) == ("rejected", "rejected")
    assert (row_second["decided_by"], row_second["reason"]) == ("cli", "not now")
    assert row_third["approval_status"] == "pending"

    again, reject_decided, not_a_request, pending = await asyncio.gather(
        augure("approve", first, env=env),
        augure("reject", second, env=env),
        augure("approve", seeded_not_pending(seeded), env=env),
        augure("approvals", "--json", env=env),
    )
    one_line_error(*again[::2], f"request {first} was already decided (approved)")
    one_line_error(*reject_decided[::2], f"request {second} was already decided (rejected)")
    one_line_error(
        *not_a_request[::2],
        f"request {seeded_not_pending(seeded)} was already decided (not_required)",
    )
    assert pending[0] == 0 and json.loads(pending[1]) == [expected[2]]
    (row_first,) = await rows(tmp_path, first)
    assert row_first["decided_by"] == "cli" and row_first["reason"] is None  # unchanged


def seeded_not_pending(seeded: dict[str, dict[str, Any]]) -> str:
    (invocation_id,) = [i for i, row in seeded.items() if row["approval_status"] != "pending"]
    return invocation_id


async def test_invocations_newest_first_with_filters(tmp_path: Path) -> None:
    env = environment(tmp_path)
    await write(env, "a.md")
    await write(env, "../escape.md")  # fails inside the tool: recorded as failed, with an error
    await augure("tools", "run", "memory_read", "--args", '{"path": "a.md"}', env=env)

    code, out, err = await augure("invocations", "--json", env=env)
    assert code == 0, err
    listed = json.loads(out)
    assert all(set(entry) == INVOCATION_KEYS for entry in listed)
    assert [(e["tool"], e["status"], e["approval_status"]) for e in listed] == [
        ("memory_read", "completed", "not_required"),
        ("memory_write", "failed", "not_required"),
        ("memory_write", "completed", "not_required"),
    ]
    read, failed, written = listed
    assert written["error"] is None and read["error"] is None
    assert failed["error"] and "escape.md" in failed["error"]
    db = {row["id"]: row for row in await rows(tmp_path, *(e["id"] for e in listed))}
    for entry in listed:
        row = db[entry["id"]]
        assert entry["origin"] == row["origin"]
        assert entry["created_at"] == utc(row["created_at"])
        assert entry["completed_at"] == utc(row["completed_at"]) is not None

    by_tool, by_status, limited, text, bad_status, bad_limit = await asyncio.gather(
        augure("invocations", "--json", "--tool", "memory_write", env=env),
        augure("invocations", "--json", "--status", "failed", env=env),
        augure("invocations", "--json", "--limit", "1", env=env),
        augure("invocations", env=env),
        augure("invocations", "--status", "done", env=env),
        augure("invocations", "--limit", "0", env=env),
    )
    assert [e["id"] for e in json.loads(by_tool[1])] == [failed["id"], written["id"]]
    assert json.loads(by_status[1]) == [failed]
    assert json.loads(limited[1]) == [read]
    lines = text[1].splitlines()
    assert [line.split()[0] for line in lines] == [read["id"], failed["id"], written["id"]]
    local = datetime.fromtimestamp(db[read["id"]]["created_at"]).isoformat(timespec="seconds")
    columns = [local, "memory_read", read["origin"], "completed", "not_required"]
    assert lines[0].split()[1:6] == columns
    shown_error = lines[1].split("not_required", 1)[1].strip()  # shortened to 60 characters
    assert "escape.md" in shown_error and len(shown_error) <= 60
    statuses = "pending, approved, rejected, refused, running, completed, failed, interrupted"
    one_line_error(*bad_status[::2], f"unknown status 'done'; one of: {statuses}")
    one_line_error(*bad_limit[::2], "--limit must be a positive whole number, not '0'")


async def test_rules_allow_deny_list_revoke(tmp_path: Path) -> None:
    env = environment(tmp_path)
    assert await augure("rules", env=env) == (0, "No rules.\n", "")
    assert await augure("rules", "allow", "memory_write:path=notes/*", env=env) == (
        0,
        "Added rule 1: allow memory_write:path=notes/*\n",
        "",
    )
    assert await augure("rules", "deny", "memory_write:path=secret/*", env=env) == (
        0,
        "Added rule 2: deny memory_write:path=secret/*\n",
        "",
    )
    listing = "  1  allow  memory_write:path=notes/*\n  2  deny   memory_write:path=secret/*\n"
    (
        bare,
        plain,
        implicit,
        duplicate,
        approvals,
        star,
        star_tool,
        empty,
        blank,
        denied_write,
    ) = await asyncio.gather(
        augure("rules", "list", env=env),
        augure("rules", env=env),
        augure("approvals", env=env),
        augure("rules", "allow", "memory_write:path=notes/*", env=env),
        augure("approvals", "--json", env=env),
        augure("rules", "allow", "*", env=env),
        augure("rules", "allow", "*:*", env=env),
        augure("rules", "allow", "", env=env),
        augure("rules", "deny", "  ", env=env),
        augure("tools", "run", "memory_write", "--args", '{"path": "secret/x.md", "content": "x"}',
               env=env),
    )  # fmt: skip
    assert bare == plain == (0, listing, "")
    assert implicit[0] == 0
    assert implicit[1] == "No pending approvals.\n\nRules:\n" + "".join(
        f"  {line}\n" for line in listing.splitlines()
    )
    assert duplicate == (0, "Already have rule 1: allow memory_write:path=notes/*\n", "")
    assert approvals == (0, "[]\n", "")
    hint = "an allow rule must name its tool, e.g. memory_write:path=notes/*"
    one_line_error(*star[::2], f"refusing to allow '*': {hint}")
    one_line_error(*star_tool[::2], f"refusing to allow '*:*': {hint}")
    one_line_error(*empty[::2], "the pattern is empty")
    one_line_error(*blank[::2], "the pattern is empty")
    assert denied_write[0] == 1 and "rejected" in denied_write[1]  # the deny rule is honoured
    assert not (tmp_path / "memory" / "secret" / "x.md").exists()

    revoked, unknown, not_a_number = await asyncio.gather(
        augure("rules", "revoke", "1", env=env),
        augure("rules", "revoke", "99", env=env),
        augure("rules", "revoke", "x", env=env),
    )
    assert revoked == (0, "Revoked rule 1 (allow memory_write:path=notes/*).\n", "")
    one_line_error(*unknown[::2], "no rule with id 99; see `augure rules`")
    one_line_error(*not_a_number[::2], "no rule with id x; see `augure rules`")
    assert await augure("rules", env=env) == (0, "  2  deny   memory_write:path=secret/*\n", "")
    again = await augure("rules", "revoke", "1", env=env)
    one_line_error(*again[::2], "no rule with id 1; see `augure rules`")
