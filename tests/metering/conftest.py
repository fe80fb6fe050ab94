"""The usage and cost tests use ``synced`` (tests/conftest.py): the ``sim`` cluster synced."""
