"""The model that answered is stored with its reply (`messages.model`, null for user messages and
for replies stored before this revision), so a replayed turn names it as the first answer did, and
the cost is that model's price (a fallback's, when one answered).

The column is added in place (no table rebuild on SQLite, so the FTS and history-epoch triggers on
`messages` stay). The history epoch's update trigger (migrations 0010he, 0012sm) does not watch it:
the column is written once, when the reply is inserted, never updated, and no cached history holds
it (the model never reads which model wrote a reply).

Revision ID: 0019am
Revises: 0018hx
Create Date: 2026-11-28 09:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op

revision: str = "0019am"
down_revision: str | None = "0018hx"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("messages", sa.Column("model", sa.String(200), nullable=True))


def downgrade() -> None:
    op.drop_column("messages", "model")
