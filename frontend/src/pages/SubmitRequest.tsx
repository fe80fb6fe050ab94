// Submit a request from the browser (operators and admins; CI tokens use the
// API): cluster, namespace, queue, chip type, memory / template / whole card,
// priority, image and command, time limit. The API's 400 lands on the fields;
// a created request opens its detail page.

import { useEffect, useState } from "react";
import { api } from "../api/client";
import type { ChipType, CiRequest, Page, PriorityClass, Queue } from "../api/types";
import { Banner, ErrorNote, Field, Segmented } from "../components/ui";
import { submitFailure } from "../lib/errors";
import { mb } from "../lib/format";
import { submitBody, type SizeKind, type SubmitForm } from "../lib/requestDetail";
import { Link, navigate } from "../lib/router";
import { useApi } from "../lib/useApi";
import { useClusters } from "../state/cluster";
import { useSession } from "../state/session";

const FIELDS = ["cluster", "namespace", "queue", "chip_type", "memory", "template", "whole_card", "priority", "image", "command", "args", "env", "time_limit_seconds"] as const;

export function SubmitRequestPage() {
  const { can } = useSession();
  if (!can("operator")) {
    return (
      <div className="panel">
        <div className="empty" data-testid="operators-only">
          Submitting from the browser is for operators and admins; pipelines submit with an API token (POST /api/requests/).
        </div>
      </div>
    );
  }
  return <SubmitForm_ />;
}

function SubmitForm_() {
  const { clusters, cluster } = useClusters();
  const [form, setForm] = useState<SubmitForm>({
    cluster: cluster!.id,
    namespace: "default",
    queue: "default",
    chip_type: "",
    size: "memory",
    memory: "",
    template: "",
    priority: "",
    image: "",
    command: "",
    time_limit: "",
  });
  const set = <K extends keyof SubmitForm>(key: K, value: SubmitForm[K]) => setForm((f) => ({ ...f, [key]: value }));
  const id = form.cluster;
  const chipTypes = useApi((s) => api.get<Page<ChipType>>(`/api/chip-types/?cluster=${id}&page_size=200`, s), [id]);
  const queues = useApi((s) => api.get<Page<Queue>>(`/api/queues/?cluster=${id}&page_size=1000`, s), [id]);
  const priorities = useApi((s) => api.get<Page<PriorityClass>>(`/api/priority-classes/?cluster=${id}&page_size=1000`, s), [id]);
  const types = chipTypes.data?.results ?? [];
  const chipType = types.find((t) => t.common_word === form.chip_type);
  // Defaults, checked against the form as it is when they apply (not as it
  // was when the data arrived): an effect runs after the paint, and a choice
  // made in between (a quick user, a test) must not be overwritten.
  useEffect(() => {
    // The first chip type of the cluster, and again when the cluster changes.
    if (!types.length) return;
    setForm((f) => (types.some((t) => t.common_word === f.chip_type) ? f : { ...f, chip_type: types[0].common_word }));
  }, [types]);
  useEffect(() => {
    const names = chipType?.templates.map((t) => t.name) ?? [];
    setForm((f) => (names.includes(f.template) ? f : { ...f, template: names[0] ?? "" }));
  }, [chipType]);

  const [errors, setErrors] = useState<Record<string, string[]>>({});
  const [formError, setFormError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async () => {
    setBusy(true);
    setErrors({});
    setFormError(null);
    try {
      const created = await api.post<CiRequest>("/api/requests/", submitBody(form));
      navigate(`/requests/${created.id}`);
    } catch (e) {
      const failure = submitFailure(e, FIELDS);
      setErrors(failure.fields);
      setFormError(failure.form);
    } finally {
      setBusy(false);
    }
  };
  const sizeErrors = [...(errors.memory ?? []), ...(errors.template ?? []), ...(errors.whole_card ?? [])];

  return (
    <>
      <div className="page-head">
        <h1>Submit a request</h1>
        <span className="sub">
          <Link to="/requests">back to the requests</Link>
        </span>
      </div>
      <form
        className="panel"
        onSubmit={(e) => {
          e.preventDefault();
          void submit();
        }}
        data-testid="submit-form"
      >
        <div className="panel-body">
          {formError && (
            <Banner kind="error" testId="submit-error">
              {formError}
            </Banner>
          )}
          <ErrorNote error={chipTypes.error} onRetry={chipTypes.reload} />
          <div className="form-grid">
            <Field label="Cluster" errors={errors.cluster}>
              <select className="select" value={form.cluster} onChange={(e) => set("cluster", Number(e.target.value))} aria-label="cluster" data-testid="submit-cluster">
                {clusters.map((c) => (
                  <option key={c.id} value={c.id}>
                    {c.name}
                  </option>
                ))}
              </select>
            </Field>
            <Field label="Namespace" errors={errors.namespace} hint="where its pod runs; the queue must allow it">
              <input className="input" value={form.namespace} onChange={(e) => set("namespace", e.target.value)} aria-label="namespace" data-testid="submit-namespace" />
            </Field>
            <Field label="Queue" errors={errors.queue}>
              <input className="input" list="submit-queues" value={form.queue} onChange={(e) => set("queue", e.target.value)} aria-label="queue" data-testid="submit-queue" />
              <datalist id="submit-queues">
                {queues.data?.results.map((q) => (
                  <option key={q.id} value={q.name} />
                ))}
              </datalist>
            </Field>
            <Field label="Chip type" errors={errors.chip_type}>
              <select className="select" value={form.chip_type} onChange={(e) => set("chip_type", e.target.value)} aria-label="chip type" data-testid="submit-chip-type">
                {types.map((t) => (
                  <option key={t.id} value={t.common_word}>
                    {t.common_word}
                  </option>
                ))}
              </select>
            </Field>
            <Field label="Priority" errors={errors.priority}>
              <select className="select" value={form.priority} onChange={(e) => set("priority", e.target.value)} aria-label="priority" data-testid="submit-priority">
                <option value="">
                  {priorities.data && !priorities.data.results.some((p) => p.global_default) ? "choose one (the cluster has no default)" : "cluster default"}
                </option>
                {priorities.data?.results.map((p) => (
                  <option key={p.id} value={p.name}>
                    {p.name} ({p.value})
                  </option>
                ))}
              </select>
            </Field>
            <Field label="Time limit (s)" errors={errors.time_limit_seconds} hint="empty: none">
              <input className="input" inputMode="numeric" value={form.time_limit} onChange={(e) => set("time_limit", e.target.value)} aria-label="time limit" data-testid="submit-time-limit" />
            </Field>
          </div>
          <div className="field mt-12">
            <label>Size</label>
            <div className="hstack gap-10 flex-wrap">
              <Segmented<SizeKind>
                value={form.size}
                onChange={(v) => set("size", v)}
                label="size"
                options={[
                  { key: "memory", label: "Memory" },
                  { key: "template", label: "Template" },
                  { key: "whole_card", label: "Whole card" },
                ]}
              />
              {form.size === "memory" && (
                <input className="input" inputMode="numeric" placeholder="MB" value={form.memory} onChange={(e) => set("memory", e.target.value)} aria-label="memory" data-testid="submit-memory" />
              )}
              {form.size === "template" && (
                <select className="select" value={form.template} onChange={(e) => set("template", e.target.value)} aria-label="template" data-testid="submit-template">
                  {chipType?.templates.map((t) => (
                    <option key={t.name} value={t.name}>
                      {t.name} · {mb(t.memory)}
                    </option>
                  ))}
                </select>
              )}
              <span className="muted">
                {form.size === "memory" ? "HAMi's template rule picks the smallest template that fits." : form.size === "whole_card" ? "A whole chip, no slicing." : ""}
              </span>
            </div>
            {sizeErrors.map((e, i) => (
              <div key={i} className="field-error" role="alert">
                {e}
              </div>
            ))}
          </div>
          <div className="form-grid mt-12">
            <Field label="Image" errors={errors.image}>
              <input className="input" value={form.image} onChange={(e) => set("image", e.target.value)} aria-label="image" data-testid="submit-image" />
            </Field>
            <Field label="Command" errors={[...(errors.command ?? []), ...(errors.args ?? [])]} hint={`words split on spaces; "quotes" keep them together`}>
              <input className="input mono" value={form.command} onChange={(e) => set("command", e.target.value)} aria-label="command" data-testid="submit-command" />
            </Field>
          </div>
        </div>
        <div className="panel-body panel-foot">
          <Link to="/requests" className="btn">
            Cancel
          </Link>
          <button type="submit" className="btn primary" disabled={busy || !form.chip_type} data-testid="submit-request">
            Submit
          </button>
        </div>
      </form>
    </>
  );
}
