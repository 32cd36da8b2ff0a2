"""The chunker on the shipped demo docs and on each supported file type."""

from __future__ import annotations

from pathlib import Path

import pytest

from orrery.demo.workspace import DEMO_DOCS
from orrery.docs.chunker import chunk_folder, parse_prd, parse_python, parse_sql, parse_zod
from orrery.errors import ValidationError


def test_demo_docs_chunk_into_stories_endpoints_models_and_schemas() -> None:
    chunks, digest = chunk_folder(DEMO_DOCS)
    by_kind: dict[str, list[str]] = {}
    for c in chunks:
        by_kind.setdefault(c.kind, []).append(c.key)
    assert by_kind["story"] == [f"US-00{i}" for i in range(1, 9)]
    assert len(by_kind["endpoint"]) == 8 and "POST /pricing/estimate" in by_kind["endpoint"]
    assert set(by_kind["model"]) == {
        "Workspace",
        "Member",
        "Invitation",
        "Invoice",
        "UsageRecord",
        "LegacyMigration",
    }
    assert set(by_kind["schema"]) == {
        "CreateWorkspaceRequestSchema",
        "InviteMemberRequestSchema",
        "PriceEstimateRequestSchema",
    }
    story = next(c for c in chunks if c.key == "US-004")
    assert story.epic == "Billing" and story.data["priority"] == "P0"
    assert len(story.data["acceptance_criteria"]) == 4 and "calculator" in story.keywords
    assert {"POST /pricing/estimate", "PriceEstimateRequestSchema"} <= set(story.links)
    endpoint = next(c for c in chunks if c.key == "POST /pricing/estimate")
    assert endpoint.data["operation_id"] == "estimatePrice" and "US-004" in endpoint.links
    assert "PriceEstimateRequestSchema" in endpoint.links  # $ref PriceEstimateRequest -> zod ...Schema
    workspace = next(c for c in chunks if c.key == "Workspace")
    assert "seats" in workspace.data["fields"] and "US-001" in workspace.links
    assert len(digest) == 64 and chunk_folder(DEMO_DOCS)[1] == digest


def test_prd_story_parsing() -> None:
    text = """## Epic: Search
### US-010: Find orders fast
**Priority:** p1
As a buyer I want to find orders.

**Acceptance Criteria:**
- Results in under a second
- Typos are tolerated
"""
    (story,) = parse_prd(text, "PRD.md")
    assert (story.key, story.title, story.epic, story.data["priority"]) == (
        "US-010",
        "Find orders fast",
        "Search",
        "P1",
    )
    assert story.data["acceptance_criteria"] == ["Results in under a second", "Typos are tolerated"]
    assert story.content == "As a buyer I want to find orders."


def test_sql_and_python_models_and_schemas() -> None:
    (table,) = parse_sql(
        "CREATE TABLE IF NOT EXISTS orders (id uuid PRIMARY KEY, total int, PRIMARY KEY (id));", "s.sql"
    )
    assert table.key == "orders" and table.data["fields"] == ["id", "total"]
    source = """
from pydantic import BaseModel
class Order(Base):
    __tablename__ = "orders"
    id: Mapped[int]
    total = Column(Integer)
class OrderIn(BaseModel):
    total: int
class Helper:
    x: int
"""
    chunks = {c.key: c for c in parse_python(source, "m.py")}
    assert chunks["Order"].kind == "model" and chunks["Order"].data["fields"] == ["id", "total"]
    assert chunks["OrderIn"].kind == "schema" and chunks["OrderIn"].data["library"] == "pydantic"
    assert "Helper" not in chunks
    assert parse_python("def broken(:", "x.py") == []


def test_missing_folder_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ValidationError, match="is not a directory"):
        chunk_folder(tmp_path / "nope")


def test_a_fenced_block_keeps_the_story_and_its_priority() -> None:
    text = """## Epic: Billing
### US-020: Export invoices
Export as CSV:

```bash
## not a heading
curl /invoices
```

**Priority:** P0

**Acceptance Criteria:**
- One row per invoice
"""
    (story,) = parse_prd(text, "PRD.md")
    assert (story.epic, story.data["priority"]) == ("Billing", "P0")
    assert story.data["acceptance_criteria"] == ["One row per invoice"]
    assert "curl /invoices" in story.content


def test_sql_types_with_arguments_and_dialects() -> None:
    (table,) = parse_sql(
        "CREATE TABLE invoices (id uuid PRIMARY KEY, amount NUMERIC(10,2) NOT NULL, currency text,"
        " CONSTRAINT positive CHECK (amount > 0));",
        "s.sql",
    )
    assert table.data["fields"] == ["id", "amount", "currency"]
    (mysql,) = parse_sql(
        "CREATE TABLE `seats` (`id` int(11) NOT NULL AUTO_INCREMENT, `price` decimal(8,2),"
        " PRIMARY KEY (`id`)) ENGINE=InnoDB;",
        "m.sql",
    )
    assert (mysql.key, mysql.data["fields"]) == ("seats", ["id", "price"])


def test_nested_zod_objects_keep_every_field() -> None:
    (schema,) = parse_zod(
        """export const InvoiceSchema = z.object({
  id: z.string().uuid(),
  billing: z.object({ street: z.string(), city: z.string() }),
  lines: z.array(z.object({ sku: z.string() })),
  total: z.number().min(0), // "}) inside a comment"
});""",
        "s.ts",
    )
    assert schema.data["fields"] == ["id", "billing", "billing.street", "billing.city", "lines", "total"]
    assert schema.content.rstrip().endswith("})") and "total" in schema.keywords
