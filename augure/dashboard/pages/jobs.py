"""Jobs: the scheduled jobs; pause and resume the whole scheduler (as /pause and /resume do)
or one job (as `augure jobs pause ID` does), and run one job now without changing its
schedule."""

from __future__ import annotations

from zoneinfo import ZoneInfo

from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from augure.dashboard.auth import Session
from augure.dashboard.web import Dash, Page, back
from augure.scheduler.jobs import local


def routes(dash: Dash) -> list[Route]:
    door = dash.door

    async def listing(request: Request, session: Session) -> Response:
        listed = await door.owner.jobs()
        zone = ZoneInfo(listed.zone)
        jobs = [
            {
                "job": job,
                "next": local(job.next_run, zone) if job.next_run else "none",
                "last": f"{local(job.last_run, zone)} {job.last_outcome}"
                if job.last_run
                else "never",
            }
            for job in listed.jobs
        ]
        return dash.render(
            request,
            "jobs.html",
            session,
            jobs=jobs,
            paused=listed.paused,
            zone=listed.zone,
            bot_running=listed.bot_running,
        )

    async def pause(request: Request, session: Session, form: FormData) -> Response:
        await door.owner.pause_jobs(True)
        return back("/jobs", "paused")

    async def resume(request: Request, session: Session, form: FormData) -> Response:
        await door.owner.pause_jobs(False)
        return back("/jobs", "resumed")

    async def pause_one(request: Request, session: Session, form: FormData) -> Response:
        if not await door.owner.pause_job(request.path_params["id"], True):
            return back("/jobs", "gone")
        return back("/jobs", "job-paused")

    async def resume_one(request: Request, session: Session, form: FormData) -> Response:
        if not await door.owner.pause_job(request.path_params["id"], False):
            return back("/jobs", "gone")
        return back("/jobs", "job-resumed")

    async def run_now(request: Request, session: Session, form: FormData) -> Response:
        if not await door.owner.run_job_now(request.path_params["id"], "dashboard"):
            return back("/jobs", "gone")
        return back("/jobs", "requested" if (await door.owner.jobs()).bot_running else "later")

    return [
        dash.page("/jobs", listing),
        dash.action("/jobs/pause", pause),
        dash.action("/jobs/resume", resume),
        dash.action("/jobs/{id}/run", run_now),
        dash.action("/jobs/{id}/pause", pause_one),
        dash.action("/jobs/{id}/resume", resume_one),
    ]


PAGE = Page("Jobs", "/jobs", routes)
