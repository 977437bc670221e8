"""What a message says, as the model's API takes it: text, or a list of parts (text and
images). The channel, the inbox and the turn all carry it."""

from __future__ import annotations

from typing import Any

Content = str | list[dict[str, Any]]
