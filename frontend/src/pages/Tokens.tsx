// API tokens (admins): the tokens of `/api/tokens/`; create one for a user or a
// new service account (role, queues, expiry), rotate it, revoke it. The
// plaintext of a created or rotated token is shown once: the portal keeps
// only its hash.

import { useState } from "react";
import { api } from "../api/client";
import type { ApiToken, ApiTokenIssued, Page, Role } from "../api/types";
import { Badge, CopyText, ErrorNote, Field, Loading, Modal, Pager } from "../components/ui";
import { errorText, submitFailure } from "../lib/errors";
import { ago, dateTime } from "../lib/format";
import { useQueryParam } from "../lib/router";
import { useApi, useNow } from "../lib/useApi";
import { useSession } from "../state/session";

const PAGE_SIZE = 50;
const ROLES: readonly Role[] = ["ci", "viewer", "operator", "admin"];
const FIELDS = ["username", "name", "role", "queues", "expires_at"] as const;

/** Queues typed as "ci, nightly" -> ["ci", "nightly"]. */
export function parseQueues(text: string): string[] {
  return text
    .split(/[\s,]+/)
    .map((q) => q.trim())
    .filter(Boolean);
}

function tokenState(t: ApiToken, now: number): { kind: string; text: string } {
  if (t.revoked_at) return { kind: "fail", text: "revoked" };
  if (t.expires_at && Date.parse(t.expires_at) <= now) return { kind: "warn", text: "expired" };
  return { kind: "ok", text: "active" };
}

/** The plaintext of a new or rotated token: shown here once, with a copy button. */
export function IssuedToken({ issued, rotated, onClose }: { issued: ApiTokenIssued; rotated: boolean; onClose: () => void }) {
  return (
    <Modal
      title={rotated ? `Token rotated: ${issued.name || issued.username}` : `Token created: ${issued.name || issued.username}`}
      onClose={onClose}
      footer={
        <button className="btn primary" onClick={onClose} data-testid="issued-done">
          I have stored it
        </button>
      }
    >
      <p>
        <b>Copy this token now: you will not see it again.</b> The portal keeps only its hash.
        {rotated && " The old token no longer works."}
      </p>
      <div data-testid="issued-token" className="issued-token">
        <CopyText value={issued.token} testId="issued-copy" />
      </div>
      <p className="muted">
        Use it as <span className="mono">Authorization: Bearer …</span>; it acts as <b>{issued.username}</b> with the role{" "}
        <b>{issued.role ?? "none"}</b>
        {issued.queues.length ? `, limited to the queues ${issued.queues.join(", ")}` : ", in every queue (an admin's token)"}.
      </p>
    </Modal>
  );
}

export function CreateTokenForm({ onClose, onIssued }: { onClose: () => void; onIssued: (t: ApiTokenIssued) => void }) {
  const [username, setUsername] = useState("");
  const [name, setName] = useState("");
  const [role, setRole] = useState<Role>("ci");
  const [queues, setQueues] = useState("");
  const [expires, setExpires] = useState("");
  const [errors, setErrors] = useState<Record<string, string[]>>({});
  const [formError, setFormError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async () => {
    setBusy(true);
    setErrors({});
    setFormError(null);
    try {
      const issued = await api.post<ApiTokenIssued>("/api/tokens/", {
        username: username.trim(),
        name: name.trim(),
        role,
        queues: parseQueues(queues),
        expires_at: expires ? new Date(expires).toISOString() : null,
      });
      onIssued(issued);
    } catch (e) {
      const failure = submitFailure(e, FIELDS);
      setErrors(failure.fields);
      setFormError(failure.form);
    } finally {
      setBusy(false);
    }
  };
  return (
    <Modal
      title="New API token"
      onClose={onClose}
      footer={
        <>
          <button className="btn" onClick={onClose}>
            Close
          </button>
          <button className="btn primary" disabled={busy} onClick={() => void submit()} data-testid="token-submit">
            Create token
          </button>
        </>
      }
    >
      {formError && (
        <div className="field-error" role="alert" data-testid="token-error">
          {formError}
        </div>
      )}
      <div className="form-grid">
        <Field label="User" errors={errors.username} hint="an existing user, or a new service account">
          <input className="input" value={username} onChange={(e) => setUsername(e.target.value)} aria-label="user" data-testid="token-username" />
        </Field>
        <Field label="Name" errors={errors.name} hint="what it is for, e.g. nightly pipeline">
          <input className="input" value={name} onChange={(e) => setName(e.target.value)} aria-label="name" data-testid="token-name" />
        </Field>
        <Field label="Role" errors={errors.role} hint="ci: submit and cancel its own requests, read the rest">
          <select className="select" value={role} onChange={(e) => setRole(e.target.value as Role)} aria-label="role" data-testid="token-role">
            {ROLES.map((r) => (
              <option key={r}>{r}</option>
            ))}
          </select>
        </Field>
        <Field label="Queues" errors={errors.queues} hint="cluster/queue (or a queue name one cluster has), comma-separated; required unless the role is admin">
          <input className="input" value={queues} onChange={(e) => setQueues(e.target.value)} aria-label="queues" data-testid="token-queues" />
        </Field>
        <Field label="Expires" errors={errors.expires_at} hint="empty: never">
          <input className="input" type="datetime-local" value={expires} onChange={(e) => setExpires(e.target.value)} aria-label="expires" data-testid="token-expires" />
        </Field>
      </div>
      <p className="muted">The role is the user's: giving an existing user a token with another role changes their role.</p>
    </Modal>
  );
}

export function TokensPage() {
  const { can } = useSession();
  if (!can("admin")) {
    return (
      <div className="panel">
        <div className="empty" data-testid="admins-only">
          API tokens are for admins only.
        </div>
      </div>
    );
  }
  return <TokensList />;
}

function TokensList() {
  const now = useNow(10_000);
  const [pageParam, setPage] = useQueryParam("page", "1");
  const page = Math.max(1, Number(pageParam) || 1);
  const tokens = useApi((signal) => api.get<Page<ApiToken>>(`/api/tokens/?page=${page}&page_size=${PAGE_SIZE}`, signal), [page]);
  const { reload } = tokens;
  const [creating, setCreating] = useState(false);
  const [issued, setIssued] = useState<{ token: ApiTokenIssued; rotated: boolean } | null>(null);
  const [actionError, setActionError] = useState<{ id: number; text: string } | null>(null);
  const [busy, setBusy] = useState<number | null>(null);

  const act = async (t: ApiToken, verb: "rotate" | "revoke") => {
    const label = t.name || t.username;
    const question =
      verb === "rotate"
        ? `Rotate the token "${label}"? A new token is shown once; the old one stops working at once.`
        : `Revoke the token "${label}"? Pipelines using it get 401 from now on.`;
    if (!window.confirm(question)) return;
    setBusy(t.id);
    setActionError(null);
    try {
      if (verb === "rotate") {
        const fresh = await api.post<ApiTokenIssued>(`/api/tokens/${t.id}/rotate/`);
        setIssued({ token: fresh, rotated: true });
      } else {
        await api.post(`/api/tokens/${t.id}/revoke/`);
      }
      reload();
    } catch (e) {
      setActionError({ id: t.id, text: errorText(e) });
    } finally {
      setBusy(null);
    }
  };

  return (
    <>
      <div className="page-head">
        <h1>API tokens</h1>
        <span className="sub">{tokens.data ? `${tokens.data.count.toLocaleString()} tokens` : ""}</span>
      </div>
      <div className="panel">
        <div className="toolbar">
          <span className="muted">Pipelines and scripts authenticate with a token: Authorization: Bearer …</span>
          <span className="grow" />
          {tokens.loading && <span className="spinner" />}
          <button className="btn primary" onClick={() => setCreating(true)} data-testid="token-new">
            New token
          </button>
        </div>
        <ErrorNote error={tokens.error} onRetry={reload} />
        {!tokens.data && tokens.loading ? (
          <Loading />
        ) : tokens.data && tokens.data.results.length === 0 ? (
          <div className="empty">No API token yet.</div>
        ) : (
          <div className="table-wrap">
            <table className="data" data-testid="tokens-table">
              <thead>
                <tr>
                  <th>Name</th>
                  <th>User</th>
                  <th>Role</th>
                  <th>Queues</th>
                  <th>Prefix</th>
                  <th>Created</th>
                  <th>Last used</th>
                  <th>Expires</th>
                  <th>State</th>
                  <th />
                </tr>
              </thead>
              <tbody>
                {tokens.data?.results.map((t) => {
                  const state = tokenState(t, now);
                  return (
                    <tr key={t.id} data-testid={`token-${t.id}`}>
                      <td>{t.name || <span className="muted">–</span>}</td>
                      <td>{t.username}</td>
                      <td>
                        <Badge kind="role">{t.role ?? "none"}</Badge>
                      </td>
                      <td>{t.queues.length ? t.queues.join(", ") : <span className="muted">any</span>}</td>
                      <td className="mono">{t.prefix}</td>
                      <td className="nowrap" title={dateTime(t.created_at)}>
                        {ago(t.created_at, now)}
                      </td>
                      <td className="nowrap" title={dateTime(t.last_used_at)}>
                        {t.last_used_at ? ago(t.last_used_at, now) : <span className="muted">never</span>}
                      </td>
                      <td className="nowrap">{t.expires_at ? dateTime(t.expires_at) : <span className="muted">never</span>}</td>
                      <td title={t.revoked_at ? `revoked ${dateTime(t.revoked_at)}` : undefined}>
                        <Badge kind={state.kind}>{state.text}</Badge>
                        {actionError?.id === t.id && (
                          <div className="field-error" role="alert">
                            {actionError.text}
                          </div>
                        )}
                      </td>
                      <td className="nowrap">
                        {state.text === "active" && (
                          <>
                            <button className="btn small" disabled={busy === t.id} onClick={() => void act(t, "rotate")} data-testid={`rotate-${t.id}`}>
                              Rotate
                            </button>{" "}
                            <button className="btn small danger" disabled={busy === t.id} onClick={() => void act(t, "revoke")} data-testid={`revoke-${t.id}`}>
                              Revoke
                            </button>
                          </>
                        )}
                      </td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </div>
        )}
        {tokens.data && tokens.data.count > 0 && <Pager page={page} count={tokens.data.count} pageSize={PAGE_SIZE} onPage={(p) => setPage(String(p))} />}
      </div>
      {creating && (
        <CreateTokenForm
          onClose={() => setCreating(false)}
          onIssued={(t) => {
            setCreating(false);
            setIssued({ token: t, rotated: false });
            reload();
          }}
        />
      )}
      {issued && <IssuedToken issued={issued.token} rotated={issued.rotated} onClose={() => setIssued(null)} />}
    </>
  );
}
