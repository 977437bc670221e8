"""`http`: one request to an outside API, with owner-defined presets for base URLs and secrets.

Every hop of a request passes the SSRF guard (redirects are followed here, never by httpx),
secret preset headers go only to the preset's own origin, and only GET follows redirects, so
an approved write can never be moved to another URL by the server.

`settings` is the `[tools.http]` section, `targets` what the owner's rules match, `request` the
request itself (`render`: how its response reads), `tool` the declaration. The request and
its rendering load at the tool's first call, not at the bot's start (docs/performance.md).
"""

from augure.tools.http.settings import HttpSettings, Preset, RequestError, load_settings
from augure.tools.http.targets import rule, target
from augure.tools.http.tool import http_tool

__all__ = [
    "HttpSettings",
    "Preset",
    "RequestError",
    "http_tool",
    "load_settings",
    "rule",
    "target",
]
