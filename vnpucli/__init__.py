"""``vnpu``: run a job on a vNPU through the portal's REST API, from a CI pipeline.

Standard library only (no Django, no settings): it reads ``VNPU_URL`` and
``VNPU_TOKEN`` and talks HTTP. The modules, from the ground up:

- ``exitcodes``: the exit codes and how a finished request maps to one;
- ``client``: HTTP calls, and the portal's refusals as :class:`PortalError`;
- ``logs``: reading a job's log, following it and resuming a cut stream
  without duplicating or dropping a line;
- ``show``: one-line and multi-line descriptions of a request;
- ``commands``: ``run``, ``wait``, ``logs``, ``release``, ``status``, ``ls``;
- ``main``: the argument parser and the console script's entry point.
"""
