"""The archive at 100,000 messages: query time, recall@5 with and without vectors, index size.

Generated chats of filler talk hold known facts; each labelled question asks for one in other
words (some share a name with it, some only a meaning). Full-text search alone is timed over
those questions and random ones; vectors come from the fakes' concept table
(tests/fakes/concepts.py), computed in process, so the figures measure the ranking and not
an endpoint. `python -m bench.recall [--messages N]`.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import tempfile
import time
from array import array
from dataclasses import dataclass
from pathlib import Path

from augure.memory.store import MemoryStore
from augure.store.archive import Archive, Window, closest
from augure.store.state import Store
from augure.store.vectors import normalised
from augure.tools.recall_search import Searcher
from tests.fakes import concepts

CHATS = 200
SEED = 30
COMMON = [
    "the",
    "a",
    "is",
    "to",
    "and",
    "of",
    "i",
    "you",
    "we",
    "it",
    "on",
    "at",
    "for",
    "my",
    "what",
    "when",
    "where",
    "this",
    "that",
    "so",
    "but",
    "not",
    "was",
    "be",
    "have",
    "do",
    "with",
    "just",
    "yes",
    "no",
    "ok",
    "think",
    "maybe",
    "later",
    "today",
    "tomorrow",
]
# (fact, question): the question asks for the fact in other words.
TEMPLATES = [
    ("I parked the sedan on level {n} of the {place} garage", "where did I leave the automobile"),
    ("My sister {name} was born on {date}", "when is {name}'s birthday"),
    ("The clinic appointment with Dr {name} is on {day}", "when do I see the physician"),
    ("My salary goes up to {n} euros in {month}", "what will my pay be"),
    ("Our flight to {city} boards at gate {n}", "which gate for the plane to {city}"),
    ("The landlord {name} wants the rent by the {n}th", "when is the apartment lease payment due"),
    ("{name}'s puppy is called {pet}", "what is the name of {name}'s dog"),
    ("The wifi passphrase at the {place} is {word}", "what is the password at the {place}"),
    ("I am allergic to {food}", "what food intolerance do I have"),
    ("The concert of {band} is on {day}", "when does {band} play their gig"),
]
NAMES = [
    "Ines",
    "Tomasz",
    "Keiko",
    "Oluwaseun",
    "Marit",
    "Dario",
    "Anouk",
    "Priya",
    "Soren",
    "Lucia",
    "Bram",
    "Yusuf",
]
PLACES = ["cabin", "bakery", "studio", "harbour", "library", "workshop"]
CITIES = ["Lisbon", "Oslo", "Kyoto", "Lagos", "Quito", "Tallinn"]
FOODS = ["sesame", "shellfish", "kiwi", "lupin", "mustard", "celery"]
BANDS = ["Glasswing", "Ochre", "Tidepool", "Marrowbone", "Lanterns", "Foxglove"]
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]
MONTHS = ["March", "April", "May", "June", "July", "August"]


@dataclass(frozen=True)
class Fact:
    chat: str
    text: str
    question: str


def _syllables(rng: random.Random, count: int) -> list[str]:
    parts = ["ka", "lo", "mi", "ten", "ru", "sa", "vel", "dor", "ni", "bo", "qua", "zel"]
    return ["".join(rng.choice(parts) for _ in range(rng.randint(2, 4))) for _ in range(count)]


def _filler(rng: random.Random, vocabulary: list[str], kin: list[str]) -> str:
    words = [rng.choice(COMMON if rng.random() < 0.45 else vocabulary) for _ in range(20)]
    if rng.random() < 0.05:  # real talk mentions dogs and flights that are no fact
        words[rng.randrange(len(words))] = rng.choice(kin)
    return " ".join(words[: rng.randint(8, 20)])


def _facts(rng: random.Random, count: int) -> list[Fact]:
    facts = []
    for index in range(count):
        fact, question = TEMPLATES[index % len(TEMPLATES)]
        values = {
            "n": rng.randint(2, 40),
            "name": NAMES[(index // len(TEMPLATES)) % len(NAMES)],
            "place": PLACES[index % len(PLACES)],
            "city": CITIES[(index // len(TEMPLATES)) % len(CITIES)],
            "date": f"{rng.randint(1, 28)} {rng.choice(MONTHS)}",
            "day": rng.choice(DAYS),
            "month": rng.choice(MONTHS),
            "pet": rng.choice(["Biscuit", "Pepper", "Juno"]),
            "word": rng.choice(["tangerine7", "orbit-42", "moss&fern"]),
            "food": FOODS[(index // len(TEMPLATES)) % len(FOODS)],
            "band": BANDS[(index // len(TEMPLATES)) % len(BANDS)],
        }
        chat = str(1000 + rng.randrange(CHATS))
        facts.append(Fact(chat, fact.format(**values), question.format(**values) + "?"))
    return facts


async def build(store: Store, total: int, facts: list[Fact]) -> float:
    """Fill the archive as turns do (a transaction per batch); the seconds it took."""
    rng = random.Random(SEED)
    vocabulary = _syllables(rng, 3000)
    kin = [word for words in concepts.CONCEPTS.values() for word in words]
    planted: dict[str, list[str]] = {}
    for fact in facts:
        planted.setdefault(fact.chat, []).append(fact.text)
    per_chat = total // CHATS
    started = time.perf_counter()
    for chat_index in range(CHATS):
        chat = str(1000 + chat_index)
        texts = [_filler(rng, vocabulary, kin) for _ in range(per_chat)]
        for text in planted.get(chat, []):
            texts[rng.randrange(len(texts))] = text
        conversation = await store.open_conversation(chat)
        roles = ("user", "assistant")
        for start in range(0, len(texts), 50):
            batch = texts[start : start + 50]
            messages = [{"role": roles[i % 2], "content": t} for i, t in enumerate(batch)]
            await store.add_messages(conversation, messages)
    return time.perf_counter() - started


async def embed_all(archive: Archive) -> float:
    started = time.perf_counter()
    while pending := await archive.unembedded("concepts", 2000):
        vectors = [normalised(concepts.embed(entry.text)) for entry in pending]
        await archive.store_vectors(
            "concepts", [(e.id, v) for e, v in zip(pending, vectors, strict=True)]
        )
    return time.perf_counter() - started


async def _embed(texts: list[str]) -> list[array[float]]:
    return [normalised(concepts.embed(text)) for text in texts]


async def recall_at_5(searcher: Searcher, facts: list[Fact]) -> float:
    found = 0
    for fact in facts:
        hits = await searcher.find(fact.question, Window(fact.chat), 5)
        found += any(fact.text in hit.excerpt or hit.excerpt in fact.text for hit in hits)
    return found / len(facts)


async def timings(searcher: Searcher, queries: list[tuple[str, str | None]]) -> list[float]:
    spent = []
    for query, chat in queries:
        started = time.perf_counter()
        await searcher.find(query, Window(chat), 10)
        spent.append((time.perf_counter() - started) * 1000)
    return spent


def _queries(facts: list[Fact], rng: random.Random) -> list[tuple[str, str | None]]:
    vocabulary = _syllables(random.Random(SEED), 3000)
    mixed = [f"{rng.choice(vocabulary)} {rng.choice(COMMON)} {rng.choice(vocabulary)}"]
    mixed += [" ".join(rng.sample(vocabulary, 2)) for _ in range(150)]
    return [(q, None) for q in mixed] + [(f.question, None) for f in facts]


def _spread(name: str, spent: list[float]) -> None:
    ordered = sorted(spent)
    p95 = ordered[int(len(ordered) * 0.95) - 1]
    print(f"{name}: median {statistics.median(spent):.2f} ms, p95 {p95:.2f} ms ({len(spent)} q)")


def index_bytes(db: Path) -> dict[str, int]:
    import sqlite3

    with sqlite3.connect(db) as connection:
        rows = connection.execute(
            "SELECT name, SUM(pgsize) FROM dbstat WHERE name LIKE 'archive%' "
            "OR name LIKE 'memory_vectors%' OR name = 'messages' GROUP BY name"
        ).fetchall()
    return {name: int(size) for name, size in rows}


def brute_force_ms(count: int, dimensions: int) -> float:
    rng = random.Random(SEED)
    blobs = [
        (i, normalised([rng.gauss(0, 1) for _ in range(dimensions)]).tobytes())
        for i in range(count)
    ]
    query = normalised([rng.gauss(0, 1) for _ in range(dimensions)])
    started = time.perf_counter()
    closest(query, blobs, 50)
    return (time.perf_counter() - started) * 1000


async def run(total: int) -> None:
    rng = random.Random(SEED)
    facts = _facts(rng, 60)
    with tempfile.TemporaryDirectory() as folder:
        db = Path(folder) / "state.db"
        store = await Store.open(db)
        try:
            seconds = await build(store, total, facts)
            print(f"built {total:,} messages in {CHATS} chats in {seconds:.1f} s")
            archive, memory = Archive(store.db), MemoryStore(Path(folder) / "memory")
            text_only = Searcher(archive, memory)
            _spread("full-text query, every chat", await timings(text_only, _queries(facts, rng)))
            one_chat = [(f.question, f.chat) for f in facts]
            _spread("full-text query, one chat", await timings(text_only, one_chat))
            print(f"recall@5 ({len(facts)} questions), full-text: "
                  f"{await recall_at_5(text_only, facts):.2f}")  # fmt: skip
            print(f"embedded in {await embed_all(archive):.1f} s (concept table, in process)")
            fused = Searcher(archive, memory, _embed, "concepts")
            print(f"recall@5 ({len(facts)} questions), fused with vectors: "
                  f"{await recall_at_5(fused, facts):.2f}")  # fmt: skip
            _spread("fused query, one chat", await timings(fused, one_chat))
            every_chat = [(f.question, None) for f in facts[:20]]
            _spread("fused query, every chat", await timings(fused, every_chat))
        finally:
            await store.close()
        for name, size in sorted(index_bytes(db).items()):
            print(f"on disk: {name} {size / 1e6:.1f} MB")
    for count, dimensions in ((10_000, 256), (10_000, 1536), (100_000, 256)):
        ms = brute_force_ms(count, dimensions)
        print(f"brute force, {count:,} vectors of {dimensions}: {ms:.0f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.recall")
    parser.add_argument("--messages", type=int, default=100_000)
    asyncio.run(run(parser.parse_args().messages))


if __name__ == "__main__":
    main()
