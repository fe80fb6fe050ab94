// Submit a request from the browser (operators and admins; CI tokens use the
// API): cluster, namespace, queue, chip type, memory / template / whole card,
// priority, image and command, time limit. The API's 400 lands on the fields;
// a created request opens its detail page.

import { useEffect, useState } from "react";
import { api } from "../api/client";
import type { ChipType, CiRequest, Page, PriorityClass, Queue } from "../api/types";
import { Banner, ErrorNote, Field, Segmented } from "../components/ui";
import { useT } from "../i18n/I18nProvider";
import { submitFailure } from "../lib/errors";
import { mb } from "../lib/format";
import { submitBody, type SizeKind, type SubmitForm } from "../lib/requestDetail";
import { Link, navigate } from "../lib/router";
import { useApi } from "../lib/useApi";
import { useClusters } from "../state/cluster";
import { useSession } from "../state/session";

const FIELDS = ["cluster", "namespace", "queue", "chip_type", "memory", "template", "whole_card", "priority", "image", "command", "args", "env", "time_limit_seconds"] as const;

export function SubmitRequestPage() {
  const t = useT();
  const { can } = useSession();
  if (!can("operator")) {
    return (
      <div className="panel">
        <div className="empty" data-testid="operators-only">
          {t("requests.submit.operatorsOnly")}
        </div>
      </div>
    );
  }
  return <SubmitForm_ />;
}

function SubmitForm_() {
  const t = useT();
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
        <h1>{t("requests.submitTitle")}</h1>
        <span className="sub">
          <Link to="/requests">{t("requests.submit.back")}</Link>
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
            <Field label={t("requests.submit.cluster")} errors={errors.cluster}>
              <select className="select" value={form.cluster} onChange={(e) => set("cluster", Number(e.target.value))} aria-label={t("requests.submit.cluster")} data-testid="submit-cluster">
                {clusters.map((c) => (
                  <option key={c.id} value={c.id}>
                    {c.name}
                  </option>
                ))}
              </select>
            </Field>
            <Field label={t("requests.submit.namespace")} errors={errors.namespace} hint={t("requests.submit.namespaceHint")}>
              <input className="input" value={form.namespace} onChange={(e) => set("namespace", e.target.value)} aria-label={t("requests.submit.namespace")} data-testid="submit-namespace" />
            </Field>
            <Field label={t("requests.col.queue")} errors={errors.queue}>
              <input className="input" list="submit-queues" value={form.queue} onChange={(e) => set("queue", e.target.value)} aria-label={t("requests.col.queue")} data-testid="submit-queue" />
              <datalist id="submit-queues">
                {queues.data?.results.map((q) => (
                  <option key={q.id} value={q.name} />
                ))}
              </datalist>
            </Field>
            <Field label={t("requests.submit.chipType")} errors={errors.chip_type}>
              <select className="select" value={form.chip_type} onChange={(e) => set("chip_type", e.target.value)} aria-label={t("requests.submit.chipType")} data-testid="submit-chip-type">
                {types.map((t) => (
                  <option key={t.id} value={t.common_word}>
                    {t.common_word}
                  </option>
                ))}
              </select>
            </Field>
            <Field label={t("requests.col.priority")} errors={errors.priority}>
              <select className="select" value={form.priority} onChange={(e) => set("priority", e.target.value)} aria-label={t("requests.col.priority")} data-testid="submit-priority">
                <option value="">
                  {priorities.data && !priorities.data.results.some((p) => p.global_default) ? t("requests.submit.priorityChoose") : t("requests.submit.priorityDefault")}
                </option>
                {priorities.data?.results.map((p) => (
                  <option key={p.id} value={p.name}>
                    {p.name} ({p.value})
                  </option>
                ))}
              </select>
            </Field>
            <Field label={t("requests.submit.timeLimit")} errors={errors.time_limit_seconds} hint={t("requests.submit.timeLimitHint")}>
              <input className="input" inputMode="numeric" value={form.time_limit} onChange={(e) => set("time_limit", e.target.value)} aria-label={t("requests.submit.timeLimit")} data-testid="submit-time-limit" />
            </Field>
          </div>
          <div className="field mt-12">
            <label>{t("requests.submit.size")}</label>
            <div className="hstack gap-10 flex-wrap">
              <Segmented<SizeKind>
                value={form.size}
                onChange={(v) => set("size", v)}
                label={t("requests.submit.size")}
                options={[
                  { key: "memory", label: t("requests.submit.memory") },
                  { key: "template", label: t("requests.submit.template") },
                  { key: "whole_card", label: t("requests.submit.wholeCard") },
                ]}
              />
              {form.size === "memory" && (
                <input className="input" inputMode="numeric" placeholder="MB" value={form.memory} onChange={(e) => set("memory", e.target.value)} aria-label={t("requests.submit.memory")} data-testid="submit-memory" />
              )}
              {form.size === "template" && (
                <select className="select" value={form.template} onChange={(e) => set("template", e.target.value)} aria-label={t("requests.submit.template")} data-testid="submit-template">
                  {chipType?.templates.map((t) => (
                    <option key={t.name} value={t.name}>
                      {t.name} · {mb(t.memory)}
                    </option>
                  ))}
                </select>
              )}
              <span className="muted">
                {form.size === "memory" ? t("requests.submit.memoryHint") : form.size === "whole_card" ? t("requests.submit.wholeCardHint") : ""}
              </span>
            </div>
            {sizeErrors.map((e, i) => (
              <div key={i} className="field-error" role="alert">
                {e}
              </div>
            ))}
          </div>
          <div className="form-grid mt-12">
            <Field label={t("requests.detail.image")} errors={errors.image}>
              <input className="input" value={form.image} onChange={(e) => set("image", e.target.value)} aria-label={t("requests.detail.image")} data-testid="submit-image" />
            </Field>
            <Field label={t("requests.submit.command")} errors={[...(errors.command ?? []), ...(errors.args ?? [])]} hint={t("requests.submit.commandHint")}>
              <input className="input mono" value={form.command} onChange={(e) => set("command", e.target.value)} aria-label={t("requests.submit.command")} data-testid="submit-command" />
            </Field>
          </div>
        </div>
        <div className="panel-body panel-foot">
          <Link to="/requests" className="btn">
            {t("requests.cancel")}
          </Link>
          <button type="submit" className="btn primary" disabled={busy || !form.chip_type} data-testid="submit-request">
            {t("requests.submit.submit")}
          </button>
        </div>
      </form>
    </>
  );
}
