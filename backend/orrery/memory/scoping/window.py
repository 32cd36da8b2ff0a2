"""A session's recent messages as relevance reads them: the messages plus column arrays derived once.

`HistoryWindow` holds a contiguous run of messages (oldest first) with what ranking needs per
message, computed when the message enters the window and never again: whether it is a tool result,
its prompt cost per tokenizer encoding (from the stored counts), its embedding in one float32 matrix,
and its stored search terms in an inverted index with their counts. A process keeps windows between
turns (`backend/orrery/memory/history_cache.py`) and only appends what is new, so a turn's ranking works on
arrays instead of re-reading and re-decoding 2,000 rows.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

from orrery.memory.scoping.base import HistoryMessage, message_tokens
from orrery.tokens import TokenCounter

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

BM25_K1 = 1.5
"""Okapi constants as in `orrery.text.bm25_scores` (the lexical baseline, the archive on PostgreSQL)."""
BM25_B = 0.75
COUNTED_TERMS = 64
"""Terms whose counts a window remembers (`term_counts`) before it forgets them all."""
_COUNTED = "term_counts"
ARRAYS_FROM = 100
"""Messages from which `score_array` works on arrays (below, numpy's per-call cost loses to a loop
over the few matches: 22 against 9 µs at 25 messages, 26 against 67 at 300)."""


GROWTH = 1.25
"""A window's vector buffer grows by a quarter when full: room for the next turns without copying
each time, while an idle chat's copy holds at most a fifth more than it uses (doubling left up to
half of each held window empty: with many active people, that room was a third of the cache)."""


def _room(rows: int) -> int:
    """Rows to allocate for `rows` vectors and the room to grow."""
    return max(int(rows * GROWTH) + 2, 8)


PER_MESSAGE_BYTES = 900
"""What a held message costs beyond its text and vector: the `HistoryMessage` and its fields, a slot
in each per-message list, its postings (~900 bytes measured with tracemalloc on 2,000 messages of
~140 characters): an estimate the history cache's byte budget counts with."""


class HistoryWindow:
    """Messages with consecutive `seq`s, oldest first, and their per-message columns."""

    def __init__(self, dimensions: int, model: str | None = None) -> None:
        import numpy as np

        from orrery.memory.embeddings import MODEL_NAME

        self.model = model or MODEL_NAME
        """The embedding model whose vectors this window holds (never two models')."""
        self.dense: Any = None
        """While a turn holds the window: its `DenseTurn` (the model's settings, the receipt's notes)."""
        self.derived: dict[str, Any] = {}
        """What an owner derives from the window's messages (recall's units), until they change."""

        self.messages: list[HistoryMessage] = []
        self.is_tool: list[bool] = []
        self._terms: list[str] = []
        self._lengths: list[int] = []
        self._postings: dict[str, list[int]] = {}
        """term -> absolute positions (`_offset` + index), one per occurrence, ascending; positions
        below `_offset` are skipped on search and removed when the index is compacted."""
        self._offset = 0
        self._length_total = 0
        self._indexed = 0
        """Positions held by the index (forgotten ones included until it is compacted)."""
        self._buffer = np.zeros((0, dimensions), dtype=np.float32)
        """Embedding rows `_start:_start + len(self)` are the window's; room to grow after them."""
        self._start = 0
        self._has_vector: list[bool] = []
        self._costs: dict[str, list[int]] = {}
        self._positions: dict[int, int] | None = None
        """seq -> absolute position, only when seqs are not consecutive (never by the app's writes)."""
        self._text_bytes: list[int] = []

    def __len__(self) -> int:
        return len(self.messages)

    @property
    def first_seq(self) -> int:
        return self.messages[0].seq if self.messages else 0

    @property
    def last_seq(self) -> int:
        return self.messages[-1].seq if self.messages else 0

    def extend(
        self,
        messages: Sequence[HistoryMessage],
        terms: Sequence[str | None],
        vectors: npt.NDArray[np.float32] | None,
        has_vector: Sequence[bool],
    ) -> None:
        """Append newer messages (`seq` continuing this window's), their stored search terms and
        embedding rows (zeros where a message has none)."""
        import numpy as np

        self.derived.clear()
        base = self._offset + len(self.messages)
        expected = self.last_seq + 1 if self.messages else (messages[0].seq if messages else 0)
        if self._positions is None and any(m.seq != expected + i for i, m in enumerate(messages)):
            self._positions = {m.seq: self._offset + i for i, m in enumerate(self.messages)}
        if self._positions is not None:
            self._positions.update((m.seq, base + i) for i, m in enumerate(messages))
        postings = self._postings
        for i, text in enumerate(terms):
            words = text.split() if text else []
            for term in words:
                positions = postings.get(term)
                if positions is None:
                    postings[term] = [base + i]
                else:
                    positions.append(base + i)
            self._terms.append(text or "")
            self._lengths.append(len(words))
            self._length_total += len(words)
            self._indexed += len(words)
        self.messages.extend(messages)
        self._text_bytes.extend(len(m.content) + len(t or "") for m, t in zip(messages, terms, strict=True))
        self.is_tool.extend(m.role == "tool" for m in messages)
        self._has_vector.extend(has_vector)
        if messages:
            self._append_vectors(
                vectors if vectors is not None else np.zeros((len(messages), self._buffer.shape[1]))
            )
        for encoding, costs in self._costs.items():
            costs.extend(_cost(m, encoding) for m in messages)

    def copy(self) -> HistoryWindow:
        """A window holding the same messages that grows apart from this one (a shared window is
        never changed while another turn reads it: `HistoryCache.grow`)."""
        import numpy as np

        twin = HistoryWindow(self.dimensions, self.model)
        twin.messages, twin.is_tool = list(self.messages), list(self.is_tool)
        twin._terms, twin._lengths = list(self._terms), list(self._lengths)
        twin._postings = {term: list(positions) for term, positions in self._postings.items()}
        twin._offset, twin._length_total, twin._indexed = self._offset, self._length_total, self._indexed
        live = self._buffer[self._start : self._start + len(self.messages)]
        twin._buffer = np.zeros((_room(len(live)), self.dimensions), dtype=np.float32)
        twin._buffer[: len(live)] = live
        twin._has_vector = list(self._has_vector)
        twin._text_bytes = list(self._text_bytes)
        twin._costs = {encoding: list(costs) for encoding, costs in self._costs.items()}
        twin._positions = dict(self._positions) if self._positions is not None else None
        return twin

    def _append_vectors(self, rows: npt.NDArray[Any]) -> None:
        import numpy as np

        held, stop = len(self.messages) - len(rows), self._start + len(self.messages) - len(rows)
        if stop + len(rows) > len(self._buffer):  # grow, keeping only the live rows
            grown = np.zeros((_room(held + len(rows)), self._buffer.shape[1]), dtype=np.float32)
            grown[:held] = self._buffer[self._start : stop]
            self._buffer, self._start, stop = grown, 0, held
        self._buffer[stop : stop + len(rows)] = rows

    def drop_before(self, seq: int) -> None:
        """Forget the messages older than `seq` (the window slid past them)."""
        n = sum(1 for m in self.messages if m.seq < seq) if self._positions else seq - self.first_seq
        n = max(0, min(len(self.messages), n))
        if not n:
            return
        self.derived.clear()
        self._length_total -= sum(self._lengths[:n])
        self._offset += n
        if self._positions is not None:
            self._positions = {seq: at for seq, at in self._positions.items() if at >= self._offset}
        del self.messages[:n], self.is_tool[:n], self._terms[:n], self._lengths[:n], self._has_vector[:n]
        del self._text_bytes[:n]
        self._start += n
        for costs in self._costs.values():
            del costs[:n]
        if self._indexed > 2 * (self._length_total + 1):
            self._reindex()

    def _reindex(self) -> None:
        """Rebuild the inverted index without the positions of forgotten messages."""
        self._postings, self._indexed = {}, self._length_total
        for i, text in enumerate(self._terms):
            for term in text.split():
                self._postings.setdefault(term, []).append(self._offset + i)

    def nbytes(self) -> int:
        """About how much memory the window holds: its vector buffer (growth room included), its
        texts and a fixed cost per message (`PER_MESSAGE_BYTES`); what the history cache budgets."""
        return int(self._buffer.nbytes) + sum(self._text_bytes) + PER_MESSAGE_BYTES * len(self.messages)

    def index_of(self, seq: int) -> int:
        """Position of the message with `seq` (seqs are consecutive), or -1 when not held."""
        if self._positions is not None:
            i = self._positions.get(seq, self._offset - 1) - self._offset
        else:
            i = seq - self.first_seq
        return i if 0 <= i < len(self.messages) else -1

    def stored_terms(self, start: int, end: int) -> list[str]:
        """The stored search terms (space-separated) of the messages at `[start, end)`."""
        return self._terms[start:end]

    def costs(self, counter: TokenCounter) -> list[int]:
        """Prompt cost of every message in `counter`'s encoding (stored counts; counted once when a
        message has none for it)."""
        costs = self._costs.get(counter.encoding_name)
        if costs is None:
            costs = self._costs[counter.encoding_name] = [message_tokens(m, counter) for m in self.messages]
        return costs

    @property
    def dimensions(self) -> int:
        return int(self._buffer.shape[1])

    def use_dimensions(self, dimensions: int) -> bool:
        """Whether vectors of this size fit: yes when they are the window's size, or when it holds no
        vector yet (its matrix is then made that size, as a remote model's is known only from rows)."""
        if dimensions == self.dimensions:
            return True
        if any(self._has_vector) or dimensions <= 0:
            return False
        import numpy as np

        self._buffer = np.zeros((len(self._buffer), dimensions), dtype=np.float32)
        return True

    def vectors(self) -> npt.NDArray[np.float32] | None:
        """The embedding matrix (one row per message, zeros where none is stored), or None when no
        message has one."""
        return self._buffer[self._start : self._start + len(self.messages)] if any(self._has_vector) else None

    def with_vectors(self) -> list[bool]:
        """Whether each message has a stored embedding."""
        return self._has_vector

    def search(self, terms: Iterable[str], limit: int, before: int | None = None) -> list[int]:
        """Positions of the messages (below `before`) matching any term, best first: BM25 over this
        window's stored search terms, with this session's own statistics."""
        if limit <= 0:
            return []
        scores = self.scores(terms, before)
        return sorted(scores, key=lambda i: (-scores[i], -i))[:limit]

    def term_counts(self, term: str) -> dict[int, int]:
        """How often `term` occurs in each message holding it, by absolute position (not to be
        changed: remembered until the window changes, as a held window is asked for the same terms
        turn after turn, by recall for every chat it ranks)."""
        counted: dict[str, dict[int, int]] | None = self.derived.get(_COUNTED)
        if counted is None:
            counted = self.derived[_COUNTED] = {}
        counts = counted.get(term)
        if counts is not None:
            return counts
        positions = self._postings.get(term)
        counts = {}
        if positions:
            for position in positions[bisect_left(positions, self._offset) :]:
                counts[position] = counts.get(position, 0) + 1
        if len(counted) >= COUNTED_TERMS:
            counted.clear()
        counted[term] = counts
        return counts

    def corpus(self, terms: Iterable[str]) -> Corpus:
        """This window's BM25 statistics for `terms` (what `Corpus.pooled` adds up over windows)."""
        return Corpus(len(self.messages), self._length_total, {t: len(self.term_counts(t)) for t in terms})

    def score_array(self, terms: Iterable[str], corpus: Corpus) -> npt.NDArray[np.float64]:
        """`scores(terms, corpus=corpus)` for every message as an array (0 where no term matches),
        the same values worked out on arrays: recall scores every held chat's window each turn."""
        import numpy as np

        out = np.zeros(len(self.messages))
        n = corpus.messages
        if not len(self.messages) or not n:
            return out
        if len(self.messages) < ARRAYS_FROM:
            for row, score in self.scores(terms, corpus=corpus).items():
                out[row] = score
            return out
        average = corpus.length_total / n or 1.0
        lengths = self._arrays("lengths", lambda: np.asarray(self._lengths, dtype=np.int64))
        for term in dict.fromkeys(terms):
            rows, counts = self._arrays(("rows", term), partial(self._term_rows, term))
            if not len(rows):
                continue
            df = corpus.frequencies.get(term, len(rows))
            idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
            norm = BM25_K1 * (1 - BM25_B + BM25_B * lengths[rows] / average)
            out[rows] += idf * counts * (BM25_K1 + 1) / (counts + norm)
        return out

    def _term_rows(self, term: str) -> tuple[Any, Any]:
        import numpy as np

        counts = self.term_counts(term)
        rows = np.fromiter(counts.keys(), dtype=np.int64, count=len(counts)) - self._offset
        return rows, np.fromiter(counts.values(), dtype=np.int64, count=len(counts))

    def _arrays(self, key: Hashable, make: Callable[[], Any]) -> Any:
        """What `make` derives from the window's messages, remembered until they change."""
        arrays = self.derived.setdefault("score_arrays", {})
        found = arrays.get(key)
        if found is None:
            if len(arrays) >= COUNTED_TERMS:
                arrays.clear()
            found = arrays[key] = make()
        return found

    def scores(
        self, terms: Iterable[str], before: int | None = None, corpus: Corpus | None = None
    ) -> dict[int, float]:
        """BM25 of every message (below `before`) matching any term, by position, with this
        window's statistics or those of `corpus` (several windows ranked as one)."""
        end = len(self.messages) if before is None else before
        n = len(self.messages) if corpus is None else corpus.messages
        if not len(self.messages) or not n:
            return {}
        average = (self._length_total if corpus is None else corpus.length_total) / n or 1.0
        scores: dict[int, float] = {}
        for term in dict.fromkeys(terms):
            counts = self.term_counts(term)
            if not counts:
                continue
            df = len(counts) if corpus is None else corpus.frequencies.get(term, len(counts))
            idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
            for position, count in counts.items():
                i = position - self._offset
                if i < end:
                    norm = BM25_K1 * (1 - BM25_B + BM25_B * self._lengths[i] / average)
                    scores[i] = scores.get(i, 0.0) + idf * count * (BM25_K1 + 1) / (count + norm)
        return scores


@dataclass(frozen=True)
class Corpus:
    """BM25 statistics: messages, their total length in terms, and document frequency per term."""

    messages: int
    length_total: int
    frequencies: dict[str, int]

    @staticmethod
    def pooled(parts: Sequence[Corpus]) -> Corpus:
        """The statistics of several windows taken as one corpus."""
        frequencies: dict[str, int] = {}
        for part in parts:
            for term, df in part.frequencies.items():
                frequencies[term] = frequencies.get(term, 0) + df
        return Corpus(sum(p.messages for p in parts), sum(p.length_total for p in parts), frequencies)


_COUNTERS: dict[str, TokenCounter] = {}


def _cost(message: HistoryMessage, encoding: str) -> int:
    counter = _COUNTERS.get(encoding)
    if counter is None:
        counter = _COUNTERS[encoding] = TokenCounter("window", encoding, True)
    return message_tokens(message, counter)


def window_of(messages: Sequence[HistoryMessage], terms: Sequence[str | None], vectors: Any) -> HistoryWindow:
    """A window over `messages`, built in one go (`vectors`: one embedding row per message, or None)."""
    from orrery.memory.embeddings import DIMENSIONS

    window = HistoryWindow(DIMENSIONS)
    has = [vectors is not None and bool(m.content.strip()) for m in messages]
    window.extend(messages, terms, vectors, has)
    return window
