"""`augure jobs list|add|remove|run|pause|resume`: scheduled jobs from the shell.

Only the database is touched; a running bot notices changes within a second.
"""

from __future__ import annotations

import argparse
import json
from zoneinfo import ZoneInfo

from augure.common.errors import UsageError
from augure.config.settings import Config
from augure.core.door.errors import JobError


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    jobs = commands.add_parser("jobs", help="scheduled jobs (default: list)")
    actions = jobs.add_subparsers(dest="action")
    listing = actions.add_parser("list", help="list the jobs with their next run")
    listing.add_argument("--json", action="store_true", help="one JSON array on stdout")
    add = actions.add_parser("add", help="add a job: --cron or --at, and --prompt")
    when = add.add_mutually_exclusive_group(required=True)
    when.add_argument("--cron", help='5 fields, e.g. "0 8 * * 1-5"')
    when.add_argument("--at", dest="run_at", help="ISO 8601, e.g. 2026-12-24T18:00")
    add.add_argument("--prompt", required=True, help="what the assistant does when it fires")
    add.add_argument("--timezone", help="IANA zone (default: agent.timezone)")
    add.add_argument("--id", dest="job_id", help="job id (lowercase words joined by hyphens)")
    remove = actions.add_parser("remove", help="delete a job")
    remove.add_argument("id", help="the job id (see `augure jobs list`)")
    run = actions.add_parser("run", help="run a job now, once (by the running bot)")
    run.add_argument("id", help="the job id (see `augure jobs list`)")
    pause = actions.add_parser("pause", help="skip a job's runs until it is resumed")
    pause.add_argument("id", help="the job id (see `augure jobs list`)")
    resume = actions.add_parser("resume", help="run a paused job again from its next run")
    resume.add_argument("id", help="the job id (see `augure jobs list`)")


async def jobs(config: Config, args: argparse.Namespace) -> int:
    from augure.core.lifespan import Augure

    async with Augure.reading(config) as door:
        owner, book = door.owner, door.owner.book
        action = args.action or "list"
        if action == "list":
            listed = await owner.jobs()
            if getattr(args, "json", False):
                print(json.dumps([job.as_json() for job in listed.jobs]))
                return 0
            zone = ZoneInfo(listed.zone)
            paused = " (paused: /resume in Telegram)" if listed.paused else ""
            print(f"Scheduler zone {listed.zone}{paused}")
            for job in listed.jobs:
                print(job.describe(zone))
            if not listed.jobs:
                print("No scheduled jobs.")
            return 0
        if action == "add":
            try:
                job = await book.create(
                    prompt=args.prompt,
                    chat_id=None,
                    cron=args.cron,
                    run_at=args.run_at,
                    timezone=args.timezone,
                    job_id=args.job_id,
                )
            except JobError as exc:
                raise UsageError(str(exc)) from None
            print(f"Added {job.describe(ZoneInfo(book.zone))}")
            return 0
        if action == "remove":
            try:
                removed = await book.remove(args.id)
            except JobError as exc:
                raise UsageError(str(exc)) from None
            if not removed:
                raise UsageError(f"no job {args.id!r}; see `augure jobs list`")
            print(f"Removed job {args.id}.")
            return 0
        if action in ("pause", "resume"):
            try:
                if action == "pause":
                    await book.pause_job(args.id)
                    print(f"Paused job {args.id}: its runs are skipped until it is resumed.")
                else:
                    job = await book.resume_job(args.id)
                    print(f"Resumed job {args.id}: {job.describe(ZoneInfo(book.zone))}")
            except JobError as exc:
                raise UsageError(str(exc)) from None
            return 0
        if not await owner.run_job_now(args.id, "cli"):
            raise UsageError(f"no job {args.id!r}; see `augure jobs list`")
        if not (await owner.jobs()).bot_running:
            print(f"Job {args.id} will run when `augure run` starts (no bot runs on this home).")
        else:
            print(f"Job {args.id} will run now (in the running bot, within a second).")
        return 0
