"""A real CalDAV server for the calendar tests: Radicale, started on loopback with its own
storage folder and one htpasswd user, stopped at the end. The tests talk to it with the real
caldav client, as the tool does."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import caldav

USER = "owner"
PASSWORD = "calendar-secret-8c1f"
START_SECONDS = 30.0


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


class Radicale:
    """`python -m radicale` with htpasswd logins (plain text, the test's own file)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    def settings(self, **changes: Any) -> dict[str, Any]:
        """`[tools.calendar]` for this server."""
        return {"url": self.url, "username": USER, "password": PASSWORD, **changes}

    def __enter__(self) -> Radicale:
        (self.folder / "storage").mkdir(parents=True, exist_ok=True)
        users = self.folder / "users"
        users.write_text(f"{USER}:{PASSWORD}\n", encoding="utf-8")
        config = self.folder / "config"
        config.write_text(
            "[server]\n"
            f"hosts = 127.0.0.1:{self.port}\n"
            "[auth]\n"
            "type = htpasswd\n"
            f"htpasswd_filename = {users}\n"
            "htpasswd_encryption = plain\n"
            # A wrong password is answered at once (the default waits a few seconds).
            "delay = 0\n"
            "[storage]\n"
            f"filesystem_folder = {self.folder / 'storage'}\n"
            "[rights]\n"
            "type = owner_only\n"
            "[logging]\n"
            "level = warning\n",
            encoding="utf-8",
        )
        log = (self.folder / "radicale.log").open("wb")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "radicale", "--config", str(config)],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + START_SECONDS
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(self.log())
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", self.port)):
                return self
            time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"radicale did not listen within {START_SECONDS:g} s: {self.log()}")

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def log(self) -> str:
        return (self.folder / "radicale.log").read_text(errors="replace")[-2000:]

    # What the tests set up and read back, with the real client.

    def client(self) -> caldav.DAVClient:
        return caldav.DAVClient(self.url, username=USER, password=PASSWORD, timeout=10)

    def calendar(self, name: str) -> caldav.Calendar:
        """The calendar of that name, made when missing."""
        principal = self.client().principal()
        for found in principal.calendars():
            if found.get_display_name() == name:
                return found
        return principal.make_calendar(name=name)

    def put(self, name: str, ical: str) -> None:
        self.calendar(name).save_event(ical)

    def events(self, name: str) -> list[str]:
        """Every event of that calendar, as iCalendar text."""
        return [str(event.data) for event in self.calendar(name).events()]

    def clear(self) -> None:
        principal = self.client().principal()
        for found in principal.calendars():
            found.delete()
