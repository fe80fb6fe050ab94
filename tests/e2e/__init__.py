"""The browser tests: a package, so that their package-scoped fixtures (the
portal, Chromium) end with the last of them (tests/e2e/conftest.py)."""
