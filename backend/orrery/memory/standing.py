"""Whether a person's message states a lasting instruction or preference, without any model.

Intents are data (`memory/data/standing_intents.json`): labelled example phrasings per intent, the
standing ones (`instruction`, `preference`) and the reasons not to store (questions, hypotheticals,
other people's words, one-off requests, past habits, plain statements and requests). A sentence is
matched to its nearest examples with the local embedder, or by word overlap when there is none.

Three steps, cheapest first, so an ordinary message costs a regular-expression search:
1. a cue gate: only sentences with a standing cue ("always", "never", "from now on", "prefer",
   "call me", "please don't", "keep answers short", ...) go on;
2. the form of the sentence: a question, a conditional, reported speech, a one-off ("this time"),
   a past habit ("used to") is not a standing instruction, whatever its words;
3. the nearest labelled examples decide: a standing intent must be nearer than every other one.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from orrery.text import search_terms

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from orrery.memory.embeddings import LocalEmbedder

INTENTS_FILE = Path(__file__).parent / "data" / "standing_intents.json"
WHOLE_MESSAGE_CHARS = 300
"""A message up to this long is stored whole (the person's words in context); a longer one keeps
only the sentences that carry the instruction."""
MAX_CANDIDATES = 6
"""At most this many cued sentences of one message are matched (a pasted document full of "never"
costs no more than a short message)."""
NEIGHBOURS = 3
"""How many nearest examples vote (their mean similarity per intent)."""
MIN_SIMILARITY = 0.2
"""Below this, a sentence is like no standing example at all (cosine of MiniLM vectors)."""
MIN_OVERLAP = 0.1
"""The lexical fallback's floor (Jaccard of words, function words included)."""
FORM_PRIOR = 0.06
"""What a directive's form ("Always ...", "From now on ...", "I prefer ...") adds to the standing
side: MiniLM hears a sentence's topic louder than its form, so an instruction about API errors sits
near statements about API errors."""

_CUE = re.compile(
    r"\b(?:always|never|from now on|from here on|going forward|in (?:the )?future|prefer\w*|"
    r"i'?d rather|rather you|don'?t|do not|please stop|stop \w+ing|call me|address me|refer to|"
    r"keep (?:your |the |my |it |them |answers|responses|replies|explanations|code)|make sure|"
    r"whenever|every time|avoid|no more than|remember to|i (?:really )?(?:like|love|hate|dislike)|"
    r"not a fan|fan of|favou?rite|i'?d like|you (?:should|must) always|each time|in every|"
    r"calls me|(?:for|in|with) (?:every|each|all|any) (?:\w+ ){1,3}(?:you|i|we)|better than|rather than|"
    r"(?:in|for|across) all my)\b",
    re.I,
)
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_CODE = re.compile(r"```.*?(?:```|$)|`[^`\n]*`", re.S)
"""Code is the person's material, not their instructions: fenced blocks and inline code are skipped."""
_CONDITIONAL = re.compile(
    r"^(?:if|suppose|supposing|imagine|hypothetically|let'?s say|what if|in a world|say)\b|"
    r"\bif (?:i|we|you) (?:said|told|were|was|asked|preferred)\b",
    re.I,
)
_REPORTED = re.compile(
    r"\b(?:says|said|keeps? saying|once said|(?:\w+) (?:told|tells) (?:me|us|him|her|them)|"
    r"(?:he|she|they|it|everyone|everybody|nobody|people|colleague|boss|manager|friend|team|partner|mentor|"
    r"teacher|client|customers?|users?|docs|documentation|guide|readme|book|article)\s+"
    r"(?:prefers?|likes?|loves?|always|never|wants?|recommends?|suggests?|insists?)|rule is)\b",
    re.I,
)
_FEELING = re.compile(r"\bi (?:really |also |just )?(?:like|love|want|hate|dislike|enjoy)\b", re.I)
_ONE_OFF = re.compile(
    r"\b(?:this time|this once|just this|for now|right now|for this (?:one|question|answer|task|"
    r"email|comparison|example|reply|request)|this one|(?:for )?today'?s|the next (?:question|answer)|"
    r"only this|today|tonight|this (?:morning|afternoon|evening|week))\b",
    re.I,
)
_STANDING_WHEN = re.compile(
    r"^(?:when|whenever|each time|every time|if|any time|anytime) (?:i|we) (?:ask|want|need|request|send|"
    r"share|paste|write|give|show|mention)\b.*\b(?:always|never|please|don'?t|do not)\b",
    re.I,
)
"""A standing condition ("When I ask about failures, always tell me how to retry"): a lasting
instruction, not a hypothetical, whatever its first word."""
_LASTING = re.compile(r"\b(?:always|never|from now on|going forward|every time|whenever|in future)\b", re.I)
_PAST = re.compile(
    r"\b(?:used to|back then|back in|years ago|last (?:year|month|week)|as a (?:kid|child|student)|"
    r"when i (?:was|lived|worked|studied)|i (?:always|never) (?:\w+ed|was|were|had|did|went|wanted|"
    r"thought|knew|got))\b",
    re.I,
)
_NOT_A_RULE = re.compile(
    r"^(?:always|never) (?:been|was|were|had|on|a|an|the|so|such|in|at|my|our|up|there|here|fun|nice|good|"
    r"great|happy|glad|excited|interested|loved|liked|enjoyed|wanted|thought)\b|"
    r"\bi(?:'m| am) (?:always|never|constantly|forever)\b|\bkeep (?:it up|going|at it|up the)\b|"
    r"\b(?:i hope|i wish|hopefully|can'?t stop|couldn'?t stop)\b",
    re.I,
)
"""Said of oneself or to cheer someone on ("Always been interested in…", "I'm always taking notes",
"Keep it up!", "I can't stop thinking…"): a statement, not a rule for the assistant."""
_FORGET = re.compile(
    r"^(?:please[,\s]+|(?:can|could|would|will) you\s+)?(?:forget|stop remembering|don'?t remember|"
    r"do not remember|unlearn)\b",
    re.I,
)
"""A request to forget ("Forget that I always…"): it takes an instruction back, never makes one."""
_DIRECTIVE = re.compile(
    r"^(?:please[,\s]+)?(?:always|never|don'?t|do not|from now on|from here on|going forward|in future|"
    r"call me|address me|make sure you|whenever|every time|stop|avoid|no more than|keep (?:your|answers|"
    r"responses|replies|explanations))\b|\b(?:from now on|going forward|you (?:should|must) always)\b|"
    r"^(?:generally |in general )?i(?: really| much)? (?:prefer|'?d rather|'?d prefer)\b",
    re.I,
)
_OPENS = re.compile(
    r"^(?:please[,\s]+)?(?:always|never|from now on|going forward|from here on)\b|"
    r"\b(?:calls? me|address me)\b.*\b(?:please|too|instead)\b",
    re.I,
)
"""A sentence that opens as a rule ("Never round intermediate results") or asks to be addressed."""
_PREFERENCE = re.compile(
    r"\b(?:i (?:really |much |generally |strongly |always )?prefer|"
    r"i(?:'?d| would) (?:much |really )?(?:rather|prefer)|"
    r"my (?:preference|preferred)|i (?:really )?(?:like|love|hate|dislike) (?:it )?when you|"
    r"i'?d like (?:you to|it if you|"
    r"(?:the |my |your )?(?:answers|responses|replies|explanations|code|examples))|"
    r"i (?:really )?(?:like|want) (?:my|your|the) (?:answers|responses|replies|explanations|code|examples)|"
    r"works best for me|"
    r"i (?:really |much |generally )?(?:like|love|want|use) [^.!?]{1,60} "
    r"(?:better than|more than|rather than|instead of|over (?:the|a|an|plain|raw))|"
    r"i (?:really )?(?:like|want) (?:\w+ ){0,2}"
    r"(?:spelling|style|tone|notation|naming|conventions?|formatting))\b",
    re.I,
)
_ADDRESS = re.compile(
    r"\b(?:call me|address me|refer to me)\b|\bcalls me\b(?=.*\b(?:please|too|you can|you may|instead)\b)",
    re.I,
)


@dataclass(frozen=True)
class Standing:
    """What one message states that should hold in later chats."""

    kind: str
    """`instruction` or `preference`."""
    text: str
    """The person's words: the whole message when short, else the sentences that carry it."""
    subject: str
    everywhere: bool
    """Said to hold in every project ("in all my projects"), not only the chat's."""


@dataclass(frozen=True)
class Intents:
    """The labelled examples, their topics and the phrases that make an instruction global."""

    labels: list[str]
    examples: list[str]
    positive: frozenset[str]
    topics: dict[str, list[str]]
    everywhere: list[str]
    verbs: frozenset[str]
    """What an assistant does ("include", "answer", "explain"): an instruction directs one of them."""
    output: frozenset[str]
    """What an assistant produces ("answers", "code", "examples"): or it names one of them."""


@lru_cache(maxsize=1)
def intents() -> Intents:
    """The intents file, read once per process."""
    data: dict[str, Any] = json.loads(INTENTS_FILE.read_text(encoding="utf-8"))
    labels = [label for label, texts in data["intents"].items() for _ in texts]
    examples = [text for texts in data["intents"].values() for text in texts]
    return Intents(
        labels,
        examples,
        frozenset(data["positive"]),
        data["topics"],
        data["global"],
        frozenset(data["directive_verbs"]),
        frozenset(data["output_words"]),
    )


def sentences(text: str) -> list[str]:
    """The message cut into sentences (a line break also ends one), its code left out."""
    return [s.strip() for s in _SENTENCE.split(_CODE.sub(" ", text)) if s.strip()]


def cued(text: str) -> bool:
    """Whether the text has any standing cue at all (the gate every message passes first)."""
    return _CUE.search(text) is not None


def form_refuses(sentence: str) -> str | None:
    """Why the sentence's form says it is not a standing instruction, or None."""
    if sentence.rstrip().endswith("?"):
        return "question"
    if _FORGET.search(sentence):
        return "forget"
    if _CONDITIONAL.search(sentence) and not _STANDING_WHEN.search(sentence):
        return "hypothetical"
    if _REPORTED.search(sentence) and not re.match(r"^(?:please\s+)?(?:always|never)\b", sentence, re.I):
        return "reported"
    if _PAST.search(sentence):
        return "past_habit"
    if _NOT_A_RULE.search(sentence):
        return "statement"
    if _ONE_OFF.search(sentence) and not _LASTING.search(sentence):
        return "one_off"
    return None


def _words(text: str) -> frozenset[str]:
    return frozenset(re.findall(r"[a-z']+", text.lower()))


@lru_cache(maxsize=1)
def _example_words() -> list[frozenset[str]]:
    return [_words(e) for e in intents().examples]


def nearest_intent(sentence: str, embedder: LocalEmbedder | None) -> tuple[str, float, float]:
    """The nearest intent, its score and the best score of an intent of the other side (standing
    vs not), by the mean of each intent's `NEIGHBOURS` nearest examples."""
    spec = intents()
    if embedder is not None:
        scores = _vector_scores(sentence, embedder)
    else:
        words = _words(sentence)
        scores = [len(words & e) / len(words | e) if words else 0.0 for e in _example_words()]
    per: dict[str, list[float]] = {}
    for label, score in zip(spec.labels, scores, strict=True):
        per.setdefault(label, []).append(float(score))
    means = {k: sum(sorted(v)[-NEIGHBOURS:]) / min(NEIGHBOURS, len(v)) for k, v in per.items()}
    best = max(means, key=lambda k: means[k])
    other = max((v for k, v in means.items() if (k in spec.positive) != (best in spec.positive)), default=0.0)
    return best, means[best], other


def _vector_scores(sentence: str, embedder: LocalEmbedder) -> list[float]:
    row = embedder.embed_once([sentence])[0]
    return [float(x) for x in _example_vectors(embedder) @ row]


_VECTORS: dict[int, Any] = {}


def _example_vectors(embedder: LocalEmbedder) -> npt.NDArray[np.float32]:
    """The examples' vectors, computed once per process and embedder."""
    held = _VECTORS.get(id(embedder))
    if held is None:
        held = _VECTORS[id(embedder)] = embedder.embed(intents().examples)
    return held


def shape(sentence: str) -> str | None:
    """The kind the sentence's form allows: a preference says "I prefer", "I'd rather", "I like it
    when you"; an instruction directs what the assistant does or makes (one of its verbs or works),
    or how to address the person. Advice and feelings ("don't be afraid", "I love camping") are
    neither."""
    if _PREFERENCE.search(sentence):
        return "preference"
    if _ADDRESS.search(sentence):
        return "instruction"
    spec = intents()
    words = [f for w in re.findall(r"[a-z][a-z'-]*", sentence.lower()) for f in _forms(w)]
    if _FEELING.search(sentence):  # "I like concise commit messages": about the work, else a feeling
        return "preference" if any(w in spec.output for w in words) else None
    return "instruction" if any(w in spec.verbs or w in spec.output for w in words) else None


def _forms(word: str) -> set[str]:
    """A word and its base forms, roughly: "using" -> "use", "replies" -> "reply", "added" -> "add"."""
    forms = {word}
    for suffix, repl in (
        ("ies", "y"),
        ("es", ""),
        ("s", ""),
        ("ing", ""),
        ("ing", "e"),
        ("ed", ""),
        ("ed", "e"),
    ):
        if word.endswith(suffix) and len(word) > len(suffix) + 2:
            forms.add(word[: -len(suffix)] + repl)
    return forms


def standing_kind(sentence: str, embedder: LocalEmbedder | None) -> str | None:
    """`instruction`, `preference` or None for one sentence."""
    if not cued(sentence) or form_refuses(sentence):
        return None
    kind = shape(sentence)
    if kind is None:
        return None
    label, score, other = nearest_intent(sentence, embedder)
    floor = MIN_SIMILARITY if embedder is not None else MIN_OVERLAP
    standing, against = (score, other) if label in intents().positive else (other, score)
    if _DIRECTIVE.search(sentence):
        standing += FORM_PRIOR
    if _OPENS.search(sentence) or _STANDING_WHEN.search(sentence):
        standing += FORM_PRIOR  # said as a rule: the form speaks louder than the topic
    if standing < floor or standing <= against:
        return None
    return kind


def subject_of(text: str) -> str:
    """A short name for what it is about: a known topic ("answer length") when its words are
    there, else its content words ("include error status codes api errors"), so only the same
    statement shares it."""
    low = text.lower()
    for topic, words in intents().topics.items():
        if any(re.search(rf"(?<![a-z]){re.escape(w)}(?![a-z])", low) for w in words):
            return topic
    cue_words = {"always", "never", "prefer", "please", "don", "make", "sure", "keep", "like", "rather"}
    terms = [t for t in search_terms(text) if t not in cue_words]
    return " ".join(terms)[:200].strip() or "standing instruction"


def everywhere(text: str) -> bool:
    """Whether the person said it holds in every project."""
    low = " ".join(text.lower().split())
    return any(phrase in low for phrase in intents().everywhere)


def detect(text: str, embedder: LocalEmbedder | None) -> Standing | None:
    """The standing instruction or preference a person's message states, or None (most messages:
    one regular-expression search)."""
    if not cued(text):
        return None
    candidates = [s for s in sentences(text) if cued(s)][:MAX_CANDIDATES]
    found = [(s, k) for s in candidates if (k := standing_kind(s, embedder))]
    if not found:
        return None
    flat = " ".join(text.split())
    words = flat if len(flat) <= WHOLE_MESSAGE_CHARS else " ".join(s for s, _ in found)
    kinds = {k for _, k in found}
    kind = "instruction" if "instruction" in kinds else "preference"
    return Standing(kind, words, subject_of(found[0][0]), everywhere(words))
