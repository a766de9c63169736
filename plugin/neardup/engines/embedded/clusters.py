"""The embedded engine's ``clusters`` table: the last N-to-N clustering, rows by name."""

from __future__ import annotations

import dataclasses
import json
from typing import Sequence

from ..base import ClusterRecord
from .connection import Connection
from .schema import now_iso


class Clusters:
    """The ``clusters`` table, written whole and read back by column name, through the
    engine's ``connection``: the protocol's cluster methods, which
    :class:`~.engine.EmbeddedEngine` has by deriving from this class."""

    connection: Connection

    def write_clusters(self, clusters: Sequence[ClusterRecord]) -> None:
        now = now_iso()
        with self.connection.tx() as db:
            db.execute("DELETE FROM clusters")
            db.executemany(
                "INSERT INTO clusters VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                (
                    (
                        c.cluster_id,
                        c.size,
                        c.representative_id,
                        c.representative_title,
                        json.dumps(c.members, ensure_ascii=False),
                        c.min_resemblance,
                        c.mean_resemblance,
                        c.max_resemblance,
                        json.dumps(c.languages),
                        c.first_seen,
                        c.last_seen,
                        now,
                    )
                    for c in clusters
                ),
            )

    def read_clusters(self, limit: int | None = None) -> list[ClusterRecord]:
        names = [f.name for f in dataclasses.fields(ClusterRecord)]
        rows = (
            self.connection.require()
            .execute(
                f"SELECT {', '.join(names)} FROM clusters ORDER BY size DESC, cluster_id LIMIT ?",
                (-1 if limit is None else limit,),
            )
            .fetchall()
        )
        out = []
        for r in rows:  # (rows decoded by name)
            c = dict(zip(names, r, strict=True))
            c["members"] = json.loads(c["members"])
            c["languages"] = json.loads(c["languages"] or "[]")
            out.append(ClusterRecord(**c))
        return out
