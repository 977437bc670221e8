"""Small real audio files for the fakes: an OGG/Opus voice note (what Telegram plays and
`/audio/speech` returns for `opus`) and a WAV (what many local speech servers return)."""

from __future__ import annotations

import io
import struct
import wave

# An Opus packet of 20 ms of silence (CELT-only, full band, one frame).
SILENT_FRAME = b"\xf8\xff\xfe"
SAMPLE_RATE = 48_000


def _crc(data: bytes) -> int:
    """The Ogg page checksum: CRC-32, polynomial 0x04C11DB7, not reflected, starting at 0."""
    crc = 0
    for byte in data:
        crc ^= byte << 24
        for _ in range(8):
            crc = ((crc << 1) ^ 0x04C11DB7) if crc & 0x80000000 else crc << 1
            crc &= 0xFFFFFFFF
    return crc


def _page(packet: bytes, flags: int, granule: int, sequence: int) -> bytes:
    lacing = [255] * (len(packet) // 255) + [len(packet) % 255]
    header = struct.pack(
        "<4sBBqIIIB", b"OggS", 0, flags, granule, 0x5A5A, sequence, 0, len(lacing)
    ) + bytes(lacing)
    checksum = _crc(header + packet)
    return header[:22] + struct.pack("<I", checksum) + header[26:] + packet


def ogg_opus(seconds: float = 1.0) -> bytes:
    """A valid OGG/Opus stream of silence: the identification and comment headers, then one
    page of 20 ms packets."""
    head = b"OpusHead" + struct.pack("<BBHIhB", 1, 1, 312, SAMPLE_RATE, 0, 0)
    tags = b"OpusTags" + struct.pack("<I", 4) + b"fake" + struct.pack("<I", 0)
    frames = max(1, int(seconds / 0.02))
    pages = [_page(head, 0x02, 0, 0), _page(tags, 0x00, 0, 1)]
    audio = b"".join(SILENT_FRAME for _ in range(min(frames, 80)))
    # One packet per frame would need its own lacing value each; a single packet holding the
    # frames' bytes is enough for players and checks that read the headers.
    pages.append(_page(audio, 0x04, 312 + frames * 960, 2))
    return b"".join(pages)


def wav(seconds: float = 0.5, rate: int = 24_000) -> bytes:
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(rate)
        out.writeframes(b"\x00\x00" * int(seconds * rate))
    return buffer.getvalue()


def is_ogg_opus(data: bytes) -> bool:
    """An Ogg stream whose first page is a valid Opus identification header."""
    if not data.startswith(b"OggS") or len(data) < 28:
        return False
    segments = data[26]
    body_start = 27 + segments
    length = sum(data[27:body_start])
    page = data[: body_start + length]
    stored = struct.unpack("<I", page[22:26])[0]
    zeroed = page[:22] + b"\x00\x00\x00\x00" + page[26:]
    return _crc(zeroed) == stored and page[body_start:].startswith(b"OpusHead")
