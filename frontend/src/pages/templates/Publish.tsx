// Publishing: what would change (diff and impact), why (a reason), and the
// write itself, guarded against hand edits of the ConfigMap (409 drift).

import { useState, type ReactNode } from "react";
import { api, ApiError } from "../../api/client";
import { ErrorCode } from "../../api/errorCodes";
import type { DeviceConfigState, DeviceConfigVersion, Drift, DriftConflictDetail, PublishResult, WhatIf, WhatIfSlice } from "../../api/types";
import { Badge, Banner, DiffView, ErrorNote, Field, Modal } from "../../components/ui";
import { useI18n, useT } from "../../i18n/I18nProvider";
import { mapErrors, type FieldErrors } from "../../lib/errors";
import { mb } from "../../lib/format";
import { useSession } from "../../state/session";
import { RestartsPanel } from "../Restarts";

/** What an admin types to publish over a hand edit (the same word in every language). */
const FORCE_WORD = "force";

const bold = (chunks: ReactNode[]) => <b>{chunks}</b>;
const mono = (chunks: ReactNode[]) => <span className="mono">{chunks}</span>;

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
  const { t, intl } = useI18n();
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
      const answer = await api.post<DeviceConfigVersion>(`/api/clusters/${clusterId}/adopt/`, { reason: reason || t("templates.publish.adoptReason") });
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
          title={t("templates.publish.forceTitle")}
          onClose={() => setAskForce(false)}
          footer={
            <>
              <button className="btn" onClick={() => setAskForce(false)}>
                {t("templates.cancel")}
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
                {t("templates.publish.forceConfirm")}
              </button>
            </>
          }
        >
          <p>
            {intl.formatMessage({ id: "templates.publish.forceText" }, { b: bold })}
          </p>
          <DiffView diff={conflict.detail?.diff_live ?? ""} empty={t("templates.publish.forceDiffEmpty")} />
          <Field label={t("templates.publish.forceType", { word: FORCE_WORD })}>
            <input value={forceTyped} onChange={(e) => setForceTyped(e.target.value)} name="force_confirmation" autoComplete="off" data-testid="force-typed" />
          </Field>
        </Modal>
      )}
      {askAdopt && (
        <Modal
          title={t("templates.publish.adoptTitle")}
          onClose={() => setAskAdopt(false)}
          footer={
            <>
              <button className="btn" onClick={() => setAskAdopt(false)}>
                {t("templates.cancel")}
              </button>
              <button className={`btn${unpublished ? " danger solid" : " primary"}`} disabled={busy} onClick={() => void adopt()} data-testid="adopt-confirm">
                {unpublished ? t("templates.publish.adoptDiscard") : t("templates.publish.adoptLive")}
              </button>
            </>
          }
        >
          <p>
            {t("templates.publish.adoptText")}
          </p>
          {unpublished ? (
            <div data-testid="adopt-discards">
              <p>
                {intl.formatMessage({ id: "templates.publish.adoptDiscards" }, { b: bold, version: drift?.baseline_version ?? "–" })}
              </p>
              <DiffView diff={unpublished} />
            </div>
          ) : (
            <p className="muted">{t("templates.publish.adoptNothing")}</p>
          )}
        </Modal>
      )}
      <ErrorNote error={configError} />
      {showDrift && drift && (
        <Banner kind="error" testId="drift-banner">
          {intl.formatMessage({ id: "templates.publish.driftBanner" }, { b: bold, version: drift.baseline_version ?? "–" })}
          {can("admin") && (
            <div className="mt-6">
              <button className="btn small" disabled={busy} onClick={() => setAskAdopt(true)} data-testid="adopt">
                {t("templates.publish.adoptLive")}
              </button>
            </div>
          )}
          <details className="mt-6">
            <summary>{t("templates.publish.whatChanged")}</summary>
            <DiffView diff={drift.diff} />
          </details>
        </Banner>
      )}
      <ErrorNote error={driftError} />
      {invalid && (
        <Banner kind="error">
          <b>{t("templates.publish.invalid")}</b>
          <ul className="bullets">
            {config!.errors.map((e, i) => (
              <li key={i}>{e.message}</li>
            ))}
          </ul>
        </Banner>
      )}
      {shapeWarnings.length > 0 && (
        <Banner kind={crashes ? "error" : "warn"} testId="shape-warnings">
          <b>{t("templates.publish.shapeWarnings", { shape: shapeWarnings[0].shape })}</b>
          <ul className="bullets">
            {shapeWarnings.map((w) => (
              <li key={w.workload}>
                {w.message}
                {w.fix && <span className="muted">{t("templates.publish.fix", { fix: w.fix })}</span>}
              </li>
            ))}
          </ul>
        </Banner>
      )}
      {result && (
        <Banner kind="ok" testId="publish-result">
          {intl.formatMessage(
            { id: "templates.publish.result" },
            {
              b: bold,
              number: result.number,
              from: result.previous_resource_version,
              to: result.resource_version,
              forced: result.forced ? "yes" : "no",
            },
          )}
        </Banner>
      )}
      {adopted && (
        <Banner kind="ok">
          {t("templates.publish.adopted", { number: adopted.number })}
        </Banner>
      )}

      <div className="grid cols-2">
        <div className="panel">
          <div className="panel-head">
            <h2>{t("templates.publish.changes")}</h2>
            <span className="right">{config && (config.base_version ? t("templates.publish.fromVersion", { version: config.base_version }) : t("templates.publish.noVersion"))}</span>
          </div>
          <div className="panel-body flush">
            {config && <DiffView diff={config.diff_from_base} empty={t("templates.publish.nothingToPublish", { version: config.base_version ?? "–" })} />}
          </div>
        </div>
        <ImpactPanel whatIf={whatIf} loading={!!whatIfLoading} />
      </div>

      <div className="panel">
        <div className="panel-head">
          <h2>{t("templates.tab.publish")}</h2>
          <span className="right">
            {drift && (drift.in_sync ? <Badge kind="ok">{t("templates.publish.inSync")}</Badge> : <Badge kind="fail">{t("templates.publish.drift")}</Badge>)}
          </span>
        </div>
        <div className="panel-body">
          {!can("operator") ? (
            <div className="muted">{t("templates.publish.readOnly")}</div>
          ) : (
            <form
              onSubmit={(e) => {
                e.preventDefault();
                void publish(false);
              }}
              className="publish-form"
            >
              <Field label={t("templates.publish.reasonLabel")} errors={errors.fields.reason}>
                <textarea
                  className={`input${errors.fields.reason ? " invalid" : ""}`}
                  rows={2}
                  value={reason}
                  onChange={(e) => setReason(e.target.value)}
                  placeholder={t("templates.publish.reasonPlaceholder")}
                  name="reason"
                  data-testid="publish-reason"
                />
              </Field>
              {needsConfirm && (
                <Field label="" errors={errors.fields.confirm_shape}>
                  <label className="hstack gap-6">
                    <input type="checkbox" checked={confirmShape} onChange={(e) => setConfirmShape(e.target.checked)} name="confirm_shape" data-testid="confirm-shape" />
                    {t("templates.publish.confirmShape")}
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
                      {intl.formatMessage(
                        { id: "templates.publish.confirmBreaking" },
                        { mono, templates: breakingTemplates.join(", "), count: breaking.length, pods: breaking.join(", ") },
                      )}
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
                  {busy ? t("templates.publishing") : t("templates.publish.button")}
                </button>
                {nothing && <span className="muted">{t("templates.publish.nothing")}</span>}
              </div>
            </form>
          )}
          <ErrorNote error={failure} />
          {conflict && (
            <div className="mt-12" data-testid="publish-conflict">
              <Banner kind="error">
                <b>{conflict.code === ErrorCode.DRIFT ? t("templates.publish.refusedDrift") : t("templates.publish.refused")}</b> {conflict.message}
                {can("admin") ? (
                  <div className="flex gap-8 mt-8">
                    <button className="btn small" disabled={busy} onClick={() => setAskAdopt(true)} data-testid="adopt">
                      {t("templates.publish.adoptLive")}
                    </button>
                    {conflict.code === ErrorCode.DRIFT && (
                      <button className="btn small danger solid" disabled={busy || !reason.trim() || (needsConfirm && !confirmShape) || needsBreaking}
                        onClick={() => setAskForce(true)}
                        data-testid="force"
                      >
                        {t("templates.publish.forceButton")}
                      </button>
                    )}
                  </div>
                ) : (
                  <div className="mt-6">{t("templates.publish.askAdmin")}</div>
                )}
              </Banner>
              {conflict.detail && (
                <div className="grid cols-2">
                  <div className="panel">
                    <div className="panel-head">
                      <h2>{t("templates.publish.editedByHand")}</h2>
                    </div>
                    <DiffView diff={conflict.detail.diff_live} />
                  </div>
                  <div className="panel">
                    <div className="panel-head">
                      <h2>{t("templates.publish.yours")}</h2>
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
            <h2>{t("templates.publish.written", { number: result.number })}</h2>
          </div>
          <DiffView diff={result.diff} />
        </div>
      )}
      <RestartsPanel clusterId={clusterId} refreshTick={restartTick} />
    </>
  );
}

function ImpactPanel({ whatIf, loading }: { whatIf: WhatIf | undefined; loading: boolean }) {
  const { t, intl } = useI18n();
  if (!whatIf)
    return (
      <div className="panel">
        <div className="empty">{t("templates.impact.computing")}</div>
      </div>
    );
  const changed = whatIf.chip_types.filter(
    (c) => c.chip_type_change !== "unchanged" || c.slots_per_chip !== c.slots_per_chip_before || c.removed_templates.length || c.templates.some((tpl) => tpl.template_change !== "unchanged"),
  );
  return (
    <div className="panel" data-testid="impact">
      <div className="panel-head">
        <h2>{t("templates.impact.title")}</h2>
        <span className="right">{loading && <span className="spinner" />}{whatIf.valid ? <Badge kind="ok">{t("templates.impact.valid")}</Badge> : <Badge kind="fail">{t("templates.impact.invalid")}</Badge>}</span>
      </div>
      <div className="panel-body">
        {whatIf.errors.map((e, i) => (
          <div key={i} className="field-error">
            {e}
          </div>
        ))}
        {changed.length === 0 && whatIf.invalid_slices.length === 0 && whatIf.already_invalid_slices.length === 0 && <div className="muted">{t("templates.impact.noChange")}</div>}
        {changed.map((c) => (
          <div key={c.common_word} className="mb-10">
            <b>{c.common_word}</b> <Badge kind="info">{t(`templates.change.${c.chip_type_change}`)}</Badge>{" "}
            {c.slots_per_chip_before !== null && c.slots_per_chip_before !== c.slots_per_chip ? (
              <span className="warn-text">
                {intl.formatMessage({ id: "templates.impact.slotsChange" }, { b: bold, before: c.slots_per_chip_before, after: c.slots_per_chip })}
              </span>
            ) : (
              <span className="muted">{t("templates.impact.slotsPerChip", { count: c.slots_per_chip })}</span>
            )}
            <ul className="bullets mb-4">
              {c.templates
                .filter((tpl) => tpl.template_change !== "unchanged")
                .map((tpl) => (
                  <li key={tpl.name}>
                    {tpl.template_change === "added"
                      ? t("templates.impact.templateAdded", { name: tpl.name, memory: mb(tpl.memory), fit: tpl.fit_alone })
                      : t("templates.impact.templateResized", { name: tpl.name, before: mb(tpl.memory_before), after: mb(tpl.memory), fit: tpl.fit_alone })}
                  </li>
                ))}
              {c.removed_templates.map((n) => (
                <li key={n} className="hot-text">
                  {t("templates.impact.templateRemoved", { name: n })}
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
            {r.renamed_to
              ? t("templates.impact.chipTypeRenamed", { name: r.common_word, to: r.renamed_to })
              : t("templates.impact.chipTypeRemoved", { name: r.common_word })}
          </div>
        ))}
        {whatIf.invalid_slices.length > 0 && (
          <SliceTable
            slices={whatIf.invalid_slices}
            testId="impact-breaks"
            tone="hot"
            title={t("templates.impact.breaks", { count: whatIf.invalid_slices.length })}
          />
        )}
        {whatIf.already_invalid_slices.length > 0 && (
          <SliceTable
            slices={whatIf.already_invalid_slices}
            testId="impact-already-broken"
            tone="warn"
            title={t("templates.impact.alreadyBroken", { count: whatIf.already_invalid_slices.length })}
          />
        )}
        {whatIf.overbooked_chips.length > 0 && (
          <div className="mt-8 warn-text">
            {t("templates.impact.overbooked", {
              count: whatIf.overbooked_chips.length,
              node: whatIf.overbooked_chips[0].node_name,
              index: whatIf.overbooked_chips[0].chip_index,
              used: whatIf.overbooked_chips[0].slots_used,
              slots: whatIf.overbooked_chips[0].slots_per_chip,
            })}
          </div>
        )}
      </div>
    </div>
  );
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
  const t = useT();
  return (
    <div data-testid={testId}>
      <div className={`slice-table-title ${tone}-text`}>{title}</div>
      <table className="data">
        <thead>
          <tr>
            <th>{t("templates.impact.pod")}</th>
            <th>{t("templates.impact.chip")}</th>
            <th>{t("templates.impact.template")}</th>
            <th>{t("templates.impact.why")}</th>
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
