"""Sphinx configuration of the documentation site (docs/).

Built by ``scripts/docs.sh`` (and so by ``scripts/test.sh``) in strict mode:
nitpicky, every warning an error. A link to a page or heading that does not
exist, or a file path in the text that names no file of the repository, fails
the build.
"""

from __future__ import annotations

import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
sys.path.insert(0, str(DOCS / "_ext"))

project = "vNPU Portal"
author = "vNPU Portal developers"
copyright = "vNPU Portal developers"

extensions = ["myst_parser", "repo_paths"]
source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "_ext"]

# Links to headings (`page.md#a-heading`) are checked like links to pages.
myst_heading_anchors = 3
myst_enable_extensions = ["colon_fence"]

nitpicky = True
html_theme = "alabaster"
html_title = "vNPU Portal"
html_static_path: list[str] = []
html_theme_options = {"description": "A control room for Ascend vNPU clusters"}
