"""The approval gate through the real bot: buttons, timeouts, rules, restarts, forged presses."""

from __future__ import annotations

import pytest

from augure.store.audit import Audit
from tests.e2e import tools as test_tools
from tests.e2e.conftest import OWNER, STRANGER, Bot
from tests.e2e.helpers import (
    REJECTED,
    TIMED_OUT,
    approval_message,
    buttons,
    final_reply,
    tool_results,
)
from tests.fakes.openai import ToolCall, text, tool, tools

pytestmark = pytest.mark.tools(*test_tools.TEST_TOOLS, reset=test_tools.reset)


def audit(bot: Bot) -> Audit:
    assert bot.core is not None
    return bot.core.audit


async def test_approve_runs_the_call_and_edits_the_request(bot: Bot) -> None:
    bot.llm.script(tool("send_note", {"to": "alice", "text": "hi"}), text("Sent it."))
    bot.telegram.inject_message(OWNER, "tell alice hi")
    message = await approval_message(bot)
    assert "send_note" in message["text"] and '"to": "alice"' in message["text"]
    assert set(buttons(message)) == {"Approve", "Reject", "Always allow", "Allow in this chat"}
    assert test_tools.outbox(bot.home) == []  # nothing happens before the press

    bot.telegram.press_button(OWNER, message["message_id"], buttons(message)["Approve"])
    await final_reply(bot, "Sent it.")
    assert test_tools.outbox(bot.home) == [{"to": "alice", "text": "hi"}]
    assert tool_results(bot.llm) == ["Note sent to alice."]
    (edited,) = [
        m for m in bot.telegram.messages(OWNER) if m["message_id"] == message["message_id"]
    ]
    assert "Approved" in edited["text"] and not edited.get("reply_markup")
    (record,) = await audit(bot).listing(tool="send_note")
    assert record["approval_status"] == "approved" and record["status"] == "completed"
    assert record["decided_by"] == f"telegram:{OWNER}"


async def test_reject_tells_the_model_exactly(bot: Bot) -> None:
    bot.llm.script(tool("send_note", {"to": "bob", "text": "x"}), text("OK, not sent."))
    bot.telegram.inject_message(OWNER, "tell bob x")
    message = await approval_message(bot)
    bot.telegram.press_button(OWNER, message["message_id"], buttons(message)["Reject"])
    await final_reply(bot, "OK, not sent.")
    assert tool_results(bot.llm) == [REJECTED]
    assert test_tools.outbox(bot.home) == []
    edited = bot.telegram.messages(OWNER)[0]
    assert "Rejected" in edited["text"] and not edited.get("reply_markup")


async def test_no_answer_times_out_as_a_rejection(bot: Bot) -> None:
    await bot.stop()
    bot.extra_env = {"AUGURE__APPROVAL__TIMEOUT_SECONDS": "1"}
    await bot.start()
    bot.llm.script(tool("launch", {"what": "rocket"}), text("Not launched."))
    bot.telegram.inject_message(OWNER, "launch")
    message = await approval_message(bot)
    assert "Always allow" not in buttons(message)  # no narrow rule for this tool
    await final_reply(bot, "Not launched.")
    assert tool_results(bot.llm) == [TIMED_OUT]
    assert test_tools.outbox(bot.home) == []
    (record,) = await audit(bot).listing(tool="launch")
    assert record["approval_status"] == "timed_out" and record["status"] == "rejected"
    edited = bot.telegram.messages(OWNER)[0]
    assert "no answer in time" in edited["text"] and not edited.get("reply_markup")


async def test_forged_press_changes_nothing_and_a_double_press_runs_once(bot: Bot) -> None:
    await bot.stop()
    bot.extra_env = {"AUGURE_ALLOWED_USERS": str(OWNER)}
    await bot.start()
    bot.llm.script(tool("send_note", {"to": "carol", "text": "x"}), text("Done."))
    bot.telegram.inject_message(OWNER, "tell carol")
    message = await approval_message(bot)
    approve = buttons(message)["Approve"]

    bot.telegram.press_button(STRANGER, message["message_id"], approve, chat_id=OWNER)
    await bot.telegram.wait_for("answerCallbackQuery")
    assert bot.telegram.callback_answers[0].get("show_alert") in (True, "true")
    assert test_tools.outbox(bot.home) == []
    (record,) = await audit(bot).listing(tool="send_note")
    assert record["approval_status"] == "pending"

    bot.telegram.press_button(OWNER, message["message_id"], approve)
    bot.telegram.press_button(OWNER, message["message_id"], approve)
    await final_reply(bot, "Done.")
    await bot.telegram.wait_for("answerCallbackQuery", count=3)
    assert test_tools.outbox(bot.home) == [{"to": "carol", "text": "x"}]
    answers = [a.get("text") for a in bot.telegram.callback_answers[1:]]
    assert "Approved" in answers and "Already decided: approved." in answers


async def test_always_allow_saves_a_narrow_rule(bot: Bot) -> None:
    bot.llm.script(tool("send_note", {"to": "alice", "text": "1"}), text("one"))
    bot.telegram.inject_message(OWNER, "first")
    message = await approval_message(bot)
    bot.telegram.press_button(OWNER, message["message_id"], buttons(message)["Always allow"])
    await final_reply(bot, "one")
    (rule,) = await audit(bot).rules()
    assert (rule.effect, rule.pattern) == ("allow", "send_note:to=alice")

    # The same target now runs without a question...
    bot.llm.script(tool("send_note", {"to": "alice", "text": "2"}), text("two"))
    bot.telegram.inject_message(OWNER, "second")
    await final_reply(bot, "two")
    assert len(test_tools.outbox(bot.home)) == 2
    record = (await audit(bot).listing(tool="send_note"))[0]
    assert record["decided_by"] == f"rule:{rule.id}"

    # ...and a neighbour does not match it.
    bot.llm.script(tool("send_note", {"to": "alice2", "text": "3"}), text("three"))
    bot.telegram.inject_message(OWNER, "third")
    neighbour = await approval_message(bot, count=2)
    assert "alice2" in neighbour["text"]
    bot.telegram.press_button(OWNER, neighbour["message_id"], buttons(neighbour)["Reject"])
    await final_reply(bot, "three")
    assert len(test_tools.outbox(bot.home)) == 2


async def test_allow_in_this_chat_covers_the_same_target_until_new(bot: Bot) -> None:
    bot.llm.script(tool("send_note", {"to": "alice", "text": "1"}), text("one"))
    bot.telegram.inject_message(OWNER, "first")
    message = await approval_message(bot)
    shown = buttons(message)
    assert list(shown) == ["Approve", "Reject", "Always allow", "Allow in this chat"]
    bot.telegram.press_button(OWNER, message["message_id"], shown["Allow in this chat"])
    await final_reply(bot, "one")
    edited = [m for m in bot.telegram.messages(OWNER) if m["message_id"] == message["message_id"]]
    assert "Allowed in this chat (until /new)" in edited[0]["text"]
    assert await audit(bot).rules() == []  # nothing is saved for later conversations
    # The press is audited as `session`, by the owner: `augure invocations` tells it from
    # a plain Approve.
    pressed = (await audit(bot).listing(tool="send_note"))[0]
    assert (pressed["approval_status"], pressed["decided_by"]) == ("session", f"telegram:{OWNER}")
    assert pressed["status"] == "completed"

    # The same target runs unasked in this conversation, audited as `session` by the grant...
    bot.llm.script(tool("send_note", {"to": "alice", "text": "2"}), text("two"))
    bot.telegram.inject_message(OWNER, "second")
    await final_reply(bot, "two")
    assert len(test_tools.outbox(bot.home)) == 2
    record = (await audit(bot).listing(tool="send_note"))[0]
    assert (record["approval_status"], record["decided_by"]) == ("session", "session")
    assert record["status"] == "completed"

    # ...a neighbour still asks, and after /new the same target asks again.
    bot.llm.script(tool("send_note", {"to": "bob", "text": "3"}), text("three"))
    bot.telegram.inject_message(OWNER, "third")
    neighbour = await approval_message(bot, count=2)
    bot.telegram.press_button(OWNER, neighbour["message_id"], buttons(neighbour)["Reject"])
    await final_reply(bot, "three")
    bot.telegram.inject_message(OWNER, "/new")
    await final_reply(bot, "Started a fresh conversation.")
    bot.llm.script(tool("send_note", {"to": "alice", "text": "4"}), text("four"))
    bot.telegram.inject_message(OWNER, "fourth")
    again = await approval_message(bot, count=3)
    assert "alice" in again["text"]
    bot.telegram.press_button(OWNER, again["message_id"], buttons(again)["Reject"])
    await final_reply(bot, "four")
    assert len(test_tools.outbox(bot.home)) == 2


async def test_deny_beats_an_allow_rule(bot: Bot) -> None:
    await audit(bot).add_rule("allow", "send_note:to=*", "test")
    await audit(bot).add_rule("deny", "send_note:to=mallory", "test")
    bot.llm.script(
        tools(
            ToolCall("send_note", {"to": "mallory", "text": "x"}),
            ToolCall("send_note", {"to": "dave", "text": "y"}),
        ),
        text("Done what I could."),
    )
    bot.telegram.inject_message(OWNER, "send both")
    await final_reply(bot, "Done what I could.")
    denied, allowed = tool_results(bot.llm)
    assert "rule 'send_note:to=mallory' denies it" in denied
    assert allowed == "Note sent to dave."
    assert test_tools.outbox(bot.home) == [{"to": "dave", "text": "y"}]
    assert not any("reply_markup" in c.params for c in bot.telegram.sent("sendMessage"))


async def test_long_arguments_are_attached_not_cut(bot: Bot) -> None:
    note = "".join(f"paragraph {n}: " + "words " * 20 + "\n" for n in range(60))
    bot.llm.script(tool("send_note", {"to": "erin", "text": note}), text("Sent the long one."))
    bot.telegram.inject_message(OWNER, "send the long note")
    await bot.telegram.wait_for("sendDocument")
    message = await approval_message(bot)
    assert "are in the file above" in message["text"]
    attached = [m for m in bot.telegram.messages(OWNER) if "document_bytes" in m]
    assert note.strip() in attached[0]["document_bytes"].decode().replace("\\n", "\n")
    bot.telegram.press_button(OWNER, message["message_id"], buttons(message)["Approve"])
    await final_reply(bot, "Sent the long one.")
    assert test_tools.outbox(bot.home)[0]["text"] == note


async def test_approvals_command_lists_rules_and_revokes(bot: Bot) -> None:
    rule = await audit(bot).add_rule("allow", "send_note:to=frank", "test")
    bot.telegram.inject_message(OWNER, "/approvals")
    (call,) = await bot.telegram.wait_for("sendMessage")
    listing = bot.telegram.messages(OWNER)[0]
    assert "send_note:to=frank" in listing["text"]
    bot.telegram.press_button(OWNER, listing["message_id"], f"rv:{rule.id}")
    await bot.telegram.wait_for("answerCallbackQuery")
    assert bot.telegram.callback_answers[0]["text"] == "Rule revoked."
    assert await audit(bot).rules() == []
    assert call.status == 200


async def test_a_preview_is_shown_in_the_request_and_can_refuse_before_asking(bot: Bot) -> None:
    bot.llm.script(tool("publish", {"name": "left-pad"}), text("Published."))
    bot.telegram.inject_message(OWNER, "publish left-pad")
    message = await approval_message(bot)
    assert (
        "left-pad: a harmless package" in message["text"] and '"scan": "clean"' in message["text"]
    )
    bot.telegram.press_button(OWNER, message["message_id"], buttons(message)["Approve"])
    await final_reply(bot, "Published.")

    bot.llm.script(tool("publish", {"name": "evil-pkg"}), text("Refused."))
    bot.telegram.inject_message(OWNER, "publish evil-pkg")
    await final_reply(bot, "Refused.")
    assert tool_results(bot.llm)[-1] == "Error: package evil-pkg failed its scan"
    assert test_tools.outbox(bot.home) == [{"published": "left-pad"}]
    assert len([c for c in bot.telegram.sent("sendMessage") if "reply_markup" in c.params]) == 1
