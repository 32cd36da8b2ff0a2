"""The shapes of a project domain for `project_data`, and the pools every domain shares (no logic).

A domain is one kind of project (a sprint, an app, a course of study...): its session topics, the
filler it talks about, and the things planted into it (facts, standing instructions, preferences,
values that change, contradictions, milestones, items asked for across chats). Templates name drawn
values as `{slot}`; only known slots are filled, so code blocks keep their braces.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Fact:
    """Stated once (any of `said`), asked about later."""

    said: tuple[str, ...]
    asked: str
    answer: str


@dataclass(frozen=True)
class Rule:
    """A standing instruction or preference (`said`) and later requests it applies to (`asked`),
    worded to share few words with it."""

    said: tuple[str, ...]
    asked: tuple[str, ...]
    answer: str = ""


@dataclass(frozen=True)
class Change:
    """A value stated (`first`), changed in a later chat (`second`); `values` are (old, new) pairs."""

    first: tuple[str, ...]
    second: tuple[str, ...]
    asked: str
    values: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class Clash:
    """Two statements that contradict without any update phrasing."""

    first: tuple[str, ...]
    second: tuple[str, ...]
    asked: str


@dataclass(frozen=True)
class Items:
    """Things asked for one at a time across chats (`said` with `{item}`), counted at the end."""

    said: tuple[str, ...]
    items: tuple[str, ...]
    asked: str


@dataclass(frozen=True)
class Domain:
    """One kind of project with everything the generator draws from."""

    name: str
    titles: tuple[str, ...]
    values: dict[str, tuple[str, ...]]
    topics: tuple[str, ...]
    """What a session is about (a verb phrase); at least ten, one per session."""
    things: tuple[str, ...]
    """Nouns the filler asks about."""
    asks: tuple[str, ...]
    """Filler user questions, `{thing}` filled."""
    paragraphs: tuple[str, ...]
    bullets: tuple[str, ...]
    code: tuple[str, ...]
    facts: tuple[Fact, ...]
    rules: tuple[Rule, ...]
    prefs: tuple[Rule, ...]
    changes: tuple[Change, ...]
    clashes: tuple[Clash, ...]
    events: tuple[tuple[str, str], ...]
    """Milestones in their natural order: (the message saying it happened, its name in a question)."""
    items: Items


NAMES = (
    ("Samantha", "Sam"),
    ("Alexander", "Alex"),
    ("Katherine", "Kat"),
    ("Benjamin", "Ben"),
    ("Josephine", "Jo"),
    ("Nicholas", "Nico"),
    ("Elizabeth", "Liz"),
    ("Theodore", "Teo"),
    ("Margaret", "Meg"),
    ("Christopher", "Kit"),
    ("Valentina", "Val"),
    ("Gabriel", "Gabe"),
)

OPENERS = (
    "Today I'd like to {topic}.",
    "I need to {topic}.",
    "Can you help me {topic}?",
    "Next up: {topic}.",
    "My task this week is to {topic}.",
    "I have to {topic} and I'm not sure how.",
    "Right, time to {topic}.",
    "Back at it. Can we {topic}?",
    "Help me {topic}, please.",
)
"""How a session starts: what it is about (the session's key message for a summary)."""

CLOSINGS = (
    "Thanks, that's enough for today.",
    "Great, I'll try this and come back.",
    "Perfect, talk soon.",
    "OK that helps a lot, signing off.",
    "Cool, I'll continue tomorrow.",
)

CLOSING_REPLIES = (
    "Good luck with it, and bring back whatever doesn't work.",
    "Sounds good. Next time we can pick up from here.",
    "You're welcome. You made solid progress today.",
    "Anytime. Leave notes for yourself so the next session starts fast.",
)

ACKS = (
    "Got it, noted.",
    "Understood, I'll keep that in mind.",
    "Thanks for letting me know.",
    "Noted. That helps me tailor things.",
    "Makes sense, I'll work with that.",
    "OK, good to know.",
)

FOLLOW_UPS = (
    "Makes sense. What about {thing}?",
    "And how does that affect {thing}?",
    "Can you give me an example with {thing}?",
    "Hmm, I'm not sure I follow the part about {thing}.",
    "What would you do first, honestly?",
    "Is there a simpler way?",
    "Could you show that as a list?",
    "Wait, why is that better than the obvious approach?",
)

LEADS = (
    "Good question. Here is how I would think about {thing}.",
    "Short version first, then the details.",
    "There are a few moving parts here, so let me lay them out.",
    "Let's go step by step, because {thing} trips a lot of people up.",
    "Here's a practical way to approach it.",
    "It depends a little on your constraints, but this works in most cases.",
)

WRAPS = (
    "If you tell me which of these fits your situation, I can go deeper on that one.",
    "Try the first step and tell me what you see; we can adjust from there.",
    "None of this is set in stone, so treat it as a starting point.",
    "Once this part is settled the rest tends to fall into place.",
)

GENERIC_PARAGRAPHS = (
    "A useful habit is to write down what you decided and why, even in one line. Weeks later the "
    "reason is what you forget first, and it is usually the thing you need when a choice has to be "
    "revisited. It also makes it easier to explain the decision to someone who joins later.",
    "Try not to optimise everything at once. Pick the one constraint that actually hurts right now, "
    "fix it, and measure again. Most of the time the second problem looks different once the first one "
    "is gone, and you avoid spending effort on something that was never the bottleneck.",
    "It helps to separate what must be true for this to work from what would merely be nice. The must "
    "list is usually short. Anything on the nice list can wait until the basic version is working end "
    "to end, which is when you learn the most about what really matters.",
    "Keep the feedback loop short. Whatever you are building or learning, the faster you can see "
    "whether a change helped, the more changes you can try in a day. Slow loops make people cautious "
    "and cautious people stop experimenting, which is exactly when progress stalls.",
    "Be explicit about the trade-off you are making. Choosing the simpler option is fine as long as "
    "you know what you give up and you would notice if that cost started to matter. A short note in "
    "the plan is enough; the point is that it is a choice and not an accident.",
)

GENERIC_RULES = (
    Rule(
        (
            "Keep answers short from now on, five sentences at most.",
            "Please keep your replies brief going forward, I read them on my phone.",
        ),
        (
            "Walk me through {thing} again?",
            "What's your take on {thing}?",
            "Give me a brief overview of {thing}.",
        ),
        "a short answer (five sentences at most)",
    ),
    Rule(
        ("Please don't use emojis in your replies.", "Never put emojis in anything you write for me."),
        ("Write a message announcing this week's progress to everyone.", "Draft a quick note for the group."),
        "no emojis",
    ),
    Rule(
        (
            "Always end with one concrete next step I can do today.",
            "From now on, finish every answer with a single action for today.",
        ),
        ("I'm stuck and not sure where to go from here, any thoughts?", "What should my focus be?"),
        "ends with one concrete next step",
    ),
)

GENERIC_PREFS = (
    Rule(
        (
            "Call me {nick}, by the way. Only my bank says {name}.",
            "Btw everyone calls me {nick}, please do too.",
        ),
        ("Write a two-line status update I can sign and send.", "Draft a short intro of me for a newcomer."),
        "signed {nick}",
    ),
    Rule(
        ("I prefer British spelling in anything I'll publish.", "I like UK spelling, for what it's worth."),
        (
            "Draft the first paragraph for the public page.",
            "Check the spelling in this blurb: 'Our color palette was optimized for clarity.'",
        ),
        "British spelling",
    ),
    Rule(
        (
            "I'm a visual learner, diagrams or ASCII sketches help me more than walls of text.",
            "Sketches work much better for me than long explanations.",
        ),
        ("How does {thing} work?", "Can you sketch how {thing} fits together?"),
        "a diagram or sketch",
    ),
)

CARRIERS = (
    "{said} Also, {ask}",
    "{ask} And {said}",
    "{said} {ask}",
    "{said}\n\n{ask}",
    "{said} Now, {ask}",
    "{said} This is what I have:\n\n{code}\n\n{ask}",
)
"""A planted statement inside a longer message; the joining words are stop words, so they never
count among a message's rarest words."""

PASTES = (
    "{ask} This is what I have:\n\n{code}",
    "{ask}\n\n{code}",
)

SUMMARY_QUESTIONS = (
    "Summarize how my project went.",
    "Give me a recap of everything we've done across our chats.",
    "Can you sum up the whole thing so far, from the start?",
    "What have we covered over all our sessions?",
)

ORDER_QUESTIONS = (
    "In what order did we {events}?",
    "What was the sequence: when did we {events}, relative to each other?",
    "Remind me which came first, we had to {events}.",
    "List the milestones we reached, in the order they happened.",
    "What got done first, and what came after that?",
    "Walk me through the big steps so far, in order.",
)
"""Half name the milestones (in other words than the messages did), half do not."""

DETAILS = (
    "{colleague} sent me {n} pages of notes on it.",
    "I have {n} items tagged {tag} for it.",
    "I blocked {n} hours for it, {colleague} joins at {n}:30.",
    "It came up in the call with {colleague} about {tag}.",
    "{colleague} wants an update on {tag} by the {n}th.",
    "The {tag} folder has {n} open questions on it from {colleague}.",
)
"""Specifics a person gives when starting on something: a colleague, a number, a label."""

COLLEAGUES = (
    "Okonkwo",
    "Rasmussen",
    "Tanaka",
    "Delacroix",
    "Novak",
    "Haruki",
    "Esposito",
    "Lindahl",
    "Mwangi",
    "Petrova",
    "Quist",
    "Ferreira",
    "Abernathy",
    "Szabo",
    "Kowalczyk",
    "Achterberg",
    "Nakamura",
    "Oyelaran",
    "Vasquez",
    "Holmqvist",
    "Brannigan",
    "Eriksen",
    "Castellano",
    "Mbatha",
    "Yilmaz",
    "Fairbanks",
)

TAGS = (
    "ember",
    "juniper",
    "falcon",
    "quartz",
    "cobalt",
    "saffron",
    "orchid",
    "harbor",
    "tundra",
    "meadow",
    "granite",
    "lantern",
    "willow",
    "comet",
    "pebble",
    "marigold",
    "zephyr",
    "basalt",
    "heron",
    "thistle",
)
