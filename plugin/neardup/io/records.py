"""The records neardup writes out, built by keyword from what an engine stores: the export
record of a stored document (``neardup export``, :meth:`neardup.api.NearDup.export`), which
reads back as a document (:mod:`neardup.io.reading`) with its tags beside it.

>>> from neardup.engines.base import StoredDoc, Tags
>>> d = StoredDoc(id="b", lang="en", n_shingles=3, shingles=None, simhash=0, exact="", keys={},
...               text="x y z", fields={"source": "web"}, seq=2,
...               tags=Tags(cluster_id="a", dup_of="a", max_resemblance=0.9, is_duplicate=True))
>>> export_record(d)["neardup"]["dup_of"], export_record(d)["source"]
('a', 'web')
"""

from __future__ import annotations

from typing import Any

from ..engines.base import StoredDoc


def export_record(d: StoredDoc) -> dict[str, Any]:
    """``id``, ``title``, ``text``, ``lang``, the document's own fields (never over those
    four), and its tags under ``neardup`` (None where the document is not tagged yet)."""
    t = d.tags
    rec: dict[str, Any] = {"id": d.id, "title": d.title, "text": d.text, "lang": d.lang}
    rec.update({k: v for k, v in (d.fields or {}).items() if k not in rec})
    rec["neardup"] = {
        "cluster_id": t.cluster_id if t else None,
        "dup_of": t.dup_of if t else None,
        "resemblance": t.max_resemblance if t and t.is_duplicate else None,
        "is_duplicate": t.is_duplicate if t else None,
        "seq": d.seq,
        "too_short": d.too_short,
    }
    return rec
