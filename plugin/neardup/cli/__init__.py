"""The ``neardup`` command line. Subcommands live in their own modules and load lazily,
so ``neardup --help`` answers at once (hazm and the engine clients import only when used).
"""

from __future__ import annotations

import importlib
import os
import sys
from typing import Any

#: neardup calls no BLAS routine: numpy's OpenBLAS would start a thread per CPU at import,
#: 0.05-0.1 s of CPU (more on larger machines) for every command, a fresh ``query`` included.
#: Set before numpy loads, unless the user set it.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import click  # noqa: E402

from ..runtime.allocator import keep_freed_memory  # noqa: E402

#: command name -> "module:attribute" (relative to neardup.cli)
COMMANDS = {
    "index": "indexing:index_cmd",
    "dedup": "dedup:dedup_cmd",
    "query": "finding:query_cmd",
    "compare": "finding:compare_cmd",
    "clusters": "clusters:clusters_cmd",
    "search": "finding:search_cmd",
    "info": "indexing:info_cmd",
    "show": "documents:show_cmd",
    "export": "documents:export_cmd",
    "delete": "documents:delete_cmd",
    "report": "report:report_cmd",
    "dashboards": "dashboards:dashboards_group",
    "evaluate": "evaluate:evaluate_cmd",
    "init": "indexing:init_cmd",
    "retag": "indexing:retag_cmd",
    "attach": "attach:attach_cmd",
}


class LazyGroup(click.Group):
    """click's lazily-loading group (see click's docs, "Lazily Loading Subcommands"), and the
    top-level error handler: an error no command turned into a message (a full disk, an
    unreadable file, read-only storage) becomes one clear line, and anything else a
    traceback with credentials redacted."""

    def invoke(self, ctx: click.Context):
        from ..runtime.cpus import CPU_SAMPLE, CpuSample
        from ..runtime.redact import clear_secrets
        from .output import guard_standard_streams

        # the CPUs others leave idle, sampled while the command loads (``index`` chooses its
        # signing workers by them: :func:`~neardup.indexing.workers.default_workers`)
        ctx.meta[CPU_SAMPLE] = CpuSample()
        clear_secrets()
        guard_standard_streams()
        try:
            return super().invoke(ctx)
        except (click.exceptions.ClickException, click.exceptions.Exit, click.exceptions.Abort):
            raise
        except KeyboardInterrupt:  # Ctrl-C: what was committed stays; no traceback
            from .errors import interrupted

            interrupted(ctx.invoked_subcommand)
        except Exception as e:  # noqa: BLE001 - the last boundary before the terminal
            from .errors import caused_by_interrupt, interrupted, report_unexpected

            # (Ctrl-C inside a compiled loop or a library comes out wrapped)
            if caused_by_interrupt(e):
                interrupted(ctx.invoked_subcommand)
            report_unexpected(e)

    def main(self, *args: Any, **kwargs: Any) -> Any:
        """click's ``main``, with a reader that goes away (``| head``) ending the command
        quietly with status 0, wherever the write that finds it closed is: the rest of the
        output goes nowhere, as Python's documentation on SIGPIPE advises."""
        try:
            return super().main(*args, **kwargs)
        except BrokenPipeError:
            from .errors import reader_gone

            reader_gone()
        finally:
            try:
                sys.stdout.flush()
            except BrokenPipeError:
                from .errors import reader_gone

                reader_gone()
            except (OSError, ValueError):
                pass

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in COMMANDS:
            return None
        module, attr = COMMANDS[name].split(":")
        return getattr(importlib.import_module(f".{module}", __name__), attr)


@click.group(
    cls=LazyGroup,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@click.version_option(package_name="neardup")
def main() -> None:
    """Find near-duplicate documents: mirrors, reposts, edited versions, boilerplate.

    Documents are canonicalized, shingled and signed (exact hash, MinHash LSH bands,
    SimHash blocks, winnowing samples); the engine finds candidates by term match and
    neardup verifies them exactly (resemblance and containment of shingle sets).

    The engine is a SQLite file by default (--engine neardup.db); give an
    Elasticsearch/OpenSearch URL (--engine https://host:9200 or NEARDUP_URL) to use a
    cluster. Start with:

    \b
      neardup index docs.jsonl        # sign, store and tag duplicates
      neardup clusters                # every near-duplicate cluster
      neardup show doc-42             # one document's cluster
      neardup export --unique -o out.jsonl   # the deduplicated collection
      neardup dedup docs.jsonl -o out.jsonl  # the same in one command, no index kept
      neardup query --file a.txt      # near-duplicates of one text
      neardup search "words" --dedupe # full-text search, copies folded
    """
    # each batch reuses the memory of the one before (neardup.runtime.allocator)
    keep_freed_memory()
