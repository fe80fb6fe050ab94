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
import { chipActs, inIsolation, isPending, type ChipAct } from "../../lib/chipState";
import type { Chip } from "../../lib/chips";
import { ago, dateTime, mb } from "../../lib/format";
import { Link } from "../../lib/router";
import { useApi, useNow } from "../../lib/useApi";
import { useSession } from "../../state/session";
import { DrainDialog, drainSummary } from "./DrainPlan";

const LABEL: Record<ChipAct, string> = { isolate: "Isolate", restore: "Restore", drain: "Drain", uncordon: "Uncordon" };

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
  const { me } = useSession();
  const now = useNow(5000);
  const pending = isPending(chip.state);
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
    done(
      act === "isolate"
        ? "Isolating: the chip is filtered in its node's config and the device plugin pod restarts; it shows isolated once the plugin stops registering it."
        : act === "restore"
          ? "Restoring: the filter is lifted and the device plugin pod restarts; the chip is back in service once the plugin registers it again."
          : "Uncordoned: the chip is back in service.",
    );
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
              {LABEL[act]}
            </button>
          ))}
        </div>
      )}
      {open === "drain" && (
        <DrainDialog
          target={{ kind: "chips", id: chip.id }}
          title={`Drain ${chip.node} · ${chip.type} #${chip.index}`}
          onClose={() => setOpen(null)}
          onDone={(d: Drain) => done(drainSummary(d))}
        />
      )}
      {open === "isolate" && (
        <ReasonModal
          title={`Isolate ${chip.node} · ${chip.type} #${chip.index}`}
          verb="Isolate"
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
          title={`Restore ${chip.node} · ${chip.type} #${chip.index}`}
          verb="Restore"
          testId="restore"
          onClose={() => setOpen(null)}
          submit={post("restore")}
          explain={(e) => <NodeConfigFix error={e} clusterId={clusterId} />}
        >
          <p className="small-text">
            Takes the chip&apos;s UUID out of <span className="mono">filterDevices</span> in {chip.node}&apos;s node config and restarts the device plugin pod
            on {chip.node} (its DaemonSet recreates it). The chip shows <b>restoring</b> until the plugin registers it again and the node&apos;s allocatable
            grows back; then every scheduler may place on it.
          </p>
        </ReasonModal>
      )}
      {open === "uncordon" && (
        <ReasonModal title={`Uncordon ${chip.node} · ${chip.type} #${chip.index}`} verb="Uncordon" testId="uncordon" onClose={() => setOpen(null)} submit={post("uncordon")}>
          <p className="small-text">
            Puts the chip back in service: the portal places on it again. An open drain on it ends (the evictions it has not made yet are not made).
          </p>
        </ReasonModal>
      )}
    </div>
  );
}

/** Where the chip stands: an isolation (pending, overdue or done) and the drain that holds it. */
function ChipStanding({ chip, now }: { chip: ChipDetail; now: number }) {
  const waiting = chip.isolation === "isolating" || chip.isolation === "restoring";
  return (
    <>
      {chip.isolation && (
        <Banner kind={chip.isolation_overdue ? "warn" : "info"} testId="chip-isolation">
          <b>{waiting ? `${chip.isolation}…` : chip.isolation}</b>{" "}
          <span title={dateTime(chip.isolation_since)}>since {ago(chip.isolation_since, now)}</span>
          {chip.isolation_by && ` by ${chip.isolation_by}`}
          {chip.isolation_reason && <>: {chip.isolation_reason}</>}
          {chip.isolation_seen && (
            <div className="small-text" data-testid="chip-isolation-seen">
              Seen: {chip.isolation_seen}
            </div>
          )}
          {chip.isolation_overdue && (
            <div data-testid="chip-isolation-overdue">
              <b>Overdue:</b> the proof has not come within the timeout. The portal still keeps its own work off the chip; check the device plugin pod
              on {chip.node} and its node config entry.
            </div>
          )}
        </Banner>
      )}
      {chip.drain !== null && <DrainLine id={chip.drain} />}
    </>
  );
}

function DrainLine({ id }: { id: number }) {
  const drain = useApi((signal) => api.get<Drain>(`/api/drains/${id}/`, signal), [id]);
  return (
    <Banner kind="info" testId="chip-drain">
      {drain.data ? drainSummary(drain.data) : `Drain #${id}`} · <Link to={`/drains?drain=${id}`}>open on the Drains page</Link>
    </Banner>
  );
}

/** Isolate: what it does, the slices that keep running until drained (with Drain first), and the node config's health on that node. */
function IsolatePreview({ chip, slices, clusterId, onDrainFirst }: { chip: Chip; slices: readonly Slice[] | undefined; clusterId: number; onDrainFirst: () => void }) {
  const health = useApi((signal) => api.get<NodeConfigHealth>(`/api/clusters/${clusterId}/node-config/health/`, signal), [clusterId]);
  const node = health.data?.nodes.find((n) => n.name === chip.node);
  const running = slices ?? [];
  return (
    <div data-testid="isolate-preview">
      <p className="small-text">
        Publishes the chip&apos;s UUID into <span className="mono">filterDevices</span> of {chip.node}&apos;s entry in the node config and restarts only the
        device plugin pod on {chip.node}. The portal stops booking the chip at once; the chip shows <b>isolating</b> until the plugin stops registering it
        and the node&apos;s allocatable shrinks, then <b>isolated</b>: no scheduler places there.
      </p>
      {node && node.check_status !== "ok" && (
        <Banner kind={node.check_status === "fail" ? "error" : "warn"} testId="isolate-node-health">
          {node.message}
          {node.fix && <div className="small-text">Fix: {node.fix}</div>}
          <div className="small-text">
            <Link to="/node-config">The Node config page</Link> has the DaemonSet patch.
          </div>
        </Banner>
      )}
      {running.length > 0 ? (
        <Banner
          kind="warn"
          testId="isolate-slices"
          action={
            inIsolation(chip.state) || chip.state === "draining" || chip.state === "drained" ? undefined : (
              <button className="btn small" onClick={onDrainFirst} data-testid="isolate-drain-first">
                Drain first
              </button>
            )
          }
        >
          {running.length === 1 ? "1 slice runs" : `${running.length} slices run`} on this chip and keep running until drained (isolation does not touch running
          containers):
          <ul className="plain-list">
            {running.map((s) => (
              <li key={s.id} className="mono small-text">
                {s.namespace}/{s.pod_name} <span className="muted">{s.template || "whole card"} · {mb(s.memory)}</span>
              </li>
            ))}
          </ul>
        </Banner>
      ) : (
        slices && <div className="muted small-text mb-12">No slice runs on this chip.</div>
      )}
    </div>
  );
}

/** Under an isolate/restore error about the node's plugin (400 naming `node`): the DaemonSet patch to copy. */
function NodeConfigFix({ error, clusterId }: { error: ApiError; clusterId: number }): ReactNode {
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
          <div className="small-text">Wire the node config into the device plugin&apos;s DaemonSet:</div>
          <CopyText value={health.data.kubectl} testId="node-config-kubectl" />
        </>
      ) : null}
      <div className="small-text">
        <Link to="/node-config">The Node config page</Link> says, per node, what the plugin reads.
      </div>
    </div>
  );
}
