"""User stories, and the specs a PRD carries inline, from markdown (read with markdown-it-py).

`### US-001: Title` under `## Epic: Name`, with `**Priority:** P0`, an `**Acceptance Criteria:**`
line (or heading) and its bullets. A story ends at the next heading of its level or above, so the
document's other sections (API, data model, open questions) never leak into it. Its content is the
source text of its narrative blocks, verbatim.

A team's PRD often holds its specs too: a `### POST /v1/orders` heading is an endpoint (its section,
verbatim, is the snippet), and fenced `prisma`, `sql`, `ts`/`js` (zod), `python` or OpenAPI `yaml`/
`json` blocks are read by the same parsers as those files. Code fences are content, never structure.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache
from typing import TYPE_CHECKING

from orrery.docs.chunk import Chunk, keywords_of, split_identifier

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.token import Token

_STORY = re.compile(r"^(US-\d{1,4})\s*[:\-—]\s*(.+?)\s*$")
_ENDPOINT = re.compile(r"^`?(GET|POST|PUT|PATCH|DELETE)\s+(/\S*?)`?$", re.I)
_EPIC_PREFIX = re.compile(r"^Epic:\s*", re.I)
_PRIORITY = re.compile(r"\*\*Priority:\*\*\s*(P\d)", re.I)
_CRITERIA = re.compile(r"^\*{0,2}Acceptance Criteria:?\*{0,2}:?\s*$", re.I)
FenceParser = Callable[[str, str], list[Chunk]]


@lru_cache(maxsize=1)
def _parser() -> MarkdownIt:
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark")


class _Reader:
    """Walks block tokens, keeping the current epic and the open story or endpoint section."""

    def __init__(self, text: str, source: str) -> None:
        self.lines = text.splitlines()
        self.source = source
        self.epic: str | None = None
        self.current: Chunk | None = None
        self.level = 0
        self.in_criteria = False
        self.blocks: list[str] = []
        self.chunks: list[Chunk] = []

    def slice(self, lines: list[int] | None) -> str:
        return "\n".join(self.lines[lines[0] : lines[1]]).strip("\n") if lines else ""

    def close(self) -> None:
        """End the open section; a story's content is its narrative blocks, verbatim."""
        if self.current is not None and self.current.kind == "story":
            self.current.content = "\n\n".join(b for b in self.blocks if b.strip())
        self.current, self.blocks, self.in_criteria = None, [], False

    def heading(self, level: int, text: str, lines: list[int] | None, end: int) -> None:
        if self.current is not None and level <= self.level:
            self.close()
        story, endpoint = _STORY.match(text), _ENDPOINT.match(text)
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
            self.level = level
        elif endpoint:
            method, path = endpoint.group(1).upper(), endpoint.group(2)
            section = self.slice([lines[0] if lines else 0, end])
            self.current = Chunk(
                "endpoint",
                f"{method} {path}",
                f"{method} {path}",
                section,
                self.source,
                data={"method": method, "path": path, "operation_id": None, "schemas": [], "tags": []},
                keywords=list(dict.fromkeys(split_identifier(path) + keywords_of(_lead(section), 6))),
            )
            self.current.data["language"] = "markdown"
            self.level = level
        elif self.current is not None and self.current.kind == "story" and _CRITERIA.match(text):
            self.in_criteria = True
            return
        elif level == 2:
            self.epic = _EPIC_PREFIX.sub("", text).strip()
        if self.current is not None and self.current not in self.chunks:
            self.chunks.append(self.current)

    def paragraph(self, text: str, lines: list[int] | None, in_list: bool) -> None:
        story = self.current
        if story is None or story.kind != "story":
            return
        if in_list:
            if self.in_criteria:
                story.data["acceptance_criteria"].append(" ".join(text.split()))
            return
        kept, label = [], False
        for line in self.slice(lines).splitlines():
            if _CRITERIA.match(line.strip()):
                label = True
                continue
            if (priority := _PRIORITY.search(line)) is not None:
                story.data["priority"] = priority.group(1).upper()
                if not _PRIORITY.sub("", line).strip():
                    continue
            kept.append(line)
        self.in_criteria = label or (self.in_criteria and not kept)
        if kept:
            self.blocks.append("\n".join(kept))

    def list_block(self, lines: list[int] | None) -> None:
        """A bullet list outside the acceptance criteria is narrative: kept verbatim."""
        if self.current is not None and self.current.kind == "story" and not self.in_criteria:
            self.blocks.append(self.slice(lines))

    def code(self, token: Token, parsers: dict[str, FenceParser]) -> None:
        lang = (token.info or "").strip().split(" ")[0].lower()
        if self.current is not None and self.current.kind == "story":
            self.blocks.append(self.slice(token.map))
        elif lang in parsers:
            for chunk in parsers[lang](token.content, self.source):
                chunk.data.setdefault("language", lang)
                self.chunks.append(chunk)


def parse_prd(text: str, source: str, fences: dict[str, FenceParser] | None = None) -> list[Chunk]:
    """Stories (and endpoints, plus whatever `fences` parse from fenced blocks) of a PRD."""
    tokens: list[Token] = _parser().parse(text)
    reader = _Reader(text, source)
    ends = _section_ends(tokens, len(reader.lines))
    list_depth = 0
    for i, token in enumerate(tokens):
        if token.type in ("bullet_list_open", "ordered_list_open"):
            if list_depth == 0:
                reader.list_block(token.map)
            list_depth += 1
        elif token.type in ("bullet_list_close", "ordered_list_close"):
            list_depth -= 1
        elif token.type == "heading_open":
            reader.heading(int(token.tag[1:]), tokens[i + 1].content.strip(), token.map, ends[i])
        elif token.type == "inline" and tokens[i - 1].type == "paragraph_open":
            reader.paragraph(token.content, tokens[i - 1].map, list_depth > 0)
        elif token.type in ("fence", "code_block"):
            reader.code(token, fences or {})
    reader.close()
    for s in reader.chunks:
        if s.kind == "story":
            words = f"{s.title} {s.title} {s.content} {' '.join(s.data['acceptance_criteria'])}"
            s.keywords = keywords_of(words)
    return reader.chunks


def _lead(section: str) -> str:
    """An endpoint section's first sentence (its summary), past the heading line."""
    body = section.split("\n", 1)[1] if "\n" in section else ""
    return re.split(r"(?<=[.!?])\s", body.strip(), maxsplit=1)[0]


def _section_ends(tokens: list[Token], total: int) -> dict[int, int]:
    """For each heading token, the line where its section ends (the next heading of its level or above)."""
    heads = [
        (i, int(t.tag[1:]), t.map[0] if t.map else 0)
        for i, t in enumerate(tokens)
        if t.type == "heading_open"
    ]
    ends: dict[int, int] = {}
    for n, (i, level, _) in enumerate(heads):
        ends[i] = next((line for _, lv, line in heads[n + 1 :] if lv <= level), total)
    return ends
