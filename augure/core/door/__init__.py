"""The door: what the channels, the dashboard and the CLI call, by audience. `chat` is the
chat desk (a message in, its answer out), `owner` the owner's desk (jobs, rules, approvals,
tasks, forgetting), `reports` what the owner reads, `running` what only a running core
answers (its tools, a tool run by hand, `/status`); `types` names everything they return.

`Augure.running` yields a `doors.Door`; `Augure.reading` a `doors.ReadingDoor`, which has no
chat desk and nothing that runs. See docs/architecture.md, "The door".
"""
