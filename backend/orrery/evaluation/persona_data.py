"""The story planted into each generated conversation, as tables (no logic; `make_dataset` fills them).

Placeholders (`{pet}`, `{t2}`, ...) name the values drawn for a persona in `make_dataset._draw_persona`.
Order matters: the generator places exchanges and numbers questions in table order, so reordering rows
changes the dataset a seed produces.
"""

PLANTED: list[tuple[str, str, str, str, list[str]]] = [
    # (key, phase, user says, assistant replies, facts the user turn states)
    (
        "pet",
        "early",
        "Big news at home: we brought {pet} back from the rescue centre on Saturday. {Breed}, "
        "about two years old, and very shy so far.",
        "Congratulations! The first weeks are a big adjustment. How are the kids taking it?",
        ["{pet}", "{breed_word}"],
    ),
    (
        "race1",
        "early",
        "I did it, I entered the {race} in October. I'm aiming for {t1}, which feels ambitious for me.",
        "That's a great goal. Shall we sketch a training block that builds up gradually?",
        ["{t1}"],
    ),
    (
        "race2",
        "late",
        "Change of plan: after the last few long runs I honestly think {t2} is realistic, so that's the new "
        "target. Scary to say it out loud.",
        "Saying it out loud is half the commitment. Your long runs back it up.",
        ["{t2}"],
    ),
    (
        "job1",
        "early",
        "For context, I'm a {job1} at {co1}. Mostly fine, but the pace has picked up since the reorg.",
        "Thanks, that helps. What part of the role gives you energy, and what drains it?",
        ["{co1}"],
    ),
    (
        "job2",
        "late",
        "I signed the contract! I'm leaving {co1} and starting at {co2} as {job2} next month.",
        "Huge congratulations. How do you want to use the notice period?",
        ["{co2}", "{job2}"],
    ),
    (
        "friend1",
        "early",
        "I've started doing Saturday long runs with {friend}, who lives two streets over. Much easier "
        "to get up at seven when someone is waiting on the corner.",
        "A running buddy is the best accountability there is. Do you two keep a similar pace?",
        ["{friend}", "long runs"],
    ),
    (
        "friend2",
        "late",
        "{friend} told me over coffee that they're relocating to {city} in the spring for their partner's "
        "job. Happy for them, gutted for me.",
        "That's bittersweet. Would it help to find a club before they go?",
        ["{city}"],
    ),
    (
        "mgr1",
        "early",
        "My new boss started this week: {manager}, she came over from the {team} team and seems sharp.",
        "New managers change a lot. What do you want her to know about how you work best?",
        ["{manager}", "{team} team"],
    ),
    (
        "mgr2",
        "late",
        "{manager} lent me her copy of {book} and said chapter four changed how she runs meetings.",
        "Nice gesture. Will you read it on the commute?",
        ["{book}"],
    ),
    (
        "sib1",
        "early",
        "My {rel} {sibling} works nights as a {job} in {sibling_city}, so we mostly trade voice notes.",
        "Night shifts are brutal. It's lovely that you stay in touch anyway.",
        ["{job}"],
    ),
    (
        "sib2",
        "late",
        "{sibling} just rang, she's getting married on {wedding}! I need to book trains before prices jump.",
        "What wonderful news! Want to put the booking on tomorrow's list?",
        ["{wedding}"],
    ),
    (
        "allergy",
        "early",
        "Mystery solved: the rash was {allergen}. The clinic confirmed it, so no more {food} for me.",
        "Good to know for sure. Do you want to plan some easy swaps for your usual meals?",
        ["{allergen}"],
    ),
    (
        "save1",
        "early",
        "We've set up a standing order: {a1} a month towards {trip} next year.",
        "Automating it is smart. How does that sit with the rest of the budget?",
        ["{a1}"],
    ),
    (
        "save2",
        "late",
        "Since the raise we bumped the {trip} pot to {a2} every month. Feels good to watch it grow.",
        "Lovely. Keep an eye on the buffer too after the boiler surprise.",
        ["{a2}"],
    ),
    (
        "proc",
        "late",
        "Had the {procedure} this morning. All fine, just sore and a bit woozy.",
        "Glad it went smoothly. Rest up and keep today light.",
        ["{procedure}"],
    ),
    (
        "drink",
        "early",
        "I've swapped my afternoon coffee for {drink}. Caffeine after lunch was wrecking my sleep.",
        "That's a kind experiment to run on yourself. Let's see how your nights look in a week.",
        ["{drink}"],
    ),
    (
        "bike",
        "early",
        "Picked up a second-hand {bike} for the commute, {price} from a guy in {area}.",
        "Nice find! Cycling in will be a great bit of movement every day.",
        ["{price}"],
    ),
]

QUESTIONS: list[tuple[str, str, list[str], str]] = [
    # (category, question, evidence as planted keys, answer)
    ("single_hop", "What kind of animal is {pet}?", ["pet"], "{breed}"),
    ("temporal", "When did {pet} join the family?", ["pet"], "the session date of the adoption"),
    ("adversarial", "What is the name of the user's {other_pet}?", ["pet"], "never said; {pet} is a {kind}"),
    ("knowledge_update", "What finish time is the user going for in the {race}?", ["race2"], "{t2}"),
    ("knowledge_update", "Which company will the user be working for?", ["job2"], "{co2}"),
    ("temporal", "When did the user accept the offer from {co2}?", ["job2"], "the session date"),
    (
        "multi_hop",
        "Which city is the person the user does Saturday long runs with moving to?",
        ["friend1", "friend2"],
        "{city}",
    ),
    ("multi_hop", "What did the user's boss give them to read?", ["mgr1", "mgr2"], "{book}"),
    ("adversarial", "Which city is {manager} relocating to?", ["friend2"], "never said; {friend} is moving"),
    ("multi_hop", "On what day does the {job} in the family get married?", ["sib1", "sib2"], "{wedding}"),
    ("single_hop", "Which ingredient makes the user break out in a rash?", ["allergy"], "{allergen}"),
    ("knowledge_update", "How much goes into the holiday fund each month these days?", ["save2"], "{a2}"),
    ("temporal", "When did the user have the {procedure}?", ["proc"], "the session date"),
    ("single_hop", "What does the user have after lunch instead of their old habit?", ["drink"], "{drink}"),
    ("single_hop", "How much did the user pay for the bicycle?", ["bike"], "{price}"),
    ("adversarial", "What car did the user buy for the commute?", ["bike"], "never said; a {bike}"),
]
