"""Hatch build hook: compiles framejit.frameeval's C hook with cffi into the wheel.

A regular wheel gets the extension compiled in a temporary folder and force-included (the
wheel is tagged for this interpreter and platform); an editable wheel gets it compiled in place
in src/, where the loader's source-hash check guards against running a stale build.
"""

from __future__ import annotations

import importlib.util
import sys
import tempfile
from pathlib import Path

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

ROOT = Path(__file__).resolve().parent
PACKAGE = ROOT / "src" / "framejit" / "frameeval"


def _load_ffibuild():
    # Load the build script by path: importing the package would try to load the extension.
    spec = importlib.util.spec_from_file_location(
        "_framejit_frameeval_ffibuild", PACKAGE / "_ffibuild.py"
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


class CffiBuildHook(BuildHookInterface):
    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict) -> None:
        if self.target_name != "wheel":
            return
        ffibuild = _load_ffibuild()
        ffibuild.check_supported()  # a clear error on 3.14+ instead of a broken wheel
        if version == "editable":
            ffibuild.build(PACKAGE)
        else:
            self._tmp = tempfile.TemporaryDirectory(prefix="framejit-frameeval-wheel-")
            built = ffibuild.build(Path(self._tmp.name))
            build_data["force_include"][str(built)] = f"framejit/frameeval/{built.name}"
        build_data["pure_python"] = False
        build_data["infer_tag"] = True

    def finalize(self, version: str, build_data: dict, artifact_path: str) -> None:
        tmp = getattr(self, "_tmp", None)
        if tmp is not None:
            tmp.cleanup()
