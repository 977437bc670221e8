"""A real mail server for tests: dovecot (IMAP) plus an aiosmtpd sink that delivers into it.

Config choices, so several instances can run side by side and nothing touches /etc:

- dovecot runs in the foreground (`dovecot -F -c <conf>`) from a config generated in a temp
  dir; `base_dir`, `state_dir`, the log and the maildirs all live there, and it listens on
  127.0.0.1 on a free port only, IMAP only, no TLS (`ssl = no`) and cleartext logins
  allowed, since the traffic never leaves loopback.
- Logins come from a passwd-file with plaintext passwords; a static userdb maps every user
  to `<tmp>/mail/<user>` (maildir). As root, dovecot refuses to give mail to uid 0, so the
  mail files belong to `nobody` (present on every Debian system); as an ordinary user,
  dovecot runs entirely as that user (its internal and login users are set to it).
- `Sent` is auto-created with the `\\Sent` special-use flag, as real providers announce it.
- The SMTP sink accepts mail on another loopback port without TLS; AUTH is offered (checked
  against the same passwords) but not required, so tests can seed mail without logging in.
  Every message is recorded in `received` and appended to the INBOX of each recipient that
  is a known user, through IMAP as that user.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import signal
import smtplib
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from email.message import EmailMessage
from pathlib import Path
from typing import Any

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import SMTP, AuthResult, Envelope, LoginPassword, Session
from imapclient import IMAPClient

DOVECOT = shutil.which("dovecot") or "/usr/sbin/dovecot"
HOST = "127.0.0.1"

CONFIG = """\
protocols = imap
listen = {host}
base_dir = {root}/run
state_dir = {root}/state
log_path = {root}/dovecot.log
info_log_path = {root}/dovecot.log
ssl = no
disable_plaintext_auth = no
auth_failure_delay = 0
auth_mechanisms = plain login
first_valid_uid = 1
default_internal_user = {internal}
default_login_user = {login}
mail_location = maildir:{root}/mail/%u
passdb {{
  driver = passwd-file
  args = scheme=PLAIN username_format=%u {root}/passwd
}}
userdb {{
  driver = static
  args = uid={uid} gid={gid} home={root}/mail/%u
}}
namespace inbox {{
  inbox = yes
  separator = /
  mailbox Sent {{
    special_use = \\Sent
    auto = subscribe
  }}
}}
service imap-login {{
  inet_listener imap {{
    address = {host}
    port = {port}
  }}
  inet_listener imaps {{
    port = 0
  }}
}}
service anvil {{
  chroot =
}}
service imap-login {{
  chroot =
}}
"""

# Unprivileged, dovecot cannot give these sockets to its `dovecot` group; none is used here.
UNPRIVILEGED = """\
service stats {
  unix_listener stats-writer {
    group =
  }
}
service imap-hibernate {
  unix_listener imap-hibernate {
    group =
  }
}
service dict {
  unix_listener dict {
    group =
  }
}
service dict-async {
  unix_listener dict-async {
    group =
  }
}
"""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind((HOST, 0))
        port: int = probe.getsockname()[1]
        return port


def _require_dovecot_23() -> None:
    """The config below is in dovecot 2.3 syntax (Debian 12); 2.4 renamed most settings."""
    try:
        version = subprocess.run(
            [DOVECOT, "--version"], capture_output=True, text=True, check=True
        ).stdout
    except (OSError, subprocess.CalledProcessError) as exc:
        raise RuntimeError(f"dovecot is needed for the mail tests ({exc})") from None
    if not version.startswith("2.3"):
        raise RuntimeError(f"tests/fakes/mail.py writes a dovecot 2.3 config; found {version}")


@dataclass
class Received:
    mail_from: str
    rcpt_tos: list[str]
    data: bytes


class _Sink:
    def __init__(self, mail: FakeMail) -> None:
        self.mail = mail

    async def handle_DATA(self, server: SMTP, session: Session, envelope: Envelope) -> str:
        # Delivery blocks the sink's own loop (its thread) for a moment: fine for a test server.
        data = envelope.original_content or b""
        self.mail.received.append(
            Received(str(envelope.mail_from), list(envelope.rcpt_tos), bytes(data))
        )
        for rcpt in envelope.rcpt_tos:
            if rcpt.lower() in self.mail.users:
                self.mail.deliver(rcpt.lower(), data)
        return "250 OK"


class FakeMail:
    """`with FakeMail() as mail:` — dovecot and the SMTP sink, both ready on loopback."""

    def __init__(self, users: dict[str, str] | None = None) -> None:
        self.users = users or {
            "owner@example.com": "owner-mail-pass",
            "friend@example.com": "friend-mail-pass",
        }
        self.user = next(iter(self.users))
        self.password = self.users[self.user]
        self.host = HOST
        self.imap_port = 0
        self.smtp_port = 0
        self.received: list[Received] = []
        self._root: Path | None = None
        self._dovecot: subprocess.Popen[bytes] | None = None
        self._smtp: Controller | None = None

    def __enter__(self) -> FakeMail:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def tool_config(self) -> dict[str, Any]:
        """The `[tools.email]` table that points the email tool at this server."""
        return {
            "imap_host": self.host,
            "imap_port": self.imap_port,
            "imap_security": "none",
            "smtp_host": self.host,
            "smtp_port": self.smtp_port,
            "smtp_security": "none",
            "username": self.user,
            "password": self.password,
            "from_address": self.user,
        }

    def start(self) -> None:
        _require_dovecot_23()
        # Not pytest's tmp_path: as root the mail user must traverse it, and that is 0700.
        self._root = root = Path(tempfile.mkdtemp(prefix="augure-mail-"))
        root.chmod(0o711)
        if os.geteuid() == 0:
            owner = pwd.getpwnam("nobody")
            uid, gid = owner.pw_uid, owner.pw_gid
            internal, login = "dovecot", "dovenull"
        else:
            uid, gid = os.getuid(), os.getgid()
            internal = login = pwd.getpwuid(uid).pw_name
        (root / "passwd").write_text(
            "".join(f"{user}:{{PLAIN}}{password}::::::\n" for user, password in self.users.items())
        )
        mail_root = root / "mail"
        mail_root.mkdir()
        os.chown(mail_root, uid, gid)
        try:
            self._start_dovecot(root, uid, gid, internal, login)
            self._start_smtp()
        except BaseException:
            self.stop()
            raise

    def _start_dovecot(self, root: Path, uid: int, gid: int, internal: str, login: str) -> None:
        for _attempt in range(3):  # another process may take the free port before dovecot
            self.imap_port = free_port()
            conf = root / "dovecot.conf"
            conf.write_text(
                CONFIG.format(
                    host=HOST,
                    root=root,
                    port=self.imap_port,
                    uid=uid,
                    gid=gid,
                    internal=internal,
                    login=login,
                )
                + (UNPRIVILEGED if os.geteuid() != 0 else "")
            )
            # A config error goes to stderr, not to log_path: keep both for the failure message.
            with (root / "stderr.log").open("ab") as stderr:
                self._dovecot = subprocess.Popen(
                    [DOVECOT, "-F", "-c", str(conf)],
                    stdout=subprocess.DEVNULL,
                    stderr=stderr,
                    start_new_session=True,
                )
            if self._wait_for_port(self.imap_port, self._dovecot):
                return
            self._kill_dovecot()
        logs = [root / "stderr.log", root / "dovecot.log"]
        text = "".join(log.read_text(errors="replace") for log in logs if log.exists())
        raise RuntimeError(f"dovecot did not start:\n{text[-2000:]}")

    @staticmethod
    def _wait_for_port(port: int, process: subprocess.Popen[bytes]) -> bool:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if process.poll() is not None:
                return False
            with contextlib.suppress(OSError), socket.create_connection((HOST, port), 0.2) as s:
                if s.recv(64).startswith(b"* OK"):  # the login process answers, not just binds
                    return True
            time.sleep(0.02)
        return False

    def _start_smtp(self) -> None:
        def authenticate(
            server: SMTP, session: Session, envelope: Envelope, mechanism: str, data: Any
        ) -> AuthResult:
            if isinstance(data, LoginPassword):
                user = data.login.decode().lower()
                if self.users.get(user) == data.password.decode():
                    return AuthResult(success=True)
            return AuthResult(success=False, handled=False)

        self.smtp_port = free_port()
        self._smtp = Controller(
            _Sink(self),
            hostname=HOST,
            port=self.smtp_port,
            authenticator=authenticate,
            auth_require_tls=False,
        )
        self._smtp.start()

    def _kill_dovecot(self) -> None:
        if self._dovecot is None:
            return
        if self._dovecot.poll() is None:
            self._dovecot.send_signal(signal.SIGTERM)
            try:
                self._dovecot.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(self._dovecot.pid, signal.SIGKILL)
                self._dovecot.wait()
        self._dovecot = None

    def stop(self) -> None:
        if self._smtp is not None:
            self._smtp.stop()
            self._smtp = None
        self._kill_dovecot()
        if self._root is not None:
            shutil.rmtree(self._root, ignore_errors=True)
            self._root = None

    # What tests use to seed and to look.

    @contextlib.contextmanager
    def imap(self, user: str | None = None) -> Iterator[IMAPClient]:
        user = user or self.user
        client = IMAPClient(self.host, port=self.imap_port, ssl=False, timeout=10)
        try:
            client.login(user, self.users[user])
            yield client
        finally:
            with contextlib.suppress(Exception):
                client.logout()

    def deliver(
        self, user: str, data: bytes, folder: str = "INBOX", when: datetime | None = None
    ) -> None:
        """Put a message straight into a folder; `when` sets its arrival (INTERNALDATE)."""
        with self.imap(user) as client:
            client.append(folder, data, msg_time=when)

    def clear(self) -> None:
        """Empty every folder of every user and forget what the sink received."""
        self.received.clear()
        for user in self.users:
            with self.imap(user) as client:
                for _flags, _sep, folder in client.list_folders():
                    client.select_folder(folder)
                    uids = client.search("ALL")
                    if uids:
                        client.delete_messages(uids)
                        client.expunge()

    def send(self, message: EmailMessage) -> None:
        """Seed mail the way it really arrives: over SMTP, through the sink."""
        with smtplib.SMTP(self.host, self.smtp_port, timeout=10) as smtp:
            smtp.send_message(message)

    def flags(self, uid: int, folder: str = "INBOX", user: str | None = None) -> set[bytes]:
        with self.imap(user) as client:
            client.select_folder(folder, readonly=True)
            found: tuple[bytes, ...] = client.get_flags([uid]).get(uid, ())
            return set(found)

    def messages(self, folder: str = "INBOX", user: str | None = None) -> dict[int, bytes]:
        """Every message in a folder by uid, read without marking anything seen."""
        with self.imap(user) as client:
            client.select_folder(folder, readonly=True)
            uids = client.search("ALL")
            fetched = client.fetch(uids, [b"BODY.PEEK[]"]) if uids else {}
            return {uid: data[b"BODY[]"] for uid, data in fetched.items()}


__all__ = ["FakeMail", "Received", "free_port"]
