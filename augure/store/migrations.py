"""The schema of state.db, one migration per entry (`PRAGMA user_version` counts them)."""

from __future__ import annotations

# Each entry moves the schema one version forward; never edit a released entry, append one.
MIGRATIONS: list[str] = [
    """
    CREATE TABLE conversations (
        id INTEGER PRIMARY KEY,
        chat_id TEXT NOT NULL,
        started_at REAL NOT NULL,
        closed_at REAL
    );
    CREATE INDEX conversations_open ON conversations(chat_id) WHERE closed_at IS NULL;
    CREATE TABLE messages (
        id INTEGER PRIMARY KEY,
        conversation_id INTEGER NOT NULL REFERENCES conversations(id),
        role TEXT NOT NULL,
        content TEXT,
        tool_calls TEXT,
        tool_call_id TEXT,
        created_at REAL NOT NULL
    );
    CREATE INDEX messages_by_conversation ON messages(conversation_id, id);
    CREATE TABLE usage (
        id INTEGER PRIMARY KEY,
        chat_id TEXT NOT NULL,
        conversation_id INTEGER,
        model TEXT NOT NULL,
        prompt_tokens INTEGER NOT NULL,
        completion_tokens INTEGER NOT NULL,
        llm_calls INTEGER NOT NULL,
        breakdown TEXT,
        created_at REAL NOT NULL
    );
    """,
    """
    CREATE TABLE invocations (
        id TEXT PRIMARY KEY,
        chat_id TEXT,
        turn_id TEXT,
        tool TEXT NOT NULL,
        origin TEXT NOT NULL,
        input TEXT NOT NULL,
        target TEXT,
        output TEXT,
        status TEXT NOT NULL,
        approval_status TEXT NOT NULL,
        decided_by TEXT,
        reason TEXT,
        error TEXT,
        cost_estimate INTEGER,
        approval_ref TEXT,
        created_at REAL NOT NULL,
        started_at REAL,
        completed_at REAL
    );
    CREATE INDEX invocations_by_time ON invocations(created_at);
    CREATE INDEX invocations_pending ON invocations(approval_status)
        WHERE approval_status = 'pending';
    CREATE TABLE rules (
        id INTEGER PRIMARY KEY,
        effect TEXT NOT NULL CHECK (effect IN ('allow', 'deny')),
        pattern TEXT NOT NULL,
        created_by TEXT NOT NULL,
        created_at REAL NOT NULL,
        UNIQUE (effect, pattern)
    );
    """,
    """
    CREATE TABLE jobs (
        id TEXT PRIMARY KEY,
        cron TEXT,
        run_at TEXT,
        timezone TEXT NOT NULL,
        prompt TEXT NOT NULL,
        chat_id TEXT NOT NULL,
        next_run TEXT,
        last_run TEXT,
        last_outcome TEXT,
        run_requested INTEGER NOT NULL DEFAULT 0,
        created_at REAL NOT NULL
    );
    CREATE TABLE job_runs (
        id INTEGER PRIMARY KEY,
        job_id TEXT NOT NULL,
        scheduled_for TEXT NOT NULL,
        status TEXT NOT NULL,
        chat_id TEXT NOT NULL,
        reply TEXT,
        started_at REAL NOT NULL,
        finished_at REAL,
        UNIQUE (job_id, scheduled_for)
    );
    CREATE TABLE settings (
        key TEXT PRIMARY KEY,
        value TEXT NOT NULL
    );
    """,
    # Skills: state, failures and run history live here, never in the skill's files. A job
    # with `skill` set runs that skill instead of a prompt.
    """
    ALTER TABLE jobs ADD COLUMN skill TEXT;
    CREATE TABLE skills (
        id TEXT PRIMARY KEY,
        state TEXT NOT NULL,
        version TEXT NOT NULL,
        source TEXT NOT NULL,
        failures INTEGER NOT NULL DEFAULT 0,
        reason TEXT,
        created_at REAL NOT NULL,
        updated_at REAL NOT NULL
    );
    CREATE TABLE skill_runs (
        id INTEGER PRIMARY KEY,
        skill_id TEXT NOT NULL,
        origin TEXT NOT NULL,
        started_at REAL NOT NULL,
        finished_at REAL,
        outcome TEXT,
        output TEXT,
        calls TEXT
    );
    CREATE INDEX skill_runs_by_skill ON skill_runs(skill_id, id);
    """,
    # Turns are records, so a restart can tell what was cut off; multi-part message content
    # is flagged by a column instead of a prefix inside the text (a string that happened to
    # start with the prefix came back decoded).
    """
    CREATE TABLE turns (
        id TEXT PRIMARY KEY,
        chat_id TEXT NOT NULL,
        origin TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('running', 'answered', 'done', 'interrupted')),
        preview_message_id INTEGER,
        preview_text TEXT,
        reply TEXT,
        notified INTEGER NOT NULL DEFAULT 0,
        started_at REAL NOT NULL,
        finished_at REAL
    );
    CREATE INDEX turns_open ON turns(status) WHERE status != 'done';
    ALTER TABLE invocations ADD COLUMN notified INTEGER NOT NULL DEFAULT 0;
    CREATE INDEX invocations_running ON invocations(status) WHERE status = 'running';
    ALTER TABLE messages ADD COLUMN content_format TEXT;
    UPDATE messages
        SET content = CAST(substr(CAST(content AS BLOB), 7) AS TEXT), content_format = 'json'
        WHERE substr(CAST(content AS BLOB), 1, 6) = X'006A736F6E3A';
    """,
    # The sha256 of what an approval request showed: the press approved exactly that.
    """
    ALTER TABLE invocations ADD COLUMN approval_digest TEXT;
    """,
    # Tool profiles (docs/reference/limits.md): one row per call a limit counted, so counts survive
    # restarts;
    # `day` is the agent-timezone date the call fell on. Personas per chat use `settings`.
    """
    CREATE TABLE limit_use (
        id INTEGER PRIMARY KEY,
        profile TEXT NOT NULL,
        glob TEXT NOT NULL,
        at REAL NOT NULL,
        day TEXT NOT NULL,
        cost REAL NOT NULL DEFAULT 0
    );
    CREATE INDEX limit_use_by_day ON limit_use(profile, glob, day);
    """,
    # The call a call was made from (a batch's sub-calls, a snippet's api calls): its id.
    """
    ALTER TABLE invocations ADD COLUMN parent TEXT;
    CREATE INDEX invocations_by_parent ON invocations(parent) WHERE parent IS NOT NULL;
    """,
    # Background work (docs/reference/execution.md#background-work): one row per released call, kept
    # across restarts so work cut
    # off by one is reported, never lost in silence.
    """
    CREATE TABLE tasks (
        id TEXT PRIMARY KEY,
        chat_id TEXT NOT NULL,
        tool TEXT NOT NULL,
        arguments TEXT NOT NULL,
        status TEXT NOT NULL
            CHECK (status IN ('running', 'done', 'failed', 'cancelled', 'interrupted')),
        progress TEXT,
        result TEXT,
        invocation TEXT,
        notified INTEGER NOT NULL DEFAULT 0,
        created_at REAL NOT NULL,
        finished_at REAL
    );
    CREATE INDEX tasks_by_status ON tasks(status);
    """,
    # The dashboard's invocation listing (docs/reference/dashboard.md): each filter walks its own
    # index newest
    # first, so a page of 100,000 records costs one short index range.
    """
    CREATE INDEX invocations_by_tool ON invocations(tool, created_at);
    CREATE INDEX invocations_by_status ON invocations(status, created_at);
    CREATE INDEX invocations_by_origin ON invocations(origin, created_at);
    """,
    # A job paused on its own (docs/reference/dashboard.md): the scheduler skips its runs and keeps
    # its schedule.
    """
    ALTER TABLE jobs ADD COLUMN paused INTEGER NOT NULL DEFAULT 0;
    """,
    # Who asked for a "run now" (`cli`, `dashboard`): the head of that run's origin chain.
    # A background task keeps the origin chain and the allowed tools of the turn that
    # released it (its report turn gets the same), and its result's provenance as data. A
    # conversation's summary keeps the provenance of what it summarised (a JSON list of
    # sources; NULL: no summary), so a summary of that summary stays marked too.
    """
    ALTER TABLE jobs ADD COLUMN requested_by TEXT;
    ALTER TABLE tasks ADD COLUMN origin TEXT;
    ALTER TABLE tasks ADD COLUMN tools TEXT;
    ALTER TABLE tasks ADD COLUMN source TEXT;
    ALTER TABLE conversations ADD COLUMN summary_sources TEXT;
    """,
    # The archive (docs/recall.md): every message said, kept after compaction, with a
    # full-text index kept in step by triggers. Existing history is archived here (a
    # summary is not: what it summarised was dropped before there was an archive). Vectors,
    # when `[recall] embeddings_model` is set, are float32 blobs of unit length.
    """
    CREATE TABLE archive (
        id INTEGER PRIMARY KEY,
        chat_id TEXT NOT NULL,
        conversation_id INTEGER,
        role TEXT NOT NULL,
        text TEXT NOT NULL,
        source TEXT,
        created_at REAL NOT NULL
    );
    CREATE INDEX archive_by_chat ON archive(chat_id, created_at);
    CREATE VIRTUAL TABLE archive_index USING fts5(
        text, content='archive', content_rowid='id', tokenize='unicode61 remove_diacritics 2'
    );
    CREATE VIRTUAL TABLE archive_terms USING fts5vocab(archive_index, 'row');
    CREATE TRIGGER archive_indexed AFTER INSERT ON archive BEGIN
        INSERT INTO archive_index (rowid, text) VALUES (new.id, new.text);
    END;
    CREATE TRIGGER archive_unindexed AFTER DELETE ON archive BEGIN
        INSERT INTO archive_index (archive_index, rowid, text)
            VALUES ('delete', old.id, old.text);
    END;
    CREATE TABLE archive_vectors (
        archive_id INTEGER PRIMARY KEY,
        model TEXT NOT NULL,
        vector BLOB NOT NULL
    );
    CREATE TABLE memory_vectors (
        digest TEXT NOT NULL,
        model TEXT NOT NULL,
        vector BLOB NOT NULL,
        PRIMARY KEY (digest, model)
    );
    INSERT INTO archive (chat_id, conversation_id, role, text, source, created_at)
    SELECT chat_id, conversation_id, role, text, source, created_at FROM (
        SELECT c.chat_id, m.conversation_id, m.role, m.created_at, m.id,
            CASE WHEN m.content LIKE '<untrusted_content source="%'
                THEN substr(m.content, 28, instr(m.content, '">') - 28) END AS source,
            trim(CASE
                WHEN m.content LIKE '<untrusted_content source="%' THEN substr(
                    m.content,
                    instr(m.content, char(10)) + 1,
                    length(m.content) - instr(m.content, char(10)) - 21)
                ELSE COALESCE(m.content, '') END
              || CASE WHEN m.tool_calls IS NOT NULL THEN ' ' || m.tool_calls ELSE '' END
            ) AS text
        FROM messages m JOIN conversations c ON c.id = m.conversation_id
        WHERE m.role IN ('user', 'assistant', 'tool')
            AND COALESCE(m.content, '') NOT LIKE '[Summary of the earlier conversation:]%'
        ORDER BY m.id
    ) WHERE text != '';
    """,
    # Every model call and what it cost (docs/reference/spend.md): counted against [budget] across
    # restarts, by kind of work; a call the budget refused is a row too (`skipped`). cost_usd
    # NULL: the model has no price, an unknown cost, never a free one. The running total of
    # each day and month ("day:2026-11-26") is kept beside, so the check before every call
    # reads two rows, however many calls the month had. A notice sent once per period (the
    # warning, the cap) is claimed here, so a restart does not repeat it.
    """
    CREATE TABLE model_calls (
        id INTEGER PRIMARY KEY,
        created_at REAL NOT NULL,
        day TEXT NOT NULL,
        month TEXT NOT NULL,
        origin TEXT NOT NULL,
        model TEXT NOT NULL,
        outcome TEXT NOT NULL CHECK (outcome IN ('answered', 'skipped')),
        prompt_tokens INTEGER NOT NULL DEFAULT 0,
        cached_tokens INTEGER NOT NULL DEFAULT 0,
        completion_tokens INTEGER NOT NULL DEFAULT 0,
        cost_usd REAL
    );
    CREATE INDEX model_calls_by_day ON model_calls(day);
    CREATE INDEX model_calls_by_month ON model_calls(month);
    CREATE TABLE spend_totals (
        period TEXT PRIMARY KEY,
        usd REAL NOT NULL
    );
    CREATE TABLE budget_notices (
        period TEXT NOT NULL,
        kind TEXT NOT NULL,
        sent_at REAL NOT NULL,
        PRIMARY KEY (period, kind)
    );
    """,
    # Messages taken in but not yet answered (docs/reference/durability.md, "Messages waiting to be
    # folded"): stored on arrival, before they wait for the fold window or a running turn,
    # and deleted by the transaction that stores them with their turn. `id` is the arrival
    # order, never reused, so a batch can only consume its own rows; `content_format` 'json'
    # marks multi-part content (text and images), as in `messages`.
    """
    CREATE TABLE inbox (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        chat_id TEXT NOT NULL,
        content TEXT NOT NULL,
        content_format TEXT,
        album TEXT,
        spoken INTEGER NOT NULL DEFAULT 0,
        received_at REAL NOT NULL
    );
    """,
    # Telegram updates a run has taken (docs/reference/durability.md, "Updates Telegram
    # resends"): an update is confirmed to Telegram only once it is handled, so one handled
    # just before a kill comes again and is skipped. Written with the inbox row when the update
    # carried a message; kept two days (Telegram keeps an update one). The digest of the update
    # tells a resend from another update under the same id (Telegram numbers from a new point
    # after a week's silence; another bot token counts from its own).
    """
    CREATE TABLE taken_updates (
        update_id INTEGER NOT NULL,
        digest TEXT NOT NULL,
        taken_at REAL NOT NULL,
        PRIMARY KEY (update_id, digest)
    );
    CREATE INDEX taken_updates_by_time ON taken_updates(taken_at);
    """,
    # What a job's maker had read (docs/security.md, "No deferred leak"): a JSON list of the
    # outside sources of the turn that created it, NULL for the owner's own job. Each run of
    # the job starts from them, so a prompt composed after a page never runs as the owner's.
    """
    ALTER TABLE jobs ADD COLUMN sources TEXT;
    """,
    # A model call whose answer reported no usage (docs/reference/spend.md): its tokens, and
    # so its cost, are estimated from what was sent and received; reports say so.
    """
    ALTER TABLE model_calls ADD COLUMN estimated INTEGER NOT NULL DEFAULT 0;
    """,
    # Telegram updates parked while still being handled (docs/reference/durability.md, "Updates
    # Telegram resends"): Telegram hands out at most 100 updates from the offset, so updates
    # held behind a slow one hid every newer one. Parked here (the whole update), the offset
    # may pass them; a row goes in the transaction that records its update taken, and a
    # start hands what is left to the bot again.
    """
    CREATE TABLE parked_updates (
        update_id INTEGER NOT NULL,
        digest TEXT NOT NULL,
        body TEXT NOT NULL,
        parked_at REAL NOT NULL,
        PRIMARY KEY (update_id, digest)
    );
    """,
    # Where a hub skill came from (docs/reference/skills.md#hubs): the hub entry it was
    # installed from and, for a GitHub hub, the commit its files were taken at (pinned: an
    # update offers a newer commit and asks again).
    """
    ALTER TABLE skills ADD COLUMN hub TEXT;
    ALTER TABLE skills ADD COLUMN revision TEXT;
    """,
]
