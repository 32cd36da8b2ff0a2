"""Six kinds of project for `project_data`, as tables (no logic): a web team's sprints, a Flask app,
studying geometry, a thesis, a product launch, a data pipeline. See `project_pools.Domain`."""

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
        "    steps:\n      - uses: actions/checkout@v4\n      - run: npm ci\n      - run: npm test -- --coverage\n```",
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
        ),
        ("priority", "due date", "assignee", "story points", "component", "reviewer", "blocked reason"),
        "How many columns did I ask to add to the tickets table across my requests?",
    ),
)

FLASK_APP = Domain(
    name="app",
    titles=("Recipe app", "Mobile app backend", "Side project app"),
    values={
        "app": ("Pantry", "Forkful", "Saucebox", "Crumbs", "Mise"),
        "host": ("Render", "Fly.io", "a Hetzner VPS", "Railway"),
        "pgv": ("14", "15", "16"),
        "framework": ("React Native", "Flutter", "SwiftUI"),
    },
    topics=(
        "set up the Flask project",
        "design the database schema",
        "build the login flow",
        "add the recipe endpoints",
        "handle image uploads",
        "write tests for the API",
        "add search",
        "connect the mobile screens",
        "set up deployment",
        "add push notifications",
        "clean up error handling",
        "add rate limiting",
    ),
    things=(
        "the recipes table",
        "Flask routes",
        "the daily quota",
        "the upload limit",
        "Docker",
        "deployment",
        "the login endpoint",
        "S3 uploads",
        "the mobile build",
        "blueprints",
        "the app factory",
        "migrations",
        "JWT tokens",
        "password hashing",
        "pagination",
        "request validation",
        "CORS",
        "the session cookie",
        "background jobs",
        "the upload endpoint",
        "database indexes",
        "the test client",
        "environment variables",
    ),
    asks=(
        "How should I structure {thing} in Flask?",
        "What's the cleanest way to handle {thing}?",
        "Can you show me an example of {thing}?",
        "I'm confused about {thing}, can you explain?",
        "Is {thing} overkill for a small app?",
        "What do people usually get wrong with {thing}?",
        "How do I test {thing}?",
    ),
    paragraphs=(
        "Flask gives you very little structure by default, which is pleasant for a prototype and painful "
        "by the third month. An application factory plus one blueprint per area of the app (auth, recipes, "
        "users) keeps imports simple and makes the test client easy to set up with a fresh configuration.",
        "Validate everything that comes in at the edge and trust it afterwards. If each view checks the "
        "JSON body itself, the checks drift apart and one of them forgets a field. A small schema per "
        "endpoint, applied before the view runs, gives you consistent messages for the mobile client.",
        "For the mobile client, be boring and consistent: every error has the same JSON shape with a code "
        "and a message, every list is paginated the same way, and dates are always ISO 8601 in UTC. The "
        "app team will thank you, and so will you when you debug it from a phone at midnight.",
        "Migrations are part of the code. Generate them, read them, and commit them with the change that "
        "needs them. A migration that works on your laptop's SQLite and fails on PostgreSQL is the most "
        "common reason a deploy goes wrong in small projects like this one.",
        "Keep secrets out of the repository from day one. Read them from environment variables, give the "
        "app a clear error when one is missing, and keep a sample file that lists the names without the "
        "values, so a new machine can be set up in minutes.",
    ),
    bullets=(
        "Use an application factory",
        "One blueprint per feature area",
        "Hash passwords with a slow hash",
        "Return the same error shape everywhere",
        "Paginate every list endpoint",
        "Index foreign keys",
        "Store uploads outside the web root",
        "Set a maximum request size",
        "Log the request id",
        "Run the tests against PostgreSQL in CI",
        "Keep configuration in environment variables",
    ),
    code=(
        "```python\nfrom flask import Flask\n\n\ndef create_app(config: dict | None = None) -> Flask:\n"
        "    app = Flask(__name__)\n    app.config.update(config or {})\n    from .recipes import bp\n\n"
        '    app.register_blueprint(bp, url_prefix="/recipes")\n    return app\n```',
        '```python\n@bp.get("/<int:recipe_id>")\ndef show(recipe_id: int):\n    recipe = db.session.get(Recipe, '
        'recipe_id)\n    if recipe is None:\n        return {"error": "not_found"}, 404\n    return recipe.to_dict()\n```',
        '```bash\nflask --app app db migrate -m "add recipes"\nflask --app app db upgrade\npytest -q\n```',
    ),
    facts=(
        Fact(
            ("The app is called {app}, it's for sharing family recipes.",), "What is my app called?", "{app}"
        ),
        Fact(
            ("I'm hosting the backend on {host}.", "The backend will live on {host}."),
            "Where am I hosting the backend?",
            "{host}",
        ),
        Fact(
            ("We're on PostgreSQL {pgv} for the database.",), "Which PostgreSQL version do we use?", "{pgv}"
        ),
        Fact(
            ("The mobile side is written in {framework}.",),
            "What is the mobile app built with?",
            "{framework}",
        ),
    ),
    rules=(
        Rule(
            ("When I ask about errors, always tell me which status code the endpoint should return.",),
            (
                "Users get kicked out when their session expires, how should the backend handle it?",
                "What happens when someone uploads a photo that's too big?",
            ),
            "status codes",
        ),
        Rule(
            ("Please always show type hints in Python examples.",),
            ("Write the view that lists a user's saved recipes.", "How would I paginate the search results?"),
            "type hints",
        ),
        Rule(
            ("Never use global variables in code you give me.",),
            ("How do I share the database connection between requests?",),
            "no globals",
        ),
        Rule(
            ("From now on, mention how to test whatever you suggest.",),
            ("How do I add password reset?", "Walk me through adding favourites."),
            "how to test it",
        ),
    ),
    prefs=(
        Rule(
            ("I prefer lightweight, dependency-free libraries where possible.",),
            ("What should I use to validate incoming JSON?", "Which library should I use for rate limiting?"),
            "lightweight libraries",
        ),
        Rule(
            ("I like SQLAlchemy Core better than the ORM.",),
            (
                "Write the query that fetches the ten newest recipes.",
                "How do I write the recipe search with SQLAlchemy?",
            ),
            "SQLAlchemy Core",
        ),
    ),
    changes=(
        Change(
            ("The free tier allows {old} API requests per day.",),
            ("The daily quota changed, it's {new} requests now.", "New daily quota is {new}."),
            "What is the daily request quota?",
            (("1,000", "1,200"), ("500", "800"), ("2,000", "1,500")),
        ),
        Change(
            ("The image upload limit is {old}.",),
            ("We raised the upload limit to {new}.",),
            "What is the image upload limit?",
            (("5 MB", "8 MB"), ("2 MB", "4 MB"), ("10 MB", "12 MB")),
        ),
    ),
    clashes=(
        Clash(
            ("I have never written Flask routes before, this is my first backend.",),
            ("I added a homepage route and a health route last night, both work.",),
            "Have I written Flask routes?",
        ),
        Clash(
            ("We are not using Docker for this project.",),
            ("I rebuilt the Docker image after changing the requirements.",),
            "Does my project use Docker?",
        ),
    ),
    events=(
        ("Set up the project skeleton with an app factory today.", "scaffold the codebase"),
        ("The login and signup endpoints are done and tested.", "handle accounts"),
        ("Image upload to S3 works now.", "store pictures"),
        ("I shipped the first TestFlight build of the mobile app!", "get the phone app to testers"),
        ("We deployed the backend to production.", "put the server live"),
    ),
    items=Items(
        (
            "Add a {item} column to the recipes table.",
            "The recipes table needs a {item} column too.",
            "Can we add {item} as a column on recipes?",
        ),
        ("prep time", "servings", "cuisine", "difficulty", "calories", "author id", "photo url"),
        "How many columns did I ask to add to the recipes table across my requests?",
    ),
)

GEOMETRY = Domain(
    name="geometry",
    titles=("Geometry exam prep", "Studying geometry", "Geometry revision"),
    values={
        "exam": ("May 12", "June 3", "December 8", "January 19"),
        "teacher": ("Mr. Okafor", "Ms. Lindqvist", "Mrs. Duarte", "Mr. Brennan"),
        "book": ("Jacobs' Geometry", "Kiselev's Planimetry", "the Art of Problem Solving book"),
        "school": ("Riverside High", "Northgate Academy", "St. Aidan's"),
    },
    topics=(
        "review congruent triangles",
        "practise similarity problems",
        "go over circle theorems",
        "understand the Pythagorean theorem properly",
        "do area problems",
        "learn coordinate geometry",
        "work on proofs",
        "revise angles in polygons",
        "study transformations",
        "go through volume and surface area",
        "practise trigonometry basics",
        "prepare for the mock exam",
    ),
    things=(
        "the law of cosines",
        "the formula sheet",
        "the exam",
        "circle theorems",
        "congruent triangles",
        "the mock exam",
        "my grade",
        "study time",
        "similar triangles",
        "the inscribed angle theorem",
        "Heron's formula",
        "angle bisectors",
        "medians",
        "the centroid",
        "tangent lines",
        "cyclic quadrilaterals",
        "reflections",
        "the sine rule",
        "two-column proofs",
        "the distance formula",
        "sectors and arcs",
        "exterior angles",
    ),
    asks=(
        "Can you explain {thing} again?",
        "I keep mixing up {thing}, help?",
        "Give me a practice problem on {thing}.",
        "Why does {thing} work?",
        "How do I recognise when to use {thing}?",
        "What's a common trap with {thing}?",
        "Check my reasoning about {thing}: I think it only works for right angles.",
    ),
    paragraphs=(
        "Most geometry problems become easier once you draw a large, accurate diagram and label everything "
        "you know. Mark equal sides with ticks and equal angles with arcs. Half of the time the missing "
        "step is visible in the picture before you write a single equation.",
        "When you are stuck on a proof, work backwards. Ask what you would need to know for the final "
        "statement to follow, then what would give you that, and so on, until you reach something the "
        "problem states. Then write the chain forwards as your proof.",
        "Similarity is about ratios, congruence about equality. If two triangles share two angles they are "
        "similar, and every pair of corresponding sides has the same ratio. That one idea solves many "
        "problems with shadows, maps and nested triangles.",
        "Circle theorems all come from the same place: the radius is constant, so triangles from the centre "
        "are isosceles. If you forget a theorem in the exam, you can often rebuild it in a minute from that "
        "fact, which is a good safety net.",
        "For area problems, list every formula that could apply before choosing one: base times height, "
        "Heron's formula, half of ab sine C, coordinates with the shoelace formula. Comparing them on the "
        "same triangle is a great way to check your arithmetic.",
    ),
    bullets=(
        "Draw the diagram large",
        "Label every known length and angle",
        "Look for isosceles triangles",
        "Check whether a right angle hides in the figure",
        "Write the theorem's name next to each step",
        "Estimate the answer before calculating",
        "Check units at the end",
        "Try a special case first",
        "Extend lines to create parallel lines",
        "Use symmetry where you can",
        "Redo mistakes a day later",
    ),
    code=(
        "```text\n        A\n       / \\\n      /   \\\n   c /     \\ b\n    /       \\\n   B---------C\n        a\n```",
        "```python\nfrom math import sqrt\n\ndef heron(a: float, b: float, c: float) -> float:\n    s = (a + b + c) / 2\n"
        "    return sqrt(s * (s - a) * (s - b) * (s - c))\n```",
    ),
    facts=(
        Fact(
            ("My geometry exam is on {exam}.", "The exam date is set: {exam}."),
            "When is my geometry exam?",
            "{exam}",
        ),
        Fact(("My teacher this year is {teacher}.",), "Who is my geometry teacher?", "{teacher}"),
        Fact(("We use {book} in class.",), "Which textbook do we use in class?", "{book}"),
        Fact(("I'm in year eleven at {school}.",), "Which school do I go to?", "{school}"),
    ),
    rules=(
        Rule(
            ("Always include a comparison of solution methods when I ask about triangle areas.",),
            (
                "How can I find the area of a triangle using medians?",
                "Sides 7, 8 and 9: how much space does that shape cover?",
            ),
            "compares methods",
        ),
        Rule(
            ("When you explain a proof, number every step.",),
            (
                "Why are the base angles of an isosceles triangle equal?",
                "Show me that the angles in a quadrilateral add up to 360 degrees.",
            ),
            "numbered steps",
        ),
        Rule(
            ("Never just give me the final answer, give hints first.",),
            (
                "What's the circumference of a circle with radius 4?",
                "A chord sits 8 cm from the centre of a circle of radius 10; how long is it?",
            ),
            "hints first",
        ),
        Rule(
            ("From now on, name the theorem you use at each step.",),
            ("How do I find the missing side when the legs are 5 and 12?",),
            "names theorems",
        ),
    ),
    prefs=(
        Rule(
            ("I prefer worked examples over abstract explanations.",),
            ("What is the inscribed angle theorem about?", "Can you explain the tangent-secant theorem?"),
            "a worked example",
        ),
        Rule(
            ("I like using coordinates instead of pure synthetic arguments.",),
            ("How do I prove the diagonals of a parallelogram bisect each other?",),
            "coordinates",
        ),
    ),
    changes=(
        Change(
            ("I'm aiming for a grade of {old} on the exam.",),
            ("Revised goal: I want a {new} now.",),
            "What grade am I aiming for?",
            (("B", "A"), ("70%", "85%"), ("6", "8")),
        ),
        Change(
            ("I study {old} hours a week for geometry.",),
            ("I've bumped my study time to {new} hours a week.",),
            "How many hours a week do I study geometry?",
            (("4", "6"), ("3", "5"), ("5", "8")),
        ),
    ),
    clashes=(
        Clash(
            ("I've never seen the law of cosines before.",),
            ("I used the law of cosines on last week's quiz and got full marks.",),
            "Have I used the law of cosines before?",
        ),
    ),
    events=(
        ("I finished the chapter on congruent triangles today.", "wrap up the congruence unit"),
        ("Took the practice test on similarity, got 14 of 20.", "sit the first practice paper"),
        ("I finally get circle theorems, did all the exercises.", "master the chord and tangent rules"),
        ("Did a full mock exam this weekend, timed.", "do the timed rehearsal"),
    ),
    items=Items(
        ("Add {item} to my formula sheet, please.", "Put {item} on the formula sheet too."),
        (
            "Heron's formula",
            "the law of sines",
            "the law of cosines",
            "the area of a sector",
            "the shoelace formula",
            "the midpoint formula",
        ),
        "How many formulas did I ask you to add to my formula sheet?",
    ),
)

THESIS = Domain(
    name="thesis",
    titles=("Master's thesis", "Thesis writing", "Dissertation"),
    values={
        "sup": ("Professor Haddad", "Dr. Kowalski", "Dr. Mbeki", "Professor Lindgren"),
        "subject": (
            "urban heat islands in mid-size cities",
            "remote work and team trust",
            "soil microbes under drought",
            "bilingual children's reading habits",
        ),
        "limit": ("40,000", "60,000", "25,000"),
        "method": ("semi-structured interviews", "a mixed-methods survey", "field measurements"),
    },
    topics=(
        "outline the introduction",
        "plan the literature review",
        "write the research questions",
        "design the methodology chapter",
        "prepare the survey",
        "analyse the first results",
        "structure the discussion",
        "fix my references",
        "tighten the abstract",
        "plan the remaining weeks",
        "respond to my supervisor's comments",
        "prepare the defence",
    ),
    things=(
        "the reading list",
        "the survey",
        "the deadline",
        "the literature review",
        "ethics approval",
        "the proposal",
        "interviews",
        "the full draft",
        "the research gap",
        "thematic analysis",
        "the theoretical framework",
        "sampling",
        "validity",
        "the limitations section",
        "coding interviews",
        "the abstract",
        "signposting",
        "hedging language",
        "the conclusion",
        "citation managers",
        "research questions",
        "the methods chapter",
    ),
    asks=(
        "How do I write {thing} well?",
        "What should {thing} include?",
        "My supervisor says {thing} is weak. Why?",
        "Can you give me an example of {thing}?",
        "How long should {thing} be?",
        "What are typical mistakes in {thing}?",
        "How do I make {thing} more convincing?",
    ),
    paragraphs=(
        "A literature review is an argument, not a catalogue. Group sources by what they claim and where "
        "they disagree, and let each section end with what is still unknown. The gap your thesis fills "
        "should feel inevitable by the end of the chapter.",
        "Research questions carry the whole thesis. Each one should be answerable with the data you can "
        "realistically collect, and each chapter should point back to one of them. If a section does not "
        "serve a question, it probably belongs in an appendix or nowhere.",
        "Write the methods chapter so that someone could repeat the study. Say who took part, how they were "
        "chosen, what they were asked and how the answers were analysed, and justify each choice briefly "
        "with a source. Reviewers look for that chain of reasons.",
        "The discussion is where you connect results to the literature. For each finding, say whether it "
        "agrees with earlier work, offer an explanation when it does not, and be honest about what the "
        "design cannot tell you. That honesty reads as strength, not weakness.",
        "Drafting and editing are different jobs. Draft fast without rereading, then edit in separate "
        "passes: structure first, then paragraphs, then sentences, then references. Trying to do all four "
        "at once is why a page can take a whole afternoon.",
    ),
    bullets=(
        "State the gap in one sentence",
        "Link each chapter to a research question",
        "Define key terms early",
        "Keep a decision log for methods",
        "Write limitations without apologising",
        "Use signposting sentences",
        "Check every in-text citation has a reference",
        "Draft the abstract last",
        "Read chapters aloud",
        "Book regular meetings with the supervisor",
        "Back up the thesis in two places",
    ),
    code=(
        "```text\n1 Introduction\n  1.1 Background\n  1.2 Research gap\n  1.3 Questions\n2 Literature review\n"
        "3 Method\n4 Results\n5 Discussion\n6 Conclusion\n```",
        "```r\nlibrary(dplyr)\nresponses %>%\n  group_by(role) %>%\n  summarise(trust = mean(trust_score), n = n())\n```",
    ),
    facts=(
        Fact(("My supervisor is {sup}.",), "Who is my supervisor?", "{sup}"),
        Fact(
            ("The thesis is about {subject}.", "Quick context: I'm writing about {subject}."),
            "What is my thesis about?",
            "{subject}",
        ),
        Fact(
            ("The department's word limit is {limit} words.",),
            "What is the word limit for my thesis?",
            "{limit}",
        ),
        Fact(("My main method is {method}.",), "What is my main research method?", "{method}"),
    ),
    rules=(
        Rule(
            ("Always cite page numbers when you mention a source.",),
            ("What did Putnam argue about social capital?", "Where does the idea of weak ties come from?"),
            "page numbers",
        ),
        Rule(
            ("When you edit my paragraphs, show the changes as a before/after pair.",),
            (
                "Can you tighten this: 'The results that were found in this study seem to suggest a relationship.'",
            ),
            "before/after",
        ),
        Rule(
            ("Never write whole sections for me, only outline them.",),
            ("I need the discussion chapter done by Monday, can you help?",),
            "outline only",
        ),
        Rule(
            ("Use APA 7 for every reference you format.",),
            ("How should the bibliography entry for Smith and Lee's 2019 article look?",),
            "APA 7",
        ),
    ),
    prefs=(
        Rule(
            ("I prefer short sentences and active voice.",),
            (
                "Rewrite my abstract so it reads better.",
                "Fix this sentence: 'It was decided by the team that the survey would be extended.'",
            ),
            "short active sentences",
        ),
        Rule(
            ("I like to work from outlines before drafting anything.",),
            ("How do I start on the chapter about earlier studies?",),
            "an outline first",
        ),
    ),
    changes=(
        Change(
            ("The submission deadline is {old}.",),
            ("My deadline got extended to {new}.",),
            "When is my thesis due?",
            (("September 1", "September 15"), ("June 30", "July 21"), ("March 3", "April 7")),
        ),
        Change(
            ("I have {old} survey responses so far.",),
            ("The survey closed with {new} responses in total.",),
            "How many survey responses do I have?",
            (("84", "132"), ("40", "75"), ("120", "161")),
        ),
    ),
    clashes=(
        Clash(
            ("I haven't collected any data yet.",),
            ("The interviews I recorded in spring are all transcribed.",),
            "Have I collected any data yet?",
        ),
    ),
    events=(
        ("My proposal got approved by the committee.", "get the green light on my plan"),
        ("Ethics approval came through today.", "clear the review board"),
        ("Finished the literature review draft.", "draft the chapter on prior work"),
        ("Data collection is done, finally.", "wrap up fieldwork"),
        ("Sent the full draft to my supervisor.", "hand everything to my advisor"),
    ),
    items=Items(
        ("Add {item} to my reading list.", "Please put {item} on the reading list."),
        (
            "Putnam 2000",
            "Granovetter 1973",
            "Braun and Clarke 2006",
            "Creswell 2014",
            "Flyvbjerg 2006",
            "Yin 2018",
        ),
        "How many sources did I ask you to add to my reading list?",
    ),
)

LAUNCH = Domain(
    name="launch",
    titles=("Product launch", "Launch marketing", "Go-to-market"),
    values={
        "launch": ("October 7", "November 12", "September 23", "March 30"),
        "product": ("Tally", "Ledgerly", "Coinwise", "Budgetbee"),
        "comp": ("YNAB", "Mint", "Copilot", "Monarch"),
        "agency": ("Brightside", "Northwind Media", "Kite & Co"),
    },
    topics=(
        "define our positioning",
        "plan the launch timeline",
        "write the landing page copy",
        "plan the email sequence",
        "set up social channels",
        "prepare the press kit",
        "plan paid campaigns",
        "recruit beta users",
        "plan launch day",
        "review the first metrics",
        "plan partnerships",
        "plan content for the blog",
    ),
    things=(
        "the waitlist",
        "launch day",
        "the ad budget",
        "paid ads",
        "Product Hunt",
        "beta invites",
        "launch channels",
        "the competitor",
        "the landing page",
        "positioning",
        "the waitlist",
        "email open rates",
        "the press kit",
        "influencers",
        "retargeting",
        "A/B tests",
        "the launch checklist",
        "referral programs",
        "conversion rate",
        "the onboarding email",
        "community building",
        "SEO",
    ),
    asks=(
        "How should we approach {thing}?",
        "What does good {thing} look like?",
        "Is {thing} worth it for us?",
        "What metrics matter for {thing}?",
        "Give me a plan for {thing}.",
        "What mistakes do startups make with {thing}?",
        "How much effort should {thing} get before launch?",
    ),
    paragraphs=(
        "Positioning comes before copy. Decide who the product is for, what they use today and why this is "
        "better for them, in one sentence each. Every headline, email and ad then follows from those "
        "sentences, and the team stops arguing about adjectives.",
        "A waitlist is only useful if you talk to it. Send a short note every week or two with something "
        "real: a screenshot, a decision, a question. People who hear nothing for two months forget why "
        "they signed up and will not open the launch email.",
        "Launch day is a spike, not a strategy. Plan the two weeks after it as carefully as the day itself: "
        "onboarding emails, follow-ups with press, answering every comment. That is where most of the "
        "long-term users actually come from.",
        "Measure the funnel end to end before spending on ads. If the landing page converts two percent and "
        "the onboarding loses half of those, buying more traffic mostly buys more churn. Fix the leakiest "
        "step first.",
        "Press coverage follows stories, not features. A founder's reason for building the product, a "
        "surprising number from the beta, or a clear opinion about the market is far more likely to be "
        "picked up than a list of what the app does.",
    ),
    bullets=(
        "Write the one-sentence positioning",
        "Set up analytics before launch",
        "Prepare three headline variants",
        "Schedule social posts for launch day",
        "Brief the support inbox",
        "Collect beta testimonials",
        "Line up two friendly journalists",
        "Test every signup link",
        "Prepare a launch-day FAQ",
        "Plan follow-up emails for day 3 and day 7",
        "Track sign-ups by channel",
    ),
    code=(
        "```text\nutm_source=newsletter&utm_medium=email&utm_campaign=launch_week\n```",
        "```sql\nselect channel, count(*) as signups\nfrom signups\nwhere created_at >= '2025-10-01'\ngroup by channel\n"
        "order by signups desc;\n```",
    ),
    facts=(
        Fact(
            ("Launch day is {launch}.", "We picked {launch} for launch day."),
            "When is launch day?",
            "{launch}",
        ),
        Fact(
            ("The product is called {product}, a budgeting app for freelancers.",),
            "What is the product called?",
            "{product}",
        ),
        Fact(("Our main competitor is {comp}.",), "Who is our main competitor?", "{comp}"),
        Fact(
            ("We hired {agency} for the launch video.",), "Which agency makes our launch video?", "{agency}"
        ),
    ),
    rules=(
        Rule(
            ("Always give me a subject line option when you draft an email.",),
            ("Write the announcement to our waitlist.", "Draft the note we send beta users next week."),
            "subject line",
        ),
        Rule(
            ("Never promise discounts in public copy.",), ("Write the tweet for launch day.",), "no discounts"
        ),
        Rule(
            ("When I ask for copy, give three variants.",),
            ("I need a tagline for the landing page.", "Headline for the pricing section?"),
            "three variants",
        ),
        Rule(
            ("Always include the target metric when you suggest a campaign.",),
            ("What should we run on LinkedIn in the first week?",),
            "target metric",
        ),
    ),
    prefs=(
        Rule(
            ("I prefer a playful tone over corporate speak.",),
            ("Draft the press release intro.", "What tone should the launch email have?"),
            "playful tone",
        ),
        Rule(
            ("I like data-backed suggestions more than gut feelings.",),
            ("Should we post on weekends?", "What data should decide our posting schedule?"),
            "data-backed",
        ),
    ),
    changes=(
        Change(
            ("The waitlist has {old} sign-ups.",),
            ("We're at {new} sign-ups on the waitlist now.",),
            "How many sign-ups does the waitlist have?",
            (("1,200", "2,050"), ("340", "610"), ("3,000", "4,400")),
        ),
        Change(
            ("Our ad budget is {old} a month.",),
            ("Ad budget was cut to {new} a month.",),
            "What is our monthly ad budget?",
            (("$5,000", "$3,500"), ("$2,000", "$1,200")),
        ),
    ),
    clashes=(
        Clash(
            ("We have never run paid ads.",),
            ("The Facebook ads we ran in January had a terrible click rate.",),
            "Have we run paid ads before?",
        ),
    ),
    events=(
        ("The landing page is live.", "publish the website"),
        ("We opened the waitlist today.", "start collecting emails"),
        ("Beta invites went out this morning.", "let the first testers in"),
        ("We launched on Product Hunt!", "do the public debut"),
    ),
    items=Items(
        ("Add {item} to the list of launch channels.", "Put {item} on our channel list as well."),
        ("Product Hunt", "Hacker News", "our newsletter", "Reddit", "LinkedIn", "a podcast sponsorship"),
        "How many launch channels did I ask you to add?",
    ),
)

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
        "```sql\nmerge into marts.orders t\nusing staging.orders s on t.order_id = s.order_id\nwhen matched then update "
        "set status = s.status\nwhen not matched then insert (order_id, status) values (s.order_id, s.status);\n```",
        '```python\n@task(retries=3)\ndef load(day: str) -> int:\n    rows = extract(day)\n    write_partition("orders", day, '
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
        ("Add a {item} column to the events table.", "The events table should get a {item} column."),
        ("session id", "device type", "country code", "referrer", "app version", "experiment id"),
        "How many columns did I ask to add to the events table across my requests?",
    ),
)

DOMAINS = (SPRINT, FLASK_APP, GEOMETRY, THESIS, LAUNCH, PIPELINE)
