"""The Telegram channel: translates updates into agent turns and replies into messages."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import defaultdict
from collections.abc import Callable, Coroutine, Sequence
from functools import partial
from typing import Any

from telegram import BotCommand, Update
from telegram.ext import (
    CallbackQueryHandler,
    CommandHandler,
    ContextTypes,
    MessageHandler,
    TypeHandler,
    filters,
)

from augure.channels.telegram.allowed import AllowedUsers
from augure.channels.telegram.application import build_application as build_application
from augure.channels.telegram.channel import TelegramChannel
from augure.channels.telegram.commands import COMMANDS, HELP
from augure.channels.telegram.commands.command import Asked, Handler
from augure.channels.telegram.failures import report_failure
from augure.channels.telegram.fold import Folder
from augure.channels.telegram.inbound import (
    WHAT_I_TAKE,
    as_forwarded,
    as_text,
    in_group,
    without_mention,
)
from augure.channels.telegram.ledger import UpdateLedger
from augure.channels.telegram.media import document_text, photo_content, voice_bytes
from augure.channels.telegram.polling import PollingBot
from augure.channels.telegram.start_failure import start_failure
from augure.channels.telegram.streaming import StreamingReply
from augure.channels.telegram.voice import reply_by_voice
from augure.common.content import Content
from augure.common.errors import UsageError
from augure.config.settings import Config
from augure.core.door.doors import Door
from augure.core.door.errors import StateError
from augure.core.lifespan import Augure, Companion
from augure.host.home import HomeError, HomeLock
from augure.llm.faults import LLMError
from augure.tools.base import Tool

log = logging.getLogger(__name__)

Context = ContextTypes.DEFAULT_TYPE
UpdateCallback = Callable[[Update, Context], Coroutine[Any, Any, None]]
KINDS_AS_TEXT = filters.LOCATION | filters.VENUE | filters.CONTACT | filters.Sticker.ALL


class TelegramBot:
    """Telegram's inbound side: updates become turns and commands of the core, whose replies
    leave through the channel."""

    def __init__(
        self, *, config: Config, channel: TelegramChannel, home_lock: HomeLock | None = None
    ) -> None:
        self.config = config
        self.channel = channel
        self.application = channel.application
        self.delivery = channel.delivery
        self.streaming = config.telegram.streaming
        self._door: Door | None = None
        app = self.application
        allowed = AllowedUsers(set(config.telegram.allowed_users), self.delivery, home_lock)
        app.add_handler(TypeHandler(Update, allowed), group=-1)
        for command in COMMANDS:
            app.add_handler(CommandHandler(command.name, self._asking(command.run)))
            for button in command.buttons:
                pressed = self._asking(button.handler)
                app.add_handler(CallbackQueryHandler(pressed, pattern=button.pattern))
        app.add_handler(MessageHandler(filters.COMMAND, self._asking(HELP.run)))  # unknown ones
        ordered = self._in_order
        app.add_handler(MessageHandler(filters.TEXT, ordered(self._text)))
        app.add_handler(MessageHandler(filters.PHOTO, ordered(self._photo)))
        app.add_handler(
            MessageHandler(filters.Document.ALL & ~filters.ANIMATION, ordered(self._document))
        )
        app.add_handler(MessageHandler(filters.VOICE | filters.AUDIO, ordered(self._voice)))
        app.add_handler(MessageHandler(KINDS_AS_TEXT, ordered(self._kind_as_text)))
        # Anything else a person sends (video, poll, dice...), but not service messages
        # such as "X joined the group".
        app.add_handler(MessageHandler(~filters.StatusUpdate.ALL, self._unsupported))
        app.add_error_handler(self._error)
        self._background: set[asyncio.Task[Any]] = set()
        self._chat_order: defaultdict[int, asyncio.Lock] = defaultdict(asyncio.Lock)
        failed = partial(report_failure, self.delivery)
        self.folder = Folder(self._answer, failed, config.telegram.fold_seconds)

    @property
    def ledger(self) -> UpdateLedger:
        bot = self.application.bot
        assert isinstance(bot, PollingBot), "the application is built by build_application"
        return bot.ledger

    @property
    def door(self) -> Door:
        assert self._door is not None, "updates are handled only once the core is open"
        return self._door

    async def open(self, door: Door) -> None:
        """Sending works from here on (recovery's notices go out through the channel)."""
        self._door = door
        self.folder.inbox = door.chat
        try:
            await self.application.initialize()
            await self.application.start()
        except Exception as exc:
            raise UsageError(start_failure(exc, self.config)) from None

    async def listen(self) -> None:
        assert self.application.updater is not None
        await self.folder.hand_back()  # before polling: what waited comes first, in order
        await self.ledger.open(
            self.door.chat.deliveries
        )  # Telegram resends what a previous run took
        for update in await self.ledger.unparked(self.application.bot):
            await self.application.update_queue.put(update)  # Telegram will not resend these
        try:
            await self.application.updater.start_polling(
                allowed_updates=[Update.MESSAGE, Update.CALLBACK_QUERY], timeout=30
            )
        except Exception as exc:
            raise UsageError(start_failure(exc, self.config)) from None
        # After the first poll is out: nothing here should delay the bot's first answer.
        self._spawn(self._register_commands())
        self._spawn(self.door.chat.warm_up())

    async def close(self) -> None:
        # Bounded: `augure run` must stop within 10 s of SIGINT/SIGTERM (docs/operations.md).
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._stop(), STOP_SECONDS)

    async def _stop(self) -> None:
        # The lifespan has already stopped background work and rejected what waited for a
        # button: a turn blocked on approval would hold up python-telegram-bot's stop, which
        # waits for running handlers.
        for task in self._background:
            task.cancel()
        if self.application.updater and self.application.updater.running:
            await self.application.updater.stop()
        if self.application.running:
            await self.application.stop()  # waits for handlers: every message read is added
        await self.folder.close()  # and answered
        await self.channel.progress.close()  # no edit may go out once the bot is shut down
        await self.application.shutdown()

    def _spawn(self, coroutine: Any) -> None:
        task = asyncio.create_task(coroutine)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def _register_commands(self) -> None:
        commands = [BotCommand(command.name, command.menu) for command in COMMANDS]
        try:
            await self.application.bot.set_my_commands(commands)
        except Exception as exc:  # the menu is a convenience; the bot works without it
            log.warning("setMyCommands failed: %s", exc)

    def _asking(self, handler: Handler) -> UpdateCallback:
        async def asked(update: Update, context: Context) -> None:
            # The one place a command or a press is given the core's door.
            await handler(Asked(update, context, self.door, self.delivery))

        return asked

    def _in_order(self, handler: UpdateCallback) -> UpdateCallback:
        """Messages of one chat are read one at a time in arrival order: the lock is taken
        before the handler's first await (a download, a transcription), so a slow step of
        one message never lets the next one overtake it; the folder answers them in that
        order. Chats still run concurrently."""

        async def ordered(update: Update, context: Context) -> None:
            chat = update.effective_chat
            assert chat is not None
            with self.folder.reading(chat.id):
                async with self._chat_order[chat.id]:
                    await handler(update, context)

        return ordered

    async def _text(self, update: Update, context: Context) -> None:
        message = update.effective_message
        assert message is not None and message.text is not None
        text = without_mention(message.text, context.bot.bot) if in_group(message) else message.text
        await self._take(update, text)

    async def _kind_as_text(self, update: Update, context: Context) -> None:
        message = update.effective_message
        assert message is not None
        line = as_text(message)
        assert line is not None  # KINDS_AS_TEXT only lets such messages through
        await self._take(update, line)

    async def _unsupported(self, update: Update, context: Context) -> None:
        message = update.effective_message
        assert message is not None
        await self.delivery.send_text(message.chat_id, WHAT_I_TAKE)

    async def _photo(self, update: Update, context: Context) -> None:
        message = update.effective_message
        assert message is not None
        content = await photo_content(message, self.config)
        await self._take(update, content, message.media_group_id)

    async def _document(self, update: Update, context: Context) -> None:
        message = update.effective_message
        assert message is not None
        content = await document_text(message, self.config)
        await self._take(update, content, message.media_group_id)

    async def _voice(self, update: Update, context: Context) -> None:
        message = update.effective_message
        assert message is not None
        try:
            async with self.delivery.typing(message.chat_id):
                heard = await self.door.chat.transcribe(*await voice_bytes(message))
        except LLMError as exc:
            told = f"I could not listen to that voice note: {exc}."
            await self.delivery.send_text(message.chat_id, told)
            return
        await self._take(update, f"[Voice note, transcribed]: {heard}", spoken=True)

    async def _take(
        self, update: Update, content: Content, album: str | None = None, *, spoken: bool = False
    ) -> None:
        """The message stored in the inbox with its update's id, in one transaction."""
        assert update.effective_chat is not None and update.effective_message is not None
        chat_id = update.effective_chat.id
        content = as_forwarded(content, update.effective_message)
        await self.folder.take(
            chat_id, content, album, spoken=spoken, delivery=self.ledger.delivery_of(update)
        )
        self.ledger.recorded(update.update_id)

    async def _answer(
        self, chat_id: int, contents: list[Content], spoken_in: bool, received: list[int]
    ) -> None:
        """One turn for a batch of messages: typing while it works, the answer streamed, sent
        or spoken (`spoken_in`: the batch holds a voice note), then artifacts."""
        chat = self.door.chat
        turn_id = chat.new_turn_id()
        stream = None
        # A spoken answer is not streamed: the voice note carries its text as one message.
        by_voice = self.config.voice.speaks(spoken_in)
        if self.streaming and not by_voice:

            async def shown(message_id: int, text: str) -> None:
                await chat.preview_shown(turn_id, message_id, text)

            stream = StreamingReply(self.delivery, chat_id, shown)
        async with self.delivery.typing(chat_id):
            reply = await chat.converse(
                str(chat_id),
                contents[0],
                stream=stream,
                turn_id=turn_id,
                follow_ups=contents[1:],
                received=received,
                later=lambda: self.folder.later(chat_id),
            )
        if by_voice:
            await reply_by_voice(self.delivery, chat, chat_id, reply.text, reply.sources)
        elif stream is not None:
            await stream.finish(reply.text, reply.sources)
        else:
            await self.delivery.send_markdown(chat_id, reply.text, reply.sources)
        await chat.delivered(turn_id)
        for artifact in reply.artifacts:
            await self.channel.deliver(str(chat_id), artifact)

    async def _error(self, update: object, context: Context) -> None:
        chat = update.effective_chat if isinstance(update, Update) else None
        await report_failure(self.delivery, chat.id if chat is not None else None, context.error)


STOP_SECONDS = 8.0  # within the 10 s `augure run` has to stop (docs/operations.md)


async def serve(
    config: Config,
    stop: asyncio.Event,
    extra_tools: Sequence[Tool] = (),
    companions: Sequence[Companion] = (),
) -> None:
    """`augure run`: the bot until `stop` is set, with `companions` (the dashboard) served
    beside it. Raises UsageError when it cannot start."""
    from augure.core import startup

    token = config.telegram.token.get_secret_value() if config.telegram.token else ""
    if not token:
        raise UsageError("no Telegram token: set TELEGRAM_BOT_TOKEN (or telegram.token)")
    if not config.telegram.allowed_users:
        log.warning("AUGURE_ALLOWED_USERS is empty: the bot will answer nobody but with their id")
    home_lock = HomeLock(config.home)
    channel = TelegramChannel(config, build_application(config, token))
    bot = TelegramBot(config=config, channel=channel, home_lock=home_lock)
    running = Augure.running(
        config,
        approvers=[channel],
        notifier=channel,
        progress=channel.progress,
        extra_tools=extra_tools,
        inbound=bot,
        companions=companions,
        home_lock=home_lock,
    )
    try:
        async with running as door:
            log.info(startup.summary(config, door.running.tools(), bot.application.bot.username))
            log.info("Augure is running; stop with Ctrl-C")
            await stop.wait()
            log.info("stopping")
    except (HomeError, StateError) as exc:
        raise UsageError(str(exc)) from None
