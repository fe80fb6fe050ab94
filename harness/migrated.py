"""A migrated database, made once per set of migrations and copied after that.

Every ``Stack`` used to migrate a fresh database: about 7 s of CPU each, many
times a CI run (issue 36). Now the first stack of a run migrates a template
and every stack after it copies it: ``CREATE DATABASE ... TEMPLATE`` on
PostgreSQL, a file copy for SQLite. The template is named by a hash of every
migration file and of Django's version, so a changed migration makes a new
one; building it is serialised (an advisory lock on PostgreSQL, a file lock
for SQLite), so parallel test workers build it once.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import shutil
import sqlite3
import urllib.parse
from collections.abc import Callable, Iterator
from pathlib import Path

import django
import psycopg

ROOT = Path(__file__).resolve().parents[1]
SQLITE_TEMPLATES = ROOT / "var" / "db-templates"
# pg_advisory_lock's key for building and copying templates (any fixed number).
PG_LOCK_KEY = 0x76_6E_70_75  # "vnpu"

# Templates of other migrations kept on a shared PostgreSQL server.
KEEP_OTHER_TEMPLATES = 3

# Migrates the database at the URL given (the stack's manage.py migrate).
Migrate = Callable[[str], None]


def migrations_key() -> str:
    """A short hash of every migration file and of Django's version."""
    digest = hashlib.sha256(django.get_version().encode())
    for path in sorted(ROOT.glob("apps/*/migrations/*.py")):
        digest.update(str(path.relative_to(ROOT)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def sqlite_copy(target: Path, migrate: Migrate) -> None:
    """Make ``target`` a migrated SQLite database (a copy of the template)."""
    SQLITE_TEMPLATES.mkdir(parents=True, exist_ok=True)
    template = SQLITE_TEMPLATES / f"{migrations_key()}.sqlite3"
    with _file_lock(SQLITE_TEMPLATES / ".lock"):
        if not template.exists():
            building = template.with_suffix(f".{os.getpid()}.building")
            _sqlite_unlink(building)
            migrate(f"sqlite:///{building}")
            # The portal's SQLite runs in WAL mode: fold the log into the file
            # before moving it, or the copy would miss what the log held.
            with contextlib.closing(sqlite3.connect(building)) as db:
                db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                db.execute("PRAGMA journal_mode=DELETE")
            building.replace(template)
            # Templates of other migrations are of no more use here.
            for old in SQLITE_TEMPLATES.glob("*.sqlite3*"):
                if old != template:
                    old.unlink(missing_ok=True)
    shutil.copyfile(template, target)


def postgres_copy(server_url: str, name: str, migrate: Migrate) -> None:
    """Create database ``name`` on ``server_url``'s server as a migrated copy
    of the template (dropping an old ``name`` first)."""
    template = f"vnpu_tpl_{migrations_key()}"
    with psycopg.connect(
        _database_url(server_url, "postgres"), autocommit=True
    ) as admin:
        admin.execute("SELECT pg_advisory_lock(%s)", (PG_LOCK_KEY,))
        try:
            found = admin.execute(
                "SELECT 1 FROM pg_database WHERE datname = %s", (template,)
            ).fetchone()
            if found is None:
                building = f"{template}_build"
                # WITH (FORCE): a build whose worker was killed may have left
                # its migrate connected.
                admin.execute(f'DROP DATABASE IF EXISTS "{building}" WITH (FORCE)')
                admin.execute(f'CREATE DATABASE "{building}"')
                migrate(_database_url(server_url, building))
                admin.execute(f'ALTER DATABASE "{building}" RENAME TO "{template}"')
                _drop_other_templates(admin, template)
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            admin.execute(f'CREATE DATABASE "{name}" TEMPLATE "{template}"')
        finally:
            admin.execute("SELECT pg_advisory_unlock(%s)", (PG_LOCK_KEY,))


def drop_database(server_url: str, name: str) -> None:
    """Drop database ``name`` on ``server_url``'s server, connections and all."""
    with psycopg.connect(
        _database_url(server_url, "postgres"), autocommit=True
    ) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _drop_other_templates(admin: psycopg.Connection, template: str) -> None:
    """Keep the newest few templates of other migrations (other checkouts,
    other branches may share this server) and drop the older ones; one being
    copied now is left for next time."""
    rows = admin.execute(
        "SELECT datname FROM pg_database WHERE datname LIKE 'vnpu\\_tpl\\_%%'"
        " AND datname NOT LIKE '%%\\_build' AND datname <> %s ORDER BY oid DESC",
        (template,),
    ).fetchall()
    for (name,) in rows[KEEP_OTHER_TEMPLATES:]:
        with contextlib.suppress(psycopg.errors.ObjectInUse):
            admin.execute(f'DROP DATABASE IF EXISTS "{name}"')


def _sqlite_unlink(path: Path) -> None:
    for suffix in ("", "-wal", "-shm", "-journal"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)


def _database_url(server_url: str, name: str) -> str:
    base = urllib.parse.urlsplit(server_url)
    return urllib.parse.urlunsplit(base._replace(path=f"/{name}"))


@contextlib.contextmanager
def _file_lock(path: Path) -> Iterator[None]:
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
