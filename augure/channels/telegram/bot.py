"""The Telegram channel: translates updates into agent turns and replies into messages."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import defaultdict
from collections.abc import Callable, Coroutine, Sequence
from typing import Any

from telegram import BotCommand, Update
from telegram.constants import ChatType
from telegram.ext import (
    ApplicationHandlerStop,
    CallbackQueryHandler,
    CommandHandler,
    ContextTypes,
    MessageHandler,
    TypeHandler,
    filters,
)

from augure.channels.telegram.application import build_application as build_application
from augure.channels.telegram.approvals import approvals_command, on_button
from augure.channels.telegram.channel import TelegramChannel
from augure.channels.telegram.commands import (
    COMMANDS,
    HELP,
    OWNER_ONLY,
    in_owners_private_chat,
    jobs_report,
    memory_report,
    status_report,
)
from augure.channels.telegram.dashboard import dashboard_reply
from augure.channels.telegram.fold import Folder
from augure.channels.telegram.inbound import (
    WHAT_I_TAKE,
    addressed,
    as_forwarded,
    as_text,
    in_group,
    without_mention,
)
from augure.channels.telegram.ledger import UpdateLedger
from augure.channels.telegram.media import document_text, photo_content, voice_bytes
from augure.channels.telegram.personas import PREFIX as PERSONA
from augure.channels.telegram.personas import on_persona_button, persona_command
from augure.channels.telegram.polling import PollingBot
from augure.channels.telegram.skills import skills_report
from augure.channels.telegram.start_failure import start_failure
from augure.channels.telegram.streaming import StreamingReply
from augure.channels.telegram.tasks import PREFIX as TASK
from augure.channels.telegram.tasks import on_cancel_button, tasks_command
from augure.channels.telegram.usage import usage_report
from augure.channels.telegram.voice import reply_by_voice
from augure.common.content import Content
from augure.common.errors import UsageError
from augure.config.settings import Config
from augure.core.front import Front, StateError, StoreBusy
from augure.core.lifespan import Augure, Companion
from augure.host.home import HomeError, HomeLock
from augure.llm.faults import LLMError
from augure.tools.base import Tool

log = logging.getLogger(__name__)

Context = ContextTypes.DEFAULT_TYPE
Handler = Callable[[Update, Context], Coroutine[Any, Any, None]]
KINDS_AS_TEXT = filters.LOCATION | filters.VENUE | filters.CONTACT | filters.Sticker.ALL
NOT_ALLOWED = "You are not allowed to use this bot."


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
        self.allowed = set(config.telegram.allowed_users)
        self.streaming = config.telegram.streaming
        self._front: Front | None = None
        app = self.application
        app.add_handler(TypeHandler(Update, self._gate), group=-1)
        app.add_handler(CommandHandler("start", self._start))
        app.add_handler(CommandHandler("help", self._help))
        app.add_handler(CommandHandler("new", self._new))
        app.add_handler(self._for_owner("status", self._status))
        app.add_handler(self._for_owner("approvals", self._approvals))
        app.add_handler(self._for_owner("jobs", self._jobs))
        app.add_handler(self._for_owner("pause", self._pause))
        app.add_handler(self._for_owner("resume", self._resume))
        app.add_handler(self._for_owner("skills", self._skills))
        app.add_handler(CallbackQueryHandler(self._button, pattern=r"^(ap|rv):"))
        app.add_handler(self._for_owner("usage", self._usage))
        app.add_handler(self._for_owner("memory", self._memory))
        app.add_handler(CommandHandler("persona", self._persona))
        app.add_handler(self._for_owner("tasks", self._tasks))
        app.add_handler(CallbackQueryHandler(self._task_button, pattern=f"^{TASK}"))
        app.add_handler(self._for_owner("dashboard", self._dashboard))
        app.add_handler(CallbackQueryHandler(self._persona_button, pattern=f"^{PERSONA}"))
        app.add_handler(MessageHandler(filters.COMMAND, self._help))
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
        self.folder = Folder(self._answer, self._report, config.telegram.fold_seconds)
        self.home_lock = home_lock

    @property
    def ledger(self) -> UpdateLedger:
        bot = self.application.bot
        assert isinstance(bot, PollingBot), "the application is built by build_application"
        return bot.ledger

    @property
    def front(self) -> Front:
        assert self._front is not None, "updates are handled only once the core is open"
        return self._front

    async def open(self, front: Front) -> None:
        """Sending works from here on (recovery's notices go out through the channel)."""
        self._front = front
        self.folder.inbox = front
        try:
            await self.application.initialize()
            await self.application.start()
        except Exception as exc:
            raise UsageError(start_failure(exc, self.config)) from None

    async def listen(self) -> None:
        assert self.application.updater is not None
        await self.folder.hand_back()  # before polling: what waited comes first, in order
        await self.ledger.open(self.front)  # Telegram resends what a previous run took
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
        self._spawn(self.front.warm_up())

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
        commands = [BotCommand(name, text) for name, text in COMMANDS.items()]
        try:
            await self.application.bot.set_my_commands(commands)
        except Exception as exc:  # the menu is a convenience; the bot works without it
            log.warning("setMyCommands failed: %s", exc)

    def _for_owner(self, command: str, handler: Handler) -> CommandHandler[Any, None]:
        """A command that shows the owner's data or changes the owner's set-up: answered in
        the owner's private chat only, elsewhere by one line saying so (docs/security.md)."""

        async def guarded(update: Update, context: Context) -> None:
            if in_owners_private_chat(update, self.config.owner_chat):
                await handler(update, context)
            else:
                await self._say(update, OWNER_ONLY.format(command=command))

        return CommandHandler(command, guarded)

    def _in_order(self, handler: Handler) -> Handler:
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

    async def _gate(self, update: Update, context: Context) -> None:
        if self.home_lock is not None:
            self.home_lock.note_update()
        user = update.effective_user
        allowed = user is not None and user.id in self.allowed
        message = update.message
        if in_group(message):
            # In a group the bot stays silent for everyone else, and for allowed users
            # unless they address it (docs/reference/telegram.md#groups).
            assert message is not None
            if allowed and addressed(message, context.bot.bot):
                return
            raise ApplicationHandlerStop
        if allowed:
            return
        if update.callback_query is not None:
            alert = None if in_group(update.callback_query.message) else NOT_ALLOWED
            await update.callback_query.answer(alert, show_alert=alert is not None)
        elif (
            update.effective_chat is not None
            and update.effective_chat.type == ChatType.PRIVATE
            and user
        ):
            await self.delivery.send_text(
                update.effective_chat.id,
                f"This is a private assistant. Your Telegram user id is {user.id}.",
            )
            log.info("refused a message from user %s", user.id)
        raise ApplicationHandlerStop

    async def _start(self, update: Update, context: Context) -> None:
        await self._say(update, "Hello! I am Augure, your assistant.\n\n" + HELP)

    async def _help(self, update: Update, context: Context) -> None:
        await self._say(update, HELP)

    async def _new(self, update: Update, context: Context) -> None:
        assert update.effective_chat is not None
        await self.front.new_conversation(str(update.effective_chat.id))
        await self._say(update, "Started a fresh conversation.")

    async def _status(self, update: Update, context: Context) -> None:
        await self._say(update, await status_report(self.front))

    async def _approvals(self, update: Update, context: Context) -> None:
        assert update.effective_chat is not None
        await approvals_command(self.front, self.delivery, update.effective_chat.id)

    async def _button(self, update: Update, context: Context) -> None:
        await on_button(self.front, update, context)

    async def _persona(self, update: Update, context: Context) -> None:
        assert update.effective_chat is not None
        await persona_command(
            self.front, self.delivery, update.effective_chat.id, context.args or []
        )

    async def _dashboard(self, update: Update, context: Context) -> None:
        assert update.effective_chat is not None
        private = update.effective_chat.type == ChatType.PRIVATE
        await self._say(update, dashboard_reply(self.front, private))

    async def _persona_button(self, update: Update, context: Context) -> None:
        await on_persona_button(self.front, update, context)

    async def _tasks(self, update: Update, context: Context) -> None:
        assert update.effective_chat is not None
        await tasks_command(self.front, self.delivery, update.effective_chat.id)

    async def _task_button(self, update: Update, context: Context) -> None:
        await on_cancel_button(self.front, update, context)

    async def _jobs(self, update: Update, context: Context) -> None:
        await self._say(update, await jobs_report(self.front))

    async def _pause(self, update: Update, context: Context) -> None:
        await self.front.pause_jobs(True)
        await self._say(
            update, "Scheduled jobs paused; chatting still works. /resume restarts them."
        )

    async def _resume(self, update: Update, context: Context) -> None:
        await self.front.pause_jobs(False)
        await self._say(update, "Scheduled jobs resumed.")

    async def _skills(self, update: Update, context: Context) -> None:
        await self._say(update, await skills_report(self.front))

    async def _say(self, update: Update, text: str) -> None:
        assert update.effective_chat is not None
        await self.delivery.send_text(update.effective_chat.id, text)

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
                heard = await self.front.transcribe(*await voice_bytes(message))
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
        front = self.front
        turn_id = front.new_turn_id()
        stream = None
        # A spoken answer is not streamed: the voice note carries its text as one message.
        by_voice = self.config.voice.speaks(spoken_in)
        if self.streaming and not by_voice:

            async def shown(message_id: int, text: str) -> None:
                await front.preview_shown(turn_id, message_id, text)

            stream = StreamingReply(self.delivery, chat_id, shown)
        async with self.delivery.typing(chat_id):
            reply = await front.converse(
                str(chat_id),
                contents[0],
                stream=stream,
                turn_id=turn_id,
                follow_ups=contents[1:],
                received=received,
                later=lambda: self.folder.later(chat_id),
            )
        if by_voice:
            await reply_by_voice(self.delivery, front, chat_id, reply.text, reply.sources)
        elif stream is not None:
            await stream.finish(reply.text, reply.sources)
        else:
            await self.delivery.send_markdown(chat_id, reply.text, reply.sources)
        await front.delivered(turn_id)
        for artifact in reply.artifacts:
            await self.channel.deliver(str(chat_id), artifact)

    async def _usage(self, update: Update, context: Context) -> None:
        assert update.effective_chat is not None
        await self._say(update, await usage_report(self.front, str(update.effective_chat.id)))

    async def _memory(self, update: Update, context: Context) -> None:
        await self._say(update, memory_report(self.front))

    async def _error(self, update: object, context: Context) -> None:
        chat = update.effective_chat if isinstance(update, Update) else None
        await self._report(chat.id if chat is not None else None, context.error)

    async def _report(self, chat_id: int | None, error: BaseException | None) -> None:
        if isinstance(error, StoreBusy):
            log.warning("a message could not be handled: %s", error)
            text = "I could not store your message: my database is busy. Please try again."
        else:
            log.error("error while handling an update", exc_info=error)
            # The class name means nothing to the owner; the log has it, with the traceback.
            text = (
                "Something went wrong on my side and that message was not handled (the details "
                "are in the log). Please send it again; if it keeps failing, /new starts afresh."
            )
        if chat_id is None:
            return
        try:
            await self.delivery.send_text(chat_id, text)
        except Exception:
            log.exception("could not report the error to the chat")


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
        async with running as front:
            log.info(startup.summary(config, front.tools(), bot.application.bot.username))
            log.info("Augure is running; stop with Ctrl-C")
            await stop.wait()
            log.info("stopping")
    except (HomeError, StateError) as exc:
        raise UsageError(str(exc)) from None
