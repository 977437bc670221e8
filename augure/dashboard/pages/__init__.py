"""The dashboard's pages, in menu order (docs/reference/dashboard.md#pages). A page is one module
here (its `PAGE`) and its template(s); adding one is adding it to this list.
"""

from __future__ import annotations

from augure.dashboard.pages import (
    approvals,
    invocations,
    jobs,
    memory,
    overview,
    rules,
    skills,
    tasks,
    usage,
)
from augure.dashboard.web import Page

PAGES: tuple[Page, ...] = (
    overview.PAGE,
    approvals.PAGE,
    invocations.PAGE,
    rules.PAGE,
    jobs.PAGE,
    skills.PAGE,
    tasks.PAGE,
    usage.PAGE,
    memory.PAGE,
)
