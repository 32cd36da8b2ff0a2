"""User stories from PRD markdown, read with a real markdown parser (markdown-it-py).

`### US-001: Title` under `## Epic: Name`, with `**Priority:** P0`, an `**Acceptance Criteria:**`
line (or heading) and its bullets. Code fences are content, never structure: a `## ...` line inside
a fenced block neither ends the story nor starts an epic.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import TYPE_CHECKING

from backend.docs.chunk import Chunk, keywords_of

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.token import Token

_STORY = re.compile(r"^(US-\d{1,4})\s*[:\-—]\s*(.+?)\s*$")
_EPIC_PREFIX = re.compile(r"^Epic:\s*", re.I)
_PRIORITY = re.compile(r"\*\*Priority:\*\*\s*(P\d)", re.I)
_CRITERIA = re.compile(r"^\*{0,2}Acceptance Criteria:?\*{0,2}:?\s*$", re.I)


@lru_cache(maxsize=1)
def _parser() -> MarkdownIt:
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark")


class _Reader:
    """Walks block tokens, keeping the current epic and story."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.epic: str | None = None
        self.current: Chunk | None = None
        self.in_criteria = False
        self.stories: list[Chunk] = []

    def heading(self, level: int, text: str) -> None:
        story = _STORY.match(text)
        if story and level >= 2:
            self.current = Chunk(
                "story",
                story.group(1),
                story.group(2),
                "",
                self.source,
                self.epic,
                {"acceptance_criteria": []},
            )
            self.stories.append(self.current)
            self.in_criteria = False
        elif _CRITERIA.match(text) and self.current is not None:
            self.in_criteria = True
        elif level == 2:
            self.epic, self.current = _EPIC_PREFIX.sub("", text).strip(), None

    def paragraph(self, text: str, in_list: bool) -> None:
        story = self.current
        if story is None:
            return
        for line in (li.strip() for li in text.splitlines()):
            if not line:
                continue
            if _CRITERIA.match(line):
                self.in_criteria = True
            elif (priority := _PRIORITY.search(line)) is not None:
                story.data["priority"] = priority.group(1).upper()
            elif in_list and self.in_criteria:
                story.data["acceptance_criteria"].append(line)
            else:
                story.content = f"{story.content} {line}".strip()

    def code(self, text: str) -> None:
        if self.current is not None:
            self.current.content = f"{self.current.content} {' '.join(text.split())}".strip()


def parse_prd(text: str, source: str) -> list[Chunk]:
    """User stories of a PRD (see the module docstring)."""
    tokens: list[Token] = _parser().parse(text)
    reader = _Reader(source)
    list_depth = 0
    for i, token in enumerate(tokens):
        if token.type in ("bullet_list_open", "ordered_list_open"):
            list_depth += 1
        elif token.type in ("bullet_list_close", "ordered_list_close"):
            list_depth -= 1
        elif token.type == "heading_open":
            reader.heading(int(token.tag[1:]), tokens[i + 1].content.strip())
        elif token.type == "inline" and tokens[i - 1].type == "paragraph_open":
            reader.paragraph(token.content, list_depth > 0)
        elif token.type in ("fence", "code_block"):
            reader.code(token.content)
    for s in reader.stories:
        s.keywords = keywords_of(f"{s.title} {s.title} {s.content} {' '.join(s.data['acceptance_criteria'])}")
    return reader.stories
