"""The exceptions of neardup: one root, :class:`NeardupError`, and one class per kind of
problem, each also the built-in exception callers caught before (a ``ValueError`` for bad
input or settings, a ``RuntimeError`` for an engine, a ``KeyError`` for a missing
document), so ``except ValueError`` keeps working. Modules define their own errors as
subclasses of these (:class:`neardup.io.files.InputError`,
:class:`neardup.signing.validate.InvalidDocument`, :class:`neardup.config.ConfigMismatch`, ...). The
command line turns every one of them into one ``error: ...`` line and an exit status, in one place
(:mod:`neardup.cli.errors`).

>>> issubclass(DocumentNotFound, KeyError), str(DocumentNotFound("no document with id 'a'"))
(True, "no document with id 'a'")
"""

from __future__ import annotations


class NeardupError(Exception):
    """The root of every error neardup raises on purpose (a problem of the input, the
    settings or the engine, not a bug)."""


class InvalidInput(NeardupError, ValueError):
    """A document, file or argument neardup cannot use."""


class ConfigError(NeardupError, ValueError):
    """A setting is out of range or unknown, or an index's settings do not fit the request."""


class EngineError(NeardupError, RuntimeError):
    """The engine (the SQLite file, the Elasticsearch/OpenSearch cluster) refused or failed."""


class DocumentNotFound(NeardupError, KeyError):
    """No document with the id asked for; its message is plain (not a ``KeyError``'s repr)."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "no such document"
