"""Files handed to the peers' process: raw texts, canonical tokens, shingle hashes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Sequence

import numpy as np


def write_jsonl(path: Path, rows: Sequence) -> Path:
    with open(path, "w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False))
            f.write("\n")
    return path


def write_hashes(path: Path, sets: Sequence[np.ndarray]) -> Path:
    """Sorted distinct uint64 shingle hashes of each document: one flat array + offsets."""
    offsets = np.zeros(len(sets) + 1, dtype=np.int64)
    offsets[1:] = np.cumsum([len(s) for s in sets])
    flat = np.concatenate(sets).astype(np.uint64) if len(sets) else np.empty(0, dtype=np.uint64)
    np.savez(path, flat=flat, offsets=offsets)
    return path
