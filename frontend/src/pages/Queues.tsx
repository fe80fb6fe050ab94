// Queues: each queue of the cluster with its quotas per chip type next to what
// its requests hold, its Volcano Queue and its pod policy (`/api/queues/`).
// Admins create queues and edit quotas; everyone else reads.

import { useState } from "react";
import { api, ApiError, qs } from "../api/client";
import type { ChipType, Page, Queue } from "../api/types";
import { Badge, ErrorNote, Field, Loading, Modal, UsageBar } from "../components/ui";
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
  if (limit === null) {
    return (
      <div data-testid={testId}>
        {format(used)} used <span className="muted">· unlimited</span>
      </div>
    );
  }
  const share = limit > 0 ? Math.round((used / limit) * 100) : used > 0 ? 100 : 0;
  return (
    <div data-testid={testId} className="quota-cell">
      <UsageBar used={used} total={limit || 1} text={`${share}%`} title={`${format(used)} of ${format(limit)}`} />
      <span className="muted nowrap">
        {format(used)} / {format(limit)}
      </span>
    </div>
  );
}

function VolcanoState({ queue }: { queue: Queue }) {
  const view = volcanoView(queue.volcano);
  return (
    <span data-testid={`volcano-${queue.name}`}>
      <Badge kind={view.kind} title="the queue's Volcano Queue (scheduling.volcano.sh)">
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
            {counts.pending} pending · {counts.running} running
          </span>
          {canEdit && (
            <button className="btn small" onClick={onEdit} data-testid={`edit-quotas-${queue.name}`}>
              Edit quotas
            </button>
          )}
        </div>
      </div>
      <div className="panel-body queue-meta">
        <VolcanoState queue={queue} />
        <span data-testid={`policy-${queue.name}`}>
          <span className="muted">Namespaces</span> {policy.namespaces} <span className="muted">· Pod Security</span> {policy.podSecurity}{" "}
          <span className="muted">· Service accounts</span> {policy.serviceAccounts} <span className="muted">· Secrets</span> {policy.secrets}{" "}
          <span className="muted">· ConfigMaps</span> {policy.configMaps}
        </span>
        <span data-testid={`access-${queue.name}`}>
          <span className="muted">Who may submit</span> {access.who} <span className="muted">· Priority</span> {access.priority}
        </span>
      </div>
      {rows.length === 0 ? (
        <div className="panel-body muted" data-testid={`no-quota-${queue.name}`}>
          No quota: unlimited on every chip type, and nothing held.
        </div>
      ) : (
        <div className="table-wrap">
          <table className="data">
            <thead>
              <tr>
                <th>Chip type</th>
                <th>Memory</th>
                <th>vNPUs</th>
                <th className="num">Pending</th>
                <th className="num">Running</th>
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

/** The text inputs of the create form, in order: what each field is and says. */
const CREATE_FIELDS = [
  { field: "name", label: "Name", testId: "queue-name", hint: "Lowercase letters, digits and '-'; fixed once made. Its Volcano Queue gets the same name." },
  { field: "allowed_namespaces", label: "Namespaces", testId: "queue-namespaces", placeholder: "ci, batch", hint: "Where its requests' pods may run, separated by commas; empty: only default." },
  {
    field: "allowed_secrets",
    label: "Secrets",
    testId: "queue-secrets",
    placeholder: "ci-credentials",
    hint: "Secrets its requests' pods may reference (env, envFrom, volumes), separated by commas; empty: none. Never list a ServiceAccount token Secret.",
  },
  { field: "allowed_config_maps", label: "ConfigMaps", testId: "queue-config-maps", placeholder: "ci-config", hint: "ConfigMaps its requests' pods may reference, separated by commas; empty: none." },
  { field: "members", label: "Members", testId: "queue-members", placeholder: "ci-bot, alice", hint: "Usernames that may submit to it, separated by commas." },
  { field: "member_groups", label: "Groups", testId: "queue-groups", placeholder: "ml-team", hint: "Groups (as your identity provider names them) whose users may submit to it." },
  {
    field: "max_priority",
    label: "Highest priority",
    testId: "queue-max-priority",
    hint: "The highest PriorityClass value its requests may take; empty: 1000000000 (system-* classes never).",
  },
  { field: "description", label: "Description", testId: "queue-description" },
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
      title="New queue"
      onClose={onClose}
      footer={
        <>
          <button className="btn" onClick={onClose}>
            Cancel
          </button>
          <button className="btn primary" disabled={busy} onClick={() => void submit()} data-testid="queue-create-submit">
            Create
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
          <Field key={f.field} label={f.label} errors={errors[f.field]} hint={"hint" in f ? f.hint : undefined}>
            <input
              className={`input${errors[f.field] ? " invalid" : ""}`}
              name={f.field}
              value={text[f.field]}
              onChange={(e) => setText((t) => ({ ...t, [f.field]: e.target.value }))}
              placeholder={"placeholder" in f ? f.placeholder : undefined}
              data-testid={f.testId}
              autoFocus={f.field === "name"}
            />
          </Field>
        ))}
        <Field label="Who may submit" errors={errors.open_to_all} hint="Admins always may. Open it to every operator and CI account only when its pod policy gives nothing away.">
          <label>
            <input type="checkbox" checked={openToAll} onChange={(e) => setOpenToAll(e.target.checked)} data-testid="queue-open-to-all" /> Open to all
          </label>
        </Field>
      </div>
    </Modal>
  );
}

/** Edit a queue's quotas per chip type (the PATCH replaces all of them). */
export function QuotaForm({ queue, chipTypes, onClose, onDone }: { queue: Queue; chipTypes: string[]; onClose: () => void; onDone: () => void }) {
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
          placeholder="unlimited"
          value={rows[i][field]}
          onChange={(e) => change(i, { [field]: e.target.value })}
          data-testid={`quota-${i}-${field}`}
        />
      </Field>
    );
  };
  return (
    <Modal
      title={`Quotas of ${queue.name}`}
      onClose={onClose}
      footer={
        <>
          <button className="btn" onClick={onClose}>
            Cancel
          </button>
          <button className="btn primary" disabled={busy} onClick={() => void submit()} data-testid="quota-submit">
            Save quotas
          </button>
        </>
      }
    >
      {errors.form.map((m, i) => (
        <div key={i} className="field-error" role="alert" data-testid="quota-form-error">
          {m}
        </div>
      ))}
      <p className="muted mt-0">
        Limits on what the queue's running and reserved requests hold, per chip type. Empty is unlimited; a chip type without a row is unlimited.
      </p>
      {rows.map((r, i) => (
        <div className="quota-row" key={i} data-testid={`quota-row-${i}`}>
          <Field label="Chip type" errors={errors.rows[`${i}.chip_type`]}>
            <select className="select" value={r.chip_type} onChange={(e) => change(i, { chip_type: e.target.value })} data-testid={`quota-${i}-chip_type`}>
              {[r.chip_type, ...unused].map((c) => (
                <option key={c}>{c}</option>
              ))}
            </select>
          </Field>
          {input(i, "memory_limit", "Memory (MB)")}
          {input(i, "slots_limit", "vNPUs")}
          <button className="btn small subtle-danger" onClick={() => setRows((all) => all.filter((_, j) => j !== i))} aria-label={`remove ${r.chip_type}`}>
            Remove
          </button>
        </div>
      ))}
      {unused.length > 0 && (
        <button
          className="btn small"
          onClick={() => setRows((all) => [...all, { chip_type: unused[0], memory_limit: "", slots_limit: "" }])}
          data-testid="quota-add"
        >
          + Add a chip type
        </button>
      )}
    </Modal>
  );
}

export function QueuesPage() {
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
        <h1>Queues</h1>
        <span className="sub">{queues.data ? `${list.length} queues` : ""}</span>
        <div className="actions">
          {queues.loading && <span className="spinner" />}
          {isAdmin && (
            <button className="btn primary" onClick={() => setCreating(true)} data-testid="queue-create">
              New queue
            </button>
          )}
        </div>
      </div>
      <ErrorNote error={queues.error} onRetry={reload} />
      {!queues.data && queues.loading ? (
        <Loading />
      ) : queues.data && list.length === 0 ? (
        <div className="panel">
          <div className="empty">No queue in this cluster yet; `default` is made on the first request that names none.</div>
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
