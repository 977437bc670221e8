"""The root of every error Augure raises on purpose, and the kinds a caller catches.

Every exception class in augure/ derives from `AugureError` through one kind; an error that a
library or the standard library must also recognise keeps that base too (said at the class).
A caller that must tell failures apart catches a kind or a class of it, never `Exception`
for these. tests/unit/test_errors.py checks the tree below against the classes that exist.

    AugureError
    ├── UsageError               the owner's to fix: what they typed or set up; one line
    │   ├── ConfigError          config/settings.py
    │   │   ├── _UnknownToolSection   config/settings.py
    │   │   └── _InvalidToolSection   config/settings.py
    │   ├── NotJson              config/variables.py
    │   ├── HomeError            host/home.py
    │   ├── StateError           store/connection.py
    │   ├── BackupError          cli/backup.py
    │   └── HubSpecError         common/hubspec.py
    ├── LLMError                 llm/faults.py: the model endpoint failed, or was not asked
    │   └── BudgetReached        llm/spend.py
    ├── NotDone                  what was asked was not done; the message says why
    │   ├── ToolError            tools/result.py
    │   ├── CallFailed           codemode/runtime.py
    │   ├── _Stop                codemode/runtime.py
    │   ├── JobError             scheduler/jobs.py
    │   ├── CrontabError         scheduler/crontab.py
    │   ├── SkillError           skills/model.py
    │   ├── HubError             skills/hub.py
    │   ├── MemoryPathError      memory/store.py
    │   ├── AlreadyAnswered      store/inbox.py
    │   ├── BlockedURL           tools/netguard.py
    │   ├── RequestError         tools/http/settings.py
    │   ├── SearchError          tools/web_search.py
    │   ├── WhenError            tools/recall.py
    │   ├── FilesError           tools/files.py
    │   ├── BrowserError         tools/browser/session.py
    │   ├── PageUnread           tools/page_text.py
    │   ├── PdfRefused           tools/pdf_text.py
    │   ├── PdfUnreadable        tools/pdf_text.py
    │   ├── OversizedAnswer      mcp/limits.py
    │   ├── EventError           tools/calendar/events.py
    │   ├── EventNotFound        tools/calendar/server.py
    │   └── AnswerTooLarge       mcp/http.py
    └── Unavailable              a part Augure relies on is missing, busy or down
        ├── StoreBusy            store/connection.py
        ├── ServerDown           mcp/client.py
        ├── SpeechError          llm/speech.py
        ├── SandboxError         sandbox/base.py
        ├── SeccompUnavailable   sandbox/seccomp.py
        ├── LibseccompMissing    sandbox/libseccomp.py
        ├── UnknownSyscall       sandbox/libseccomp.py
        ├── Unreachable          tools/browser/proxy.py
        └── CalendarUnreachable  tools/calendar/server.py

Who catches which kind: the CLI prints a `UsageError` as one line and exits 1; the turn
loop ends the turn on an `LLMError` with a line for the owner; a `NotDone` ends what was
asked with its message, as a tool's result for the model or a reply for the owner; an
`Unavailable` part is gone without (the sandbox without seccomp, a voice reply as text),
retried, or named.
"""

from __future__ import annotations


class AugureError(Exception):
    """An error Augure raises on purpose; its message is one line, fit for whoever reads it."""


class UsageError(AugureError):
    """A mistake in what the owner typed or set up (the configuration, the home, the state
    file): printed as one line."""


class NotDone(AugureError):
    """What the owner or the model asked was not done; the message says why, in one line."""


class Unavailable(AugureError):
    """A part Augure relies on (a program, a library, a server, the store's lock) is missing,
    busy or down: the caller goes on without it, tries again later, or says so."""
