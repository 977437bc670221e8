"""`augure jobs list|add|remove|run|pause|resume`: scheduled jobs from the shell.

Only the database is touched; a running bot notices changes within a second.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from zoneinfo import ZoneInfo

from augure.common.errors import UsageError
from augure.config.settings import Config
from augure.host.home import holder
from augure.scheduler.jobs import JobError
from augure.scheduler.runner import Scheduler
from augure.store.state import Store


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


@asynccontextmanager
async def _scheduler(config: Config) -> AsyncIterator[Scheduler]:
    store = await Store.open(config.db_path)

    async def no_turns(conversation: str, prompt: str, *_: tuple[str, ...]) -> str:
        raise RuntimeError("jobs run in `augure run`, not in the CLI")

    try:
        yield Scheduler(
            store=store,
            run_turn=no_turns,
            default_zone=config.zone,
            misfire_grace_seconds=config.scheduler.misfire_grace_seconds,
            owner_chat=config.owner_chat,
        )
    finally:
        await store.close()


async def jobs(config: Config, args: argparse.Namespace) -> int:
    async with _scheduler(config) as scheduler:
        action = args.action or "list"
        if action == "list":
            listed = await scheduler.jobs()
            if getattr(args, "json", False):
                print(json.dumps([job.as_json() for job in listed]))
                return 0
            zone = ZoneInfo(scheduler.zone)
            paused = " (paused: /resume in Telegram)" if await scheduler.paused() else ""
            print(f"Scheduler zone {scheduler.zone}{paused}")
            for job in listed:
                print(job.describe(zone))
            if not listed:
                print("No scheduled jobs.")
            return 0
        if action == "add":
            try:
                job = await scheduler.create(
                    prompt=args.prompt,
                    chat_id=None,
                    cron=args.cron,
                    run_at=args.run_at,
                    timezone=args.timezone,
                    job_id=args.job_id,
                )
            except JobError as exc:
                raise UsageError(str(exc)) from None
            print(f"Added {job.describe(ZoneInfo(scheduler.zone))}")
            return 0
        if action == "remove":
            try:
                removed = await scheduler.remove(args.id)
            except JobError as exc:
                raise UsageError(str(exc)) from None
            if not removed:
                raise UsageError(f"no job {args.id!r}; see `augure jobs list`")
            print(f"Removed job {args.id}.")
            return 0
        if action in ("pause", "resume"):
            try:
                if action == "pause":
                    await scheduler.pause_job(args.id)
                    print(f"Paused job {args.id}: its runs are skipped until it is resumed.")
                else:
                    job = await scheduler.resume_job(args.id)
                    print(f"Resumed job {args.id}: {job.describe(ZoneInfo(scheduler.zone))}")
            except JobError as exc:
                raise UsageError(str(exc)) from None
            return 0
        if not await scheduler.request_run(args.id, "cli"):
            raise UsageError(f"no job {args.id!r}; see `augure jobs list`")
        if holder(config.home) is None:
            print(f"Job {args.id} will run when `augure run` starts (no bot runs on this home).")
        else:
            print(f"Job {args.id} will run now (in the running bot, within a second).")
        return 0
