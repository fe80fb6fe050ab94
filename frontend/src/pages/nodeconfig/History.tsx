// Every version of the node config (GET .../node-config/versions/): source,
// author, reason and time; the diff between any two (GET .../diff/?from=&to=);
// a version's text; a rollback with a reason (POST .../rollback/, a new
// version with that text, under the same guards as a publish).

import { useEffect, useState } from "react";
import { api } from "../../api/client";
import type { NodeConfigDiff, NodeConfigPublishResult, NodeConfigVersion, Page } from "../../api/types";
import { EventTable } from "../../components/EventTable";
import { versionColumns, versionSource } from "../../components/VersionColumns";
import { ReasonModal } from "../../components/ReasonModal";
import { Banner, DiffView, ErrorNote, Loading, Modal } from "../../components/ui";
import { useT } from "../../i18n/I18nProvider";
import { dateTime } from "../../lib/format";
import { useApi } from "../../lib/useApi";
import { useSession } from "../../state/session";
import { useGuards } from "./Publish";


export function NodeConfigHistory({ clusterId, refreshTick, onRolledBack }: { clusterId: number; refreshTick: number; onRolledBack: () => void }) {
  const t = useT();
  const { can } = useSession();
  const versions = useApi(
    (signal) => api.get<Page<NodeConfigVersion>>(`/api/clusters/${clusterId}/node-config/versions/?page_size=200`, signal),
    [clusterId, refreshTick],
  );
  const list = versions.data?.results ?? [];
  const [a, setA] = useState<number | null>(null);
  const [b, setB] = useState<number | null>(null);
  // the newest two by default, again whenever the list changes under a choice it no longer has
  useEffect(() => {
    const has = (n: number | null) => list.some((v) => v.number === n);
    if (list.length && (!has(a) || !has(b))) {
      setB(list[0].number);
      setA((list[1] ?? list[0]).number);
    }
  }, [versions.data]); // eslint-disable-line react-hooks/exhaustive-deps
  const diff = useApi(
    a !== null && b !== null && a !== b ? (signal) => api.get<NodeConfigDiff>(`/api/clusters/${clusterId}/node-config/diff/?from=${a}&to=${b}`, signal) : null,
    [clusterId, a, b],
  );
  const [viewing, setViewing] = useState<NodeConfigVersion | null>(null);
  const [rollback, setRollback] = useState<NodeConfigVersion | null>(null);
  const [done, setDone] = useState<NodeConfigPublishResult | null>(null);
  const newest = list[0]?.number;
  const columns = versionColumns<NodeConfigVersion>({
    keyOf: (v) => v.number,
    a,
    b,
    setA,
    setB,
    newest,
    radioName: "nc-",
    onView: setViewing,
    onRollback: can("operator") ? setRollback : null,
    rollbackTestId: (v) => `nc-rollback-v${v.number}`,
  });
  return (
    <div className="panel" data-testid="node-config-history">
      <div className="panel-head">
        <h2>{t("nodeConfig.history.title")}</h2>
        <span className="right">{t("nodeConfig.history.chooseAB")}</span>
      </div>
      {done && (
        <Banner kind="ok" testId="nc-rollback-result">
          {t("nodeConfig.history.rolledBack", { number: done.number, of: done.rollback_of ?? "?" })}
        </Banner>
      )}
      <ErrorNote error={versions.error} onRetry={versions.reload} />
      <div className="grid versions-grid">
        {!versions.data ? (
          <Loading label={t("nodeConfig.history.loading")} />
        ) : list.length === 0 ? (
          <div className="empty">{t("nodeConfig.history.noVersion")}</div>
        ) : (
          <EventTable rows={list} rowKey={(v) => v.id} columns={columns} testId="nc-versions" rowClass={(v) => (v.number === b ? "selected" : "")} scroll />
        )}
        <div data-testid="nc-version-diff">
          <h3 className="section-title">{a !== null && b !== null ? `v${a} → v${b}` : t("nodeConfig.history.diff")}</h3>
          <ErrorNote error={diff.error} />
          {a === b ? (
            <div className="empty">{t("nodeConfig.history.chooseTwo")}</div>
          ) : diff.data ? (
            <DiffView diff={diff.data.diff} empty={t("nodeConfig.history.identical")} />
          ) : (
            <Loading label={t("nodeConfig.history.loading")} />
          )}
        </div>
      </div>
      {viewing && (
        <Modal title={`v${viewing.number} (${versionSource(viewing.source)})`} onClose={() => setViewing(null)}>
          <pre className="code">{viewing.text}</pre>
        </Modal>
      )}
      {rollback && (
        <RollbackDialog
          clusterId={clusterId}
          version={rollback}
          onClose={() => setRollback(null)}
          onReload={() => {
            setRollback(null);
            versions.reload();
            onRolledBack();
          }}
          onDone={(r) => {
            setDone(r);
            setRollback(null);
            versions.reload();
            onRolledBack();
          }}
        />
      )}
    </div>
  );
}

function RollbackDialog({
  clusterId,
  version,
  onClose,
  onDone,
  onReload,
}: {
  clusterId: number;
  version: NodeConfigVersion;
  onClose: () => void;
  onDone: (r: NodeConfigPublishResult) => void;
  /** after a conflict: read everything again */
  onReload: () => void;
}) {
  const t = useT();
  const guards = useGuards(clusterId, onReload);
  return (
    <ReasonModal
      title={t("nodeConfig.rollback.title", { number: version.number })}
      verb={t("nodeConfig.rollback.verb", { number: version.number })}
      testId="nc-rollback"
      onClose={onClose}
      explain={guards.explain}
      submit={(reason) =>
        guards.guarded(async () => {
          onDone(await api.post<NodeConfigPublishResult>(`/api/clusters/${clusterId}/node-config/rollback/`, { version: version.number, reason, ...guards.confirms }));
        })
      }
    >
      <p className="small-text">
        {t("nodeConfig.rollback.explain", { number: version.number, source: versionSource(version.source), when: dateTime(version.created_at) })}
      </p>
      {guards.boxes}
    </ReasonModal>
  );
}
