// Queues: each queue of the cluster with its quotas per chip type next to what
// its requests hold, its Volcano Queue and its pod policy (`/api/queues/`).
// Admins create queues and edit quotas; everyone else reads.

import { useState } from "react";
import { api, ApiError, qs } from "../api/client";
import type { ChipType, Page, Queue } from "../api/types";
import { Badge, ErrorNote, Field, Loading, Modal, UsageBar } from "../components/ui";
import { useT } from "../i18n/I18nProvider";
import { errorText, submitFailure } from "../lib/errors";
import { int, mb } from "../lib/format";
import {
  accessSummary,
  policySummary,
  queueCounts,
  quotaBody,
  quotaDrafts,
  quotaErrors,
  quotaRows,
  splitList,
  volcanoView,
  type QuotaDraft,
} from "../lib/quotas";
import { useApi, useLiveReload } from "../lib/useApi";
import { useClusters, useLiveVersion } from "../state/cluster";
import { useSession } from "../state/session";

/** Used against a limit: a bar with the share used, or "unlimited". */
function Limit({ used, limit, format, testId }: { used: number; limit: number | null; format: (n: number) => string; testId: string }) {
  const t = useT();
  if (limit === null) {
    return (
      <div data-testid={testId}>
        {t("queues.limit.used", { used: format(used) })} <span className="muted">· {t("queues.limit.unlimited")}</span>
      </div>
    );
  }
  const share = limit > 0 ? Math.round((used / limit) * 100) : used > 0 ? 100 : 0;
  return (
    <div data-testid={testId} className="quota-cell">
      <UsageBar used={used} total={limit || 1} text={`${share}%`} title={t("queues.limit.title", { used: format(used), limit: format(limit) })} />
      <span className="muted nowrap">
        {format(used)} / {format(limit)}
      </span>
    </div>
  );
}

function VolcanoState({ queue }: { queue: Queue }) {
  const t = useT();
  const view = volcanoView(queue.volcano);
  return (
    <span data-testid={`volcano-${queue.name}`}>
      <Badge kind={view.kind} title={t("queues.volcano.title")}>
        Volcano: {view.label}
      </Badge>
      {view.detail && (
        <span className={view.kind === "ok" ? "muted" : "volcano-reason"} data-testid={`volcano-reason-${queue.name}`}>
          {" "}
          {view.detail}
        </span>
      )}
    </span>
  );
}

function QueueCard({ queue, canEdit, onEdit }: { queue: Queue; canEdit: boolean; onEdit: () => void }) {
  const t = useT();
  const rows = quotaRows(queue);
  const counts = queueCounts(queue);
  const policy = policySummary(queue);
  const access = accessSummary(queue);
  return (
    <div className="panel queue-card" data-testid={`queue-${queue.name}`}>
      <div className="panel-head">
        <h2 className="mono">{queue.name}</h2>
        {queue.description && <span className="muted">{queue.description}</span>}
        <div className="right">
          <span data-testid={`counts-${queue.name}`}>
            {t("queues.counts", counts)}
          </span>
          {canEdit && (
            <button className="btn small" onClick={onEdit} data-testid={`edit-quotas-${queue.name}`}>
              {t("queues.editQuotas")}
            </button>
          )}
        </div>
      </div>
      <div className="panel-body queue-meta">
        <VolcanoState queue={queue} />
        <span data-testid={`policy-${queue.name}`}>
          <span className="muted">{t("queues.policy.namespaces")}</span> {policy.namespaces}{" "}
          <span className="muted">· {t("queues.policy.podSecurity")}</span> {policy.podSecurity}{" "}
          <span className="muted">· {t("queues.policy.serviceAccounts")}</span> {policy.serviceAccounts}{" "}
          <span className="muted">· {t("queues.policy.secrets")}</span> {policy.secrets}{" "}
          <span className="muted">· {t("queues.policy.configMaps")}</span> {policy.configMaps}
        </span>
        <span data-testid={`access-${queue.name}`}>
          <span className="muted">{t("queues.access.who")}</span> {access.who} <span className="muted">· {t("queues.access.priority")}</span>{" "}
          {access.priority}
        </span>
      </div>
      {rows.length === 0 ? (
        <div className="panel-body muted" data-testid={`no-quota-${queue.name}`}>
          {t("queues.noQuota")}
        </div>
      ) : (
        <div className="table-wrap">
          <table className="data">
            <thead>
              <tr>
                <th>{t("queues.col.chipType")}</th>
                <th>{t("queues.col.memory")}</th>
                <th>{t("queues.col.vnpus")}</th>
                <th className="num">{t("queues.col.pending")}</th>
                <th className="num">{t("queues.col.running")}</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((r) => (
                <tr key={r.chipType} data-testid={`quota-${queue.name}-${r.chipType}`}>
                  <td>{r.chipType}</td>
                  <td>
                    <Limit used={r.memoryUsed} limit={r.memoryLimit} format={mb} testId="quota-memory" />
                  </td>
                  <td>
                    <Limit used={r.slotsUsed} limit={r.slotsLimit} format={int} testId="quota-slots" />
                  </td>
                  <td className="num">{r.pending}</td>
                  <td className="num">{r.running}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </div>
  );
}

/**
 * The text inputs of the create form, in order: what each field is and says
 * (message ids; a placeholder is an example of names, the same in every language).
 */
const CREATE_FIELDS = [
  { field: "name", label: "queues.create.name", testId: "queue-name", hint: "queues.create.nameHint" },
  // i18n-ignore: example names
  { field: "allowed_namespaces", label: "queues.create.namespaces", testId: "queue-namespaces", placeholder: "ci, batch", hint: "queues.create.namespacesHint" },
  // i18n-ignore: an example name
  { field: "allowed_secrets", label: "queues.create.secrets", testId: "queue-secrets", placeholder: "ci-credentials", hint: "queues.create.secretsHint" },
  // i18n-ignore: an example name
  { field: "allowed_config_maps", label: "queues.create.configMaps", testId: "queue-config-maps", placeholder: "ci-config", hint: "queues.create.configMapsHint" },
  // i18n-ignore: example names
  { field: "members", label: "queues.create.members", testId: "queue-members", placeholder: "ci-bot, alice", hint: "queues.create.membersHint" },
  // i18n-ignore: an example name
  { field: "member_groups", label: "queues.create.groups", testId: "queue-groups", placeholder: "ml-team", hint: "queues.create.groupsHint" },
  { field: "max_priority", label: "queues.create.maxPriority", testId: "queue-max-priority", hint: "queues.create.maxPriorityHint" },
  { field: "description", label: "queues.create.description", testId: "queue-description" },
] as const;

type CreateField = (typeof CREATE_FIELDS)[number]["field"];

/** The POST body of the create form; lists split at commas, a ceiling sent as typed so the API names a bad one. */
function createBody(clusterId: number, text: Record<CreateField, string>, openToAll: boolean): Record<string, unknown> {
  const priority = text.max_priority.trim();
  return {
    cluster: clusterId,
    name: text.name.trim(),
    description: text.description.trim(),
    allowed_namespaces: splitList(text.allowed_namespaces),
    // Empty is the default (none may be referenced): sent only when filled in.
    ...(splitList(text.allowed_secrets).length ? { allowed_secrets: splitList(text.allowed_secrets) } : {}),
    ...(splitList(text.allowed_config_maps).length ? { allowed_config_maps: splitList(text.allowed_config_maps) } : {}),
    open_to_all: openToAll,
    members: splitList(text.members),
    member_groups: splitList(text.member_groups),
    ...(priority ? { max_priority: Number.isInteger(Number(priority)) ? Number(priority) : priority } : {}),
  };
}

/** Create a queue: its name, where and with what its pods may run, who may submit to it and how high. */
export function QueueCreateForm({ clusterId, onClose, onDone }: { clusterId: number; onClose: () => void; onDone: (q: Queue) => void }) {
  const t = useT();
  const [text, setText] = useState<Record<CreateField, string>>(
    () => Object.fromEntries(CREATE_FIELDS.map((f) => [f.field, ""])) as Record<CreateField, string>,
  );
  const [openToAll, setOpenToAll] = useState(false);
  const [errors, setErrors] = useState<Record<string, string[]>>({});
  const [formError, setFormError] = useState<string[]>([]);
  const [busy, setBusy] = useState(false);
  const submit = async () => {
    setBusy(true);
    setErrors({});
    setFormError([]);
    try {
      onDone(await api.post<Queue>("/api/queues/", createBody(clusterId, text, openToAll)));
    } catch (e) {
      const failure = submitFailure(e, [...CREATE_FIELDS.map((f) => f.field), "open_to_all"]);
      setErrors(failure.fields);
      setFormError(failure.form === null ? [] : [failure.form]);
    } finally {
      setBusy(false);
    }
  };
  return (
    <Modal
      title={t("queues.create.title")}
      onClose={onClose}
      footer={
        <>
          <button className="btn" onClick={onClose}>
            {t("queues.create.cancel")}
          </button>
          <button className="btn primary" disabled={busy} onClick={() => void submit()} data-testid="queue-create-submit">
            {t("queues.create.submit")}
          </button>
        </>
      }
    >
      {formError.map((m, i) => (
        <div key={i} className="field-error" role="alert" data-testid="queue-form-error">
          {m}
        </div>
      ))}
      <div className="form-stack">
        {CREATE_FIELDS.map((f) => (
          <Field key={f.field} label={t(f.label)} errors={errors[f.field]} hint={"hint" in f ? t(f.hint) : undefined}>
            <input
              className={`input${errors[f.field] ? " invalid" : ""}`}
              name={f.field}
              value={text[f.field]}
              onChange={(e) => setText((typed) => ({ ...typed, [f.field]: e.target.value }))}
              placeholder={"placeholder" in f ? f.placeholder : undefined}
              data-testid={f.testId}
              autoFocus={f.field === "name"}
            />
          </Field>
        ))}
        <Field label={t("queues.create.who")} errors={errors.open_to_all} hint={t("queues.create.whoHint")}>
          <label>
            <input type="checkbox" checked={openToAll} onChange={(e) => setOpenToAll(e.target.checked)} data-testid="queue-open-to-all" />{" "}
            {t("queues.create.openToAll")}
          </label>
        </Field>
      </div>
    </Modal>
  );
}

/** Edit a queue's quotas per chip type (the PATCH replaces all of them). */
export function QuotaForm({ queue, chipTypes, onClose, onDone }: { queue: Queue; chipTypes: string[]; onClose: () => void; onDone: () => void }) {
  const t = useT();
  const [rows, setRows] = useState<QuotaDraft[]>(() => quotaDrafts(queue));
  const [errors, setErrors] = useState<{ rows: Record<string, string[]>; form: string[] }>({ rows: {}, form: [] });
  const [busy, setBusy] = useState(false);
  const unused = chipTypes.filter((c) => !rows.some((r) => r.chip_type === c));
  const change = (i: number, patch: Partial<QuotaDraft>) => setRows((all) => all.map((r, j) => (j === i ? { ...r, ...patch } : r)));
  const submit = async () => {
    setBusy(true);
    setErrors({ rows: {}, form: [] });
    try {
      await api.patch(`/api/queues/${queue.id}/`, quotaBody(rows));
      onDone();
    } catch (e) {
      const mapped = e instanceof ApiError ? quotaErrors(e.body) : { rows: {}, form: [] };
      if (!mapped.form.length && !Object.keys(mapped.rows).length) mapped.form.push(errorText(e));
      setErrors(mapped);
    } finally {
      setBusy(false);
    }
  };
  const input = (i: number, field: "memory_limit" | "slots_limit", label: string) => {
    const errs = errors.rows[`${i}.${field}`];
    return (
      <Field label={label} errors={errs}>
        <input
          className={`input${errs ? " invalid" : ""}`}
          name={field}
          inputMode="numeric"
          placeholder={t("queues.quota.unlimited")}
          value={rows[i][field]}
          onChange={(e) => change(i, { [field]: e.target.value })}
          data-testid={`quota-${i}-${field}`}
        />
      </Field>
    );
  };
  return (
    <Modal
      title={t("queues.quota.title", { queue: queue.name })}
      onClose={onClose}
      footer={
        <>
          <button className="btn" onClick={onClose}>
            {t("queues.quota.cancel")}
          </button>
          <button className="btn primary" disabled={busy} onClick={() => void submit()} data-testid="quota-submit">
            {t("queues.quota.save")}
          </button>
        </>
      }
    >
      {errors.form.map((m, i) => (
        <div key={i} className="field-error" role="alert" data-testid="quota-form-error">
          {m}
        </div>
      ))}
      <p className="muted mt-0">{t("queues.quota.intro")}</p>
      {rows.map((r, i) => (
        <div className="quota-row" key={i} data-testid={`quota-row-${i}`}>
          <Field label={t("queues.quota.chipType")} errors={errors.rows[`${i}.chip_type`]}>
            <select className="select" value={r.chip_type} onChange={(e) => change(i, { chip_type: e.target.value })} data-testid={`quota-${i}-chip_type`}>
              {[r.chip_type, ...unused].map((c) => (
                <option key={c}>{c}</option>
              ))}
            </select>
          </Field>
          {input(i, "memory_limit", t("queues.quota.memory"))}
          {input(i, "slots_limit", t("queues.quota.vnpus"))}
          <button
            className="btn small subtle-danger"
            onClick={() => setRows((all) => all.filter((_, j) => j !== i))}
            aria-label={t("queues.quota.removeAria", { chipType: r.chip_type })}
          >
            {t("queues.quota.remove")}
          </button>
        </div>
      ))}
      {unused.length > 0 && (
        <button
          className="btn small"
          onClick={() => setRows((all) => [...all, { chip_type: unused[0], memory_limit: "", slots_limit: "" }])}
          data-testid="quota-add"
        >
          {t("queues.quota.add")}
        </button>
      )}
    </Modal>
  );
}

export function QueuesPage() {
  const t = useT();
  const { cluster, live } = useClusters();
  const { can } = useSession();
  useLiveVersion(live);
  const id = cluster!.id;
  const isAdmin = can("admin");
  const queues = useApi((signal) => api.get<Page<Queue>>(`/api/queues/${qs({ cluster: id, page_size: 1000 })}`, signal), [id]);
  const chipTypes = useApi(
    isAdmin ? (signal) => api.get<Page<ChipType>>(`/api/chip-types/${qs({ cluster: id, page_size: 200 })}`, signal) : null,
    [id, isAdmin],
  );
  const { reload } = queues;
  useLiveReload(reload, (live?.ticks.requests ?? 0) + (live?.ticks.snapshot ?? 0));
  const [creating, setCreating] = useState(false);
  const [editing, setEditing] = useState<Queue | null>(null);
  const list = queues.data?.results ?? [];

  return (
    <>
      <div className="page-head">
        <h1>{t("queues.title")}</h1>
        <span className="sub">{queues.data ? t("queues.count", { count: list.length }) : ""}</span>
        <div className="actions">
          {queues.loading && <span className="spinner" />}
          {isAdmin && (
            <button className="btn primary" onClick={() => setCreating(true)} data-testid="queue-create">
              {t("queues.new")}
            </button>
          )}
        </div>
      </div>
      <ErrorNote error={queues.error} onRetry={reload} />
      {!queues.data && queues.loading ? (
        <Loading />
      ) : queues.data && list.length === 0 ? (
        <div className="panel">
          <div className="empty">{t("queues.none")}</div>
        </div>
      ) : (
        list.map((q) => <QueueCard key={q.id} queue={q} canEdit={isAdmin} onEdit={() => setEditing(q)} />)
      )}
      {creating && (
        <QueueCreateForm
          clusterId={id}
          onClose={() => setCreating(false)}
          onDone={() => {
            setCreating(false);
            reload();
          }}
        />
      )}
      {editing && (
        <QuotaForm
          queue={editing}
          chipTypes={(chipTypes.data?.results ?? []).map((c) => c.common_word)}
          onClose={() => setEditing(null)}
          onDone={() => {
            setEditing(null);
            reload();
          }}
        />
      )}
    </>
  );
}
