"""The JSON serializer neardup gives opensearch-py: request bodies written by orjson instead
of the standard library's ``json``, in the form the client's own ``serializer`` argument takes
(its ``JSONSerializer``, ``dumps`` giving ``str``, as its bulk helpers measure and join them).

orjson writes the same compact UTF-8 JSON, numpy arrays and scalars included
(``OPT_SERIALIZE_NUMPY``), several times faster: most of what a ``_bulk`` of neardup's
documents costs the client. Where orjson refuses what ``json`` writes (an integer beyond 64
bits, a value of another type), the client's own serializer writes it. Answers are read by the
client's own serializer: orjson would read an integer beyond 64 bits as a float.

>>> s = OrjsonSerializer()
>>> s.dumps({"b": "ставка", "n": [1, 2.5, None], "ok": True, "big": 2**70})
'{"b":"ставка","n":[1,2.5,null],"ok":true,"big":1180591620717411303424}'
"""

from __future__ import annotations

from typing import Any

import orjson
from opensearchpy.serializer import JSONSerializer

_OPTIONS = orjson.OPT_SERIALIZE_NUMPY | orjson.OPT_NON_STR_KEYS


class OrjsonSerializer(JSONSerializer):
    """opensearch-py's ``JSONSerializer``, its bodies written by orjson where it can."""

    def dumps(self, data: Any) -> Any:
        if isinstance(data, (str, bytes)):
            return data  # (a body given as text is sent as it is)
        try:
            return orjson.dumps(data, default=self.default, option=_OPTIONS).decode("utf-8")
        except TypeError:  # (orjson.JSONEncodeError: a value orjson does not write)
            return super().dumps(data)
