"""HTML: tags, comments, script and style blocks out, entities decoded (002, 004:
canonicalization)."""

from __future__ import annotations

import html
import re

_TAG = re.compile(
    r"<(script|style)\b.*?</\1\s*>|<!--.*?-->|<[A-Za-z/!?][^<>]{0,2000}>", re.S | re.I
)


def strip_html(text: str) -> str:
    """Remove tags, comments, script and style blocks, then decode entities."""
    if "<" in text:
        text = _TAG.sub(" ", text)
    if "&" in text:
        text = html.unescape(text)
    return text
