// The chip drawer's acts: Isolate / Restore / Drain / Uncordon as the chip's
// state allows (lib/chipState.ts chipActs), each showing first what will
// happen, then asking for a reason, then saying what the API answered. Above
// the buttons, where the chip stands: an isolation waiting for its proof (what
// the portal saw, and a warning once it is overdue), the drain holding it.

import { useEffect, useState, type ReactNode } from "react";
import { api, ApiError } from "../../api/client";
import type { ChipDetail, Drain, NodeConfigHealth, Slice } from "../../api/types";
import { ReasonModal } from "../../components/ReasonModal";
import { Banner, CopyText } from "../../components/ui";
import { useT } from "../../i18n/I18nProvider";
import { chipActs, inIsolation, isPending, stateLabel, type ChipAct, type ChipStateName } from "../../lib/chipState";
import type { Chip } from "../../lib/chips";
import { ago, dateTime, mb } from "../../lib/format";
import { Link } from "../../lib/router";
import { useApi, useNow } from "../../lib/useApi";
import { useSession } from "../../state/session";
import { DrainDialog, drainSummary } from "./DrainPlan";
import { useRichT } from "../../i18n/rich";

export function ChipActions({
  chip,
  slices,
  clusterId,
  request,
  onRequestTaken,
}: {
  chip: Chip;
  slices: readonly Slice[] | undefined;
  clusterId: number;
  /** an act to open at once (a suggestion's "Isolate…"), if the state allows it */
  request?: ChipAct | null;
  onRequestTaken?: () => void;
}) {
  const t = useT();
  const rich = useRichT();
  const { me } = useSession();
  const now = useNow(5000);
  const pending = isPending(chip.state);
  const name = `${chip.node} · ${chip.type} #${chip.index}`;
  // The chip's REST row: isolation and drain fields the live row does not carry.
  // Refetched when the live row changes, and every 5 s while a proof is awaited
  // (what the portal saw changes without the state changing).
  const detail = useApi((signal) => api.get<ChipDetail>(`/api/chips/${chip.id}/`, signal), [chip, pending ? now : 0]);
  const [open, setOpen] = useState<ChipAct | null>(null);
  const [result, setResult] = useState<string | null>(null);
  const acts = chipActs(chip.state, chip.cordoned, me.role);
  useEffect(() => {
    if (!request) return;
    if (acts.includes(request)) setOpen(request);
    onRequestTaken?.();
  }, [request]); // eslint-disable-line react-hooks/exhaustive-deps
  const done = (text: string) => {
    setOpen(null);
    setResult(text);
    detail.reload();
  };
  const post = (act: "isolate" | "restore" | "uncordon") => async (reason: string) => {
    await api.post(`/api/chips/${chip.id}/${act}/`, { reason });
    done(t(`chips.result.${act}`));
  };
  return (
    <div data-testid="chip-actions">
      {detail.data && <ChipStanding chip={detail.data} now={now} />}
      {result && (
        <Banner kind="ok" testId="chip-act-result">
          {result}
        </Banner>
      )}
      {acts.length > 0 && (
        <div className="toolbar flat">
          {acts.map((act) => (
            <button
              key={act}
              className={`btn small${act === "isolate" || act === "drain" ? " danger" : ""}`}
              onClick={() => {
                setResult(null);
                setOpen(act);
              }}
              data-testid={`chip-act-${act}`}
            >
              {t(`chips.act.${act}`)}
            </button>
          ))}
        </div>
      )}
      {open === "drain" && (
        <DrainDialog
          target={{ kind: "chips", id: chip.id }}
          title={t("chips.drainTitle", { name })}
          onClose={() => setOpen(null)}
          onDone={(d: Drain) => done(drainSummary(d, t))}
        />
      )}
      {open === "isolate" && (
        <ReasonModal
          title={t("chips.isolateTitle", { name })}
          verb={t("chips.act.isolate")}
          tone="danger"
          testId="isolate"
          onClose={() => setOpen(null)}
          submit={post("isolate")}
          explain={(e) => <NodeConfigFix error={e} clusterId={clusterId} />}
        >
          <IsolatePreview chip={chip} slices={slices} clusterId={clusterId} onDrainFirst={() => setOpen("drain")} />
        </ReasonModal>
      )}
      {open === "restore" && (
        <ReasonModal
          title={t("chips.restoreTitle", { name })}
          verb={t("chips.act.restore")}
          testId="restore"
          onClose={() => setOpen(null)}
          submit={post("restore")}
          explain={(e) => <NodeConfigFix error={e} clusterId={clusterId} />}
        >
          <p className="small-text">{rich("chips.restoreExplain", { node: chip.node })}</p>
        </ReasonModal>
      )}
      {open === "uncordon" && (
        <ReasonModal
          title={t("chips.uncordonTitle", { name })}
          verb={t("chips.act.uncordon")}
          testId="uncordon"
          onClose={() => setOpen(null)}
          submit={post("uncordon")}
        >
          <p className="small-text">{t("chips.uncordonExplain")}</p>
        </ReasonModal>
      )}
    </div>
  );
}

/** Where the chip stands: an isolation (pending, overdue or done) and the drain that holds it. */
function ChipStanding({ chip, now }: { chip: ChipDetail; now: number }) {
  const t = useT();
  const rich = useRichT();
  const waiting = chip.isolation === "isolating" || chip.isolation === "restoring";
  const word = chip.isolation ? stateLabel(chip.isolation as ChipStateName, t) : "";
  return (
    <>
      {chip.isolation && (
        <Banner kind={chip.isolation_overdue ? "warn" : "info"} testId="chip-isolation">
          <b>{waiting ? `${word}…` : word}</b>{" "}
          <span title={dateTime(chip.isolation_since)}>{t("chips.standing.since", { ago: ago(chip.isolation_since, now) })}</span>
          {chip.isolation_by && <> {t("chips.standing.by", { who: chip.isolation_by })}</>}
          {chip.isolation_reason && t("chips.standing.reason", { reason: chip.isolation_reason })}
          {chip.isolation_seen && (
            <div className="small-text" data-testid="chip-isolation-seen">
              {t("chips.standing.seen", { seen: chip.isolation_seen })}
            </div>
          )}
          {chip.isolation_overdue && <div data-testid="chip-isolation-overdue">{rich("chips.standing.overdue", { node: chip.node })}</div>}
        </Banner>
      )}
      {chip.drain !== null && <DrainLine id={chip.drain} />}
    </>
  );
}

function DrainLine({ id }: { id: number }) {
  const t = useT();
  const drain = useApi((signal) => api.get<Drain>(`/api/drains/${id}/`, signal), [id]);
  return (
    <Banner kind="info" testId="chip-drain">
      {drain.data ? drainSummary(drain.data, t) : t("chips.drainNumber", { id })} · <Link to={`/drains?drain=${id}`}>{t("chips.openOnDrains")}</Link>
    </Banner>
  );
}

/** Isolate: what it does, the slices that keep running until drained (with Drain first), and the node config's health on that node. */
function IsolatePreview({ chip, slices, clusterId, onDrainFirst }: { chip: Chip; slices: readonly Slice[] | undefined; clusterId: number; onDrainFirst: () => void }) {
  const t = useT();
  const rich = useRichT();
  const health = useApi((signal) => api.get<NodeConfigHealth>(`/api/clusters/${clusterId}/node-config/health/`, signal), [clusterId]);
  const node = health.data?.nodes.find((n) => n.name === chip.node);
  const running = slices ?? [];
  const nodeConfigLink = (chunks: ReactNode[]) => <Link to="/node-config">{chunks}</Link>;
  return (
    <div data-testid="isolate-preview">
      <p className="small-text">{rich("chips.isolateExplain", { node: chip.node })}</p>
      {node && node.check_status !== "ok" && (
        <Banner kind={node.check_status === "fail" ? "error" : "warn"} testId="isolate-node-health">
          {node.message}
          {node.fix && <div className="small-text">{t("chips.fix", { fix: node.fix })}</div>}
          <div className="small-text">{rich("chips.nodeConfigPatch", { link: nodeConfigLink })}</div>
        </Banner>
      )}
      {running.length > 0 ? (
        <Banner
          kind="warn"
          testId="isolate-slices"
          action={
            inIsolation(chip.state) || chip.state === "draining" || chip.state === "drained" ? undefined : (
              <button className="btn small" onClick={onDrainFirst} data-testid="isolate-drain-first">
                {t("chips.drainFirst")}
              </button>
            )
          }
        >
          {t("chips.slicesRun", { count: running.length })}
          <ul className="plain-list">
            {running.map((s) => (
              <li key={s.id} className="mono small-text">
                {s.namespace}/{s.pod_name} <span className="muted">
                  {s.template || t("chips.wholeCard")} · {mb(s.memory)}
                </span>
              </li>
            ))}
          </ul>
        </Banner>
      ) : (
        slices && <div className="muted small-text mb-12">{t("chips.noSliceRuns")}</div>
      )}
    </div>
  );
}

/** Under an isolate/restore error about the node's plugin (400 naming `node`): the DaemonSet patch to copy. */
function NodeConfigFix({ error, clusterId }: { error: ApiError; clusterId: number }): ReactNode {
  const t = useT();
  const rich = useRichT();
  const aboutNode = error.status === 400 && !!error.body.errors && "node" in error.body.errors;
  const health = useApi(
    aboutNode ? (signal) => api.get<NodeConfigHealth>(`/api/clusters/${clusterId}/node-config/health/`, signal) : null,
    [aboutNode, clusterId],
  );
  if (!aboutNode) return null;
  return (
    <div className="mb-12" data-testid="node-config-fix">
      {health.data?.kubectl ? (
        <>
          <div className="small-text">{t("chips.wireNodeConfig")}</div>
          <CopyText value={health.data.kubectl} testId="node-config-kubectl" />
        </>
      ) : null}
      <div className="small-text">{rich("chips.nodeConfigReads", { link: (chunks: ReactNode[]) => <Link to="/node-config">{chunks}</Link> })}</div>
    </div>
  );
}
