"""Context templates: named YAML files in `prompts/templates/context/` (and in the user's own folder,
`ORRERY_TEMPLATES_DIR`, whose templates win on a name clash) with build_context defaults.

A template may set `description`, `budget`, `strategy`, `include` (`depth`, `relations`, `kinds`,
`descriptions`), `exclude` (`kinds`, `states`, `older_than` such as `30d`, `6m`, `1y`) and `format`.
Seed 003's option names are accepted too: `include.children`, `include.references`, `include.fields`,
`include.related.depth` / `.tags`, `exclude.tags` and `exclude.olderThan`.
Files are validated when loaded; a bad one is a `ConfigurationError` that names the file and field.
"""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path
from typing import Literal

import yaml
from pydantic import AliasChoices, BaseModel, ConfigDict, Field, field_validator, model_validator
from pydantic import ValidationError as PydanticValidationError

from orrery.errors import ConfigurationError, ValidationError
from orrery.resources import prompts_dir
from orrery.text import stem
from orrery.vocabulary import ENTITY_KINDS, RELATIONS

TEMPLATE_DIR = prompts_dir("templates", "context")
Strategy = Literal["relevance", "breadth", "depth", "semantic"]
Format = Literal["structured", "narrative", "outline"]
_AGE = re.compile(r"^(\d+)([dwmy])$")
_DAYS = {"d": 1, "w": 7, "m": 30, "y": 365}
MAX_AGE_DAYS = 100 * 365


def parse_age(value: str) -> timedelta:
    """`30d`, `2w`, `6m`, `1y` as a timedelta."""
    match = _AGE.match(value.strip().lower())
    if not match:
        raise ValidationError(f"older_than {value!r} must look like 30d, 2w, 6m or 1y")
    days = int(match.group(1)) * _DAYS[match.group(2)]
    if days > MAX_AGE_DAYS:
        raise ValidationError(f"older_than {value!r} is more than {MAX_AGE_DAYS // 365} years")
    return timedelta(days=days)


def _known(values: list[str] | None, vocabulary: tuple[str, ...], what: str) -> list[str] | None:
    unknown = [v for v in values or [] if v not in vocabulary]
    if unknown:
        raise ValueError(f"unknown {what}: {', '.join(unknown)}")
    return values


CHILD_RELATIONS = ("has_task", "contains")
CHILD_OF_RELATIONS = ("belongs_to_plan", "supports_goal")
"""Relations a child holds towards its parent: incoming ones are the seed's children (a plan's tasks)."""
REFERENCE_RELATIONS = ("references", "referenced_by")


class RelatedSpec(BaseModel):
    """Seed 003's `include.related`: how deep to follow links, and which kinds (its `tags`)."""

    model_config = ConfigDict(extra="forbid")

    depth: int | None = Field(default=None, ge=0, le=6)
    tags: list[str] | None = None
    """Kept as given, so a template read, dumped and read again (the CLI's options over a template)
    still says which tags it ignored."""

    @property
    def kinds(self) -> list[str] | None:
        """The tags that name an entity kind (None: every kind)."""
        if self.tags is None:
            return None
        return [t for t in self.tags if t in ENTITY_KINDS] or None

    @property
    def ignored(self) -> list[str]:
        """Tags that name no entity kind (the seed's own template says `meeting`, `person`): ignored,
        and said so in the response's `notes`."""
        return [t for t in self.tags or [] if t not in ENTITY_KINDS]


class IncludeSpec(BaseModel):
    """What to traverse and include. Seed 003's names (`children`, `references`, `fields`,
    `related: {depth, tags}`) are accepted beside ours and folded into them."""

    model_config = ConfigDict(extra="forbid")

    depth: int | None = Field(default=None, ge=0, le=6)
    relations: list[str] | None = None
    kinds: list[str] | None = None
    descriptions: bool = True
    knowledge: bool = True
    """Let matching knowledge-base entries compete for the budget."""
    children: bool | None = None
    """Seed 003: false leaves out child links (has_task, contains, and the incoming belongs_to_plan
    and supports_goal of a plan's tasks or a goal's supporters)."""
    references: bool | None = None
    """Seed 003: false leaves out reference links (references, referenced_by)."""
    fields: bool | None = None
    """Seed 003: false leaves out each item's fields (state, type, due date); they still filter."""
    related: RelatedSpec | None = None
    """Seed 003: `depth` and `tags` (entity kinds) of the related items."""

    @model_validator(mode="after")
    def _seed_names(self) -> IncludeSpec:
        if self.related is not None:
            self.depth = self.depth if self.depth is not None else self.related.depth
            self.kinds = self.kinds if self.kinds is not None else self.related.kinds
        dropped = (CHILD_RELATIONS if self.children is False else ()) + (
            REFERENCE_RELATIONS if self.references is False else ()
        )
        if dropped:
            self.relations = [r for r in (self.relations or list(RELATIONS)) if r not in dropped]
        return self

    @property
    def skip_incoming(self) -> tuple[str, ...]:
        """Relations left out when they point at the item reached from (children: false)."""
        return CHILD_OF_RELATIONS if self.children is False else ()

    @property
    def notes(self) -> list[str]:
        """What was accepted but ignored, said in the response."""
        ignored = self.related.ignored if self.related else []
        kinds = ", ".join(ENTITY_KINDS)
        return (
            [f"related.tags {', '.join(ignored)} name no entity kind ({kinds}): ignored"] if ignored else []
        )

    @field_validator("relations")
    @classmethod
    def _relations(cls, v: list[str] | None) -> list[str] | None:
        return _known(v, RELATIONS, "relations")

    @field_validator("kinds")
    @classmethod
    def _kinds(cls, v: list[str] | None) -> list[str] | None:
        return _known(v, ENTITY_KINDS, "kinds")


class ExcludeSpec(BaseModel):
    """What to leave out (reported with reason `filter`). Seed 003's `tags` (each an entity kind or a
    state, such as `archived`) and `olderThan` are accepted beside ours."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    kinds: list[str] = Field(
        default_factory=list, json_schema_extra={"items": {"type": "string", "enum": list(ENTITY_KINDS)}}
    )
    states: list[str] = Field(default_factory=list)
    older_than: str | None = Field(default=None, validation_alias=AliasChoices("older_than", "olderThan"))
    tags: list[str] = Field(default_factory=list)
    """Seed 003: kinds or states to leave out."""

    def excludes_state(self, state: str | None) -> bool:
        """Whether an item in `state` is left out: the state itself, or the same word in another form
        (the seed's `archive` tag leaves out `archived` items; `draft`, `drafted`)."""
        if not state or state in self.states:
            return bool(state)
        return bool(self.states) and stem(state.lower()) in {stem(s.lower()) for s in self.states}

    @model_validator(mode="after")
    def _tags(self) -> ExcludeSpec:
        for tag in self.tags:
            target = self.kinds if tag in ENTITY_KINDS else self.states
            if tag not in target:
                target.append(tag)
        return self

    @field_validator("kinds")
    @classmethod
    def _kinds(cls, v: list[str]) -> list[str]:
        return _known(v, ENTITY_KINDS, "kinds") or []

    @field_validator("older_than")
    @classmethod
    def _age(cls, v: str | None) -> str | None:
        if v is not None:
            parse_age(v)
        return v


class ContextTemplate(BaseModel):
    """A reusable build_context configuration."""

    model_config = ConfigDict(extra="forbid")

    name: str = ""
    description: str = ""
    budget: int | None = Field(default=None, ge=50, le=200_000)
    strategy: Strategy | None = None
    include: IncludeSpec = Field(default_factory=IncludeSpec)
    exclude: ExcludeSpec = Field(default_factory=ExcludeSpec)
    format: Format | None = None


def _directories(extra: Path | None) -> list[Path]:
    """The user's template folder first (when set), then the shipped one."""
    if extra is None:
        return [TEMPLATE_DIR]
    if not extra.is_dir():
        raise ConfigurationError(f"ORRERY_TEMPLATES_DIR {str(extra)!r} is not a directory")
    return [extra, TEMPLATE_DIR]


def load_template(name: str, extra: Path | None = None) -> ContextTemplate:
    """A template by name from `extra` (ORRERY_TEMPLATES_DIR) or the shipped folder; unknown names
    list the available ones."""
    unknown = f"unknown template {name[:80]!r}; available: {', '.join(template_names(extra))}"
    if not re.fullmatch(r"[a-z0-9-]{1,80}", name):  # checked before any file name is built from it
        raise ValidationError(unknown)
    found = next((d / f"{name}.yaml" for d in _directories(extra) if (d / f"{name}.yaml").is_file()), None)
    if found is None:
        raise ValidationError(unknown)
    try:
        data = yaml.safe_load(found.read_text(encoding="utf-8")) or {}
        return ContextTemplate.model_validate({**data, "name": name})
    except (yaml.YAMLError, PydanticValidationError) as exc:
        raise ConfigurationError(f"template {str(found)!r} is invalid: {exc}") from None


def template_names(extra: Path | None = None) -> list[str]:
    """Every template name, the user's and the shipped ones."""
    return sorted({p.stem for d in _directories(extra) for p in d.glob("*.yaml")})


def list_templates(extra: Path | None = None) -> list[ContextTemplate]:
    """Every template, validated."""
    return [load_template(name, extra) for name in template_names(extra)]
