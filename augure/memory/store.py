"""Long-term memory: markdown files under one folder, and the slice of them the prompt gets."""

from __future__ import annotations

import os
import shutil
from pathlib import Path, PurePosixPath

from augure.common import data_files
from augure.common.errors import NotDone

IDENTITY = "identity.md"
# (file, line number from 1, line); named here because `MemoryStore.list` hides `list` there.
Matches = list[tuple[str, int, str]]

# What identifies a file's version without reading it: name, inode (a write here, or an
# editor's save, replaces the file), modification time and size.
FileVersion = tuple[tuple[str, ...], int, int, int]
Versions = list[FileVersion]  # named here: inside MemoryStore, `list` is a method


class MemoryPathError(NotDone):
    pass


def template_dir() -> Path | None:
    """The `memory/` templates: beside the package in a checkout, or installed as data."""
    for candidate in data_files.candidates("memory"):
        if (candidate / IDENTITY).is_file():
            return candidate
    return None


class MemoryStore:
    def __init__(self, root: Path) -> None:
        self.root = root
        # The last prompt section and what it was built from: the folder is only listed
        # (no file read) on a turn where nothing changed.
        self._section: tuple[int, Versions, str] | None = None

    def ensure(self) -> None:
        """Create the folder; on first run, copy the templates (never overwrite the owner's)."""
        self.root.mkdir(parents=True, exist_ok=True)
        templates = template_dir()
        if templates is None:
            return
        for source in templates.glob("*.md"):
            target = self.root / source.name
            if not target.exists():
                shutil.copyfile(source, target)

    def resolve(self, relative: str) -> Path:
        """The file `relative` names, or MemoryPathError if it would leave the folder."""
        text = relative.strip().replace("\\", "/")
        if not text:
            raise MemoryPathError("path is empty")
        if "\x00" in text:
            raise MemoryPathError("path contains a NUL byte")
        pure = PurePosixPath(text)
        if pure.is_absolute() or text.startswith("~"):
            raise MemoryPathError(f"{relative!r} is absolute; use a path relative to memory/")
        if ".." in pure.parts:
            raise MemoryPathError(f"{relative!r} contains '..'; memory paths stay inside memory/")
        target = self.root.joinpath(*pure.parts)
        # A symlink anywhere on the way could point outside: compare the real locations.
        real_root = self.root.resolve()
        real_target = target.resolve()
        if real_target != real_root and real_root not in real_target.parents:
            raise MemoryPathError(f"{relative!r} leads outside memory/ (through a symlink)")
        return target

    def list(self) -> list[tuple[str, int]]:
        """(relative path, size in bytes) of every file, sorted by path."""
        if not self.root.is_dir():
            return []
        entries = []
        for path in sorted(self.root.rglob("*")):
            if path.is_file() and not path.is_symlink():
                entries.append((path.relative_to(self.root).as_posix(), path.stat().st_size))
        return entries

    def read(self, relative: str) -> str:
        path = self.resolve(relative)
        if not path.is_file():
            raise FileNotFoundError(f"no memory file {relative!r}")
        return path.read_text(encoding="utf-8", errors="replace")

    def write(self, relative: str, content: str) -> Path:
        path = self.resolve(relative)
        path.parent.mkdir(parents=True, exist_ok=True)
        # Write then rename, so a crash never leaves half a memory file.
        temporary = path.with_name(f".{path.name}.tmp")
        temporary.write_text(content, encoding="utf-8")
        os.replace(temporary, path)
        # The new file may get the inode number the old one just freed: never trust the
        # cached section across a write made here.
        self._section = None
        return path

    def search(self, query: str, only: str | None = None) -> Matches:
        """(file, line number from 1, line) of every line holding all of `query`'s words,
        in any case and order; in every file, or in `only`."""
        words = query.casefold().split()
        if not words:
            return []
        names = [only] if only is not None else [name for name, _ in self.list()]
        found: Matches = []
        for name in names:
            for number, line in enumerate(self.read(name).splitlines(), start=1):
                folded = line.casefold()
                if all(word in folded for word in words):
                    found.append((name, number, line))
        return found

    def prompt_section(self, max_tokens: int) -> str:
        """Memory for the system prompt, within about `max_tokens` (4 characters a token).

        Identity comes first. Other files follow newest first; a file that does not fit
        keeps its end, where the newest observations are appended.
        """
        versions = self._markdown_versions()
        if self._section is not None and self._section[:2] == (max_tokens, versions):
            return self._section[2]
        text = self._build_section(max_tokens, versions)
        self._section = (max_tokens, versions, text)
        return text

    def _markdown_versions(self) -> Versions:
        """Every `.md` file, sorted by path as `list` sorts it; symlinks are not followed."""
        found: Versions = []
        pending: list[tuple[Path, tuple[str, ...]]] = [(self.root, ())]
        while pending:
            folder, parts = pending.pop()
            try:
                entries = list(os.scandir(folder))
            except (FileNotFoundError, NotADirectoryError):
                continue
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    pending.append((Path(entry.path), (*parts, entry.name)))
                elif entry.name.endswith(".md") and entry.is_file(follow_symlinks=False):
                    status = entry.stat(follow_symlinks=False)
                    version = (status.st_ino, status.st_mtime_ns, status.st_size)
                    found.append(((*parts, entry.name), *version))
        found.sort()
        return found

    def _build_section(self, max_tokens: int, versions: Versions) -> str:
        budget = max_tokens * 4
        mtimes = {"/".join(parts): mtime for parts, _, mtime, _ in versions}
        ordered = [IDENTITY] if IDENTITY in mtimes else []
        others = [name for name in mtimes if name != IDENTITY]
        others.sort(key=mtimes.__getitem__, reverse=True)
        ordered += others
        sections: list[str] = []
        for name in ordered:
            if budget <= 0:
                break
            body = self.read(name).strip()
            if not body:
                continue
            header = f"## {name}\n"
            room = budget - len(header)
            if room <= 0:
                break
            if len(body) > room:
                body = body[:room] if name == IDENTITY else "…" + body[-(room - 1) :]
            sections.append(header + body)
            budget -= len(header) + len(body) + 2
        return "\n\n".join(sections)
