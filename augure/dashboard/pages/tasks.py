"""Background tasks (docs/reference/dashboard.md#pages): running ones first, then the newest, a page
at a time; each running one has a Cancel button that goes through the task manager, as /tasks's
button and
`task_cancel` do, so its work (and any process it started) is stopped.

Only the process running a task can stop it: served by `augure dashboard`, this process runs
none (a running bot does), so the page offers no Cancel and refuses one in a line that says
where to cancel instead.
"""

from __future__ import annotations

import json

from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from augure.background.tools import elapsed, excerpt
from augure.dashboard.auth import Session
from augure.dashboard.web import Dash, Page, back

PAGE_SIZE = 50
EXCERPT = 200  # characters of a result in the listing


def page_number(text: str | None) -> int:
    try:
        return max(1, int(text or 1))
    except ValueError:
        return 1


def routes(dash: Dash) -> list[Route]:
    door = dash.door

    async def listing(request: Request, session: Session) -> Response:
        number = page_number(request.query_params.get("page"))
        rows = await door.reports.tasks(limit=PAGE_SIZE + 1, offset=(number - 1) * PAGE_SIZE)
        cancellable = door.owner.tasks_running_here()
        tasks = [
            {
                "row": row,
                "arguments": json.dumps(row.arguments, ensure_ascii=False, sort_keys=True),
                "elapsed": elapsed(row.elapsed()),
                "result": excerpt(row.result, EXCERPT),
                "cancellable": row.id in cancellable,
                "elsewhere": row.status == "running" and row.id not in cancellable,
            }
            for row in rows[:PAGE_SIZE]
        ]
        return dash.render(
            request,
            "tasks.html",
            session,
            tasks=tasks,
            page=number,
            more=len(rows) > PAGE_SIZE,
        )

    async def cancel(request: Request, session: Session, form: FormData) -> Response:
        task_id = request.path_params["id"]
        if task_id not in door.owner.tasks_running_here():
            row = await door.reports.task(task_id)
            if row is not None and row.status == "running":
                return back("/tasks", "elsewhere")
        await door.owner.cancel_task(task_id)
        row = await door.reports.task(task_id)
        return back("/tasks", "cancelled" if row and row.status == "cancelled" else "ended")

    return [dash.page("/tasks", listing), dash.action("/tasks/{id}/cancel", cancel)]


PAGE = Page("Tasks", "/tasks", routes)
