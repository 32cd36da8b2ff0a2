"""A project kind for `orrery eval make-dataset --kind project`: building a data pipeline (a table, no
logic)."""

from __future__ import annotations

from orrery.evaluation.project_pools import Change, Clash, Domain, Fact, Items, Rule

PIPELINE = Domain(
    name="pipeline",
    titles=("Data pipeline", "Analytics platform", "Warehouse build"),
    values={
        "orch": ("Airflow", "Dagster", "Prefect"),
        "bucket": ("raw-landing-eu", "acme-raw-zone", "ingest-prod-01"),
        "nightly": ("02:00", "03:30", "01:15"),
        "warehouse": ("BigQuery", "Snowflake", "Redshift"),
    },
    topics=(
        "design the ingestion layer",
        "model the orders data",
        "set up the orchestrator",
        "add data quality checks",
        "plan the backfill",
        "speed up the nightly job",
        "build the revenue dashboard",
        "handle late-arriving data",
        "set up alerting",
        "clean up the staging schema",
        "document the pipeline",
        "plan cost reductions",
    ),
    things=(
        "the orders table",
        "the events table",
        "the dashboard SLA",
        "streaming data",
        "Kafka",
        "the nightly job",
        "the backfill",
        "the ingestion job",
        "data quality checks",
        "partitioning",
        "incremental loads",
        "deduplication",
        "schema drift",
        "slowly changing dimensions",
        "the staging layer",
        "idempotency",
        "retries",
        "data contracts",
        "late-arriving events",
        "backfills",
        "clustering keys",
        "the dbt models",
        "freshness checks",
    ),
    asks=(
        "How do I handle {thing}?",
        "What's the best practice for {thing}?",
        "Can you explain {thing} with an example?",
        "Is {thing} worth it at our size?",
        "How do I test {thing}?",
        "What breaks first with {thing}?",
        "How would you monitor {thing}?",
    ),
    paragraphs=(
        "Make every job idempotent: running it twice for the same day must give the same result as running "
        "it once. Overwrite a partition instead of appending to it, and key everything by the logical date "
        "of the data, not the time the job ran. Retries and backfills then become boring.",
        "Keep raw data exactly as it arrived, in its own layer, and never edit it. Staging cleans types and "
        "names, marts hold business logic. When a number looks wrong, you can trace it back step by step "
        "and rebuild anything downstream from the raw layer.",
        "Data quality checks belong next to the transformations, not in a separate project nobody runs. "
        "Start with the cheap ones: not null on keys, unique on primary keys, row counts within a range of "
        "yesterday's. They catch most incidents before a dashboard does.",
        "Late-arriving events are normal, not an edge case. Reprocess a window of the last few days on each "
        "run, or use a merge keyed on the event id, so a record that shows up two days late still lands in "
        "the right partition without a manual fix.",
        "Costs in a cloud warehouse follow the bytes scanned. Partition big tables by date, cluster by the "
        "columns you filter on most, and make dashboards read from small aggregate tables rather than from "
        "the raw events every time someone opens them.",
    ),
    bullets=(
        "Partition by event date",
        "Overwrite partitions instead of appending",
        "Check row counts against yesterday",
        "Alert on freshness, not only failures",
        "Keep raw data immutable",
        "Version the transformation code",
        "Document each table's owner",
        "Use surrogate keys in marts",
        "Reprocess the last three days",
        "Tag jobs with their cost centre",
        "Test models on a sample first",
    ),
    code=(
        "```sql\nmerge into marts.orders t\nusing staging.orders s on t.order_id = s.order_id\nwhen "
        "matched then update "
        "set status = s.status\nwhen not matched then insert (order_id, status) values (s.order_id, "
        "s.status);\n```",
        "```python\n@task(retries=3)\ndef load(day: str) -> int:\n    rows = extract(day)\n    "
        'write_partition("orders", day, '
        'rows, mode="overwrite")\n    return len(rows)\n```',
    ),
    facts=(
        Fact(("The pipeline is orchestrated with {orch}.",), "What orchestrates our pipeline?", "{orch}"),
        Fact(("Raw files land in the bucket {bucket}.",), "Which bucket does raw data land in?", "{bucket}"),
        Fact(("The nightly job starts at {nightly} UTC.",), "When does the nightly job start?", "{nightly}"),
        Fact(("Our warehouse is {warehouse}.",), "Which warehouse do we use?", "{warehouse}"),
    ),
    rules=(
        Rule(
            ("Always include the expected row counts when you suggest a transformation.",),
            ("How should I deduplicate the orders table?",),
            "row counts",
        ),
        Rule(
            ("Never use SELECT * in queries you write for me.",),
            ("Write the query for yesterday's revenue by country.", "Give me weekly active users."),
            "no select *",
        ),
        Rule(
            ("When I ask about failures, always tell me how to retry safely.",),
            ("The load step died halfway through last night, now what?",),
            "safe retry",
        ),
        Rule(
            ("From now on, write SQL keywords in lowercase.",),
            ("Show me how to count signups per channel for last month.",),
            "lowercase SQL",
        ),
    ),
    prefs=(
        Rule(
            ("I prefer plain SQL over pandas when both work.",),
            (
                "How do I compute a 7-day rolling average of signups?",
                "Should the deduplication step be SQL or Python?",
            ),
            "plain SQL",
        ),
        Rule(
            ("I like small independent jobs rather than one big DAG.",),
            (
                "How should I structure the ingestion of the three new sources?",
                "How many jobs should the new ingestion be split into?",
            ),
            "small jobs",
        ),
    ),
    changes=(
        Change(
            ("The orders table has about {old} million rows.",),
            ("The orders table is up to {new} million rows now.",),
            "How many rows does the orders table have?",
            (("12", "19"), ("40", "55"), ("3", "7")),
        ),
        Change(
            ("The dashboard has to be fresh by {old} every morning.",),
            ("SLA changed: the dashboard must be fresh by {new}.",),
            "By when must the dashboard be fresh?",
            (("7:00", "6:00"), ("9:00", "8:30"), ("8:00", "7:15")),
        ),
    ),
    clashes=(
        Clash(
            ("We don't have any streaming data.",),
            ("The Kafka topic for clickstream events is lagging again.",),
            "Do we have streaming data?",
        ),
    ),
    events=(
        ("Set up the orchestrator environment today.", "stand up the scheduler"),
        ("The first ingestion job is running nightly.", "automate the first load"),
        ("Data quality checks are in place now.", "guard against bad records"),
        ("The revenue dashboard is live for the finance team.", "give finance their charts"),
        ("We backfilled two years of history.", "load the old data"),
    ),
    items=Items(
        (
            "Add a {item} column to the events table.",
            "The events table should get a {item} column.",
            "Events should also carry {item}.",
            "Can we start recording {item} for each event?",
        ),
        ("session id", "device type", "country code", "referrer", "app version", "experiment id"),
        "How many columns did I ask to add to the events table across my requests?",
    ),
)
