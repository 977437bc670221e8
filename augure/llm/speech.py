"""Spoken replies: text to an OGG/Opus voice note through the endpoint's `/audio/speech`
(docs/voice.md).

Telegram plays a voice note only in OGG/Opus. The endpoint is asked for `opus` first, which
OpenAI answers with exactly that; a server that cannot (many local ones speak WAV only) is
asked for `wav`, which `opusenc` (the Debian package opus-tools, a few hundred kB, checked by
`augure doctor`) turns into OGG/Opus. ffmpeg would read more formats but brings some eighty
packages; WAV is the one format every speech server offers.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import shutil
from dataclasses import dataclass
from typing import TYPE_CHECKING

from augure.common.errors import Unavailable
from augure.config.voice import VoiceConfig
from augure.llm.client import LLM

if TYPE_CHECKING:
    from openai import AsyncOpenAI

# The speech endpoint takes at most 4,096 characters per request.
PART_CHARS = 4000
# A longer answer is spoken in at most this many notes (about ten minutes); the text, which
# always arrives whole, has the rest.
MAX_PARTS = 3
THE_REST = "The rest is in the text."
CONVERT_SECONDS = 60.0
OPUSENC = "opusenc"


class SpeechError(Unavailable):
    """The synthesis failed; the message says why in one line, without the endpoint's body."""


@dataclass(frozen=True)
class Spoken:
    notes: list[bytes]  # OGG/Opus, in order
    characters: int  # what was sent to the endpoint, the unit speech is priced in


def is_ogg_opus(audio: bytes) -> bool:
    return audio.startswith(b"OggS") and b"OpusHead" in audio[:80]


def _is_wav(audio: bytes) -> bool:
    return audio.startswith(b"RIFF") and audio[8:12] == b"WAVE"


def converter() -> str | None:
    """The path of opusenc, or None when opus-tools is not installed."""
    return shutil.which(OPUSENC)


def speakable(markdown: str) -> list[str]:
    """The answer as it is read aloud, in parts the endpoint takes: Markdown's marks, link
    targets and code blocks left out."""
    text = re.sub(r"```.*?(```|$)", " (code in the text) ", markdown, flags=re.DOTALL)
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)  # [text](url) -> text
    text = re.sub(r"https?://\S+", "", text)
    text = re.sub(r"^[ \t]{0,3}(#{1,6}|[-*+]|>)[ \t]+", "", text, flags=re.MULTILINE)
    text = re.sub(r"[*_`~|]+", "", text)
    text = re.sub(r"[ \t]+", " ", re.sub(r"\n{2,}", "\n\n", text)).strip()
    parts: list[str] = []
    while text and len(parts) < MAX_PARTS:
        if len(text) <= PART_CHARS:
            parts.append(text)
            return parts
        cut = _boundary(text[:PART_CHARS])
        parts.append(text[:cut].strip())
        text = text[cut:].strip()
    if text and parts:
        parts[-1] = f"{parts[-1]} {THE_REST}"
    return parts


def _boundary(window: str) -> int:
    """Where to end a part: a paragraph, else a sentence, else a space, else anywhere."""
    for pattern in ("\n\n", ". ", "! ", "? ", "\n", " "):
        at = window.rfind(pattern)
        if at > len(window) // 2:
            return at + len(pattern)
    return len(window)


async def synthesize(llm: LLM, settings: VoiceConfig, markdown: str) -> Spoken:
    """The answer as OGG/Opus voice notes; SpeechError when it cannot be spoken."""
    parts = speakable(markdown)
    if not parts:
        raise SpeechError("nothing to say aloud")
    await llm.warm_up()
    from openai import DefaultAsyncHttpxClient  # imported by the warm-up, on a worker thread

    # The chat client treats any answer that is not JSON as a bad gateway (it guards against
    # proxies' HTML error pages); audio is not JSON, so speech has a client of its own, with
    # the same endpoint, key, timeout and retries.
    async with llm.client.with_options(http_client=DefaultAsyncHttpxClient()) as client:
        notes = [await _note(client, settings, part) for part in parts]
    return Spoken(notes, sum(len(part) for part in parts))


async def _note(client: AsyncOpenAI, settings: VoiceConfig, text: str) -> bytes:
    audio = await _speech(client, settings, text, "opus")
    if is_ogg_opus(audio):
        return audio
    if not _is_wav(audio):
        audio = await _speech(client, settings, text, "wav")
    if not _is_wav(audio):
        raise SpeechError("the endpoint returned neither OGG/Opus nor WAV audio")
    return await to_ogg_opus(audio)


async def _speech(
    client: AsyncOpenAI, settings: VoiceConfig, text: str, audio_format: str
) -> bytes:
    try:
        response = await client.audio.speech.create(
            model=settings.tts_model,
            voice=settings.voice,
            input=text,
            response_format=audio_format,  # type: ignore[arg-type]
        )
        return bytes(response.content)
    except Exception as exc:
        # The SDK's message may quote the endpoint's body; the class and status say enough.
        status = getattr(exc, "status_code", None)
        said = f"HTTP {status}" if status else type(exc).__name__
        raise SpeechError(f"the speech endpoint failed ({said})") from None


async def to_ogg_opus(wav: bytes) -> bytes:
    """WAV to OGG/Opus with opusenc, in a child process killed if it overruns."""
    program = converter()
    if program is None:
        raise SpeechError("converting the endpoint's WAV needs opusenc (apt install opus-tools)")
    process = await asyncio.create_subprocess_exec(
        program,
        "--quiet",
        "-",
        "-",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )
    try:
        out, _ = await asyncio.wait_for(process.communicate(wav), CONVERT_SECONDS)
    except TimeoutError:
        raise SpeechError(f"opusenc took over {CONVERT_SECONDS:g} s") from None
    finally:
        if process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            await process.wait()
    if process.returncode != 0 or not is_ogg_opus(out):
        raise SpeechError(f"opusenc could not convert the audio (exit {process.returncode})")
    return out
