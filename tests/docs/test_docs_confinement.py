"""The docs indexer stays inside its folder (symlinks out are skipped) and never shows server paths."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import select

from orrery.db.engine import Database
from orrery.db.models import DocChunk
from orrery.docs import index
from tests.support.factories import make_project, make_user


async def test_symlinks_out_of_the_folder_are_not_indexed(db: Database, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("## Epic: Leak\n\n### US-900: Exfiltrate\nTOPSECRET hunter2\n")
    docs = tmp_path / "srv" / "docs"
    docs.mkdir(parents=True)
    (docs / "prd.md").write_text("## Epic: Billing\n\n### US-001: Overage\nCharge overage monthly.\n")
    (docs / "leak.md").symlink_to(outside / "secret.md")
    (docs / "leakdir").symlink_to(outside, target_is_directory=True)
    (docs / "alias.md").symlink_to(docs / "prd.md")
    async with db.transaction() as s:
        user = await make_user(s)
        project = await make_project(s, user)
        await index.index_docs(s, user.id, project.id, docs)
    async with db.sessions() as s:
        chunks = (await s.execute(select(DocChunk).where(DocChunk.project_id == project.id))).scalars().all()
        summary = await index.get_context_summary(s, user.id, project.id)
    assert chunks and not any("TOPSECRET" in c.content for c in chunks)
    assert {c.source_path for c in chunks} <= {"prd.md", "alias.md"}
    assert summary["root"] == "docs" and str(tmp_path) not in str(summary)
