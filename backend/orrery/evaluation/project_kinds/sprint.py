"""A project kind for `orrery eval make-dataset --kind project`: a web team planning and running its
sprints (a table, no logic)."""

from __future__ import annotations

from orrery.evaluation.project_pools import Change, Clash, Domain, Fact, Items, Rule

SPRINT = Domain(
    name="sprint",
    titles=("Team sprint planning", "Shop rebuild sprints", "Web team delivery"),
    values={
        "sprint_end": ("March 14", "April 2", "May 9", "June 20", "February 27"),
        "team_size": ("four", "five", "six", "seven"),
        "standup": ("9:15", "9:30", "10:00", "8:45"),
        "po": ("Priya", "Hannah", "Ines", "Marta", "Olga"),
    },
    topics=(
        "plan the first sprint",
        "groom the backlog",
        "estimate the checkout stories",
        "set up our board",
        "prepare the sprint review",
        "run a retrospective",
        "split the search epic",
        "sort out our definition of done",
        "plan the API work",
        "deal with the bug backlog",
        "agree on code review rules",
        "plan the release",
    ),
    things=(
        "the first sprint",
        "the release deadline",
        "the tickets table",
        "our standup",
        "QA",
        "the retro",
        "CI",
        "staging",
        "the auth module",
        "the sprint review",
        "story points",
        "the backlog",
        "velocity",
        "code review",
        "the definition of done",
        "standups",
        "the burndown chart",
        "acceptance criteria",
        "technical debt",
        "the release branch",
        "pull requests",
        "the API contract",
        "feature flags",
        "bug triage",
    ),
    asks=(
        "How do we estimate {thing} better?",
        "What's a good process for {thing}?",
        "Can you explain how {thing} should work on a small team?",
        "We keep arguing about {thing}. Advice?",
        "How much time should {thing} take each sprint?",
        "What are common mistakes with {thing}?",
        "Write me a checklist for {thing}.",
    ),
    paragraphs=(
        "Estimation works best as a conversation, not a number-picking ritual. When two people give very "
        "different estimates for the same story, the gap usually means they imagine different work: one "
        "sees a form and a button, the other sees validation, migrations and an email template. Let them "
        "explain, split the story if needed, and only then estimate again.",
        "A sprint goal should be one sentence a stakeholder understands. If the goal is a list of ten "
        "tickets, you will finish seven of them and nobody will know whether the sprint worked. With one "
        "goal, the team can drop or swap tickets mid-sprint and still deliver what mattered.",
        "Keep the board honest. A ticket that sits in review for three days is a signal, not a detail; "
        "review is work, and it should have a limit like any other column. Many teams find that limiting "
        "work in progress does more for throughput than any change to estimation.",
        "Technical debt needs a budget, not a promise. Reserving a fixed share of each sprint, for example "
        "fifteen percent, is easier to defend than arguing for a cleanup sprint every quarter, and it "
        "keeps the codebase from drifting until a rewrite looks like the only option.",
        "The review is for the product, the retrospective is for the team. Mixing them makes both worse: "
        "stakeholders do not need to hear about flaky tests, and the team will not be candid about process "
        "problems with the product owner's manager in the room.",
        "Bugs found in the sprint belong to the sprint. Pushing them to the backlog makes velocity look "
        "better than it is and hides the real cost of the feature. If a bug is large, make it visible as "
        "its own ticket, but keep it in the current plan.",
    ),
    bullets=(
        "Limit work in progress per person to two tickets",
        "Write acceptance criteria before estimating",
        "Split stories bigger than eight points",
        "Keep standups under fifteen minutes",
        "Review pull requests within one working day",
        "Track carry-over between sprints",
        "Put release notes in the definition of done",
        "Tag blocked tickets with the reason",
        "Demo working software, not slides",
        "Rotate the facilitator every sprint",
        "Keep a visible list of risks",
        "Agree on a branch naming convention",
    ),
    code=(
        "```yaml\nname: ci\non: [push, pull_request]\njobs:\n  test:\n    runs-on: ubuntu-latest\n"
        "    steps:\n      - uses: actions/checkout@v4\n      - run: npm ci\n      - run: npm test -- "
        "--coverage\n```",
        "```text\nproject = WEB AND sprint in openSprints() AND status != Done\nORDER BY priority DESC, "
        "created ASC\n```",
        "```python\ndef burndown(total: int, done_per_day: list[int]) -> list[int]:\n    left = total\n"
        "    points = []\n    for done in done_per_day:\n        left -= done\n        points.append(left)\n"
        "    return points\n```",
    ),
    facts=(
        Fact(
            (
                "My first sprint ends on {sprint_end}.",
                "Just so you know, sprint one wraps up on {sprint_end}.",
            ),
            "When does my first sprint end?",
            "{sprint_end}",
        ),
        Fact(
            ("We're a team of {team_size} developers plus one designer.",),
            "How many developers are on my team?",
            "{team_size}",
        ),
        Fact(
            ("Our standup is at {standup} every morning, on a video call.",),
            "What time is our daily standup?",
            "{standup}",
        ),
        Fact(
            ("{po} is our product owner, she signs off every release.",),
            "Who signs off on our releases?",
            "{po}",
        ),
    ),
    rules=(
        Rule(
            ("Always include error status codes when I ask about API errors.",),
            (
                "The checkout endpoint keeps failing for some users, what could be wrong?",
                "Why would the login call suddenly start rejecting requests?",
            ),
            "status codes",
        ),
        Rule(
            ("From now on, whenever we plan work, put story point estimates next to each item.",),
            (
                "Can you break the notifications feature down into tickets?",
                "What goes into the profile page redesign?",
            ),
            "story points per item",
        ),
        Rule(
            ("Never suggest overtime as a fix for a slipping schedule.",),
            (
                "We're three days behind, what should we do?",
                "How do we still hit the date with two people sick?",
            ),
            "no overtime",
        ),
        Rule(
            ("When I ask for a retro agenda, always add a five-minute icebreaker at the start.",),
            ("Draft the plan for Friday's retrospective meeting.",),
            "starts with an icebreaker",
        ),
    ),
    prefs=(
        Rule(
            ("I prefer Kanban boards over long backlog documents.",),
            (
                "How should I lay out the work for the next two weeks?",
                "What's the best way to organise the work for the quarter?",
            ),
            "a Kanban board",
        ),
        Rule(
            ("I like tables more than paragraphs when comparing options.",),
            ("Compare Jira and Linear for us.", "What are our options for error tracking?"),
            "a table",
        ),
    ),
    changes=(
        Change(
            ("Our velocity so far is about {old} points per sprint.",),
            (
                "Velocity update: we're now closer to {new} points per sprint.",
                "Turns out our real velocity is {new} points, not what I said before.",
            ),
            "What is our team's velocity per sprint?",
            (("24", "31"), ("18", "22"), ("30", "26")),
        ),
        Change(
            ("The deadline for the first release is {old}.",),
            ("The release deadline moved to {new}.", "New release date: {new}, management pushed it."),
            "What is the deadline for the first release?",
            (("April 1", "April 5"), ("May 3", "May 17"), ("June 10", "June 24")),
        ),
    ),
    clashes=(
        Clash(
            ("I've never run a sprint retrospective before, honestly.",),
            ("In the retro I ran last quarter at my old job, people mostly complained about meetings.",),
            "Have I run a retrospective before?",
        ),
        Clash(
            ("We don't have any QA people on the team.",),
            ("Our QA engineer flagged six bugs in the payment flow yesterday.",),
            "Does my team have QA?",
        ),
    ),
    events=(
        (
            "We finally set up CI on GitHub Actions this morning, builds run on every push.",
            "automate the test runs",
        ),
        ("The auth module is written and merged, login and signup both work.", "get sign-in working"),
        ("We held our first sprint review with the stakeholders today.", "present to the business side"),
        ("We deployed the app to staging last night!", "put the app on the test server"),
        ("Production launch happened today, the site is live.", "go live"),
    ),
    items=Items(
        (
            "Add a {item} column to the tickets table, please.",
            "Can you also add a column for {item} to the tickets table?",
            "One more column for the tickets table: {item}.",
            "We should also track {item} on every ticket.",
            "Tickets need a field for {item} too.",
        ),
        ("priority", "due date", "assignee", "story points", "component", "reviewer", "blocked reason"),
        "How many columns did I ask to add to the tickets table across my requests?",
    ),
)
