"""The demo workspace, as data: Maya Chen launches Atlas 2.0.

Keys (`t_pricing_page`, `BR-012`, ...) only name things inside this file; the loader turns them
into ids. Edges are `(src_key, relation, dst_key)`.
"""

from __future__ import annotations

from typing import Any

USER: dict[str, Any] = {
    "email": "maya@demo.orrery.dev",
    "display_name": "Maya Chen",
    "preferred_name": "Maya",
    "timezone": "Europe/Berlin",
    "bio": "Product manager at a 40-person B2B SaaS company; leads the Atlas 2.0 launch.",
    "preferences": {"tone": "direct", "check_in_time": "08:30", "prefers": "short bullet lists"},
}

PROJECT = {
    "name": "Atlas 2.0 Launch",
    "description": "Ship Atlas 2.0 (team workspaces and usage-based pricing) to general availability.",
}

# key: (kind, name, state, type_key, description, extra)
ENTITIES: dict[str, tuple[str, str, str, str | None, str, dict[str, Any]]] = {
    # goals
    "g_ga": (
        "goal",
        "Launch Atlas 2.0 to general availability",
        "active",
        "goal.outcome",
        "GA with team workspaces and usage-based pricing, no P1 bugs open.",
        {"goal_type": "target"},
    ),
    "g_wat": (
        "goal",
        "Reach 500 weekly active teams",
        "active",
        "goal.metric",
        "Measured by the team_active tracking event, 4-week rolling average.",
        {"goal_type": "target"},
    ),
    "g_writing": (
        "goal",
        "Write for 30 minutes every weekday morning",
        "active",
        "goal.habit",
        "Protect focused writing time before meetings start.",
        {"goal_type": "habit"},
    ),
    "g_release": (
        "goal",
        "Build a predictable release process",
        "draft",
        "goal.capability",
        "Every release follows the runbook; no weekend deploys.",
        {"goal_type": "project"},
    ),
    # plans
    "p_beta": (
        "plan",
        "Private beta program",
        "active",
        "plan.program",
        "Recruit 30 design-partner teams and run a 6-week beta.",
        {},
    ),
    "p_marketing": (
        "plan",
        "Launch marketing",
        "active",
        "plan.campaign",
        "Messaging, pricing page, blog post, launch email.",
        {},
    ),
    "p_release": (
        "plan",
        "Release engineering",
        "active",
        "plan.engineering",
        "Feature flags, migration of existing accounts, rollback plan.",
        {},
    ),
    "p_docs": (
        "plan",
        "Docs and onboarding",
        "draft",
        "plan.content",
        "Help center articles and in-app onboarding checklist.",
        {},
    ),
    # milestones
    "m_beta": (
        "milestone",
        "Beta starts",
        "done",
        "milestone.phase",
        "First 10 beta teams onboarded.",
        {"due_in_days": -14},
    ),
    "m_ga": (
        "milestone",
        "GA launch",
        "active",
        "milestone.launch",
        "Public launch day.",
        {"due_in_days": 30},
    ),
    "m_pricing": (
        "milestone",
        "Pricing signed off",
        "active",
        "milestone.decision",
        "Leadership approves the usage-based price points.",
        {"due_in_days": 9},
    ),
    # documents
    "d_brief": (
        "document",
        "Atlas 2.0 launch brief",
        "active",
        "document.brief",
        "Why we are launching, for whom, and how we measure success.",
        {"context": True},
    ),
    "d_prd": (
        "document",
        "Team workspaces PRD",
        "active",
        "document.prd",
        "Requirements for workspaces, roles and shared billing.",
        {},
    ),
    "d_pricing": (
        "document",
        "Pricing research summary",
        "active",
        "document.research",
        "Interviews with 18 customers on seat vs usage pricing.",
        {},
    ),
    "d_runbook": (
        "document",
        "Launch day runbook",
        "draft",
        "document.runbook",
        "Hour-by-hour plan, owners and rollback criteria.",
        {},
    ),
    "d_faq": (
        "document",
        "Sales FAQ",
        "draft",
        "document.enablement",
        "Answers for the sales team about pricing changes.",
        {},
    ),
    "d_scratch": (
        "document",
        "Scratch: launch ideas",
        "active",
        "document.scratch",
        "Unsorted notes, not for sharing.",
        {"scratch": True},
    ),
    # outputs
    "o_pricing_page": (
        "output",
        "Pricing page v2",
        "in_progress",
        "output.web",
        "The public pricing page with the usage calculator.",
        {},
    ),
    "o_blog": ("output", "Launch blog post", "draft", "output.article", "Announcement post for GA day.", {}),
    "o_notes": ("output", "Release notes 2.0", "draft", "output.notes", "Customer-facing changelog.", {}),
    "o_email": ("output", "Launch email", "draft", "output.email", "Email to all existing admins.", {}),
}

TASKS: dict[str, tuple[str, str, str]] = {
    # key: (name, state, description)
    "t_pricing_page": (
        "Finalize pricing page",
        "in_progress",
        "Turn the approved price points into the public page with the usage calculator.",
    ),
    "t_price_points": ("Decide usage-based price points", "done", "Pick tiers and overage prices."),
    "t_pricing_copy": ("Write pricing page copy", "in_progress", "Headline, tier descriptions, FAQ block."),
    "t_calculator": (
        "Build usage calculator widget",
        "in_progress",
        "Estimate monthly cost from seats and usage.",
    ),
    "t_legal_review": ("Legal review of pricing terms", "todo", "Check overage and refund wording."),
    "t_billing_flags": ("Configure billing feature flags", "todo", "Gate usage billing per account."),
    "t_pricing_qa": ("QA pricing page on mobile", "todo", "All tiers, calculator, checkout links."),
    "t_sales_faq": ("Write sales FAQ on pricing", "todo", "Top 15 questions from the sales team."),
    "t_recruit_beta": ("Recruit 30 beta teams", "done", "From the design-partner waitlist."),
    "t_beta_survey": ("Send beta feedback survey", "done", "Week-4 survey to all beta admins."),
    "t_beta_synthesis": ("Synthesize beta feedback", "in_progress", "Top themes and must-fix issues."),
    "t_beta_fixes": ("Fix top 5 beta issues", "in_progress", "From the synthesis, ranked by impact."),
    "t_workspace_roles": ("Ship workspace roles", "done", "Owner, admin, member, guest."),
    "t_shared_billing": ("Ship shared billing", "in_progress", "One invoice per workspace."),
    "t_migration_script": (
        "Write account migration script",
        "in_progress",
        "Move legacy accounts to workspaces.",
    ),
    "t_migration_dryrun": ("Dry-run migration on staging", "todo", "Full copy of production data."),
    "t_rollback_plan": ("Write rollback plan", "todo", "Criteria and steps to revert within 30 minutes."),
    "t_runbook": ("Draft launch day runbook", "todo", "Owners, timeline, comms channels."),
    "t_status_page": ("Prepare status page templates", "todo", "Incident and maintenance templates."),
    "t_blog_draft": ("Draft launch blog post", "todo", "Story: from seats to usage."),
    "t_release_notes": ("Compile release notes", "todo", "From merged changelog entries."),
    "t_launch_email": ("Write launch email", "todo", "For existing admins, with pricing FAQ link."),
    "t_help_articles": ("Write help center articles", "todo", "Workspaces, roles, billing."),
    "t_onboarding_checklist": ("Design onboarding checklist", "todo", "In-app, five steps."),
    "t_press_list": ("Build press and analyst list", "cancelled", "Dropped: launch is customer-led."),
    "t_metrics_dashboard": (
        "Build launch metrics dashboard",
        "in_progress",
        "Weekly active teams, upgrades.",
    ),
    "t_tracking_plan": ("Implement tracking events", "in_progress", "team_active, plan_upgraded, calc_used."),
    "t_morning_writing": ("Block 8:30-9:00 for writing", "done", "Recurring calendar block on weekdays."),
}

EDGES: list[tuple[str, str, str]] = [
    # the focus task, richly linked
    ("t_pricing_page", "belongs_to_plan", "p_marketing"),
    ("t_pricing_page", "supports_goal", "g_ga"),
    ("t_pricing_page", "supports_goal", "g_wat"),
    ("t_pricing_page", "depends_on", "t_price_points"),
    ("t_pricing_page", "depends_on", "t_pricing_copy"),
    ("t_pricing_page", "depends_on", "t_calculator"),
    ("t_pricing_page", "depends_on", "t_legal_review"),
    ("t_pricing_qa", "depends_on", "t_pricing_page"),
    ("t_launch_email", "depends_on", "t_pricing_page"),
    ("t_sales_faq", "depends_on", "t_pricing_page"),
    ("t_pricing_page", "references", "d_pricing"),
    ("t_pricing_page", "references", "d_brief"),
    ("t_pricing_page", "references", "d_prd"),
    ("t_pricing_page", "references", "d_faq"),
    ("t_pricing_page", "references", "d_scratch"),
    ("t_pricing_page", "produces", "o_pricing_page"),
    ("t_pricing_page", "targets_milestone", "m_pricing"),
    ("t_pricing_page", "targets_milestone", "m_ga"),
    # plans and goals
    ("p_marketing", "supports_goal", "g_ga"),
    ("p_marketing", "supports_goal", "g_wat"),
    ("p_beta", "supports_goal", "g_ga"),
    ("p_release", "supports_goal", "g_ga"),
    ("p_release", "supports_goal", "g_release"),
    ("p_docs", "supports_goal", "g_wat"),
    ("g_ga", "achieved_by", "m_ga"),
    ("g_ga", "requires", "t_shared_billing"),
    ("g_ga", "requires", "t_migration_script"),
    ("g_wat", "requires", "t_metrics_dashboard"),
    ("g_writing", "achieved_by", "m_ga"),
    ("t_morning_writing", "supports_goal", "g_writing"),
    ("p_marketing", "references", "d_brief"),
    ("p_release", "contains", "d_runbook"),
    # plan membership
    *[
        (t, "belongs_to_plan", "p_marketing")
        for t in (
            "t_price_points",
            "t_pricing_copy",
            "t_calculator",
            "t_legal_review",
            "t_pricing_qa",
            "t_sales_faq",
            "t_blog_draft",
            "t_launch_email",
            "t_press_list",
        )
    ],
    *[
        (t, "belongs_to_plan", "p_beta")
        for t in ("t_recruit_beta", "t_beta_survey", "t_beta_synthesis", "t_beta_fixes")
    ],
    *[
        (t, "belongs_to_plan", "p_release")
        for t in (
            "t_workspace_roles",
            "t_shared_billing",
            "t_migration_script",
            "t_migration_dryrun",
            "t_rollback_plan",
            "t_runbook",
            "t_status_page",
            "t_billing_flags",
            "t_release_notes",
            "t_tracking_plan",
            "t_metrics_dashboard",
        )
    ],
    *[(t, "belongs_to_plan", "p_docs") for t in ("t_help_articles", "t_onboarding_checklist")],
    ("p_beta", "has_task", "t_beta_fixes"),
    # dependencies
    ("t_calculator", "depends_on", "t_price_points"),
    ("t_pricing_copy", "depends_on", "t_price_points"),
    ("t_legal_review", "depends_on", "t_pricing_copy"),
    ("t_billing_flags", "depends_on", "t_shared_billing"),
    ("t_beta_survey", "depends_on", "t_recruit_beta"),
    ("t_beta_synthesis", "depends_on", "t_beta_survey"),
    ("t_beta_fixes", "depends_on", "t_beta_synthesis"),
    ("t_shared_billing", "depends_on", "t_workspace_roles"),
    ("t_migration_script", "depends_on", "t_shared_billing"),
    ("t_migration_dryrun", "depends_on", "t_migration_script"),
    ("t_rollback_plan", "depends_on", "t_migration_dryrun"),
    ("t_runbook", "depends_on", "t_rollback_plan"),
    ("t_status_page", "depends_on", "t_runbook"),
    ("t_blog_draft", "depends_on", "t_beta_synthesis"),
    ("t_release_notes", "depends_on", "t_beta_fixes"),
    ("t_help_articles", "depends_on", "t_workspace_roles"),
    ("t_onboarding_checklist", "depends_on", "t_help_articles"),
    ("t_metrics_dashboard", "depends_on", "t_tracking_plan"),
    # documents and outputs
    ("t_beta_synthesis", "references", "d_prd"),
    ("t_runbook", "produces", "d_runbook"),
    ("t_sales_faq", "produces", "d_faq"),
    ("t_blog_draft", "produces", "o_blog"),
    ("o_blog", "produced_by", "t_blog_draft"),
    ("t_release_notes", "produces", "o_notes"),
    ("t_launch_email", "produces", "o_email"),
    ("o_pricing_page", "references", "d_pricing"),
    ("d_pricing", "referenced_by", "t_price_points"),
    ("t_shared_billing", "targets_milestone", "m_ga"),
    ("t_recruit_beta", "targets_milestone", "m_beta"),
    ("t_price_points", "targets_milestone", "m_pricing"),
    ("t_migration_dryrun", "targets_milestone", "m_ga"),
    ("t_tracking_plan", "relates_to", "t_calculator"),
]

COLLECTIONS: list[tuple[str, str, str]] = [
    ("business-rules", "Business Rules", "Rules the product must enforce."),
    ("glossary", "Glossary", "What our words mean."),
    ("decisions", "Decisions", "Decisions and their reasons."),
    ("features", "Features", "What the product does."),
    ("standards", "Standards", "How we build and write."),
    ("principles", "Principles", "What we optimise for."),
    ("tensions", "Tensions", "Trade-offs we keep balancing."),
    ("strategy", "Strategy", "Where we are going and why."),
    ("tracking-events", "Tracking Events", "Analytics events and their meaning."),
]

# code: (collection slug, name, description, code_paths)
KB_ENTRIES: dict[str, tuple[str, str, str, list[str]]] = {
    "BR-012": (
        "business-rules",
        "Usage overage billing",
        "Usage above the tier allowance is billed per 1,000 events at the tier's overage price, "
        "invoiced monthly in arrears; overage never blocks the workspace.",
        ["backend/billing/overage.py"],
    ),
    "BR-015": (
        "business-rules",
        "Workspace seat minimum",
        "Paid workspaces have at least 3 seats; downgrades below the minimum are refused with a message.",
        ["backend/billing/seats.py"],
    ),
    "BR-021": (
        "business-rules",
        "Pricing page shows tax-exclusive prices",
        "All prices on the pricing page and calculator exclude VAT and sales tax.",
        [],
    ),
    "GT-019": ("glossary", "Workspace", "A shared space for a team: members, roles and one invoice.", []),
    "GT-024": (
        "glossary",
        "Weekly active team",
        "A workspace with 3 or more members active in the last 7 days.",
        [],
    ),
    "GT-031": ("glossary", "Overage", "Usage beyond the tier allowance in a billing period.", []),
    "DR-005": (
        "decisions",
        "Usage-based pricing over per-seat",
        "Chosen after 18 interviews: seat pricing punished teams that invite occasional guests.",
        [],
    ),
    "DR-007": (
        "decisions",
        "Calculator estimates, checkout confirms",
        "The calculator shows an estimate; the binding price is shown at checkout.",
        [],
    ),
    "FT-003": (
        "features",
        "Usage calculator",
        "Interactive estimate of the monthly bill from seats and usage.",
        ["web/pricing/Calculator.tsx"],
    ),
    "FT-008": (
        "features",
        "Shared billing",
        "One invoice per workspace with per-member usage breakdown.",
        [],
    ),
    "ST-002": (
        "standards",
        "Prices are shown with currency and period",
        "Always '$12 per seat / month', never a bare number.",
        [],
    ),
    "PR-001": (
        "principles",
        "No surprise bills",
        "Customers can predict their bill; we alert at 80% and 100% of the allowance.",
        [],
    ),
    "TN-004": (
        "tensions",
        "Simple pricing vs fair pricing",
        "Fewer tiers are easier to explain; usage pricing is fairer for uneven teams.",
        [],
    ),
    "SG-001": (
        "strategy",
        "Land teams, expand with usage",
        "Win small teams cheaply and grow revenue as their usage grows.",
        [],
    ),
    "TE-010": (
        "tracking-events",
        "calc_used",
        "Fired when a visitor changes any calculator input.",
        ["web/pricing/tracking.ts"],
    ),
    "TE-011": ("tracking-events", "plan_upgraded", "Fired when a workspace moves to a higher tier.", []),
    "TE-012": (
        "tracking-events",
        "team_active",
        "Daily event per workspace meeting the active-team rule.",
        [],
    ),
}

KB_RELATIONS: list[tuple[str, str, str]] = [
    ("BR-012", "uses_term", "GT-031"),
    ("BR-012", "decided_by", "DR-005"),
    ("BR-012", "implemented_by", "FT-008"),
    ("BR-015", "uses_term", "GT-019"),
    ("BR-021", "applies_to", "FT-003"),
    ("DR-005", "resolves", "TN-004"),
    ("DR-005", "serves", "SG-001"),
    ("DR-007", "applies_to", "FT-003"),
    ("FT-003", "tracked_by", "TE-010"),
    ("FT-003", "follows", "ST-002"),
    ("FT-008", "uses_term", "GT-019"),
    ("PR-001", "motivates", "BR-012"),
    ("GT-024", "measured_by", "TE-012"),
    ("SG-001", "measured_by", "TE-011"),
]

# (days ago, mood, note, goal key or None)
CHECK_INS: list[tuple[int, int, str, str | None]] = [
    (13, 3, "Beta kickoff went fine, too many meetings though.", None),
    (12, 4, "Wrote for 30 minutes before standup.", "g_writing"),
    (10, 2, "Skipped writing, fire-fighting the migration bug.", "g_writing"),
    (9, 4, "Price points drafted; leadership review next week.", "g_ga"),
    (7, 3, "Beta survey out. Feeling scattered.", None),
    (6, 4, "Good writing session, outlined the blog post.", "g_writing"),
    (4, 5, "Price points approved in principle!", "g_ga"),
    (3, 3, "Calculator edge cases keep piling up.", None),
    (1, 4, "Pricing copy first draft done.", "g_ga"),
]

SUMMARY = {
    "patterns": [
        "Most productive before 10:00; afternoons fill with meetings",
        "Skips the writing habit on days with production incidents",
        "Breaks big launches into checklists and works them in order",
    ],
    "wins": [
        "Recruited all 30 beta teams a week early",
        "Got usage-based price points approved",
        "Kept the morning writing habit 8 of the last 10 weekdays",
    ],
    "struggles": [
        "Context switching between pricing work and release engineering",
        "Saying no to meeting requests during focus time",
    ],
}

CHAT: list[tuple[str, str, str | None]] = [
    ("user", "What is still blocking the pricing page?", None),
    (
        "assistant",
        "Two things: legal review of the pricing terms (todo) and the calculator widget "
        "(in progress). Copy is drafted; price points are done.",
        "planner",
    ),
]
