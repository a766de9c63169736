"""The examples in neardup's docstrings run and give what they show, so that the README's
test command (``python -m pytest``) checks them too; ``python -m pytest --doctest-modules
plugin/neardup`` runs the same examples from the source tree.

Modules are imported by name, so this checks the neardup that the tests import (the
installed one in CI). The math modules must have examples.
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import neardup

MODULES = ["neardup", *sorted(m.name for m in pkgutil.walk_packages(neardup.__path__, "neardup."))]
#: modules whose docstrings must carry examples (the seeds' test vectors where they have one)
WITH_EXAMPLES = {
    "neardup.sketches.shingles",
    "neardup.sketches.minhash",
    "neardup.sketches.simhash",
    "neardup.sketches.lsh",
    "neardup.sketches.verify",
    "neardup.sketches.sampling",
    "neardup.sketches.hashing",
    "neardup.sketches.ragged",
    "neardup.keys.registry",
}


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)  # pytest's default doctest flags
    report: list[str] = []
    for test in doctest.DocTestFinder().find(module, name):
        runner.run(test, out=report.append)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, "".join(report)
    if name in WITH_EXAMPLES:
        assert result.attempted > 0, f"{name} has no docstring examples"


def test_every_module_is_found():
    assert {
        "neardup.config",
        "neardup.signing.signatures.text_stats",
        "neardup.engines.embedded",
        "neardup.cli.indexing",
    } <= set(MODULES)
    assert WITH_EXAMPLES <= set(MODULES)
