"""Nothing in the repository points at a file outside it.

A reader has only the repository: a comment, docstring or page that sends
them to a sibling checkout or to a path on one developer's machine sends them
nowhere. The documentation build checks the pages' links and paths
(docs/_ext/repo_paths.py); this checks every tracked text file, code
included.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Written in pieces so that this file does not match itself.
OUTSIDE = re.compile(
    "|".join(
        [
            r"\.\./" + "shared/",  # a sibling folder of the checkout
            "shared/" + "reference/",
            "shared/" + "fixtures",
            "shared/" + "upstream",
            "/" + "work/",  # one machine's layout
            "ascend-vnpu-" + "facts",  # research notes kept outside
            "000_49" + "cac591b799c8e5",
        ]
    )
)
BINARY = {".png", ".svg", ".ico", ".woff", ".woff2", ".gz", ".tgz"}
# The one input a build looks for beside the checkout, as a last resort after
# $HAMI_SRC and the cache (kubestack/hamibuild.py): where it is looked for is
# documented where the build is, not a page sent to.
BUILD_INPUT_LOOKUP = re.compile("shared/" + r"upstream/`+ beside the\b")


def _tracked_text_files() -> list[Path]:
    listed = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout.decode()
    paths = [ROOT / name for name in listed.split("\0") if name]
    return [p for p in paths if p.suffix not in BINARY and p.is_file()]


def test_the_pattern_finds_what_it_must():
    # Given the kinds of reference the repository once had
    # Then each is caught, and the portal's own paths are not
    assert OUTSIDE.search("See ``../" + "shared/" + "reference/facts.md``")
    assert OUTSIDE.search("in `shared/" + "reference/real-control-plane.md`")
    assert not OUTSIDE.search("docs/scheduler-behaviour.md")
    assert not OUTSIDE.search("/shared/simcluster.kubeconfig")  # a container volume


def test_no_tracked_file_points_outside_the_repository():
    found = []
    for path in _tracked_text_files():
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        for number, line in enumerate(text.splitlines(), 1):
            if OUTSIDE.search(line) and not BUILD_INPUT_LOOKUP.search(line):
                found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert found == []
