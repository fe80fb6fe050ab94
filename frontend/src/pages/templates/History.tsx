// Every stored version of the device config: compare any two, read one,
// roll back to one (a new version with its exact text).

import { useEffect, useState } from "react";
import { api, ApiError } from "../../api/client";
import type { DeviceConfigVersion, Diff, Page, PublishResult } from "../../api/types";
import { EventTable } from "../../components/EventTable";
import { versionColumns } from "../../components/VersionColumns";
import { Banner, DiffView, ErrorNote, Field, Loading, Modal } from "../../components/ui";
import { useT } from "../../i18n/I18nProvider";
import { mapErrors, type FieldErrors } from "../../lib/errors";
import { dateTime } from "../../lib/format";
import { useApi } from "../../lib/useApi";
import { useSession } from "../../state/session";


export function HistoryTab({ clusterId, refreshTick, onRolledBack }: { clusterId: number; refreshTick: number; onRolledBack: () => void }) {
  const t = useT();
  const { can } = useSession();
  const versions = useApi(
    (signal) => api.get<Page<DeviceConfigVersion>>(`/api/device-config-versions/?cluster=${clusterId}&page_size=200`, signal),
    [clusterId, refreshTick],
  );
  const list = [...(versions.data?.results ?? [])].sort((a, b) => b.number - a.number);
  const [a, setA] = useState<number | null>(null);
  const [b, setB] = useState<number | null>(null);
  useEffect(() => {
    if (list.length && (a === null || !list.some((v) => v.id === a) || b === null || !list.some((v) => v.id === b))) {
      setB(list[0].id);
      setA((list[1] ?? list[0]).id);
    }
  }, [versions.data]); // eslint-disable-line react-hooks/exhaustive-deps
  const diff = useApi(
    a !== null && b !== null && a !== b ? (signal) => api.get<Diff>(`/api/device-config-versions/${a}/diff/?other=${b}`, signal) : null,
    [a, b],
  );
  const [viewing, setViewing] = useState<DeviceConfigVersion | null>(null);
  const [rollback, setRollback] = useState<DeviceConfigVersion | null>(null);
  const [done, setDone] = useState<PublishResult | null>(null);
  const byId = (id: number | null) => list.find((v) => v.id === id);
  const newest = list[0]?.id;
  const columns = versionColumns<DeviceConfigVersion>({
    keyOf: (v) => v.id,
    a,
    b,
    setA,
    setB,
    newest,
    radioName: "",
    onView: setViewing,
    onRollback: can("operator") ? setRollback : null,
    rollbackTestId: (v) => `rollback-v${v.number}`,
  });

  return (
    <>
      {done && (
        <Banner kind="ok">
          {t("templates.history.rolledBack", { number: done.number, of: done.rollback_of ?? "?", resourceVersion: done.resource_version })}
        </Banner>
      )}
      <div className="grid versions-grid">
        <div className="panel">
          <div className="panel-head">
            <h2>{t("templates.history.versions")}</h2>
            <span className="right">{t("templates.history.chooseAB")}</span>
          </div>
          <ErrorNote error={versions.error} onRetry={versions.reload} />
          {!versions.data ? (
            <Loading />
          ) : (
            <EventTable rows={list} rowKey={(v) => v.id} columns={columns} testId="versions-table" rowClass={(v) => (v.id === b ? "selected" : "")} scroll />
          )}
        </div>
        <div className="panel">
          <div className="panel-head">
            <h2>
              {byId(a) && byId(b) ? (
                <>
                  v{byId(a)!.number} → v{byId(b)!.number}
                </>
              ) : (
                t("templates.history.diff")
              )}
            </h2>
          </div>
          <ErrorNote error={diff.error} />
          {a === b ? (
            <div className="empty">{t("templates.history.chooseTwo")}</div>
          ) : diff.data ? (
            <DiffView diff={diff.data.diff} empty={t("templates.history.identical")} />
          ) : (
            <Loading />
          )}
        </div>
      </div>
      {viewing && <VersionText version={viewing} onClose={() => setViewing(null)} />}
      {rollback && (
        <RollbackDialog
          clusterId={clusterId}
          version={rollback}
          onClose={() => setRollback(null)}
          onDone={(r) => {
            setDone(r);
            setRollback(null);
            versions.reload();
            onRolledBack();
          }}
        />
      )}
    </>
  );
}

function VersionText({ version, onClose }: { version: DeviceConfigVersion; onClose: () => void }) {
  const t = useT();
  const full = useApi((signal) => api.get<DeviceConfigVersion>(`/api/device-config-versions/${version.id}/`, signal), [version.id]);
  return (
    <Modal title={t("templates.history.versionTitle", { number: version.number, source: t(`templates.source.${version.source}`) })} onClose={onClose}>
      <ErrorNote error={full.error} />
      {full.data ? <pre className="code">{full.data.text}</pre> : <Loading />}
    </Modal>
  );
}

function RollbackDialog({
  clusterId,
  version,
  onClose,
  onDone,
}: {
  clusterId: number;
  version: DeviceConfigVersion;
  onClose: () => void;
  onDone: (r: PublishResult) => void;
}) {
  const t = useT();
  const { can } = useSession();
  const [reason, setReason] = useState(() => t("templates.history.rollbackReason", { number: version.number }));
  const [busy, setBusy] = useState(false);
  const [errors, setErrors] = useState<FieldErrors>({ fields: {}, form: [] });
  const [conflict, setConflict] = useState<string | null>(null);
  const submit = async (force: boolean) => {
    setBusy(true);
    setErrors({ fields: {}, form: [] });
    try {
      onDone(await api.post<PublishResult>(`/api/clusters/${clusterId}/rollback/`, { version: version.number, reason, force }));
    } catch (e) {
      if (e instanceof ApiError && e.status === 409) setConflict(e.message);
      else if (e instanceof ApiError) setErrors(mapErrors(e.body, ["reason", "version"]));
      else setErrors({ fields: {}, form: [String(e)] });
    } finally {
      setBusy(false);
    }
  };
  return (
    <Modal
      title={t("templates.history.rollbackTitle", { number: version.number })}
      onClose={onClose}
      footer={
        <>
          <button className="btn" onClick={onClose}>
            {t("templates.cancel")}
          </button>
          {conflict && can("admin") && (
            <button className="btn danger solid" disabled={busy} onClick={() => void submit(true)}>
              {t("templates.history.force")}
            </button>
          )}
          <button className="btn primary" disabled={busy || !reason.trim()} onClick={() => void submit(false)}>
            {busy ? t("templates.publishing") : t("templates.history.publishText", { number: version.number })}
          </button>
        </>
      }
    >
      <p>
        {t("templates.history.rollbackText", { number: version.number, source: t(`templates.source.${version.source}`), date: dateTime(version.created_at) })}
      </p>
      <Field label={t("templates.reason")} errors={errors.fields.reason}>
        <input className="input" value={reason} onChange={(e) => setReason(e.target.value)} />
      </Field>
      {errors.fields.version?.map((m) => (
        <div key={m} className="field-error">
          {m}
        </div>
      ))}
      {errors.form.length > 0 && <div className="field-error">{errors.form.join(" ")}</div>}
      {conflict && <Banner kind="error">{conflict}</Banner>}
    </Modal>
  );
}
