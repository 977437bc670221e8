"""A small, fixed embedding model for the fakes and the recall bench: each concept is one
dimension, and the words of a concept (synonyms, near kin) all point along it, so texts
sharing no word can still be close. Words outside the table land in one of a few hashed
dimensions with a small weight: deterministic, and never as strong as a shared concept."""

from __future__ import annotations

import hashlib
import math
import re

CONCEPTS: dict[str, tuple[str, ...]] = {
    "vehicle": ("car", "automobile", "vehicle", "sedan", "hatchback", "motor"),
    "dog": ("dog", "puppy", "canine", "hound", "pup", "doggy"),
    "cat": ("cat", "kitten", "feline", "kitty"),
    "medicine": ("doctor", "physician", "clinic", "gp", "medic", "surgeon", "dentist"),
    "money": ("money", "salary", "pay", "wage", "income", "paycheck", "earnings"),
    "flight": ("flight", "plane", "airport", "airline", "fly", "boarding"),
    "home": ("house", "apartment", "flat", "home", "rent", "lease", "landlord"),
    "food": ("food", "meal", "dinner", "lunch", "restaurant", "cuisine", "eat"),
    "music": ("music", "song", "concert", "band", "album", "gig"),
    "sport": ("sport", "football", "tennis", "match", "gym", "workout"),
    "family": ("mother", "father", "sister", "brother", "mum", "dad", "sibling", "parent"),
    "birthday": ("birthday", "anniversary", "born", "celebration"),
    "computer": ("computer", "laptop", "pc", "notebook", "desktop"),
    "phone": ("phone", "mobile", "cellphone", "smartphone"),
    "password": ("password", "passphrase", "pin", "passcode", "credential"),
    "allergy": ("allergy", "allergic", "intolerant", "intolerance", "reaction"),
    "book": ("book", "novel", "reading", "author", "paperback"),
    "garden": ("garden", "plants", "flowers", "lawn", "gardening"),
    "work": ("job", "work", "office", "employer", "career", "colleague"),
    "holiday": ("holiday", "vacation", "trip", "getaway", "journey"),
}
HASHED = 8
HASHED_WEIGHT = 0.25
DIMENSIONS = len(CONCEPTS) + HASHED
_AXIS = {word: index for index, words in enumerate(CONCEPTS.values()) for word in words}
_WORD = re.compile(r"[a-z0-9]+")


def embed(text: str) -> list[float]:
    vector = [0.0] * DIMENSIONS
    for word in _WORD.findall(text.lower()):
        axis = _AXIS.get(word)
        if axis is None:
            bucket = int(hashlib.sha256(word.encode()).hexdigest(), 16) % HASHED
            vector[len(CONCEPTS) + bucket] += HASHED_WEIGHT
        else:
            vector[axis] += 1.0
    length = math.sqrt(sum(v * v for v in vector)) or 1.0
    return [v / length for v in vector]
