// Publishing: what would change (diff and impact), why (a reason), and the
// write itself, guarded against hand edits of the ConfigMap (409 drift).

import { useState } from "react";
import { api, ApiError } from "../../api/client";
import { ErrorCode } from "../../api/errorCodes";
import type { DeviceConfigState, DeviceConfigVersion, Drift, DriftConflictDetail, PublishResult, WhatIf, WhatIfSlice } from "../../api/types";
import { Badge, Banner, DiffView, ErrorNote, Field, Modal } from "../../components/ui";
import { mapErrors, type FieldErrors } from "../../lib/errors";
import { mb } from "../../lib/format";
import { useSession } from "../../state/session";
import { RestartsPanel } from "../Restarts";

/** What an admin types to publish over a hand edit. */
const FORCE_WORD = "force";

interface Props {
  clusterId: number;
  config: DeviceConfigState | undefined;
  configError: unknown;
  whatIf: WhatIf | undefined;
  whatIfLoading?: boolean;
  drift: Drift | undefined;
  driftError: unknown;
  onPublished: () => void;
}

export function PublishTab({ clusterId, config, configError, whatIf, whatIfLoading, drift, driftError, onPublished }: Props) {
  const { can } = useSession();
  const [reason, setReason] = useState("");
  const [busy, setBusy] = useState(false);
  const [errors, setErrors] = useState<FieldErrors>({ fields: {}, form: [] });
  const [conflict, setConflict] = useState<{ code: string; message: string; detail?: DriftConflictDetail } | null>(null);
  const [result, setResult] = useState<PublishResult | null>(null);
  const [adopted, setAdopted] = useState<DeviceConfigVersion | null>(null);
  const [failure, setFailure] = useState<unknown>(null);
  const [restartTick, setRestartTick] = useState(0);
  const [askAdopt, setAskAdopt] = useState(false);
  // Publishing over a hand edit drops it: the admin sees what is dropped and types FORCE_WORD.
  const [askForce, setAskForce] = useState(false);
  const [forceTyped, setForceTyped] = useState("");
  const [confirmShape, setConfirmShape] = useState(false);
  // The templates whose running slices the operator accepted to break, as one
  // key: pods of those templates come and go without unchecking the box; a new
  // template does uncheck it.
  const [confirmedBreaking, setConfirmedBreaking] = useState<string | null>(null);

  const nothing = config !== undefined && !config.diff_from_base.trim();
  const invalid = (config?.errors.length ?? 0) > 0;
  const shapeWarnings = config?.shape_warnings ?? [];
  // A shape a running component cannot parse is written only when confirmed (the API's confirm_shape).
  const crashes = shapeWarnings.some((w) => w.effect === "crash");
  const needsConfirm = crashes || !!errors.fields.confirm_shape;
  // Running slices this publish breaks are published over only when their
  // templates are accepted (the API's confirm_breaking_templates): whichever
  // pods run them when the publish lands, not a pod list stale by the click.
  const breakingSlices = whatIf?.invalid_slices ?? [];
  const breaking = slicePods(breakingSlices);
  const breakingTemplates = sliceTemplates(breakingSlices);
  const breakingKey = breakingTemplates.join("\n");
  const confirmBreaking = breaking.length > 0 && confirmedBreaking === breakingKey;
  const needsBreaking = breaking.length > 0 && !confirmBreaking;

  const publish = async (force: boolean) => {
    setBusy(true);
    setErrors({ fields: {}, form: [] });
    setFailure(null);
    setResult(null);
    setAdopted(null);
    try {
      const answer = await api.post<PublishResult>(`/api/clusters/${clusterId}/publish/`, {
        reason,
        force,
        confirm_shape: confirmShape,
        confirm_breaking_templates: confirmBreaking ? breakingTemplates : [],
      });
      setResult(answer);
      setConflict(null);
      setReason("");
      setConfirmShape(false);
      setConfirmedBreaking(null);
      setRestartTick((n) => n + 1);
      onPublished();
    } catch (e) {
      if (e instanceof ApiError && e.status === 409) {
        setConflict({ code: e.code, message: e.message, detail: e.body.detail as DriftConflictDetail | undefined });
      } else if (e instanceof ApiError && e.status === 400) {
        setErrors(mapErrors(e.body, ["reason", "force", "confirm_shape", "confirm_breaking", "confirm_breaking_templates"]));
        // The pods running now may differ from the Impact panel's: fetch it again so the box names them.
        if (e.code === ErrorCode.BREAKS_RUNNING_SLICES) onPublished();
      } else {
        setFailure(e);
      }
    } finally {
      setBusy(false);
    }
  };

  const adopt = async () => {
    setAskAdopt(false);
    setBusy(true);
    setFailure(null);
    try {
      const answer = await api.post<DeviceConfigVersion>(`/api/clusters/${clusterId}/adopt/`, { reason: reason || "adopted the live ConfigMap" });
      setAdopted(answer);
      setConflict(null);
      onPublished();
    } catch (e) {
      setFailure(e);
    } finally {
      setBusy(false);
    }
  };

  const unpublished = drift?.unpublished.trim() ?? "";
  // Right after a publish or an adoption, a drift answer about an older
  // baseline is stale (its refetch is on the way): never show it beside the success.
  const landed = result?.number ?? adopted?.number ?? 0;
  const showDrift = !!drift && !drift.in_sync && !conflict && (drift.baseline_version ?? 0) >= landed;
  return (
    <>
      {askForce && conflict && (
        <Modal
          title="Publish over the hand edit?"
          onClose={() => setAskForce(false)}
          footer={
            <>
              <button className="btn" onClick={() => setAskForce(false)}>
                Cancel
              </button>
              <button
                className="btn danger solid"
                disabled={busy || forceTyped.trim() !== FORCE_WORD}
                onClick={() => {
                  setAskForce(false);
                  setForceTyped("");
                  void publish(true);
                }}
                data-testid="force-confirm"
              >
                Publish and drop the hand edit
              </button>
            </>
          }
        >
          <p>
            The ConfigMap was edited outside the portal. Publishing over it writes the portal's templates and <b>drops this hand edit</b> (last seen → live):
          </p>
          <DiffView diff={conflict.detail?.diff_live ?? ""} empty="The hand edit could not be shown." />
          <Field label={`Type ${FORCE_WORD} to confirm`}>
            <input value={forceTyped} onChange={(e) => setForceTyped(e.target.value)} name="force_confirmation" autoComplete="off" data-testid="force-typed" />
          </Field>
        </Modal>
      )}
      {askAdopt && (
        <Modal
          title="Adopt the live ConfigMap?"
          onClose={() => setAskAdopt(false)}
          footer={
            <>
              <button className="btn" onClick={() => setAskAdopt(false)}>
                Cancel
              </button>
              <button className={`btn${unpublished ? " danger solid" : " primary"}`} disabled={busy} onClick={() => void adopt()} data-testid="adopt-confirm">
                {unpublished ? "Adopt and discard my unpublished edits" : "Adopt the live config"}
              </button>
            </>
          }
        >
          <p>
            The portal's chip types and templates become what the ConfigMap holds now, including the hand edit. Nothing is written to the cluster.
          </p>
          {unpublished ? (
            <div data-testid="adopt-discards">
              <p>
                <b>These unpublished edits will be discarded</b> (the portal's templates against its v{drift?.baseline_version ?? "–"}):
              </p>
              <DiffView diff={unpublished} />
            </div>
          ) : (
            <p className="muted">The portal has no unpublished edits: nothing is discarded.</p>
          )}
        </Modal>
      )}
      <ErrorNote error={configError} />
      {showDrift && drift && (
        <Banner kind="error" testId="drift-banner">
          <b>Drift:</b> the ConfigMap differs from the portal's v{drift.baseline_version} (someone edited it by hand). Publishing will be refused until
          an admin adopts the live config or publishes over it.
          {can("admin") && (
            <div className="mt-6">
              <button className="btn small" disabled={busy} onClick={() => setAskAdopt(true)} data-testid="adopt">
                Adopt the live config
              </button>
            </div>
          )}
          <details className="mt-6">
            <summary>What changed by hand</summary>
            <DiffView diff={drift.diff} />
          </details>
        </Banner>
      )}
      <ErrorNote error={driftError} />
      {invalid && (
        <Banner kind="error">
          <b>The portal's config is invalid; it cannot be published:</b>
          <ul className="bullets">
            {config!.errors.map((e, i) => (
              <li key={i}>{e.message}</li>
            ))}
          </ul>
        </Banner>
      )}
      {shapeWarnings.length > 0 && (
        <Banner kind={crashes ? "error" : "warn"} testId="shape-warnings">
          <b>Not every running component can read this config's {shapeWarnings[0].shape} shape of vnpus:</b>
          <ul className="bullets">
            {shapeWarnings.map((w) => (
              <li key={w.workload}>
                {w.message}
                {w.fix && <span className="muted"> (fix: {w.fix})</span>}
              </li>
            ))}
          </ul>
        </Banner>
      )}
      {result && (
        <Banner kind="ok" testId="publish-result">
          <b>Published v{result.number}</b> to the ConfigMap (resourceVersion {result.previous_resource_version} → {result.resource_version})
          {result.forced ? ", over a hand edit" : ""}. The HAMi scheduler, the device plugin and Volcano read it at start: restart them below.
        </Banner>
      )}
      {adopted && (
        <Banner kind="ok">
          Adopted the live ConfigMap as v{adopted.number}. The portal's chip types and templates now equal it.
        </Banner>
      )}

      <div className="grid cols-2">
        <div className="panel">
          <div className="panel-head">
            <h2>Changes to publish</h2>
            <span className="right">{config && (config.base_version ? `from v${config.base_version}` : "no stored version")}</span>
          </div>
          <div className="panel-body flush">
            {config && <DiffView diff={config.diff_from_base} empty={`Nothing to publish: the templates equal v${config.base_version ?? "–"}.`} />}
          </div>
        </div>
        <ImpactPanel whatIf={whatIf} loading={!!whatIfLoading} />
      </div>

      <div className="panel">
        <div className="panel-head">
          <h2>Publish</h2>
          <span className="right">{drift && (drift.in_sync ? <Badge kind="ok">ConfigMap in sync</Badge> : <Badge kind="fail">drift</Badge>)}</span>
        </div>
        <div className="panel-body">
          {!can("operator") ? (
            <div className="muted">Your role can read the config; operators publish it.</div>
          ) : (
            <form
              onSubmit={(e) => {
                e.preventDefault();
                void publish(false);
              }}
              className="publish-form"
            >
              <Field label="Reason (kept with the version and in the audit log)" errors={errors.fields.reason}>
                <textarea
                  className={`input${errors.fields.reason ? " invalid" : ""}`}
                  rows={2}
                  value={reason}
                  onChange={(e) => setReason(e.target.value)}
                  placeholder="e.g. smaller vir01 so that 8 inference pods fit a 310P3"
                  name="reason"
                  data-testid="publish-reason"
                />
              </Field>
              {needsConfirm && (
                <Field label="" errors={errors.fields.confirm_shape}>
                  <label className="hstack gap-6">
                    <input type="checkbox" checked={confirmShape} onChange={(e) => setConfirmShape(e.target.checked)} name="confirm_shape" data-testid="confirm-shape" />
                    Write it anyway: a component above exits at its next start until its version or the shape changes
                  </label>
                </Field>
              )}
              {(breaking.length > 0 || errors.fields.confirm_breaking) && (
                <Field label="" errors={errors.fields.confirm_breaking}>
                  <label className="hstack gap-6 align-start">
                    <input
                      type="checkbox"
                      required
                      checked={confirmBreaking}
                      disabled={breaking.length === 0}
                      onChange={(e) => setConfirmedBreaking(e.target.checked ? breakingKey : null)}
                      name="confirm_breaking"
                      data-testid="confirm-breaking"
                    />
                    <span>
                      Publish anyway: the running slices of <span className="mono">{breakingTemplates.join(", ")}</span> lose their template, whichever pods
                      run them when it lands ({plural(breaking.length, "pod")} now: <span className="mono">{breaking.join(", ")}</span>)
                    </span>
                  </label>
                </Field>
              )}
              {errors.form.length > 0 && (
                <div className="field-error" role="alert">
                  {errors.form.join(" ")}
                </div>
              )}
              <div className="hstack gap-8">
                <button className="btn primary" type="submit" disabled={busy || invalid || !reason.trim() || (needsConfirm && !confirmShape) || needsBreaking}
                  data-testid="publish"
                >
                  {busy ? "Publishing…" : "Publish to the ConfigMap"}
                </button>
                {nothing && <span className="muted">The portal's templates equal the stored version; publishing would change nothing.</span>}
              </div>
            </form>
          )}
          <ErrorNote error={failure} />
          {conflict && (
            <div className="mt-12" data-testid="publish-conflict">
              <Banner kind="error">
                <b>{conflict.code === ErrorCode.DRIFT ? "Refused: the ConfigMap changed outside the portal." : "Refused."}</b> {conflict.message}
                {can("admin") ? (
                  <div className="flex gap-8 mt-8">
                    <button className="btn small" disabled={busy} onClick={() => setAskAdopt(true)} data-testid="adopt">
                      Adopt the live config
                    </button>
                    {conflict.code === ErrorCode.DRIFT && (
                      <button className="btn small danger solid" disabled={busy || !reason.trim() || (needsConfirm && !confirmShape) || needsBreaking}
                        onClick={() => setAskForce(true)}
                        data-testid="force"
                      >
                        Publish over it (force)
                      </button>
                    )}
                  </div>
                ) : (
                  <div className="mt-6">Ask an admin to adopt the live config or to publish over it.</div>
                )}
              </Banner>
              {conflict.detail && (
                <div className="grid cols-2">
                  <div className="panel">
                    <div className="panel-head">
                      <h2>Edited by hand (last seen → live)</h2>
                    </div>
                    <DiffView diff={conflict.detail.diff_live} />
                  </div>
                  <div className="panel">
                    <div className="panel-head">
                      <h2>Yours (last seen → proposed)</h2>
                    </div>
                    <DiffView diff={conflict.detail.diff_proposed} />
                  </div>
                </div>
              )}
            </div>
          )}
        </div>
      </div>
      {result && (
        <div className="panel">
          <div className="panel-head">
            <h2>Written (live → v{result.number})</h2>
          </div>
          <DiffView diff={result.diff} />
        </div>
      )}
      <RestartsPanel clusterId={clusterId} refreshTick={restartTick} />
    </>
  );
}

function ImpactPanel({ whatIf, loading }: { whatIf: WhatIf | undefined; loading: boolean }) {
  if (!whatIf) return <div className="panel"><div className="empty">Computing the impact…</div></div>;
  const changed = whatIf.chip_types.filter(
    (c) => c.chip_type_change !== "unchanged" || c.slots_per_chip !== c.slots_per_chip_before || c.removed_templates.length || c.templates.some((t) => t.template_change !== "unchanged"),
  );
  return (
    <div className="panel" data-testid="impact">
      <div className="panel-head">
        <h2>Impact</h2>
        <span className="right">{loading && <span className="spinner" />}{whatIf.valid ? <Badge kind="ok">valid</Badge> : <Badge kind="fail">invalid</Badge>}</span>
      </div>
      <div className="panel-body">
        {whatIf.errors.map((e, i) => (
          <div key={i} className="field-error">
            {e}
          </div>
        ))}
        {changed.length === 0 && whatIf.invalid_slices.length === 0 && whatIf.already_invalid_slices.length === 0 && <div className="muted">No change to slots or templates since the last publish.</div>}
        {changed.map((c) => (
          <div key={c.common_word} className="mb-10">
            <b>{c.common_word}</b> <Badge kind="info">{c.chip_type_change}</Badge>{" "}
            {c.slots_per_chip_before !== null && c.slots_per_chip_before !== c.slots_per_chip ? (
              <span className="warn-text">
                slots per chip {c.slots_per_chip_before} → <b>{c.slots_per_chip}</b>
              </span>
            ) : (
              <span className="muted">{c.slots_per_chip} slots per chip</span>
            )}
            <ul className="bullets mb-4">
              {c.templates
                .filter((t) => t.template_change !== "unchanged")
                .map((t) => (
                  <li key={t.name}>
                    {t.name}: {t.template_change === "added" ? `added, ${mb(t.memory)}` : `${mb(t.memory_before)} → ${mb(t.memory)}`}, fits × {t.fit_alone}
                  </li>
                ))}
              {c.removed_templates.map((n) => (
                <li key={n} className="hot-text">
                  {n}: removed
                </li>
              ))}
              {c.overcommit.map((o, i) => (
                <li key={i} className="warn-text">
                  {o}
                </li>
              ))}
            </ul>
          </div>
        ))}
        {whatIf.removed_chip_types.map((r) => (
          <div key={r.common_word} className="hot-text">
            Chip type {r.common_word} removed{r.renamed_to ? ` (renamed to ${r.renamed_to})` : ""}.
          </div>
        ))}
        {whatIf.invalid_slices.length > 0 && (
          <SliceTable
            slices={whatIf.invalid_slices}
            testId="impact-breaks"
            tone="hot"
            title={`${plural(whatIf.invalid_slices.length, "running slice")} this publish would break`}
          />
        )}
        {whatIf.already_invalid_slices.length > 0 && (
          <SliceTable
            slices={whatIf.already_invalid_slices}
            testId="impact-already-broken"
            tone="warn"
            title={`${plural(whatIf.already_invalid_slices.length, "running slice")} already broken by the published config (not this publish)`}
          />
        )}
        {whatIf.overbooked_chips.length > 0 && (
          <div className="mt-8 warn-text">
            {whatIf.overbooked_chips.length} chip{whatIf.overbooked_chips.length > 1 ? "s" : ""} would hold more slices than their new slot count (e.g.{" "}
            {whatIf.overbooked_chips[0].node_name} #{whatIf.overbooked_chips[0].chip_index}: {whatIf.overbooked_chips[0].slots_used} used of{" "}
            {whatIf.overbooked_chips[0].slots_per_chip}).
          </div>
        )}
      </div>
    </div>
  );
}

function plural(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? "" : "s"}`;
}

/** Each pod once, as the API names it in confirm_breaking: namespace/pod. */
function slicePods(slices: WhatIfSlice[]): string[] {
  return [...new Set(slices.map((s) => `${s.namespace}/${s.pod_name}`))];
}

/** Each template once, as the API names it in confirm_breaking_templates: commonWord/template. */
function sliceTemplates(slices: WhatIfSlice[]): string[] {
  return [...new Set(slices.map((s) => `${s.common_word}/${s.template || "whole-card"}`))].sort();
}

function SliceTable({ slices, title, tone, testId }: { slices: WhatIfSlice[]; title: string; tone: "hot" | "warn"; testId: string }) {
  return (
    <div data-testid={testId}>
      <div className={`slice-table-title ${tone}-text`}>{title}</div>
      <table className="data">
        <thead>
          <tr>
            <th>Pod</th>
            <th>Chip</th>
            <th>Template</th>
            <th>Why</th>
          </tr>
        </thead>
        <tbody>
          {slices.slice(0, 50).map((s) => (
            <tr key={`${s.namespace}/${s.pod_name}/${s.chip_uuid}`}>
              <td className="mono">
                {s.namespace}/{s.pod_name}
              </td>
              <td>
                {s.node_name} #{s.chip_index ?? "?"}
              </td>
              <td>{s.template || "–"}</td>
              <td>{s.reason}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
