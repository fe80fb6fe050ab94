"""Answering one request: public paths, authentication, the simulator's control
endpoints, discovery, authorization (and the request log), then the API."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import asdict
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from simcluster import (
    auth,
    discovery,
    errors,
    exporter,
    protobuf,
    rbac,
    resources,
    routing,
)
from simcluster.api import ApiRequest, ApiResponse
from simcluster.options import AuditEntry
from simcluster.store import Obj, dumps

log = logging.getLogger("simcluster")
PUBLIC_PATHS = frozenset({"/version", "/healthz", "/livez", "/readyz"})


class DispatchMixin:
    """``dispatch`` and what it needs: who the caller is and what they may do."""

    def dispatch(
        self, method: str, raw_path: str, headers: dict[str, str], body: bytes
    ) -> tuple[ApiResponse, Callable[[], None] | None]:
        """Answer one HTTP request (everything but the socket work)."""
        url = urlsplit(raw_path)
        path = url.path.rstrip("/") or "/"
        query = dict(parse_qsl(url.query, keep_blank_values=True))
        if path in PUBLIC_PATHS:
            if path == "/version":
                return ApiResponse(body=dumps(discovery.VERSION)), None
            return ApiResponse(body=b"ok"), None
        lowered = {k.lower(): v for k, v in headers.items()}
        if path.startswith(exporter.PREFIX):
            # The node exporters: no token, no faults, no request log (they
            # are other processes in a real cluster, not the API server).
            scheme, reached = urlsplit(self.url)[:2]
            return self.exporter.answer(
                method, path, lowered.get("host") or reached, scheme
            ), None
        user = self._user(lowered.get("authorization"))
        if path.startswith("/simcluster/"):
            return self._control(method, path, user, body)
        if self.faults.in_outage():
            down = errors.unavailable(
                "simcluster: the API server is down (simulated outage)"
            )
            down.headers = {}  # no Retry-After: clients must not simply wait it out
            raise down
        parts = [p for p in path.split("/") if p]
        found = self._discovery(method, path, parts)
        if found is not None:
            return ApiResponse(body=dumps(found)), None
        split = routing.split_group_version(parts)
        if split is None or not split[2]:
            raise errors.ApiError(
                404, "NotFound", "the server could not find the requested resource"
            )
        group, version, rest = split
        if group == "scheduling.volcano.sh" and not self.options.volcano_crds:
            raise errors.ApiError(
                404, "NotFound", "the server could not find the requested resource"
            )
        target = routing.route(method, group, version, rest, query)
        self._authorize(user, target, query)
        self.faults.before_request(write=target.verb in routing.WRITE_VERBS)
        content_type = lowered.get("content-type", "application/json")
        if (
            body
            and "json" not in content_type
            and "yaml" not in content_type
            and protobuf.MEDIA_TYPE not in content_type
        ):
            # CBOR and anything else; protobuf bodies are decoded in the Api.
            raise errors.ApiError(
                415,
                "UnsupportedMediaType",
                "the body of the request was in an unknown format - accepted media "
                "types include: application/json, application/yaml, "
                f"{protobuf.MEDIA_TYPE} ({content_type})",
            )
        request = ApiRequest(
            target.verb,
            target.res,
            target.namespace,
            target.name,
            target.subresource,
            query,
            body,
            lowered.get("content-type", "application/json"),
            user,
            self._listener_stop,
            lowered.get("accept", ""),
        )
        return self.api.handle(request), None

    def _user(self, authorization: str | None) -> str:
        if authorization and authorization.lower().startswith("bearer "):
            found = self._sa_tokens.get(authorization[7:].strip())
            if found:
                return found
        return self.tokens.user_for(authorization)

    def _authorize(
        self, user: str, target: routing.Route, query: dict[str, str]
    ) -> None:
        """Admin and read-only by their fixed rules, service accounts by RBAC; log it."""
        name = target.name or ""
        if not name and target.verb in ("list", "watch"):
            name = rbac.name_from_field_selector(query.get("fieldSelector", ""))
        attrs = rbac.Attributes(
            user=user,
            verb=target.verb,
            group=target.res.group,
            resource=target.res.plural,
            subresource=target.subresource or "",
            namespace=target.namespace or "",
            name=name,
        )
        if user.startswith(rbac.SA_PREFIX):
            allowed = rbac.authorize(self.store, attrs)
        else:
            allowed = user == "admin" or target.verb not in routing.WRITE_VERBS
        self.audit.append(
            AuditEntry(
                **asdict(attrs), allowed=allowed, dry_run=bool(query.get("dryRun"))
            )
        )
        if allowed:
            return
        if not user.startswith(rbac.SA_PREFIX):
            auth.check_write(
                user,
                target.verb,
                target.res.plural,
                target.res.group,
                target.namespace,
                target.name,
            )
        what = f"{attrs.resource}{'/' + attrs.subresource if attrs.subresource else ''}"
        named = f' "{name}"' if name else ""
        where = f' in the namespace "{attrs.namespace}"' if attrs.namespace else ""
        # kube-apiserver's NewForbidden names the group-qualified resource,
        # without its subresource: 'pods "p" is forbidden: ... "pods/log"'.
        qualified = f"{attrs.resource}.{attrs.group}" if attrs.group else attrs.resource
        raise errors.forbidden(
            f'{qualified}{named} is forbidden: User "{user}" cannot '
            f"{attrs.verb} resource "
            f'"{what}" in API group "{attrs.group}"{where}',
            {
                "name": name,
                "kind": attrs.resource,
                **({"group": attrs.group} if attrs.group else {}),
            },
        )

    def _discovery(
        self, method: str, path: str, parts: list[str]
    ) -> dict[str, Any] | None:
        if method != "GET":
            return None
        # Without its CRDs a real API server leaves Volcano out of discovery too.
        hidden = set() if self.options.volcano_crds else {"scheduling.volcano.sh"}
        if len(parts) >= 2 and parts[0] == "apis" and parts[1] in hidden:
            return None
        if path == "/api":
            return discovery.api_versions(f"{self.options.host}:{self.port}")
        if path == "/apis":
            listed = discovery.api_group_list()
            listed["groups"] = [g for g in listed["groups"] if g["name"] not in hidden]
            return listed
        if path == "/openapi/v3":
            return discovery.openapi_index()
        if path.startswith("/openapi/v3/"):
            gv = discovery.parse_openapi_path(path[len("/openapi/v3/") :])
            doc = discovery.openapi_document(*gv) if gv else None
            if doc is None:
                raise errors.ApiError(
                    404, "NotFound", "the server could not find the requested resource"
                )
            return doc
        if path.startswith("/openapi/"):
            raise errors.ApiError(
                404, "NotFound", "the server could not find the requested resource"
            )
        if len(parts) == 2 and parts[0] == "api":
            return discovery.resource_list("", parts[1])
        if len(parts) == 2 and parts[0] == "apis":
            return discovery.api_group(parts[1])
        if len(parts) == 3 and parts[0] == "apis":
            return discovery.resource_list(parts[1], parts[2])
        return None

    def _control(
        self, method: str, path: str, user: str, body: bytes
    ) -> tuple[ApiResponse, Callable[[], None] | None]:
        if user != "admin":
            raise errors.forbidden("simcluster control endpoints need the admin token")
        data: Obj = {}
        if body:
            try:
                data = json.loads(body)
            except ValueError:
                raise errors.bad_request("the body must be JSON") from None
        name = path[len("/simcluster/") :]
        if name == "faults" and method == "GET":
            return ApiResponse(body=dumps(asdict(self.faults.settings))), None
        if name == "faults" and method == "POST":
            return ApiResponse(body=dumps(asdict(self.set_faults(**data)))), None
        if name == "reset" and method == "POST":
            self.reset_faults()
            return ApiResponse(body=dumps(asdict(self.faults.settings))), None
        if name == "outage" and method == "POST":
            seconds = float(data.get("seconds", 5))
            mode = str(data.get("mode", "refuse"))
            if mode not in ("refuse", "503"):
                raise errors.bad_request("mode must be 'refuse' or '503'")
            reply = ApiResponse(
                202,
                dumps({"outage": {"seconds": seconds, "mode": mode}}),
                headers={"Connection": "close"},
            )
            return reply, lambda: self.outage(seconds, mode)
        if name == "chips" and method == "POST":
            self.set_chip_health(
                str(data.get("node")),
                int(data.get("index", 0)),
                bool(data.get("healthy", True)),
            )
            return ApiResponse(body=dumps({"ok": True})), None
        if name == "exporter-chips" and method == "POST":
            healthy = data.get("healthy")
            self.set_exporter_chip_health(
                str(data.get("node")),
                int(data.get("index", 0)),
                None if healthy is None else bool(healthy),
            )
            return ApiResponse(body=dumps({"ok": True})), None
        if name == "tokens" and method == "POST":
            namespace, account = (
                str(data.get("namespace", "")),
                str(data.get("name", "")),
            )
            if not namespace or not account:
                raise errors.bad_request("namespace and name are required")
            token = self.service_account_token(namespace, account)
            user = rbac.service_account_user(namespace, account)
            return ApiResponse(body=dumps({"token": token, "user": user})), None
        if name == "expire-continue" and method == "POST":
            self.api.snapshots.clear()
            return ApiResponse(body=dumps({"ok": True})), None
        if name == "state" and method == "GET":
            counts = {r.key: self.store.count(r) for r in resources.RESOURCES}
            return ApiResponse(
                body=dumps(
                    {
                        "resourceVersion": str(self.store.rv),
                        "compactedResourceVersion": str(self.store.compacted_rv),
                        "counts": counts,
                        "injected": dict(self.faults.injected),
                    }
                )
            ), None
        raise errors.ApiError(404, "NotFound", f"no control endpoint {method} {path}")
