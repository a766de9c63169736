"""What a server's refusal of access means and how to fix it, in one line: a TLS handshake
that failed (which certificate, which option), a 401 (the credentials), a 403 of the
security plugin (which user lacks which privilege, on which index).

The reasons come from the engines' own words: OpenSearch security says ``no permissions for
[ACTION] and User [name=USER, ...]``, Elasticsearch ``action [ACTION] is unauthorized for
user [USER] ... on indices [INDEX]``; Python's ssl module names the certificate problem
(``certificate has expired``, ``unable to get local issuer certificate``...).
"""

from __future__ import annotations

import re

#: Where each command's privileges are listed.
PRIVILEGES_DOC = "docs/engines.md, 'Privileges per command'"

#: (words of the ssl error, what is wrong and how to fix it), the first match told.
_TLS = (
    (
        "certificate has expired",
        "the server's certificate has expired: renew it on the server (a CA given with "
        "--ca-certs cannot make it valid)",
    ),
    (
        "not yet valid",
        "the server's certificate is not valid yet: check the clocks of the server and here",
    ),
    (
        "mismatch",
        "the server's certificate was not made for this host name: connect by a name or "
        "address its certificate lists",
    ),
    (
        "self-signed certificate",
        "the server's certificate is signed by a CA this machine does not trust: give that "
        "CA with --ca-certs FILE (--no-verify-certs skips the check: test clusters only)",
    ),
    (
        "certificate verify failed",
        "the server's certificate is signed by a CA this machine does not trust: give that "
        "CA with --ca-certs FILE (--no-verify-certs skips the check: test clusters only)",
    ),
    (
        "wrong version number",
        "the server does not speak TLS on this port: use an http:// URL",
    ),
    (
        "record layer failure",
        "the server does not speak TLS on this port: use an http:// URL",
    ),
)


def tls_failure(reason: str) -> str | None:
    """What a failed TLS handshake means, from the ssl module's ``reason``; None when the
    reason is not a TLS one.

    >>> tls_failure("SSLError([SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed: "
    ...             "certificate has expired (_ssl.c:1006))")[:43]
    "the server's certificate has expired: renew"
    >>> tls_failure("Connection refused") is None
    True
    """
    low = reason.lower()
    for words, told in _TLS:
        if words in low:
            return told
    return None


def plain_http_to_tls(reason: str) -> bool:
    """Whether a connection error is what a TLS server answers to plain HTTP: the
    connection closed without an answer, or a TLS alert read as HTTP.

    >>> plain_http_to_tls("RemoteDisconnected('Remote end closed connection without response')")
    True
    """
    low = reason.lower()
    return "without response" in low or "badstatusline" in low or "connection aborted" in low


def privilege_refusal(reason: str, index: str | None) -> str:
    """Who lacks which privilege, from a 403 ``reason`` of either engine's security, and how
    to fix it; ``index`` is the index of the refused request (None: a request on the
    cluster).

    >>> privilege_refusal("no permissions for [indices:data/write/bulk] and User "
    ...                   "[name=reader, backend_roles=[], requestedTenant=null]", "news")[:70]
    'user reader lacks the privilege indices:data/write/bulk on index news:'
    >>> privilege_refusal("no permissions for [cluster:monitor/main] and User "
    ...                   "[name=bob, backend_roles=[], requestedTenant=null]", None)[:58]
    'user bob lacks the cluster privilege cluster:monitor/main:'
    """
    action = re.search(r"(?:no permissions for|action) \[([^\]]+)\]", reason)
    user = re.search(r"User \[name=([^,\]]+)|for user \[([^\]]+)\]", reason)
    on = re.search(r"on indices \[([^\]]+)\]", reason)
    who = f"user {next(g for g in user.groups() if g)}" if user else "the user"
    where = on.group(1) if on else index
    if not action:  # (a HEAD request's 403 has no body)
        place = "a privilege (the server's answer names none)" + (
            f" on index {where}" if where else ""
        )
    elif action.group(1).startswith("cluster:") or not where:
        place = f"the cluster privilege {action.group(1)}" + (
            f", needed for index {where}" if where else ""
        )
    else:
        place = f"the privilege {action.group(1)} on index {where}"
    return (
        f"{who} lacks {place}: give the user a role that grants it (each command's "
        f"privileges: {PRIVILEGES_DOC})"
    )
