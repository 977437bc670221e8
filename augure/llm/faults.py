"""Why a model call failed, as data, and how that is told: to the owner in the chat, and by
`augure doctor` and `augure init` in the same words (docs/reference/spend.md for the
faults a fallback may cure)."""

from __future__ import annotations

from enum import Enum

from augure.common.errors import AugureError
from augure.config.settings import Config, source_of

OPENAI_URL = "https://api.openai.com/v1"
OPENAI_BILLING = "https://platform.openai.com/settings/organization/billing"


class Fault(Enum):
    """Why a model call failed, as data: `retryable` when asking again (later, or another
    model) may work; `too_long` when the request does not fit the model's context; `named`
    when only the owner can fix it, with a line saying how (`fault_line`, shared with
    `augure doctor`)."""

    KEY = ("key", False, False)  # the key was refused
    ACCESS = ("access", False, False)  # the key may not use the model
    MODEL = ("model", False, False)  # the model is unknown
    ENDPOINT = ("endpoint", False, False)  # the address has no chat endpoint
    QUOTA = ("quota", False, False)  # credit or spending limit used up: waiting won't help
    TOO_LONG = ("too long", False, True)  # the conversation does not fit the context
    RATE_LIMITED = ("rate limited", True, False)
    UNAVAILABLE = ("unavailable", True, False)  # a 5xx
    TIMEOUT = ("timeout", True, False)
    UNREACHABLE = ("unreachable", True, False)
    # A [budget] cap: no call was made, and only the owner (or the next period) lifts it.
    BUDGET = ("budget", False, False)

    def __init__(self, label: str, retryable: bool, too_long: bool) -> None:
        self.label = label
        self.retryable = retryable
        self.too_long = too_long

    @property
    def named(self) -> bool:
        return not self.retryable


class LLMError(AugureError):
    """The endpoint failed after the SDK's retries; the message is fit for the owner.
    `fault` says why, when the status or the failure tells (see `Fault`)."""

    def __init__(
        self,
        message: str,
        status: int | None = None,
        *,
        fault: Fault | None = None,
        model: str = "",
    ) -> None:
        super().__init__(message)
        self.status = status
        self.fault = fault
        self.model = model


def classify(status: int, code: object, message: str) -> Fault | None:
    """The fault an error status names that only the owner can fix; None for the others."""
    if status == 401:
        return Fault.KEY
    if status == 403:
        return Fault.ACCESS
    if status == 404:
        named_model = code == "model_not_found" or "model" in message.lower()
        return Fault.MODEL if named_model else Fault.ENDPOINT
    if status == 413 or code == "context_length_exceeded":
        return Fault.TOO_LONG
    if status == 429 and code == "insufficient_quota":
        return Fault.QUOTA
    return None


def status_fault(status: int, code: object, message: str) -> Fault | None:
    if status == 429 or status >= 500:
        return classify(status, code, message) or (
            Fault.RATE_LIMITED if status == 429 else Fault.UNAVAILABLE
        )
    return classify(status, code, message)


def fault_line(
    fault: Fault,
    status: int,
    url: str,
    model: str,
    *,
    key_from: str,
    url_from: str,
    model_from: str,
    history_from: str = "not set: set [agent] history_tokens in augure.toml",
) -> str:
    """The one line `augure doctor` and a failed chat turn both give for a `named` fault."""
    if fault is Fault.KEY:
        return f"{url} rejected the API key ({status}): {_fix(key_from)}"
    if fault is Fault.ACCESS:
        both = f"{_fix(model_from)} or {_fix(key_from).removeprefix('fix ')}"
        return f"{url} does not let this API key use the model {model!r} ({status}): {both}"
    if fault is Fault.MODEL:
        return f"{url} does not know the model {model!r}: {_fix(model_from)}"
    if fault is Fault.QUOTA:
        billing = f" ({OPENAI_BILLING})" if url == OPENAI_URL else ""
        return (
            f"{url} says the quota of this API key is used up ({status}): add credit or raise "
            f"the limit on the provider's billing page{billing}, or change plan"
        )
    if fault is Fault.TOO_LONG:
        return (
            f"{url} cannot take a conversation this long for the model {model!r} ({status}): "
            f"send /new to start a fresh one, or lower the history sent: {_fix(history_from)}"
        )
    return f"{url} has no chat completions endpoint ({status}): {_fix(url_from)}"


def _fix(source: str) -> str:
    """`source_of`'s phrase as an instruction: "fix" a value that is set, else where to set it."""
    unset = "not set: "
    return source.removeprefix(unset) if source.startswith(unset) else f"fix {source}"


# What the default endpoint answers when nothing was set up: nothing (offline), or a refusal
# of the missing key (online).
UNSET_UP = (Fault.UNREACHABLE, Fault.TIMEOUT, Fault.KEY)


def set_up(config: Config) -> bool:
    """Some endpoint was chosen: a URL, or a key for the default one."""
    return config.llm.base_url is not None or config.llm.api_key is not None


def not_set_up(exc: LLMError, config: Config) -> bool:
    """The call failed because no endpoint was ever chosen."""
    return exc.fault in UNSET_UP and not set_up(config)


def explain(exc: LLMError, config: Config) -> str:
    """What went wrong; for a fault only the owner can cure, what to do and which setting, in
    the words of `augure doctor`."""
    if not_set_up(exc, config):
        return f"no model is set up (I tried {OPENAI_URL} with no API key): run `augure init`"
    if exc.fault is None or not exc.fault.named or exc.status is None:
        return str(exc)
    return fault_line(
        exc.fault,
        exc.status,
        config.llm.base_url or OPENAI_URL,
        exc.model or config.llm.model,
        key_from=source_of(config, "llm", "api_key"),
        url_from=source_of(config, "llm", "base_url"),
        model_from=source_of(config, "llm", "model"),
        history_from=source_of(config, "agent", "history_tokens"),
    )


def for_owner(exc: LLMError, config: Config) -> str:
    """A failed model call, told in the chat: "try again" only when trying again may work."""
    retryable = exc.fault is None or exc.fault.retryable
    again = " Please try again." if retryable and not not_set_up(exc, config) else ""
    return f"Sorry, I could not get an answer: {explain(exc, config)}.{again}"
