"""A Sphinx check: the file paths the pages name exist in the repository.

A link to a missing page is already a warning (and so an error in the strict
build). This adds the paths written as inline code, as in
``apps/scheduling/passes.py``: a path under one of the repository's top-level
folders must name a file or folder that exists, so a moved or deleted module
fails the docs build instead of leaving the text stale. The pages must also
not lean on anything outside the repository (a sibling checkout, a path on
one machine): every reader has only the repository.
"""

from __future__ import annotations

import re
from pathlib import Path

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util import logging

logger = logging.getLogger(__name__)

ROOT = Path(__file__).resolve().parents[2]
# The folders of the repository a path in the text may start with.
TOP = (
    "apps",
    "bench",
    "deploy",
    "docker",
    "docs",
    "examples",
    "frontend",
    "harness",
    "kubestack",
    "locale",
    "scripts",
    "simcluster",
    "tests",
    "vnpucli",
    "vnpuportal",
    ".ci",
)
PATH = re.compile(r"^(?:\.ci|[a-z]+)/[\w./-]*$")
# Placeholders and globs name no single file: `frontend/src/pages/*.tsx`.
PLACEHOLDER = re.compile(r"[<>*{}$]|\.\.\.")
# Build outputs a path may name though no checkout has them before a build.
GENERATED = ("frontend/dist",)
# A sibling checkout, or one machine's layout (in pieces, so that the test
# looking for such references in every file does not find this one).
OUTSIDE = re.compile(
    r"(?:^|[\s`(])(?:\.\./)+" + "shared/" + "|shared/" + "reference/" + "|/" + "work/"
)


def _repo_path(text: str) -> str | None:
    candidate = text.split("::", 1)[0].strip()
    if PLACEHOLDER.search(candidate) or not PATH.match(candidate):
        return None
    if candidate.split("/", 1)[0] not in TOP:
        return None
    candidate = candidate.rstrip("/")
    if candidate.startswith(GENERATED):
        return None
    return candidate


def check_paths(app: Sphinx, doctree: nodes.document) -> None:
    for node in doctree.findall(nodes.literal):
        path = _repo_path(node.astext())
        if path and not (ROOT / path).exists():
            logger.warning(
                "names %s, which is not in the repository",
                path,
                location=node,
                type="repo_paths",
                subtype="missing",
            )
    for node in doctree.findall(nodes.Text):
        if OUTSIDE.search(node.astext()):
            logger.warning(
                "points outside the repository: %r",
                node.astext()[:80],
                location=node.parent,
                type="repo_paths",
                subtype="outside",
            )


def setup(app: Sphinx) -> dict[str, object]:
    app.connect("doctree-read", check_paths)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
