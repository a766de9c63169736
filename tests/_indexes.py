"""Embedded indices in states neardup must refuse, made for the tests."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from neardup import NearDup


def index_of_signature_version(path: Path, version: int) -> Path:
    """An empty embedded index at ``path`` whose stored config claims signature ``version``."""
    NearDup.open(str(path)).close()
    db = sqlite3.connect(path)
    try:
        cfg = json.loads(db.execute("SELECT value FROM meta WHERE key='config'").fetchone()[0])
        cfg["version"] = version
        db.execute("UPDATE meta SET value=? WHERE key='config'", (json.dumps(cfg),))
        db.commit()
    finally:
        db.close()
    return path
