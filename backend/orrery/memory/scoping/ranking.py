"""The one relevance ranking, shared by `relevance` (older messages of this chat) and recall (the
person's earlier chats): lexical and dense, each z-scored over the candidates and summed, then
neighbours lifted.

1. lexical: BM25 over each message's stored search terms, with the candidates' own statistics, from
   a `HistoryWindow`'s inverted index;
2. dense: cosine similarity of stored message embeddings to the query's (lexical only for messages
   without one);
3. neighbours: a unit within `NEIGHBOUR_HOPS` turns of a strong one scores at most `NEIGHBOUR_STEP`
   standard deviations per turn below it (a question names the topic, the reply holds the detail);
   never across a `break` (recall's chat boundaries).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, overload

from orrery.memory.scoping.base import HistoryMessage
from orrery.memory.scoping.window import HistoryWindow
from orrery.text import analyze

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

NEIGHBOUR_STEP = 2.0
"""How far (in standard deviations) a unit may score below a strong one, per turn between them."""
NEIGHBOUR_HOPS = 2
"""How many turns away a strong unit lifts its neighbours: an answer often comes a turn or two after
the message that names its topic (a question, then a reply, then the detail)."""


class Units(Sequence[Sequence[HistoryMessage]]):
    """A window's units (a message and the tool results after it), sliced only when looked at."""

    def __init__(
        self, messages: Sequence[HistoryMessage], starts: list[int], ends: list[int] | None = None
    ) -> None:
        self.messages, self.starts = messages, starts
        self.ends = ends if ends is not None else [*starts[1:], len(messages)][: len(starts)]

    def __len__(self) -> int:
        return len(self.starts)

    @overload
    def __getitem__(self, i: int) -> Sequence[HistoryMessage]: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[Sequence[HistoryMessage]]: ...
    def __getitem__(self, i: int | slice) -> Sequence[HistoryMessage] | Sequence[Sequence[HistoryMessage]]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        return self.messages[self.starts[i] : self.ends[i]]

    def key(self, i: int) -> str:
        first, last = self.messages[self.starts[i]].seq, self.messages[self.ends[i] - 1].seq
        return f"seq {first}" if first == last else f"seq {first}-{last}"

    def of_row(self, row: int) -> int:
        """The unit holding the message at `row` (rows before the first unit are not asked)."""
        return bisect_right(self.starts, row) - 1


@dataclass(frozen=True)
class Ranking:
    """Per unit: the fused score of its best message (`own`) and after neighbours lifted it
    (`scores`), both in standard deviations above the candidates' average."""

    scores: list[float]
    own: list[float]


def standardized(values: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """z-scores (all zeros when the values do not vary)."""
    spread = float(values.std())
    return (values - values.mean()) / spread if spread > 0 else values * 0.0


async def dense_scores(
    query: str, window: HistoryWindow, start: int, end: int
) -> npt.NDArray[np.float64] | None:
    """Standardised cosine similarity of rows `[start, end)` to the query; 0 for rows without a
    vector of the configured model (the receipt's notes count them); None when no row has one or the
    query has no vector of that model in time (lexical only, noted: see `scoping/dense.py`)."""
    from orrery.memory.scoping.dense import model_unavailable, note_missing

    if model_unavailable(window):
        return None
    note_missing(window, query, start, end)
    vectors = window.vectors()
    query_vector = await _query_vector(query, window) if vectors is not None and end > start else None
    if vectors is None or query_vector is None:
        return None
    return standardized_similarity(vectors[start:end], window.with_vectors()[start:end], query_vector)


def standardized_similarity(
    vectors: npt.NDArray[np.float32], has: Sequence[bool], query_vector: npt.NDArray[np.float32]
) -> npt.NDArray[np.float64]:
    """z-scored cosine similarity of each row with a vector (`has`) to the query's; 0 for the rest."""
    import numpy as np

    # einsum, not BLAS: a threaded BLAS spins its threads for this small product and costs more CPU
    return standardized_over(np.einsum("ij,j->i", vectors, query_vector).astype(np.float64), has)


def standardized_over(sims: npt.NDArray[np.float64], has: Sequence[bool]) -> npt.NDArray[np.float64]:
    """z-scores of the rows that have a vector (`has`), standardised over those rows; 0 elsewhere."""
    import numpy as np

    mask = np.asarray(has, dtype=bool)
    out = np.zeros(len(mask))
    if mask.any():
        out[mask] = standardized(sims[mask])
    return out


async def _query_vector(query: str, window: HistoryWindow) -> Any:
    """The query's embedding: the stored one of the newest message when it is the query (a turn's
    user message has one once embedded), else computed now by the window's model (None when that
    model cannot answer in time)."""
    from orrery.memory.scoping.dense import embed_query

    vectors, last = window.vectors(), len(window) - 1
    newest = window.messages[last] if last >= 0 else None
    if newest is not None and vectors is not None and window.with_vectors()[last] and newest.content == query:
        return vectors[last]
    return await embed_query(window, query)


async def rank(query: str | None, window: HistoryWindow, units: Units, breaks: Sequence[int] = ()) -> Ranking:
    """Fused relevance of each unit to the query (0 everywhere when nothing points anywhere);
    `breaks`: unit indices that start a new run (another chat) no neighbour lift crosses."""
    if not len(units) or not query:
        return Ranking([0.0] * len(units), [0.0] * len(units))
    import numpy as np

    start, end = units.starts[0], units.ends[-1]
    lexical = np.zeros(end - start)
    for row, score in window.scores(analyze(query), before=end).items():
        if row >= start:
            lexical[row - start] = score
    dense = await dense_scores(query, window, start, end)
    return fuse(lexical, dense, [s - start for s in units.starts], breaks)


def fuse(
    lexical: npt.NDArray[np.float64],
    dense: npt.NDArray[np.float64] | None,
    starts: Sequence[int],
    breaks: Sequence[int] = (),
) -> Ranking:
    """Per-message lexical scores (raw) and standardised dense ones (or None) fused into per-unit
    scores (`starts`: each unit's first row), neighbours lifted within runs (`breaks`)."""
    import numpy as np

    fused = standardized(lexical)
    if dense is not None:
        fused += dense
    per_unit = np.maximum.reduceat(fused, np.asarray(starts))
    run = np.zeros(len(starts), dtype=np.int64)  # which run (chat) each unit belongs to
    run[[b for b in breaks if 0 < b < len(starts)]] = 1
    run = np.cumsum(run)
    near = per_unit.copy()
    for hop in range(1, NEIGHBOUR_HOPS + 1):  # a unit within a few turns of a strong one follows it
        same = run[hop:] == run[:-hop]
        lift = per_unit[:-hop] - NEIGHBOUR_STEP * hop
        near[hop:] = np.where(same, np.maximum(near[hop:], lift), near[hop:])
        lift = per_unit[hop:] - NEIGHBOUR_STEP * hop
        near[:-hop] = np.where(same, np.maximum(near[:-hop], lift), near[:-hop])
    return Ranking(near.tolist(), per_unit.tolist())
