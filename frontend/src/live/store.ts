// The live state of one cluster, fed by /ws/clusters/<id>/: a snapshot on every
// connect, then deltas. What the server sends (event names, payloads, chip
// columns) is the live contract, ./contract.ts, generated from
// apps/live/events.py. Views subscribe and re-render at most once per
// animation frame, however many deltas arrive (a snapshot: at once).

import type { Translate } from "../i18n/intl";
import { ChipTable } from "../lib/chips";
import { pageLoadsStarted } from "../lib/pageLoads";
import {
  JOINED,
  LiveEvent,
  SNAPSHOT,
  type DeltaMessage,
  type DeltaPayloads,
  type JoinedMessage,
  type SliceDelta,
  type SnapshotMessage,
  type SnapshotPayload,
} from "./contract";

export type ConnectionState =
  | "connecting" // first connection in progress
  | "live" // snapshot received, deltas flowing
  | "reconnecting" // lost; a retry is scheduled (retryAt)
  | "denied" // the server refused us (4401): the session ended
  | "missing" // no such cluster (4404)
  | "closed"; // stopped by the app

export interface SyncInfo {
  state: string;
  lastSyncAt: string | null;
  lastSyncError: string;
}

/**
 * A message as it comes off the socket: parsed JSON of the contract's
 * SnapshotMessage or DeltaMessage. Payload fields are read defensively, and an
 * event this build does not know is ignored.
 */
export interface LiveMessage {
  type: JoinedMessage["type"] | SnapshotMessage["type"] | DeltaMessage["type"];
  event: string;
  payload: Record<string, unknown> | null;
}

/** Counters that tell pages "something of this kind changed: refetch if you show it". */
export interface Ticks {
  slices: number;
  pending: number;
  object: number;
  cluster: number;
  node: number;
  snapshot: number;
  /** CI requests changed (`requests` deltas) */
  requests: number;
  /** preemption proposals changed (`proposal` deltas) */
  proposal: number;
}

/** What the store does with each delta: every event of the contract has one. */
type Handlers = { [E in LiveEvent]: (payload: Partial<DeltaPayloads[E]>, now: number) => void };

const EVENTS: ReadonlySet<string> = new Set(Object.values(LiveEvent));

function isLiveEvent(event: string): event is LiveEvent {
  return EVENTS.has(event);
}

type Listener = () => void;

/** What happened, as a message of the `activity` catalog: read in the language shown (describeActivity). */
export type ActivityDetail =
  | { what: "placed"; template: string; gib: number; node: string; phase: string }
  | { what: "released" | "node_left" | "node_joined" | "node_joined_not_ready" | "node_ready" | "node_not_ready" }
  | { what: "sync_error"; error: string };

/**
 * One line of the live activity feed (newest first). Kept as names and
 * facts, not as sentences: the feed reads in the language the UI shows now,
 * also after a switch.
 */
export interface Activity {
  t: number;
  kind: "slice" | "released" | "node" | "node_not_ready" | "node_removed" | "sync";
  /** a pod or node name; for `sync` the new sync state; "" on a `more` line */
  text: string;
  detail?: ActivityDetail;
  /** a line standing for this many entries left out of a large batch */
  more?: number;
}

/** An activity line as words: "ci/job-1", "vir01 · 3 GiB on a · Running". */
export function describeActivity(a: Activity, t: Translate): { text: string; detail: string } {
  const text = a.more !== undefined ? t("activity.more", { count: a.more }) : a.kind === "sync" ? t("activity.sync", { state: a.text }) : a.text;
  const d = a.detail;
  if (!d) return { text, detail: "" };
  if (d.what === "placed") {
    const template = d.template || t("activity.wholeCard");
    return { text, detail: t("activity.placed", { template, gib: d.gib, node: d.node, phase: d.phase }) };
  }
  if (d.what === "sync_error") return { text, detail: d.error };
  return { text, detail: t(`activity.${d.what}`) };
}

export interface LiveSample {
  t: number;
  byType: Record<string, { memUsed: number; mem: number; slotsUsed: number; slots: number; coreUsed: number; core: number }>;
}

export class ClusterLive {
  readonly chips = new ChipTable();
  connection: ConnectionState = "connecting";
  retryAt: number | null = null;
  lastMessageAt: number | null = null;
  connectedAt: number | null = null;
  sync: SyncInfo = { state: "never", lastSyncAt: null, lastSyncError: "" };
  nodeCount: number | null = null;
  pendingCount: number | null = null;
  /** readiness of the nodes that deltas told about since the last snapshot */
  readonly nodeReady = new Map<string, boolean>();
  /** nodes the last snapshot counted: a delta about them is not a new node */
  private snapshotNodes = new Set<string>();
  ticks: Ticks = { slices: 0, pending: 0, object: 0, cluster: 0, node: 0, snapshot: 0, requests: 0, proposal: 0 };
  /** chip uuids touched by the last slice deltas (the chip drawer refetches when its chip is here) */
  touchedUuids = new Set<string>();
  recentSlices: SliceDelta[] = [];
  /** what happened since the page opened, newest first (at most 100) */
  activity: Activity[] = [];
  /** usage totals sampled while the page is open (the charts' live tail) */
  samples: LiveSample[] = [];
  /** grows on any change; for useSyncExternalStore */
  version = 0;

  private listeners = new Set<Listener>();
  private scheduled = false;
  /**
   * The socket joined before any page asked for data (the early socket at
   * start-up): the next snapshot need not make pages refetch, since all they
   * show was read after the subscription.
   */
  private joinedBeforeAnyLoad = false;

  constructor(
    readonly clusterId: number,
    private readonly schedule: (fn: () => void) => void = defaultSchedule,
  ) {}

  subscribe = (listener: Listener): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  getVersion = (): number => this.version;

  /**
   * Notify subscribers now. For a snapshot: the page a load opens waits for
   * it, and waiting for the next frame to start rendering 8,000 chips put a
   * frame's wait and a frame's paint before the page could show them.
   */
  private changedNow(): void {
    this.version++;
    this.listeners.forEach((l) => l());
  }

  /** Notify subscribers on the next frame (coalesces bursts of deltas). */
  private changed(): void {
    this.version++;
    if (this.scheduled) return;
    this.scheduled = true;
    this.schedule(() => {
      this.scheduled = false;
      this.listeners.forEach((l) => l());
    });
  }

  setConnection(state: ConnectionState, retryAt: number | null = null): void {
    // A new connection (or none) must say again that it joined before the
    // pages asked: a server that does not say so gets the refetch.
    if (state !== "live") this.joinedBeforeAnyLoad = false;
    if (this.connection === state && this.retryAt === retryAt) return;
    this.connection = state;
    this.retryAt = retryAt;
    if (state === "live") this.connectedAt = Date.now();
    this.changed();
  }

  /** Sync state read from the API (the socket only tells when the state changes). */
  setSync(sync: SyncInfo): void {
    const same =
      sync.state === this.sync.state && sync.lastSyncAt === this.sync.lastSyncAt && sync.lastSyncError === this.sync.lastSyncError;
    if (same) return;
    this.sync = sync;
    this.changed();
  }

  /** Record the current totals per chip type (called every few seconds; keeps 6 hours at 10 s). */
  sample(now: number = Date.now()): void {
    if (!this.chips.size) return;
    const byType: LiveSample["byType"] = {};
    for (const c of this.chips.byId.values()) {
      const t = (byType[c.type] ??= { memUsed: 0, mem: 0, slotsUsed: 0, slots: 0, coreUsed: 0, core: 0 });
      t.memUsed += c.memUsed;
      t.mem += c.mem;
      t.slotsUsed += c.slotsUsed;
      t.slots += c.slots;
      t.coreUsed += c.coreUsed;
      t.core += c.core;
    }
    this.samples.push({ t: now, byType });
    if (this.samples.length > 2160) this.samples.splice(0, this.samples.length - 2160);
  }

  /** Apply one message of the socket. Unknown events are ignored. */
  apply(message: LiveMessage, now: number = Date.now()): void {
    if (message.type === JOINED) {
      // Not an update of what pages show: lastMessageAt stays (it dates what
      // the "interrupted" banner shows before the snapshot comes).
      this.joinedBeforeAnyLoad = pageLoadsStarted() === 0;
      return;
    }
    this.lastMessageAt = now;
    const payload = message.payload ?? {};
    if (message.type === SNAPSHOT) {
      this.applySnapshot(payload as Partial<SnapshotPayload>);
      this.changedNow();
      return;
    }
    if (!isLiveEvent(message.event)) return;
    this.dispatch(message.event, payload as Partial<DeltaPayloads[LiveEvent]>, now);
    this.changed();
  }

  private dispatch<E extends LiveEvent>(event: E, payload: Partial<DeltaPayloads[E]>, now: number): void {
    this.handlers[event](payload, now);
  }

  private tick(kind: keyof Ticks): void {
    this.ticks = { ...this.ticks, [kind]: this.ticks[kind] + 1 };
  }

  private readonly handlers: Handlers = {
    chips: (p, now) => {
      this.chips.applyRows(p.rows ?? [], now);
    },
    slices: (p, now) => {
      const upserted = p.upserted ?? [];
      for (const s of upserted) this.touchedUuids.add(s.chip_uuid);
      this.recentSlices = [...upserted, ...this.recentSlices].slice(0, 50);
      this.log(
        now,
        upserted.slice(0, 20).map((s) => ({
          kind: "slice" as const,
          text: `${s.namespace}/${s.pod_name}`,
          detail: { what: "placed", template: s.template || "", gib: Math.round(s.memory / 102.4) / 10, node: s.node_name, phase: s.phase },
        })),
        upserted.length,
      );
      this.tick("slices");
    },
    slices_removed: (p, now) => {
      const pods = p.pods ?? [];
      this.log(
        now,
        pods.slice(0, 20).map((pod) => ({ kind: "released" as const, text: pod, detail: { what: "released" } })),
        pods.length,
      );
      this.tick("slices");
    },
    pending: (p) => {
      if (typeof p.count === "number") this.pendingCount = p.count;
      this.tick("pending");
    },
    pending_reason: () => this.tick("pending"),
    // Batched (one message for many nodes).
    nodes: (p, now) => this.applyNodes(Array.isArray(p.nodes) ? p.nodes : [], now),
    node_removed: (p, now) => {
      if (typeof p.name === "string") {
        const name = p.name;
        this.log(now, [{ kind: "node_removed", text: name, detail: { what: "node_left" } }], 1);
        const counted = this.nodeReady.delete(name) || this.snapshotNodes.delete(name);
        if (counted && this.nodeCount !== null) this.nodeCount--;
        else if (this.nodeCount !== null && this.chips.sorted().some((c) => c.node === name)) this.nodeCount--;
        this.chips.removeNode(name);
      }
      this.tick("node");
    },
    cluster: (p, now) => {
      if (typeof p.sync_state === "string" && p.sync_state !== this.sync.state) {
        const error = String(p.last_sync_error || "");
        this.log(now, [{ kind: "sync", text: p.sync_state, ...(error ? { detail: { what: "sync_error", error } } : {}) }], 1);
      }
      this.sync = {
        state: typeof p.sync_state === "string" ? p.sync_state : this.sync.state,
        lastSyncAt: p.last_sync_at ?? this.sync.lastSyncAt,
        lastSyncError: typeof p.last_sync_error === "string" ? p.last_sync_error : this.sync.lastSyncError,
      };
      this.tick("cluster");
    },
    object: () => this.tick("object"),
    object_removed: () => this.tick("object"),
    requests: () => this.tick("requests"),
    proposal: () => this.tick("proposal"),
  };

  /** Nodes that joined or changed: count the new ones, log joins and readiness changes. */
  private applyNodes(nodes: readonly { name?: unknown; ready?: unknown }[], now: number): void {
    const items: Omit<Activity, "t">[] = [];
    let total = 0;
    for (const n of nodes) {
      if (typeof n?.name !== "string" || !n.name) continue;
      const ready = Boolean(n.ready);
      const before = this.nodeReady.get(n.name);
      const known = before !== undefined || this.snapshotNodes.has(n.name);
      this.nodeReady.set(n.name, ready);
      if (!known && this.nodeCount !== null) this.nodeCount++;
      let detail: ActivityDetail | null = null;
      if (!known) detail = { what: ready ? "node_joined" : "node_joined_not_ready" };
      else if (before !== undefined ? before !== ready : !ready) detail = { what: ready ? "node_ready" : "node_not_ready" };
      if (detail === null) continue;
      total++;
      if (items.length < 20) items.push({ kind: ready ? "node" : "node_not_ready", text: n.name, detail });
    }
    if (total) this.log(now, items, total);
    this.ticks = { ...this.ticks, node: this.ticks.node + 1 };
  }

  private log(now: number, items: Omit<Activity, "t">[], total: number): void {
    const entries: Activity[] = items.map((i) => ({ ...i, t: now }));
    if (total > items.length) entries.push({ t: now, kind: entries[0]?.kind ?? "slice", text: "", more: total - items.length });
    this.activity = [...entries, ...this.activity].slice(0, 100);
  }

  private applySnapshot(p: Partial<SnapshotPayload>): void {
    this.chips.load(p.chips?.columns, p.chips?.rows ?? []);
    const s: Partial<SnapshotPayload["summary"]> = p.summary ?? {};
    this.nodeCount = typeof s.nodes === "number" ? s.nodes : null;
    this.sync = {
      state: s.sync_state ?? this.sync.state,
      lastSyncAt: s.last_sync_at ?? null,
      lastSyncError: p.last_sync_error ?? "",
    };
    this.touchedUuids = new Set();
    this.nodeReady.clear();
    // Every node the snapshot counted: those its chips name and those with none.
    this.snapshotNodes = new Set([
      ...this.chips.sorted().map((c) => c.node),
      ...(Array.isArray(p.nodes_without_chips) ? p.nodes_without_chips : []),
    ]);
    this.sample();
    if (this.joinedBeforeAnyLoad) {
      // Every page load started after the socket joined: what pages show is
      // no older than the subscription, and later changes come as deltas.
      this.joinedBeforeAnyLoad = false;
      return;
    }
    // A fresh snapshot may follow missed deltas: every page refetches what it shows.
    this.ticks = {
      slices: this.ticks.slices + 1,
      pending: this.ticks.pending + 1,
      object: this.ticks.object + 1,
      cluster: this.ticks.cluster + 1,
      node: this.ticks.node + 1,
      snapshot: this.ticks.snapshot + 1,
      requests: this.ticks.requests + 1,
      proposal: this.ticks.proposal + 1,
    };
  }
}

function defaultSchedule(fn: () => void): void {
  if (typeof requestAnimationFrame === "function" && typeof document !== "undefined" && !document.hidden) {
    requestAnimationFrame(fn);
  } else {
    setTimeout(fn, 16);
  }
}
