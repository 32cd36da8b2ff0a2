"""A project kind for `orrery eval make-dataset --kind project`: building a Flask backend for a mobile
app (a table, no logic)."""

from __future__ import annotations

from orrery.evaluation.project_pools import Change, Clash, Domain, Fact, Items, Rule

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
        '```python\n@bp.get("/<int:recipe_id>")\ndef show(recipe_id: int):\n    recipe = '
        "db.session.get(Recipe, "
        'recipe_id)\n    if recipe is None:\n        return {"error": "not_found"}, 404\n    return '
        "recipe.to_dict()\n```",
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
            "Recipes should also store {item}.",
            "Let's keep {item} for every recipe as well.",
        ),
        ("prep time", "servings", "cuisine", "difficulty", "calories", "author id", "photo url"),
        "How many columns did I ask to add to the recipes table across my requests?",
    ),
)
