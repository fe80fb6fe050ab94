"""harness.migrated: the first stack migrates a template, the others copy it
(issue 36: every stack migrated its own database, about 7 s of CPU each)."""

from __future__ import annotations

import sqlite3

import psycopg
import pytest

from harness import migrated
from harness.services import PrivatePostgres


def _fake_migrate(calls: list[str]):
    """Stands for manage.py migrate: one table with one row, wherever asked."""

    def migrate(url: str) -> None:
        calls.append(url)
        if url.startswith("sqlite:///"):
            with sqlite3.connect(url.removeprefix("sqlite:///")) as db:
                db.execute("CREATE TABLE done (n integer)")
                db.execute("INSERT INTO done VALUES (1)")
            return
        with psycopg.connect(url, autocommit=True) as db:
            db.execute("CREATE TABLE done (n integer)")
            db.execute("INSERT INTO done VALUES (1)")

    return migrate


def test_sqlite_stacks_copy_the_template_the_first_one_migrated(tmp_path, monkeypatch):
    monkeypatch.setattr(migrated, "SQLITE_TEMPLATES", tmp_path / "templates")
    calls: list[str] = []
    for name in ("a", "b", "c"):
        migrated.sqlite_copy(tmp_path / f"{name}.sqlite3", _fake_migrate(calls))
    assert len(calls) == 1
    assert [p.name for p in (tmp_path / "templates").glob("*.sqlite3")] == [
        f"{migrated.migrations_key()}.sqlite3"
    ]
    for name in ("a", "b", "c"):
        with sqlite3.connect(tmp_path / f"{name}.sqlite3") as db:
            assert db.execute("SELECT n FROM done").fetchall() == [(1,)]
    # each stack has its own copy: a write to one is not in the others
    with sqlite3.connect(tmp_path / "a.sqlite3") as db:
        db.execute("INSERT INTO done VALUES (2)")
    with sqlite3.connect(tmp_path / "b.sqlite3") as db:
        assert db.execute("SELECT count(*) FROM done").fetchone() == (1,)


def test_a_changed_migration_makes_a_new_template(tmp_path, monkeypatch):
    migrations = tmp_path / "apps" / "x" / "migrations"
    migrations.mkdir(parents=True)
    (migrations / "0001_initial.py").write_text("operations = []\n")
    monkeypatch.setattr(migrated, "ROOT", tmp_path)
    first = migrated.migrations_key()
    assert migrated.migrations_key() == first
    (migrations / "0002_more.py").write_text("operations = []\n")
    assert migrated.migrations_key() != first


@pytest.mark.slow
def test_postgres_stacks_copy_the_template_the_first_one_migrated(monkeypatch):
    # A key of this test's own, so that the run's real template is untouched.
    monkeypatch.setattr(migrated, "migrations_key", lambda: "test-template")
    server = PrivatePostgres()
    try:
        url = server.create_database("admin")
        calls: list[str] = []
        for name in ("one", "two"):
            migrated.postgres_copy(url, name, _fake_migrate(calls))
        assert len(calls) == 1
        assert calls[0].endswith("/vnpu_tpl_test-template_build")
        for name in ("one", "two"):
            db_url = url.rsplit("/", 1)[0] + f"/{name}"
            with psycopg.connect(db_url) as db:
                assert db.execute("SELECT n FROM done").fetchall() == [(1,)]
        # a stack's database made again starts from the template, not its old rows
        with psycopg.connect(url.rsplit("/", 1)[0] + "/one", autocommit=True) as db:
            db.execute("INSERT INTO done VALUES (2)")
        migrated.postgres_copy(url, "one", _fake_migrate(calls))
        with psycopg.connect(url.rsplit("/", 1)[0] + "/one") as db:
            assert db.execute("SELECT count(*) FROM done").fetchone() == (1,)
        assert len(calls) == 1
        # new migrations: a new template; the newest few others are kept
        # (other checkouts may share the server), older ones dropped
        monkeypatch.setattr(migrated, "KEEP_OTHER_TEMPLATES", 1)
        for key in ("test-newer", "test-newest"):
            monkeypatch.setattr(migrated, "migrations_key", lambda key=key: key)
            migrated.postgres_copy(url, "three", _fake_migrate(calls))
        assert len(calls) == 3
        with psycopg.connect(url) as db:
            names = db.execute(
                "SELECT datname FROM pg_database WHERE datname LIKE 'vnpu_tpl%'"
                " ORDER BY datname"
            ).fetchall()
        assert names == [("vnpu_tpl_test-newer",), ("vnpu_tpl_test-newest",)]
    finally:
        server.stop()
