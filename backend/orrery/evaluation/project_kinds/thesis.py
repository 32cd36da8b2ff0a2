"""A project kind for `orrery eval make-dataset --kind project`: writing a master's thesis (a table, no
logic)."""

from __future__ import annotations

from orrery.evaluation.project_pools import Change, Clash, Domain, Fact, Items, Rule

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
        "```text\n1 Introduction\n  1.1 Background\n  1.2 Research gap\n  1.3 Questions\n2 Literature "
        "review\n"
        "3 Method\n4 Results\n5 Discussion\n6 Conclusion\n```",
        "```r\nlibrary(dplyr)\nresponses %>%\n  group_by(role) %>%\n  summarise(trust = mean(trust_score), "
        "n = n())\n```",
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
                "Can you tighten this: 'The results that were found in this study seem to suggest a "
                "relationship.'",
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
        (
            "Add {item} to my reading list.",
            "Please put {item} on the reading list.",
            "I should read {item} at some point.",
            "Someone mentioned {item}, I want to look at it later.",
        ),
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
