"""A project kind for `orrery eval make-dataset --kind project`: studying statistics for a course
(a table, no logic)."""

from __future__ import annotations

from orrery.evaluation.project_pools import Change, Clash, Domain, Fact, Items, Rule

STATISTICS = Domain(
    name="statistics",
    titles=("Statistics course", "Stats revision", "Learning statistics"),
    values={
        "course": ("STAT 201", "Intro to Biostatistics", "Quantitative Methods II"),
        "tool": ("R", "Python with statsmodels", "SPSS", "JASP"),
        "project_topic": ("sleep and exam scores", "coffee prices by city", "bike rentals and weather"),
        "tutor": ("Dr. Adeyemi", "Ms. Brandt", "Mr. Ishikawa", "Dr. Solberg"),
    },
    topics=(
        "understand hypothesis testing",
        "practise confidence intervals",
        "get regression straight",
        "review probability rules",
        "work on the course project",
        "learn about p-values properly",
        "compare t-tests and ANOVA",
        "study sampling distributions",
        "clean the project data",
        "interpret correlation",
        "prepare for the midterm",
        "go over chi-square tests",
    ),
    things=(
        "the midterm",
        "the course project",
        "my data set",
        "the final exam",
        "office hours",
        "p-values",
        "standard error",
        "the central limit theorem",
        "residuals",
        "effect size",
        "statistical power",
        "confidence intervals",
        "the null hypothesis",
        "outliers",
        "dummy variables",
        "multicollinearity",
        "bootstrapping",
        "the normal distribution",
        "type I errors",
    ),
    asks=(
        "Can you explain {thing} intuitively?",
        "When do I need to worry about {thing}?",
        "How do I report {thing} in my write-up?",
        "What's the difference between {thing} and the rest?",
        "Give me an exercise on {thing}.",
        "I got a weird result with {thing}, what could cause it?",
        "How would you check {thing} in practice?",
    ),
    paragraphs=(
        "A p-value answers a narrow question: if the null hypothesis were true, how surprising would data "
        "like yours be? It does not tell you the probability that the hypothesis is true, and it says "
        "nothing about how large or important the effect is. Report the effect size next to it.",
        "Confidence intervals are often more informative than tests. A 95% interval gives the range of "
        "values compatible with the data under the model; if it is wide, the study simply could not tell, "
        "whatever the test says.",
        "Before fitting any model, plot the data. A scatter plot shows curvature, outliers and groups "
        "that a single correlation coefficient hides, and a histogram of residuals tells you whether the "
        "assumptions of a linear model are roughly met.",
        "The central limit theorem is why so many methods work: averages of many independent "
        "observations are close to normally distributed even when the observations are not. The catch is "
        "the word many, and skewed data needs more of them.",
        "Regression coefficients are comparisons, not causes. A coefficient tells you how the predicted "
        "outcome differs between units that differ by one in that variable, holding the others fixed; "
        "whether that reflects a cause depends on the design, not the software.",
    ),
    bullets=(
        "Plot the data first",
        "State the hypotheses before testing",
        "Report effect sizes",
        "Check the residuals",
        "Watch for outliers",
        "Mind the sample size",
        "Write down the assumptions",
        "Prefer intervals to bare p-values",
        "Keep the analysis script reproducible",
        "Label every axis",
        "Note how missing values were handled",
    ),
    code=(
        "```r\nmodel <- lm(score ~ sleep_hours + caffeine, data = students)\nsummary(model)\n"
        "plot(residuals(model))\n```",
        "```python\nimport statsmodels.formula.api as smf\n\n"
        'model = smf.ols("rentals ~ temp + rain", data=df).fit()\n'
        "print(model.summary())\n```",
    ),
    facts=(
        Fact(
            ("The course is {course}.", "I'm taking {course} this term."),
            "Which statistics course am I taking?",
            "{course}",
        ),
        Fact(
            ("We have to use {tool} for the assignments.",),
            "Which software do I use for the assignments?",
            "{tool}",
        ),
        Fact(
            ("My course project is on {project_topic}.",),
            "What is my course project about?",
            "{project_topic}",
        ),
        Fact(("My tutor is {tutor}.",), "Who is my tutor?", "{tutor}"),
    ),
    rules=(
        Rule(
            ("Whenever you give me a formula, say what each symbol means.",),
            ("How is the standard error of a mean computed?", "What does the t statistic measure?"),
            "explains symbols",
        ),
        Rule(
            ("Always check the assumptions before you run a test for me.",),
            ("My two groups have 14 and 17 students, is the difference in scores real?",),
            "checks assumptions",
        ),
        Rule(
            ("Never round intermediate results, only the final one.",),
            ("Work out the 95% interval for a mean of 72 with sd 9 and n 36.",),
            "no early rounding",
        ),
        Rule(
            ("From now on, include a plot suggestion with every analysis.",),
            ("How do I analyse whether rain lowers bike rentals?",),
            "suggests a plot",
        ),
    ),
    prefs=(
        Rule(
            ("I prefer intuition first, maths second.",),
            ("What is a sampling distribution?", "Explain the intuition behind degrees of freedom."),
            "intuition first",
        ),
        Rule(
            ("I like real-world examples more than coin flips and dice.",),
            ("Give me an example of conditional probability.",),
            "real-world example",
        ),
    ),
    changes=(
        Change(
            ("The project report is due on {old}.",),
            ("They moved the report deadline to {new}.",),
            "When is my project report due?",
            (("April 4", "April 11"), ("May 20", "May 27")),
        ),
        Change(
            ("My data set has {old} observations.",),
            ("After cleaning I'm down to {new} observations.",),
            "How many observations does my data set have?",
            (("412", "387"), ("1,250", "1,180"), ("96", "88")),
        ),
    ),
    clashes=(
        Clash(
            ("I've never used R before this course.",),
            ("Back in my biology degree I did all my lab analyses in R.",),
            "Have I used R before?",
        ),
    ),
    events=(
        ("Handed in problem set one this morning.", "submit the first homework"),
        ("I collected all the data for the project.", "gather the numbers for my own study"),
        ("Midterm is done, it went okay I think.", "sit the mid-semester test"),
        ("Presented my project results to the class today.", "show my findings to classmates"),
    ),
    items=Items(
        (
            "Add {item} to my list of things to revise.",
            "Put {item} on my revision list.",
            "I'm shaky on {item}, that needs revising too.",
            "Remind me to go over {item} before the exam.",
        ),
        (
            "Bayes' theorem",
            "the binomial distribution",
            "z-scores",
            "the chi-square test",
            "ANOVA",
            "logistic regression",
        ),
        "How many topics did I ask you to add to my revision list?",
    ),
)
