"""Credentials never reach output: :func:`redact` masks them in any string.

* the password of a URL: ``https://user:secret@host`` -> ``https://user:***@host`` (a URL
  with a user and no password, which may be a token, becomes ``https://***@host``);
* secret query parameters: ``?api_key=...``, ``token``, ``password``, ``secret``, ``signature``...
  -> ``api_key=***``;
* ``Authorization`` header values: ``Basic ...``, ``Bearer ...``, ``ApiKey ...`` -> ``Basic ***``;
* every secret registered with :func:`add_secret` (the command line's ``--password`` and
  ``--api-key``, the password of ``--engine``), wherever it appears, e.g. in an exception of a
  client that printed its own configuration.

The command line applies it at every boundary where text leaves neardup: error messages,
tables and lines, ``--json``, CSV and the HTML report.
"""

from __future__ import annotations

import re
from urllib.parse import unquote, urlsplit

MASK = "***"

#: scheme://userinfo@  (userinfo up to the last '@' before the host's end, so '@' in a
#: password is covered)
_USERINFO = re.compile(
    r"(?P<scheme>\b[a-zA-Z][a-zA-Z0-9+.\-]*://)(?P<userinfo>[^\s/?#@'\"<>`]*(?:@[^\s/?#@'\"<>`]*)*)@"
)
_NAME = (
    r"(?<![a-zA-Z0-9_])(?:api[_-]?key|apikey|access[_-]?token|auth[_-]?token|token|password|passwd|pwd|"
    r"secret|client[_-]?secret|signature|sig|x-amz-signature|x-amz-credential|auth)="
)
_VALUE = r"[^&\s#'\"<>`,;)]+"
#: A secret query parameter: its name and ``=``, and its value (the reference form of
#: :func:`mask_params`).
_PARAM = re.compile(f"(?P<name>{_NAME})(?P<value>{_VALUE})", re.IGNORECASE)
_PARAM_NAME = re.compile(_NAME, re.IGNORECASE)
_PARAM_VALUE = re.compile(_VALUE)
#: The longest name of :data:`_PARAM` ("x-amz-credential"), without its ``=``.
_LONGEST_NAME = 16
_HEADER = re.compile(
    r"(?P<name>\b(?:authorization|proxy-authorization)['\"]?\s*[:=]\s*['\"]?(?:basic|bearer|apikey|token)\s+)"
    r"(?P<value>[A-Za-z0-9+/=._~\-]+)",
    re.IGNORECASE,
)
_secrets: set[str] = set()


def add_secret(secret: str | None) -> None:
    """Mask ``secret`` wherever it appears from now on (ignored when shorter than 3 characters,
    which would mask ordinary text)."""
    if secret and len(secret) >= 3 and secret != MASK:
        _secrets.add(secret)
        if unquote(secret) != secret:
            _secrets.add(unquote(secret))


def clear_secrets() -> None:
    """Forget the registered secrets (each command registers its own)."""
    _secrets.clear()


def add_url_secrets(url: str | None) -> None:
    """Register the password (and token-like user) of ``url``."""
    if not url or "@" not in url:
        return
    try:
        parts = urlsplit(url)
    except ValueError:
        return
    if parts.password:
        add_secret(parts.password)
    elif parts.username:
        add_secret(parts.username)


def _userinfo(m: re.Match) -> str:
    user, sep, _ = m.group("userinfo").partition(":")
    return f"{m.group('scheme')}{user}:{MASK}@" if sep and user else f"{m.group('scheme')}{MASK}@"


def redact(text: object) -> str:
    """``text`` (made a string) with every credential it holds masked."""
    s = text if isinstance(text, str) else str(text)
    if "@" in s and "://" in s:
        s = _USERINFO.sub(_userinfo, s)
    if "=" in s:
        s = mask_params(s)
    # (a scan of the regex at every position otherwise)
    if ("authorization" in s.lower()) and (":" in s or "=" in s):
        s = _HEADER.sub(lambda m: m.group("name") + MASK, s)
    for secret in sorted(_secrets, key=len, reverse=True):
        if secret in s:
            s = s.replace(secret, MASK)
    return s


def mask_params(s: str) -> str:
    """The value of every secret query parameter of ``s`` masked: ``_PARAM.sub`` (the
    reference form: tests/test_hardening.py checks both are equal), with the name looked
    for only where one can be, in the characters just before each ``=`` (a name holds no
    ``=``), not at every position of the text (8 s on 60 MB of text).

    >>> mask_params("x?sig=ab&q=1&X-Amz-Signature=f00 token= t")
    'x?sig=***&q=1&X-Amz-Signature=*** token= t'
    """
    out: list[str] = []
    last = 0  # the text before it is done
    prev = -1  # the "=" before the one looked at
    i = s.find("=")
    while i >= 0:
        name = _PARAM_NAME.search(s, max(last, prev + 1, i - _LONGEST_NAME), i + 1)
        value = _PARAM_VALUE.match(s, i + 1) if name else None
        if value:
            out += [s[last : i + 1], MASK]
            last = value.end()
        prev, i = i, s.find("=", max(i + 1, last))
    out.append(s[last:])
    return "".join(out)
