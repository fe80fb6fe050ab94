// API tokens (admins): the tokens of `/api/tokens/`; create one for a user or a
// new service account (role, queues, expiry), rotate it, revoke it. The
// plaintext of a created or rotated token is shown once: the portal keeps
// only its hash.

import { useState } from "react";
import { api } from "../api/client";
import type { ApiToken, ApiTokenIssued, Page, Role } from "../api/types";
import { Badge, CopyText, ErrorNote, Field, Loading, Modal, Pager } from "../components/ui";
import { useRichT } from "../i18n/rich";
import { useT } from "../i18n/I18nProvider";
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

type TokenState = "revoked" | "expired" | "active";

function tokenState(token: ApiToken, now: number): { kind: string; state: TokenState } {
  if (token.revoked_at) return { kind: "fail", state: "revoked" };
  if (token.expires_at && Date.parse(token.expires_at) <= now) return { kind: "warn", state: "expired" };
  return { kind: "ok", state: "active" };
}

/** The plaintext of a new or rotated token: shown here once, with a copy button. */
export function IssuedToken({ issued, rotated, onClose }: { issued: ApiTokenIssued; rotated: boolean; onClose: () => void }) {
  const t = useT();
  const rich = useRichT();
  const name = issued.name || issued.username;
  const usage = { user: issued.username, role: issued.role ? t(`roles.${issued.role}`) : t("tokens.noRole"), queues: issued.queues.join(", ") };
  return (
    <Modal
      title={rotated ? t("tokens.issued.rotated", { name }) : t("tokens.issued.created", { name })}
      onClose={onClose}
      footer={
        <button className="btn primary" onClick={onClose} data-testid="issued-done">
          {t("tokens.issued.done")}
        </button>
      }
    >
      <p>
        {rich("tokens.issued.warning")}
        {rotated && t("tokens.issued.oldGone")}
      </p>
      <div data-testid="issued-token" className="issued-token">
        <CopyText value={issued.token} testId="issued-copy" />
      </div>
      <p className="muted">{rich(issued.queues.length ? "tokens.issued.usageQueues" : "tokens.issued.usageAll", usage)}</p>
    </Modal>
  );
}

export function CreateTokenForm({ onClose, onIssued }: { onClose: () => void; onIssued: (token: ApiTokenIssued) => void }) {
  const t = useT();
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
      title={t("tokens.form.title")}
      onClose={onClose}
      footer={
        <>
          <button className="btn" onClick={onClose}>
            {t("tokens.form.close")}
          </button>
          <button className="btn primary" disabled={busy} onClick={() => void submit()} data-testid="token-submit">
            {t("tokens.form.create")}
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
        <Field label={t("tokens.form.user")} errors={errors.username} hint={t("tokens.form.userHint")}>
          <input className="input" value={username} onChange={(e) => setUsername(e.target.value)} aria-label={t("tokens.form.userAria")} data-testid="token-username" />
        </Field>
        <Field label={t("tokens.form.name")} errors={errors.name} hint={t("tokens.form.nameHint")}>
          <input className="input" value={name} onChange={(e) => setName(e.target.value)} aria-label={t("tokens.form.nameAria")} data-testid="token-name" />
        </Field>
        <Field label={t("tokens.form.role")} errors={errors.role} hint={t("tokens.form.roleHint")}>
          <select className="select" value={role} onChange={(e) => setRole(e.target.value as Role)} aria-label={t("tokens.form.roleAria")} data-testid="token-role">
            {ROLES.map((r) => (
              <option key={r} value={r}>
                {t(`roles.${r}`)}
              </option>
            ))}
          </select>
        </Field>
        <Field label={t("tokens.form.queues")} errors={errors.queues} hint={t("tokens.form.queuesHint")}>
          <input className="input" value={queues} onChange={(e) => setQueues(e.target.value)} aria-label={t("tokens.form.queuesAria")} data-testid="token-queues" />
        </Field>
        <Field label={t("tokens.form.expires")} errors={errors.expires_at} hint={t("tokens.form.expiresHint")}>
          <input
            className="input"
            type="datetime-local"
            value={expires}
            onChange={(e) => setExpires(e.target.value)}
            aria-label={t("tokens.form.expiresAria")}
            data-testid="token-expires"
          />
        </Field>
      </div>
      <p className="muted">{t("tokens.form.roleNote")}</p>
    </Modal>
  );
}

export function TokensPage() {
  const t = useT();
  const { can } = useSession();
  if (!can("admin")) {
    return (
      <div className="panel">
        <div className="empty" data-testid="admins-only">
          {t("tokens.adminsOnly")}
        </div>
      </div>
    );
  }
  return <TokensList />;
}

function TokensList() {
  const t = useT();
  const now = useNow(10_000);
  const [pageParam, setPage] = useQueryParam("page", "1");
  const page = Math.max(1, Number(pageParam) || 1);
  const tokens = useApi((signal) => api.get<Page<ApiToken>>(`/api/tokens/?page=${page}&page_size=${PAGE_SIZE}`, signal), [page]);
  const { reload } = tokens;
  const [creating, setCreating] = useState(false);
  const [issued, setIssued] = useState<{ token: ApiTokenIssued; rotated: boolean } | null>(null);
  const [actionError, setActionError] = useState<{ id: number; text: string } | null>(null);
  const [busy, setBusy] = useState<number | null>(null);

  const act = async (token: ApiToken, verb: "rotate" | "revoke") => {
    const label = token.name || token.username;
    const question = verb === "rotate" ? t("tokens.rotate.confirm", { label }) : t("tokens.revoke.confirm", { label });
    if (!window.confirm(question)) return;
    setBusy(token.id);
    setActionError(null);
    try {
      if (verb === "rotate") {
        const fresh = await api.post<ApiTokenIssued>(`/api/tokens/${token.id}/rotate/`);
        setIssued({ token: fresh, rotated: true });
      } else {
        await api.post(`/api/tokens/${token.id}/revoke/`);
      }
      reload();
    } catch (e) {
      setActionError({ id: token.id, text: errorText(e) });
    } finally {
      setBusy(null);
    }
  };

  return (
    <>
      <div className="page-head">
        <h1>{t("tokens.title")}</h1>
        <span className="sub">{tokens.data ? t("tokens.count", { count: tokens.data.count }) : ""}</span>
      </div>
      <div className="panel">
        <div className="toolbar">
          <span className="muted">{t("tokens.intro")}</span>
          <span className="grow" />
          {tokens.loading && <span className="spinner" />}
          <button className="btn primary" onClick={() => setCreating(true)} data-testid="token-new">
            {t("tokens.new")}
          </button>
        </div>
        <ErrorNote error={tokens.error} onRetry={reload} />
        {!tokens.data && tokens.loading ? (
          <Loading />
        ) : tokens.data && tokens.data.results.length === 0 ? (
          <div className="empty">{t("tokens.none")}</div>
        ) : (
          <div className="table-wrap">
            <table className="data" data-testid="tokens-table">
              <thead>
                <tr>
                  <th>{t("tokens.col.name")}</th>
                  <th>{t("tokens.col.user")}</th>
                  <th>{t("tokens.col.role")}</th>
                  <th>{t("tokens.col.queues")}</th>
                  <th>{t("tokens.col.prefix")}</th>
                  <th>{t("tokens.col.created")}</th>
                  <th>{t("tokens.col.lastUsed")}</th>
                  <th>{t("tokens.col.expires")}</th>
                  <th>{t("tokens.col.state")}</th>
                  <th />
                </tr>
              </thead>
              <tbody>
                {tokens.data?.results.map((token) => {
                  const state = tokenState(token, now);
                  return (
                    <tr key={token.id} data-testid={`token-${token.id}`}>
                      <td>{token.name || <span className="muted">–</span>}</td>
                      <td>{token.username}</td>
                      <td>
                        <Badge kind="role">{token.role ? t(`roles.${token.role}`) : t("tokens.noRole")}</Badge>
                      </td>
                      <td>{token.queues.length ? token.queues.join(", ") : <span className="muted">{t("tokens.anyQueue")}</span>}</td>
                      <td className="mono">{token.prefix}</td>
                      <td className="nowrap" title={dateTime(token.created_at)}>
                        {ago(token.created_at, now)}
                      </td>
                      <td className="nowrap" title={dateTime(token.last_used_at)}>
                        {token.last_used_at ? ago(token.last_used_at, now) : <span className="muted">{t("tokens.never")}</span>}
                      </td>
                      <td className="nowrap">{token.expires_at ? dateTime(token.expires_at) : <span className="muted">{t("tokens.never")}</span>}</td>
                      <td title={token.revoked_at ? t("tokens.revokedAt", { time: dateTime(token.revoked_at) }) : undefined}>
                        <Badge kind={state.kind}>{t(`tokens.state.${state.state}`)}</Badge>
                        {actionError?.id === token.id && (
                          <div className="field-error" role="alert">
                            {actionError.text}
                          </div>
                        )}
                      </td>
                      <td className="nowrap">
                        {state.state === "active" && (
                          <>
                            <button className="btn small" disabled={busy === token.id} onClick={() => void act(token, "rotate")} data-testid={`rotate-${token.id}`}>
                              {t("tokens.rotate")}
                            </button>{" "}
                            <button className="btn small danger" disabled={busy === token.id} onClick={() => void act(token, "revoke")} data-testid={`revoke-${token.id}`}>
                              {t("tokens.revoke")}
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
          onIssued={(token) => {
            setCreating(false);
            setIssued({ token, rotated: false });
            reload();
          }}
        />
      )}
      {issued && <IssuedToken issued={issued.token} rotated={issued.rotated} onClose={() => setIssued(null)} />}
    </>
  );
}
