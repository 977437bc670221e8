"""Static scan of a skill's files before install: refuse what a plain skill never needs.

A skill is instructions (SKILL.md), optional code (skill.py, run by the code-mode runtime) and
canned test answers (test.json): short readable text calling the tools it declares. Malicious
skills hide a payload instead, so each rule flags one way of hiding or escaping:

- `binary`, `not-utf8`: NUL bytes, an ELF/PE/zip/gzip header, bytes that are not UTF-8: a
  binary in a skill is something to run.
- `hidden-text`: bidi overrides, zero-width, Unicode tag and control characters, which make
  text read differently to the owner than to the model or to Python.
- `download-and-run`: `curl … | sh`, `wget -O- … | bash`, `bash <(curl …)`, `sh -c "$(curl …)"`,
  PowerShell `iwr … | iex` or `-EncodedCommand`, `base64 -d | sh`, `chmod +x` after a
  download: how "install the prerequisites" becomes "run anything".
- `encoded-blob`: 120+ characters of base64 or hex (or `\\x` escapes): a payload no one reviews.
- `obfuscation` (skill.py, via `ast`): `exec`, `eval`, `compile`, `__import__`, `globals()`,
  `locals()`, `vars()`, `getattr`/`setattr`/`delattr` with a computed name, dunders
  (`__class__`, `__subclasses__`, `__globals__`, `__builtins__`…), strings or bytes built from
  more than 20 codes, `bytes.fromhex`, `codecs`, `base64` and kin, `.decode("rot13")`: ways to
  run code the scan cannot read, or to climb out of the sandbox through object internals.
- `dangerous-import`: `os`, `subprocess`, `socket` and other modules that reach past `api`;
  `dangerous-name`: a file other than SKILL.md, skill.py and test.json (a skill from a GitHub
  hub may carry other files, `scripts/` and `references/`: each is scanned as text, and a
  script runs only through `sandbox_exec`).
- `syntax-error`: skill.py that does not parse cannot be checked.
- `exfiltration`: declared tools that read the owner's data (memory, mail, files, ...) next
  to tools that send requests anywhere unasked (`http` GET, `browser`).
- `undeclared-tool`: `api.<tool>` (or `from api import tool`) not in the declared tools;
  `indirect-tool`: `api` used other than as `api.<tool>`, so its calls cannot be checked;
  `unknown-tool`: a declared tool this Augure does not have.

Ordinary code (f-strings, loops, functions, `import api`, `api.memory_read(...)`) scans clean.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass

from augure.skills.model import FILES

VERDICT_LIMIT = 500
# Tools that read what only the owner has, and tools that reach any server a URL names with
# no approval (a GET still carries data in its URL). Search and GitHub queries go to the
# provider the owner chose, which the author of a skill cannot read.
PRIVATE_SOURCES = frozenset(
    {
        "memory_read",
        "email",
        "calendar",
        "files",
        "github",
        "read_output",
        "sandbox_exec",
        "opencode",
    }
)
SILENT_EGRESS = frozenset({"http", "browser"})
MAX_CHR = 20

MAGIC = {b"\x7fELF": "an ELF executable", b"\x1f\x8b": "gzip data", b"PK\x03\x04": "a zip archive"}
HIDDEN = re.compile(
    "[\u200b\u2060\ufeff\u202a-\u202e\u2066-\u2069\U000e0000-\U000e007f"
    "\x00-\x08\x0b\x0e-\x1f\x7f-\x9f]"
)
# Every repetition is bounded: a hostile hub must not make the scan crawl (a 256 KiB line of
# "curl curl curl ..." would be quadratic with `.*`).
_SHELL = (
    r"\|\s*(?:sudo\s+)?(?:[\w./-]{0,60}/)?(?:(?:ba|z|da|k|fi)?sh|python[0-9.]*|perl|ruby|node)\b"
)
_IEX = r"\b(?:iex|invoke-expression)\b"
_PS_FETCH = r"\b(?:iwr|irm|invoke-webrequest|invoke-restmethod|downloadstring|net\.webclient)\b"
DOWNLOAD_AND_RUN = [
    (rf"\b(?:curl|wget)\b.{{0,300}}{_SHELL}", "pipes a download into a shell"),
    (rf"\b(?:base64|openssl|xxd)\b.{{0,300}}{_SHELL}", "pipes decoded text into a shell"),
    (r"(?:\b(?:ba|z|k)?sh|\bsource|^\.|\s\.)\s{1,9}<\(\s{0,9}(?:curl|wget)\b", "runs a download"),
    (
        r"\b(?:(?:ba|z|k)?sh\s{1,9}-c|eval)\s{1,9}[\"']?\$\(\s{0,9}(?:curl|wget)\b",
        "runs a download",
    ),
    (rf"{_IEX}.{{0,300}}{_PS_FETCH}|{_PS_FETCH}.{{0,300}}{_IEX}", "PowerShell runs a download"),
    (r"\bpowershell\b.{0,300}\s-e(?:nc|ncodedcommand)?\s", "PowerShell encoded command"),
]
# Commands that save a download to a file (mere mentions of curl are not enough).
DOWNLOAD = re.compile(
    r"\bcurl\b.{0,300}(?:\s-[a-z]{0,9}o\b|--output|>)|\bwget\s+\S"
    r"|\b(?:iwr|invoke-webrequest)\b.{0,300}-outfile",
    re.I,
)
CHMOD_X = re.compile(
    r"\bchmod\s{1,9}(?:-\w{1,9}\s{1,9}){0,3}"
    r"(?:[ugoa]{0,4}\+[rwxs]{0,3}x|[0-7]{0,3}[1357][0-7]{0,3}\b)"
)
BLOB = re.compile(r"[A-Za-z0-9+/_-]{120,}={0,2}|(?:\\x[0-9a-fA-F]{2}){60,}")
HEX = re.compile(r"^(?:[0-9a-fA-F]+|(?:\\x[0-9a-fA-F]{2})+)$")

RUN_NAMES = {"exec", "eval", "compile", "__import__", "globals", "locals", "vars", "breakpoint"}
ATTR_FUNCTIONS = {"getattr", "setattr", "delattr"}
SAFE_DUNDERS = {"__name__", "__doc__", "__main__"}
ENCODING_MODULES = {"base64", "binascii", "codecs", "zlib", "bz2", "lzma", "marshal", "pickle"}
DANGEROUS_MODULES = {
    *("os", "subprocess", "socket", "ctypes", "importlib", "builtins", "sys", "shutil", "pty"),
    *("multiprocessing", "threading", "signal", "inspect", "gc", "code", "runpy", "urllib"),
    *("http", "requests", "httpx", "ftplib", "smtplib", "telnetlib", "asyncio", "io"),
}
CODECS = {"rot13", "rot_13", "hex", "hex_codec", "base64", "base64_codec", "zlib", "bz2", "uu"}


@dataclass(frozen=True)
class Finding:
    file: str
    line: int  # 1-based, 0 when not applicable
    rule: str
    detail: str


@dataclass(frozen=True)
class ScanResult:
    findings: list[Finding]

    @property
    def ok(self) -> bool:
        return not self.findings

    def verdict(self) -> str:
        """`clean`, or every finding on one line (cut at 500 characters)."""
        if self.ok:
            return "clean"
        parts = [
            f"{f.rule}@{f.file}{f':{f.line}' if f.line else ''} {f.detail}" for f in self.findings
        ]
        text = " ".join(f"refused: {len(self.findings)} finding(s): {'; '.join(parts)}".split())
        return text if len(text) <= VERDICT_LIMIT else text[: VERDICT_LIMIT - 3] + "..."


def scan(
    files: dict[str, bytes],
    declared_tools: Sequence[str],
    known_tools: Collection[str],
    *,
    companions: bool = False,
) -> ScanResult:
    """`companions`: the skill comes in the Agent Skills layout, whose other files
    (scripts/, references/, assets) are allowed beside it and scanned as text."""
    findings: list[Finding] = []
    order = {name: index for index, name in enumerate(FILES)}
    for name in sorted(files, key=lambda n: (order.get(n, len(order)), n)):
        findings += _scan_file(name, files[name], declared_tools, companions)
    findings += [
        Finding("SKILL.md", 0, "unknown-tool", f"declares tool {tool!a}, which Augure lacks")
        for tool in declared_tools
        if tool not in known_tools
    ]
    findings += _exfiltration(declared_tools)
    # A blob seen in its line and again in its string literal is one finding.
    return ScanResult(list(dict.fromkeys(findings)))


def _exfiltration(declared: Sequence[str]) -> list[Finding]:
    """A skill that can both read the owner's data and send requests out without asking
    could post memory to anyone's server every five minutes: refused, whatever its code
    looks like (a payload can hide in a URL's query string)."""
    sources = sorted(set(declared) & PRIVATE_SOURCES)
    sinks = sorted(set(declared) & SILENT_EGRESS)
    if not sources or not sinks:
        return []
    return [
        Finding(
            "SKILL.md",
            0,
            "exfiltration",
            f"declares {', '.join(sources)} (the owner's data) with {', '.join(sinks)} "
            "(requests out without approval)",
        )
    ]


def _scan_file(name: str, data: bytes, declared: Sequence[str], companions: bool) -> list[Finding]:
    shown = name if name in FILES else ascii(name)
    expected = name in FILES or companions
    found = [] if expected else [Finding(shown, 0, "dangerous-name", "unexpected file")]
    kind = _binary(data)
    if kind:
        return [*found, Finding(shown, 0, "binary", f"is {kind}")]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        return [*found, Finding(shown, line, "not-utf8", "is not UTF-8 text")]
    found += _text(shown, text)
    return found + _python(text, declared) if name == "skill.py" else found


def _binary(data: bytes) -> str | None:
    for magic, kind in MAGIC.items():
        if data.startswith(magic):
            return kind
    # A PE file starts with MZ and points at its "PE\0\0" header: checked, so prose may say MZ.
    if data.startswith(b"MZ") and len(data) >= 64:
        offset = int.from_bytes(data[60:64], "little")
        if data[offset : offset + 4] == b"PE\x00\x00":
            return "a Windows executable"
    return "binary (NUL bytes)" if b"\x00" in data else None


def _snippet(text: str) -> str:
    text = text.strip()
    return ascii(text if len(text) <= 60 else text[:57] + "...")


def _text(name: str, text: str) -> list[Finding]:
    found: list[Finding] = []
    downloaded = False
    # Split on \n only: splitlines() also breaks at \x0b, \x1c or \x85, which would hide them
    # from HIDDEN and put line numbers out of step with Python's.
    for number, line in enumerate(text.split("\n"), 1):
        probe = line[1:] if number == 1 and line.startswith("\ufeff") else line
        hidden = HIDDEN.search(probe)
        if hidden:
            why = f"invisible or control character {hidden.group()!a}"
            found.append(Finding(name, number, "hidden-text", why))
        runs = [why for pattern, why in DOWNLOAD_AND_RUN if re.search(pattern, line, re.I)]
        downloaded = downloaded or bool(DOWNLOAD.search(line))
        if downloaded and CHMOD_X.search(line):
            runs.append("makes a download executable")
        found += [
            Finding(name, number, "download-and-run", f"{why}: {_snippet(line)}") for why in runs
        ]
        found += [Finding(name, number, "encoded-blob", why) for why in _blobs(line)]
    return found


def _blobs(text: str) -> Iterator[str]:
    for match in BLOB.finditer(text):
        blob = match.group()
        if len(set(blob)) < 10:  # separator lines like ------ or ______
            continue
        kind = "hex" if HEX.match(blob) else "base64"
        yield f"{len(blob)} characters of {kind}"


def _python(source: str, declared: Sequence[str]) -> list[Finding]:
    try:
        tree = ast.parse(source, filename="skill.py")
    except SyntaxError as exc:
        return [Finding("skill.py", exc.lineno or 0, "syntax-error", f"does not parse: {exc.msg}")]
    except (ValueError, RecursionError, MemoryError):
        return [Finding("skill.py", 0, "syntax-error", "does not parse")]
    checker = _Checker(set(declared))
    try:
        checker.visit(tree)
    except RecursionError:
        checker.flag(0, "obfuscation", "nested too deeply to check")
    return checker.found


def _dunder(name: str) -> bool:
    return len(name) > 4 and name.startswith("__") and name.endswith("__")


def _long_chr_join(arg: ast.expr) -> bool:
    """Whether a `.join(...)` argument builds more than MAX_CHR characters with `chr`."""
    if not any(isinstance(n, ast.Name) and n.id == "chr" for n in ast.walk(arg)):
        return False
    if isinstance(arg, ast.List | ast.Tuple):
        return len(arg.elts) > MAX_CHR
    if isinstance(arg, ast.GeneratorExp | ast.ListComp):
        sources = [g.iter for g in arg.generators]
    elif isinstance(arg, ast.Call) and isinstance(arg.func, ast.Name) and arg.func.id == "map":
        sources = arg.args[1:]
    else:
        return True
    # A computed source has no length the scan can see: assume the worst.
    return any(not isinstance(s, ast.List | ast.Tuple) or len(s.elts) > MAX_CHR for s in sources)


class _Checker(ast.NodeVisitor):
    def __init__(self, declared: set[str]) -> None:
        self.declared = declared
        self.found: list[Finding] = []
        self.tools_reported: set[str] = set()

    def flag(self, line: int, rule: str, detail: str) -> None:
        self.found.append(Finding("skill.py", line, rule, detail))

    def tool(self, node: ast.stmt | ast.expr, name: str) -> None:
        if name not in self.declared and name not in self.tools_reported:
            self.tools_reported.add(name)
            self.flag(node.lineno, "undeclared-tool", f"api.{name} is not in the skill's tools")

    def module(self, node: ast.stmt, name: str) -> None:
        root = name.split(".")[0]
        if root in ENCODING_MODULES:
            self.flag(node.lineno, "obfuscation", f"imports {name}")
        elif root in DANGEROUS_MODULES:
            self.flag(node.lineno, "dangerous-import", f"imports {name}")

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if alias.name == "api" and alias.asname not in (None, "api"):
                self.flag(node.lineno, "indirect-tool", f"imports api as {alias.asname}")
            self.module(node, alias.name)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.module != "api":
            self.module(node, node.module or ".")
            return
        for alias in node.names:
            if alias.name == "*":
                self.flag(node.lineno, "indirect-tool", "from api import *")
            else:
                self.tool(node, alias.name)

    def visit_Name(self, node: ast.Name) -> None:
        if node.id in RUN_NAMES:
            self.flag(node.lineno, "obfuscation", f"uses {node.id}")
        elif node.id in ATTR_FUNCTIONS:
            self.flag(node.lineno, "obfuscation", f"uses {node.id} other than as a plain call")
        elif node.id == "api":
            self.flag(node.lineno, "indirect-tool", "uses api other than as api.<tool>(...)")
        elif _dunder(node.id) and node.id not in SAFE_DUNDERS:
            self.flag(node.lineno, "obfuscation", f"uses {node.id}")

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if isinstance(node.value, ast.Name) and node.value.id == "api":
            if _dunder(node.attr):
                self.flag(node.lineno, "obfuscation", f"uses api.{node.attr}")
            else:
                self.tool(node, node.attr)
            return
        if _dunder(node.attr) and node.attr not in SAFE_DUNDERS:
            self.flag(node.lineno, "obfuscation", f"uses attribute {node.attr}")
        elif node.attr == "fromhex":
            self.flag(node.lineno, "obfuscation", "decodes hex with fromhex")
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if isinstance(func, ast.Name) and func.id in ATTR_FUNCTIONS:
            name = node.args[1] if len(node.args) > 1 else None
            if not (isinstance(name, ast.Constant) and isinstance(name.value, str)):
                self.flag(node.lineno, "obfuscation", f"{func.id} with a computed name")
            for child in [*node.args, *node.keywords]:
                self.visit(child)
            return
        if isinstance(func, ast.Attribute) and node.args:
            first = node.args[0]
            if func.attr == "join" and _long_chr_join(first):
                self.flag(node.lineno, "obfuscation", "builds a string from chr() codes")
            codec = first.value if isinstance(first, ast.Constant) else None
            if func.attr in ("decode", "encode") and str(codec).lower().replace("-", "_") in CODECS:
                self.flag(node.lineno, "obfuscation", f"{func.attr}s with {codec!a}")
        codes = node.args[0] if node.args else None
        literal = isinstance(codes, ast.List | ast.Tuple) and len(codes.elts) > MAX_CHR
        if literal and isinstance(func, ast.Name) and func.id in ("bytes", "bytearray"):
            self.flag(node.lineno, "obfuscation", f"builds {func.id} from number codes")
        self.generic_visit(node)

    def visit_BinOp(self, node: ast.BinOp) -> None:
        if not isinstance(node.op, ast.Add):
            self.generic_visit(node)
            return
        # Flattened without recursion: a long `chr(..) + chr(..) + ...` chain is deep.
        operands: list[ast.expr] = []
        pending: list[ast.expr] = [node]
        while pending:
            item = pending.pop()
            if isinstance(item, ast.BinOp) and isinstance(item.op, ast.Add):
                pending += [item.right, item.left]
            else:
                operands.append(item)
        chrs = sum(
            isinstance(o, ast.Call) and isinstance(o.func, ast.Name) and o.func.id == "chr"
            for o in operands
        )
        if chrs > MAX_CHR:
            self.flag(node.lineno, "obfuscation", f"builds a string from {chrs} chr() calls")
        for operand in operands:
            self.visit(operand)

    def visit_Constant(self, node: ast.Constant) -> None:
        if not isinstance(node.value, str):
            return
        if _dunder(node.value) and node.value not in SAFE_DUNDERS:
            self.flag(node.lineno, "obfuscation", f"string names {_snippet(node.value)}")
        # Implicitly joined literals ("abc" "def") hide a blob from the line-by-line check.
        for why in _blobs(node.value):
            self.flag(node.lineno, "encoded-blob", why)
