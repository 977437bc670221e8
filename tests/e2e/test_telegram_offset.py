"""Telegram is told the bot has an update only once the bot has taken it
(docs/reference/durability.md, "Updates Telegram resends"): a real `augure run` killed with SIGKILL
while a message is still being read (a voice note transcribed, a photo downloaded) gets it
again from Telegram at the next start and answers it once; an update taken just before the
kill, which Telegram therefore sends again, is not answered twice."""

from __future__ import annotations

import asyncio
from pathlib import Path

from tests.e2e.conftest import OWNER, Bot, bot_environment
from tests.e2e.helpers import environment, launch, this_turn, until
from tests.e2e.test_chat_experience import png
from tests.e2e.test_durability import echo, echoed, restart_twice, until_true
from tests.e2e.test_fold_inbox import WAITING, inbox_rows, kill
from tests.fakes.openai import FakeOpenAI, text
from tests.fakes.telegram import FakeTelegram

FRIEND = 4242  # a second allowed user, chatting beside the owner
HEARD = "[Voice note, transcribed]: call the bank"


def bot_env_with_voice(tmp_path: Path, telegram: FakeTelegram, llm: FakeOpenAI) -> dict[str, str]:
    env = environment(tmp_path, bot_environment(tmp_path, telegram, llm))
    env["AUGURE__LLM__TRANSCRIPTION_MODEL"] = "whisper-1"
    env["AUGURE__TELEGRAM__STREAMING"] = "false"
    return env


async def polled_after_delivery(telegram: FakeTelegram, update_id: int) -> None:
    """Wait until a poll has started after the one that handed `update_id` out: the poll in
    which python-telegram-bot alone would already have confirmed it."""
    for _ in range(400):
        delivered = [
            n
            for n, call in enumerate(telegram.calls)
            if call.method == "getUpdates"
            and any(u.get("update_id") == update_id for u in call.response.get("result", []))
        ]
        if delivered:
            polls_before = sum(c.method == "getUpdates" for c in telegram.calls[: delivered[0]])
            if len(telegram.polls_started) > polls_before + 1:
                return
        await asyncio.sleep(0.05)
    raise AssertionError(f"update {update_id} was never handed out")


async def test_kill_while_a_voice_note_is_transcribed_answers_it_once_after_restart(
    tmp_path: Path,
) -> None:
    async with FakeTelegram() as telegram, FakeOpenAI() as llm:
        env = bot_env_with_voice(tmp_path, telegram, llm)
        process = await launch(env)
        await telegram.wait_polling(timeout=20)
        llm.transcription_text = "call the bank"
        llm.transcription_delay = 60
        telegram.inject_message(OWNER, voice=b"OggS fake opus bytes")
        update_id = telegram._next_update_id - 1
        await until_true(lambda: len(llm.transcriptions) == 1, "the transcription began")
        await polled_after_delivery(telegram, update_id)
        await kill(process)
        assert llm.requests == [] and inbox_rows(tmp_path / "state.db") == 0
        assert all(offset is None or offset <= update_id for offset in telegram.poll_offsets)

        llm.transcription_delay = 0
        llm.responder = echo
        first, second = await restart_twice(env, telegram, recovered=f"echo {HEARD}")
        assert first == f"echo {HEARD}" and second == ""  # answered, once
        assert len(llm.requests) == 1 and len(llm.transcriptions) == 2


async def test_kill_while_a_photo_is_downloaded_answers_it_once_after_restart(
    tmp_path: Path,
) -> None:
    async with FakeTelegram() as telegram, FakeOpenAI() as llm:
        env = bot_env_with_voice(tmp_path, telegram, llm)
        process = await launch(env)
        await telegram.wait_polling(timeout=20)
        telegram.download_delay = 60
        telegram.inject_message(OWNER, photo=png(4, 3), caption="what is this?")
        update_id = telegram._next_update_id - 1
        await telegram.wait_for("getFile", timeout=10)
        await polled_after_delivery(telegram, update_id)
        await kill(process)
        assert llm.requests == []

        telegram.download_delay = 0
        llm.script(text("a tiny picture"))
        first, second = await restart_twice(env, telegram, recovered="a tiny picture")
        assert first == "a tiny picture" and second == ""
        (request,) = llm.requests
        (photo,) = this_turn(request)
        assert [part["type"] for part in photo] == ["text", "image_url"]


async def test_an_update_taken_just_before_a_kill_is_not_answered_twice(tmp_path: Path) -> None:
    async with FakeTelegram() as telegram, FakeOpenAI() as llm:
        env = bot_env_with_voice(tmp_path, telegram, llm)
        env["AUGURE__TELEGRAM__FOLD_SECONDS"] = "5"  # stored, then waiting for the window
        process = await launch(env)
        await telegram.wait_polling(timeout=20)
        telegram.hold_after_delivery = True  # the bot never gets to confirm it
        telegram.inject_message(OWNER, "once")
        update_id = telegram._next_update_id - 1
        await until(tmp_path / "state.db", WAITING.format("once"))
        await kill(process)
        # No confirmation reached Telegram (the polls after the delivery were held, their
        # offsets never applied): it sends the update again.
        assert [u["update_id"] for u in telegram._updates] == [update_id]

        telegram.release_polls()
        llm.responder = echo
        first, second = await restart_twice(env, telegram, recovered="echo once")
        assert echoed(telegram, OWNER) == ["once"]  # Telegram sent it again: taken once
        assert first == "echo once" and second == ""
        assert len(llm.requests) == 1 and inbox_rows(tmp_path / "state.db") == 0


async def test_a_slow_voice_note_neither_stalls_another_chat_nor_is_taken_twice(
    tmp_path: Path,
) -> None:
    async with FakeTelegram() as telegram, FakeOpenAI() as llm:
        env = bot_env_with_voice(tmp_path, telegram, llm)
        env["AUGURE_ALLOWED_USERS"] = f"{OWNER},{FRIEND}"
        process = await launch(env)
        try:
            await telegram.wait_polling(timeout=20)
            llm.responder = echo
            llm.transcription_text = "call the bank"
            llm.transcription_delay = 3
            telegram.inject_message(OWNER, voice=b"OggS fake opus bytes")
            await until_true(lambda: len(llm.transcriptions) == 1, "the transcription began")
            polls_before = len(telegram.polls_started)
            telegram.inject_message(FRIEND, "hello")
            # The friend is answered while the owner's voice note is still being heard.
            await until_true(lambda: echoed(telegram, FRIEND) == ["hello"], "friend answered")
            assert echoed(telegram, OWNER) == []
            await until_true(lambda: len(echoed(telegram, OWNER)) > 0, "owner answered")
            await telegram.wait_idle(quiet=1.0, timeout=10)
            assert echoed(telegram, OWNER) == HEARD.split()  # once, though Telegram resent it
            assert len(llm.transcriptions) == 1 and len(llm.requests) == 2
            # Telegram resends the held update to every poll: the bot does not spin on it
            # (a generous bound: some 3 s of holding, never hundreds of polls).
            assert len(telegram.polls_started) - polls_before < 30
        finally:
            await kill(process)


async def test_update_ids_that_start_again_are_new_messages_not_resends(tmp_path: Path) -> None:
    """Telegram numbers a bot's updates from a new point after a week's silence, and a new
    bot token starts its own count: an update id an earlier run took, carrying another
    message, is a new message to answer, not a resend to skip."""
    for word in ("first bot", "second bot"):
        async with FakeTelegram() as telegram, FakeOpenAI() as llm:  # both count from 1
            llm.responder = echo
            process = await launch(bot_env_with_voice(tmp_path, telegram, llm))
            await telegram.wait_polling(timeout=20)
            telegram.inject_message(OWNER, word)
            await telegram.wait_for("sendMessage", timeout=20)
            assert [m["text"] for m in telegram.messages(OWNER)] == [f"echo {word}"]
            await kill(process)


async def test_a_hundred_updates_behind_a_slow_one_hide_no_newer_update(tmp_path: Path) -> None:
    """Telegram hands out at most 100 updates from the offset, and the offset waits for the
    slowest: with one voice note being heard and 100 messages queued behind it in its chat
    (a busy group), every newer update stayed out of sight, a button press and another
    chat's message included. Held updates are now parked in state.db, so the offset moves
    past them; a kill then loses none of them."""
    async with FakeTelegram() as telegram, FakeOpenAI() as llm:
        env = bot_env_with_voice(tmp_path, telegram, llm)
        env["AUGURE_ALLOWED_USERS"] = f"{OWNER},{FRIEND}"
        process = await launch(env)
        try:
            await telegram.wait_polling(timeout=20)
            llm.responder = echo
            telegram.inject_message(OWNER, "/start")
            await until_true(lambda: len(telegram.messages(OWNER)) == 1, "/start answered")
            greeting = telegram.messages(OWNER)[0]["message_id"]
            llm.transcription_text = "call the bank"
            llm.transcription_delay = 120
            telegram.inject_message(OWNER, voice=b"OggS fake opus bytes")
            await until_true(lambda: len(llm.transcriptions) == 1, "the transcription began")
            for n in range(100):  # each waits for the voice note: the chat's order
                telegram.inject_message(OWNER, f"queued{n}")
            press = telegram.press_button(OWNER, greeting, "ap:none:approve", forged=True)
            telegram.inject_message(FRIEND, "hello")

            await until_true(lambda: echoed(telegram, FRIEND) == ["hello"], "friend answered")
            await until_true(
                lambda: any(a.get("callback_query_id") == press for a in telegram.callback_answers),
                "the button press answered",
            )
            # ...while the voice note is still being heard and its chat still waits: nothing
            # was said in it since the greeting (not even that the note could not be heard).
            assert [m["message_id"] for m in telegram.messages(OWNER)] == [greeting]
        finally:
            await kill(process)

        # Killed mid-transcription: the parked updates come back from state.db (Telegram was
        # told it may forget them), the voice note from Telegram; each answered once.
        llm.transcription_delay = 0
        process = await launch(env)
        try:
            await until_true(lambda: "queued99" in echoed(telegram, OWNER), "queue answered")
            await telegram.wait_idle(quiet=1.0, timeout=20)
            words = echoed(telegram, OWNER)
            assert [w for w in words if w.startswith("queued")] == [
                f"queued{n}" for n in range(100)
            ]
            assert words.count("bank") == 1, words
            assert echoed(telegram, FRIEND) == ["hello"]
        finally:
            await kill(process)


def times_handed_out(telegram: FakeTelegram, update_id: int) -> int:
    return sum(
        1
        for call in telegram.calls
        if call.method == "getUpdates"
        and any(u.get("update_id") == update_id for u in call.response.get("result", []))
    )


async def test_a_text_message_is_fetched_once_not_again_while_it_is_being_stored(
    bot: Bot,
) -> None:
    """The offset is held at an update until it is stored, and Telegram answers at once a
    poll that would bring it back: for a text message, stored in a moment, the next poll
    waits for that moment instead of fetching it again (a round trip and a parse per
    message). A voice note, heard for seconds, still does not hold other chats up (above)."""
    bot.llm.responder = echo
    for word in ("first", "second", "third"):
        bot.telegram.inject_message(OWNER, word)
        update_id = bot.telegram._next_update_id - 1
        await until_true(lambda w=word: echoed(bot.telegram, OWNER)[-1:] == [w], f"{word} answered")
        await bot.telegram.wait_idle(quiet=0.3, timeout=10)
        assert times_handed_out(bot.telegram, update_id) == 1, word
