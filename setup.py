"""neardup's build: the pure-Python package, its data, and the C modules of the compiled loops.

The C modules are optional, as msgpack's, PyYAML's and markupsafe's are: where no C compiler
works (or ``NEARDUP_NO_EXTENSIONS=1`` is set), the build goes on without them and neardup runs
the interpreted form of each loop, saying so once (:mod:`neardup.sketches.loops`). With
``NEARDUP_REQUIRE_COMPILED=1`` (as .ci/run sets it) a C module that cannot be built fails the
build instead, with the compiler's error.
"""

import os
import shutil
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.command.build_py import build_py

ROOT = Path(__file__).parent
PACKAGE = ROOT / "plugin" / "neardup"
#: The folders at the top of the repo the wheel ships as neardup/_data/<name>
#: (neardup.runtime.resources reads them there, or where they stand in a checkout).
DATA_DIRS = ("mappings", "ingest_pipeline")


def loop_modules() -> list[Extension]:
    """One extension per C source ``_<name>.c``: the compiled form of the module of loops
    ``<name>.py`` beside it (neardup.sketches.loops), with the shared header of the loops."""
    found = []
    for source in sorted(PACKAGE.rglob("_*.c")):
        relative = source.relative_to(ROOT / "plugin").with_suffix("")
        found.append(
            Extension(
                ".".join(relative.parts),
                sources=[str(source.relative_to(ROOT))],
                include_dirs=[str((PACKAGE / "sketches").relative_to(ROOT))],
                extra_compile_args=[] if sys.platform == "win32" else ["-O3", "-std=c99"],
            )
        )
    return found


class OptionalBuildExt(build_ext):
    """build_ext that leaves out the C modules, with a warning, where they cannot be built."""

    def run(self):
        if os.environ.get("NEARDUP_NO_EXTENSIONS"):
            print("NEARDUP_NO_EXTENSIONS is set: the loops stay interpreted", file=sys.stderr)
            for ext in self.extensions:  # (none left over from an earlier build in build/)
                Path(self.get_ext_fullpath(ext.name)).unlink(missing_ok=True)
            return
        try:
            super().run()
        except Exception as exc:  # no compiler at all (distutils' own errors among them)
            self._warn(exc)

    def build_extension(self, ext):
        try:
            super().build_extension(ext)
        except Exception as exc:  # this module failed to compile or link
            self._warn(exc, ext.name)

    @staticmethod
    def _warn(exc, name="the C modules"):
        if os.environ.get("NEARDUP_REQUIRE_COMPILED") == "1":
            raise RuntimeError(f"NEARDUP_REQUIRE_COMPILED=1: {name} could not be built") from exc
        print(
            f"WARNING: {name} could not be built ({exc}); neardup will run its loops"
            " interpreted (correct, much slower). Install a C compiler and the Python"
            " headers, then reinstall neardup.",
            file=sys.stderr,
        )


class BuildPyWithData(build_py):
    """build_py that also copies mappings/ and ingest_pipeline/ to neardup/_data/."""

    def run(self):
        super().run()
        for name in DATA_DIRS:
            target = Path(self.build_lib) / "neardup" / "_data" / name
            if target.exists():
                shutil.rmtree(target)
            shutil.copytree(ROOT / name, target)


setup(
    ext_modules=loop_modules(),
    cmdclass={"build_ext": OptionalBuildExt, "build_py": BuildPyWithData},
)
