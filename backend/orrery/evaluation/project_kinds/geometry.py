"""A project kind for `orrery eval make-dataset --kind project`: studying geometry for an exam (a table,
no logic)."""

from __future__ import annotations

from orrery.evaluation.project_pools import Change, Clash, Domain, Fact, Items, Rule

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
        "```text\n        A\n       / \\\n      /   \\\n   c /     \\ b\n    /       \\\n   B---------C\n  "
        "      a\n```",
        "```python\nfrom math import sqrt\n\ndef heron(a: float, b: float, c: float) -> float:\n    s = (a "
        "+ b + c) / 2\n"
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
        (
            "Add {item} to my formula sheet, please.",
            "Put {item} on the formula sheet too.",
            "I keep forgetting {item}, can that go on the sheet?",
            "Make sure I have {item} written down for the exam.",
        ),
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
