"""A project kind for `orrery eval make-dataset --kind project`: marketing a product launch (a table, no
logic)."""

from __future__ import annotations

from orrery.evaluation.project_pools import Change, Clash, Domain, Fact, Items, Rule

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
        "```sql\nselect channel, count(*) as signups\nfrom signups\nwhere created_at >= '2025-10-01'\n"
        "group by channel\n"
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
        (
            "Add {item} to the list of launch channels.",
            "Put {item} on our channel list as well.",
            "What about {item}? Let's use that too.",
            "We should be on {item} as well.",
        ),
        ("Product Hunt", "Hacker News", "our newsletter", "Reddit", "LinkedIn", "a podcast sponsorship"),
        "How many launch channels did I ask you to add?",
    ),
)
