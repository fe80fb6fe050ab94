"""A real OpenID provider for the sign-in tests: ORY Hydra and a company's login page.

Hydra (built by kubestack from the Go module, ``kubestack.build.hydra_bin_dir``)
is a certified OpenID provider that has no users of its own: it sends the
browser to a *login and consent app* and asks it, over its admin API, who
signed in and what the ID token says about them. :class:`Directory` is that
app here, a small HTTP server in the test's process, playing a company's
login page: people with passwords and groups (which a test may change, as an
IT department would), put in the ID token's ``groups`` claim at consent.

``Hydra(directory, folder).start()`` runs hydra with an in-memory store
(``DSN=memory``) on free ports of 127.0.0.1 and returns once it is ready and
has its signing keys; ``create_client`` registers an OAuth2 client through the
admin API. Every failure to start carries the end of its log. Ports, the
process and the waits are the harness's (``harness.processes``).
"""

from __future__ import annotations

import contextlib
import html
import json
import secrets
import threading
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from harness import processes
from harness.processes import ProcessError, WaitTimeout, free_port
from harness.servers import LoggedServer

LOG_TAIL = 4000


class HydraError(RuntimeError):
    """Hydra did not start, or its admin API refused a call."""


@dataclass
class Person:
    """Someone at the company: a password and the groups IT put them in
    (None: the ID token carries no groups claim at all)."""

    password: str
    groups: list[str] | None
    email: str = ""


@dataclass
class Directory:
    """The company's people and its login page (Hydra's login and consent app).

    ``people`` may be changed while it runs: groups are read at each consent,
    as a real directory is read at each sign-in.
    """

    people: dict[str, Person] = field(default_factory=dict)
    admin_url: str = ""  # hydra's admin API, set by Hydra.start
    port: int = 0
    _server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def subject_of(self, username: str) -> str:
        """The ``sub`` hydra issues for ``username`` (not the name: the portal
        must tell the two apart)."""
        return f"uid-{username}"

    def start(self) -> None:
        directory = self

        class Handler(_LoginPages):
            pages = directory

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = int(self._server.server_address[1])
        threading.Thread(
            target=self._server.serve_forever, name="idp-login-app", daemon=True
        ).start()

    def stop(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            server.shutdown()
            server.server_close()

    # -- hydra's admin API --------------------------------------------------------
    def admin(self, method: str, path: str, body: Any = None) -> Any:
        """Call hydra's admin API; the answer's JSON."""
        return admin_call(self.admin_url, method, path, body)


def admin_call(base: str, method: str, path: str, body: Any = None) -> Any:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(  # noqa: S310 - hydra on loopback
        base + path,
        data=data,
        method=method,
        headers={"Content-Type": "application/json", "Accept": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=15) as answer:  # noqa: S310
            text = answer.read().decode()
    except urllib.error.HTTPError as error:
        raise HydraError(
            f"hydra {method} {path}: {error.code} {error.read().decode()[:500]}"
        ) from None
    return json.loads(text) if text else None


_FORM = """<!doctype html><html><head><title>Example Corp sign-in</title></head>
<body><h1>Example Corp</h1><p>Sign in with your company account.</p>
{error}<form method="post" action="/login">
<input type="hidden" name="challenge" value="{challenge}">
<label>Company username <input id="idp-username" name="username"></label>
<label>Company password <input id="idp-password" name="password" type="password"></label>
<button id="idp-submit" name="action" value="login" type="submit">Sign in at Example Corp</button>
<button id="idp-cancel" name="action" value="cancel" type="submit">Cancel</button>
</form></body></html>"""


class _LoginPages(BaseHTTPRequestHandler):
    """GET /login, POST /login, GET /consent, GET /logout: hydra's three challenges."""

    pages: Directory

    def log_message(self, format: str, *args: Any) -> None:
        return  # quiet: hydra's log tells the flow

    def _query(self) -> dict[str, str]:
        query = urllib.parse.urlsplit(self.path).query
        return {k: v[0] for k, v in urllib.parse.parse_qs(query).items()}

    def _redirect(self, location: str) -> None:
        self.send_response(302)
        self.send_header("Location", location)
        self.end_headers()

    def _form(self, challenge: str, error: str = "") -> None:
        shown = f'<p id="idp-error">{html.escape(error)}</p>' if error else ""
        body = _FORM.format(error=shown, challenge=html.escape(challenge)).encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        path = urllib.parse.urlsplit(self.path).path
        query = self._query()
        try:
            if path == "/login":
                self._login_page(query.get("login_challenge", ""))
            elif path == "/consent":
                self._consent(query.get("consent_challenge", ""))
            elif path == "/logout":
                self._logout(query.get("logout_challenge", ""))
            else:
                self.send_error(404)
        except HydraError as error:
            self.send_error(502, str(error)[:200])

    def _login_page(self, challenge: str) -> None:
        flow = self.pages.admin(
            "GET", f"/admin/oauth2/auth/requests/login?login_challenge={_q(challenge)}"
        )
        if flow.get("skip"):  # hydra remembers this browser's sign-in
            self._accept_login(challenge, str(flow["subject"]))
            return
        self._form(challenge)

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        form = urllib.parse.parse_qs(self.rfile.read(length).decode())
        value = {k: v[0] for k, v in form.items()}
        challenge = value.get("challenge", "")
        try:
            if value.get("action") == "cancel":
                answer = self.pages.admin(
                    "PUT",
                    f"/admin/oauth2/auth/requests/login/reject?login_challenge={_q(challenge)}",
                    {"error": "access_denied", "error_description": "cancelled"},
                )
                self._redirect(answer["redirect_to"])
                return
            name = value.get("username", "")
            person = self.pages.people.get(name)
            if person is None or not secrets.compare_digest(
                person.password, value.get("password", "")
            ):
                self._form(challenge, "Wrong company username or password.")
                return
            self._accept_login(challenge, self.pages.subject_of(name))
        except HydraError as error:
            self.send_error(502, str(error)[:200])

    def _accept_login(self, challenge: str, subject: str) -> None:
        answer = self.pages.admin(
            "PUT",
            f"/admin/oauth2/auth/requests/login/accept?login_challenge={_q(challenge)}",
            {"subject": subject, "remember": True, "remember_for": 3600},
        )
        self._redirect(answer["redirect_to"])

    def _consent(self, challenge: str) -> None:
        flow = self.pages.admin(
            "GET",
            f"/admin/oauth2/auth/requests/consent?consent_challenge={_q(challenge)}",
        )
        subject = str(flow["subject"])
        name = subject.removeprefix("uid-")
        person = self.pages.people.get(name)
        id_token: dict[str, Any] = {"preferred_username": name}
        if person is not None:
            if person.groups is not None:
                id_token["groups"] = list(person.groups)
            if person.email:
                id_token["email"] = person.email
        answer = self.pages.admin(
            "PUT",
            f"/admin/oauth2/auth/requests/consent/accept?consent_challenge={_q(challenge)}",
            {
                "grant_scope": flow.get("requested_scope") or [],
                "grant_access_token_audience": flow.get(
                    "requested_access_token_audience"
                )
                or [],
                "remember": False,
                "session": {"id_token": id_token},
            },
        )
        self._redirect(answer["redirect_to"])

    def _logout(self, challenge: str) -> None:
        answer = self.pages.admin(
            "PUT",
            f"/admin/oauth2/auth/requests/logout/accept?logout_challenge={_q(challenge)}",
        )
        self._redirect(answer["redirect_to"])


def _q(value: str) -> str:
    return urllib.parse.quote(value, safe="")


@dataclass(frozen=True)
class Client:
    """An OAuth2 client registered at hydra."""

    client_id: str
    client_secret: str


class Hydra(LoggedServer):
    """One hydra process (``serve all``) with ``directory`` as its login app."""

    def __init__(
        self,
        directory: Directory,
        folder: Path,
        executable: str | Path,
        settings: dict[str, str] | None = None,
    ) -> None:
        """``settings``: more of hydra's environment (``TTL_AUTH_CODE``...)."""
        self.settings = dict(settings or {})
        self.directory = directory
        self.dir = folder
        self.executable = str(executable)
        self.public_port = 0
        self.admin_port = 0
        self.proc: processes.Process | None = None
        self.log_path = folder / "hydra.log"

    @property
    def issuer(self) -> str:
        """The issuer (``iss``) and public URL: discovery, authorize, token."""
        return f"http://127.0.0.1:{self.public_port}"

    @property
    def admin_url(self) -> str:
        return f"http://127.0.0.1:{self.admin_port}"

    def start(self, timeout: float = 60) -> Hydra:
        """Start it; return once it answers ready and its signing keys exist."""
        self.dir.mkdir(parents=True, exist_ok=True)
        if not self.directory.port:
            self.directory.start()
        # Another process may take a free port before hydra binds it.
        for attempt in range(3):
            before = len(self.log())
            self._launch()
            try:
                self._wait(self._ready, "hydra to be ready", timeout)
                break
            except HydraError:
                taken = "address already in use" in self.log()[before:]
                super().stop()
                if not taken or attempt == 2:
                    raise
        self.directory.admin_url = self.admin_url
        # The first discovery makes the ID token's RSA keys (seconds): now,
        # not in the first sign-in a test times.
        self._wait(self._keys_made, "hydra's signing keys", timeout)
        return self

    def stop(self, grace: float = 10) -> None:
        super().stop(grace)
        self.directory.stop()

    def _launch(self) -> None:
        self.public_port, self.admin_port = free_port(), free_port()
        login = self.directory.url
        env = {
            "DSN": "memory",
            "URLS_SELF_ISSUER": f"http://127.0.0.1:{self.public_port}",
            "URLS_LOGIN": f"{login}/login",
            "URLS_CONSENT": f"{login}/consent",
            "URLS_LOGOUT": f"{login}/logout",
            "SECRETS_SYSTEM": secrets.token_hex(16),
            "SERVE_PUBLIC_HOST": "127.0.0.1",
            "SERVE_PUBLIC_PORT": str(self.public_port),
            "SERVE_ADMIN_HOST": "127.0.0.1",
            "SERVE_ADMIN_PORT": str(self.admin_port),
            "LOG_LEAK_SENSITIVE_VALUES": "false",
            "PATH": "/usr/bin:/bin",
            **self.settings,
        }
        self.proc = processes.start(
            "hydra",
            [self.executable, "serve", "all", "--dev"],
            self.dir,
            env=env,
            cwd=self.dir,
            die_with_parent=True,
        )

    def _wait(self, check: Any, what: str, timeout: float) -> Any:
        try:
            return processes.wait_until(
                check,
                what,
                timeout,
                watched=[self.proc] if self.proc else [],
                ignore=(OSError,),
            )
        except (ProcessError, WaitTimeout) as exc:
            raise HydraError(
                f"{exc}\n--- hydra log ---\n{self.log(LOG_TAIL)}"
            ) from None

    def _ready(self) -> bool:
        return processes.http_status(f"{self.admin_url}/health/ready") == 200

    def _keys_made(self) -> bool:
        url = f"{self.issuer}/.well-known/jwks.json"
        with urllib.request.urlopen(url, timeout=30) as answer:  # noqa: S310 - loopback
            return bool(json.load(answer).get("keys"))

    def create_client(
        self,
        redirect_uris: list[str],
        post_logout_redirect_uris: list[str] = (),  # type: ignore[assignment]
        scope: str = "openid profile email",
    ) -> Client:
        """Register a confidential client (code flow, secret in Basic auth)."""
        secret = secrets.token_urlsafe(24)
        made = admin_call(
            self.admin_url,
            "POST",
            "/admin/clients",
            {
                "client_secret": secret,
                "grant_types": ["authorization_code", "refresh_token"],
                "response_types": ["code"],
                "scope": scope,
                "redirect_uris": list(redirect_uris),
                "post_logout_redirect_uris": list(post_logout_redirect_uris),
                "token_endpoint_auth_method": "client_secret_basic",
            },
        )
        return Client(str(made["client_id"]), secret)

    def revoke_sessions(self, subject: str) -> None:
        """End hydra's remembered sign-in of ``subject`` (as an IT department would)."""
        with contextlib.suppress(HydraError):
            admin_call(
                self.admin_url,
                "DELETE",
                f"/admin/oauth2/auth/sessions/login?subject={_q(subject)}",
            )
