"""The dashboard's pages, in menu order (SPEC §12). A page is one module here (its `PAGE`)
and its template(s); adding one is adding it to this list.

The background-tasks page (list and cancel, SPEC §12) comes from the orchestration branch:
it is added as `pages/tasks.py` + `templates/tasks.html`, listed after "Skills" below.
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
    # background tasks: tasks.PAGE goes here
    usage.PAGE,
    memory.PAGE,
)
