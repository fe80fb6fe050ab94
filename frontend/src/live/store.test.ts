import { describe, expect, it, vi } from "vitest";
import { loadMessages } from "../i18n/catalog";
import { makeI18n, t } from "../i18n/intl";
import { CHIP_COLUMNS } from "./contract";
import { ClusterLive, describeActivity, type Activity } from "./store";

/** An activity line as the feed shows it (English unless told). */
const words = (a: Activity, tr = t) => describeActivity(a, tr);

const chipRow = (id: number, node: string, slotsUsed = 0, memUsed = 0) => [
  id, node, "Ascend310P", id - 1, `U${id}`, true, false, slotsUsed, 7, memUsed, 21527, 0, 8, 0, 7,
];

function snapshot() {
  return {
    type: "snapshot" as const,
    event: "snapshot",
    payload: {
      summary: { cluster: "demo", nodes: 2, sync_state: "ok", last_sync_at: "2026-01-01T00:00:00Z" },
      chips: { cluster: "demo", columns: CHIP_COLUMNS, rows: [chipRow(1, "a", 1, 3072), chipRow(2, "a"), chipRow(3, "b")] },
      last_sync_error: "",
    },
  };
}

/** A store whose notifications run when flush() is called (instead of on the next frame). */
function store() {
  const queued: (() => void)[] = [];
  const live = new ClusterLive(1, (fn) => queued.push(fn));
  let notified = 0;
  live.subscribe(() => notified++);
  const flush = () => {
    while (queued.length) queued.shift()!();
    return notified;
  };
  return { live, flush };
}

describe("ClusterLive: delta application", () => {
  it("takes chips, sync state and node count from the snapshot", () => {
    const { live } = store();
    live.apply(snapshot());
    expect(live.chips.size).toBe(3);
    expect(live.nodeCount).toBe(2);
    expect(live.sync).toEqual({ state: "ok", lastSyncAt: "2026-01-01T00:00:00Z", lastSyncError: "" });
    expect(live.samples).toHaveLength(1);
    expect(live.samples[0].byType.Ascend310P).toMatchObject({ slotsUsed: 1, slots: 21, memUsed: 3072 });
  });

  it("applies `chips` rows by id", () => {
    const { live } = store();
    live.apply(snapshot());
    live.apply({ type: "delta", event: "chips", payload: { rows: [chipRow(2, "a", 2, 6144)] } });
    expect(live.chips.byId.get(2)).toMatchObject({ slotsUsed: 2, memUsed: 6144 });
    expect(live.chips.byId.get(1)).toMatchObject({ slotsUsed: 1 });
  });

  it("counts slice, pending, object and cluster events for the pages to refetch", () => {
    const { live } = store();
    live.apply(snapshot());
    const t0 = { ...live.ticks };
    live.apply({
      type: "delta",
      event: "slices",
      payload: { upserted: [{ namespace: "default", pod_name: "p", chip_uuid: "U2", template: "vir01", memory: 3072, priority: 0, phase: "Running", node_name: "a", common_word: "Ascend310P" }] },
    });
    live.apply({ type: "delta", event: "slices_removed", payload: { pods: ["default/q"] } });
    live.apply({ type: "delta", event: "pending", payload: { count: 4 } });
    live.apply({ type: "delta", event: "object", payload: { kind: "ConfigMap", namespace: "kube-system", name: "hami-scheduler-device" } });
    live.apply({ type: "delta", event: "cluster", payload: { id: 1, sync_state: "stale", last_sync_error: "pods: API server answered 500", last_sync_at: "2026-01-01T00:01:00Z" } });
    expect(live.ticks.slices).toBe(t0.slices + 2);
    expect(live.ticks.pending).toBe(t0.pending + 1);
    expect(live.ticks.object).toBe(t0.object + 1);
    expect(live.touchedUuids.has("U2")).toBe(true);
    expect(live.recentSlices[0].pod_name).toBe("p");
    expect(live.pendingCount).toBe(4);
    expect(live.sync).toEqual({ state: "stale", lastSyncAt: "2026-01-01T00:01:00Z", lastSyncError: "pods: API server answered 500" });
  });

  it("keeps an activity feed, newest first, bounded", () => {
    const { live } = store();
    live.apply(snapshot());
    const slice = { namespace: "ci", pod_name: "job-1", chip_uuid: "U1", template: "vir01", memory: 3072, priority: 0, phase: "Running", node_name: "a", common_word: "Ascend310P" };
    live.apply({ type: "delta", event: "slices", payload: { upserted: [slice] } }, 1000);
    live.apply({ type: "delta", event: "slices_removed", payload: { pods: ["ci/job-0"] } }, 2000);
    expect(live.activity.map((a) => [a.kind, a.text, a.t])).toEqual([
      ["released", "ci/job-0", 2000],
      ["slice", "ci/job-1", 1000],
    ]);
    expect(words(live.activity[1]).detail).toBe("vir01 · 3 GiB on a · Running");
    const many = Array.from({ length: 30 }, (_, i) => `ns/p${i}`);
    live.apply({ type: "delta", event: "slices_removed", payload: { pods: many } }, 3000);
    expect(words(live.activity[20]).text).toBe("… and 10 more");
    for (let i = 0; i < 10; i++) live.apply({ type: "delta", event: "slices_removed", payload: { pods: many } }, 4000 + i);
    expect(live.activity).toHaveLength(100);
  });

  it("reads the activity feed in the language shown, names untranslated", async () => {
    const { live } = store();
    live.apply(snapshot());
    const slice = { namespace: "ci", pod_name: "job-1", chip_uuid: "U1", template: "", memory: 3072, priority: 0, phase: "Running", node_name: "a", common_word: "Ascend310P" };
    live.apply({ type: "delta", event: "slices", payload: { upserted: [slice] } }, 1000);
    live.apply({ type: "delta", event: "node_removed", payload: { name: "b" } }, 2000);
    live.apply({ type: "delta", event: "cluster", payload: { sync_state: "stale", last_sync_error: "pods: timeout" } }, 3000);
    const zh = makeI18n("zh-CN", await loadMessages("zh-CN")).t;
    const [sync, left, placed] = live.activity;
    expect(words(placed, zh)).toEqual({ text: "ci/job-1", detail: "整卡 · 3 GiB，节点 a · Running" });
    expect(words(left, zh)).toEqual({ text: "b", detail: "节点已离开集群" });
    expect(words(sync, zh)).toEqual({ text: "同步滞后", detail: "pods: timeout" });
    expect(words(sync)).toEqual({ text: "sync stale", detail: "pods: timeout" });
    expect(words(placed).detail).toBe("whole card · 3 GiB on a · Running");
  });

  it("follows nodes joining and leaving", () => {
    const { live } = store();
    live.apply(snapshot());
    live.apply({ type: "delta", event: "nodes", payload: { nodes: [{ name: "c", ready: true }] } });
    expect(live.nodeCount).toBe(3);
    live.apply({ type: "delta", event: "nodes", payload: { nodes: [{ name: "a", ready: true }] } });
    expect(live.nodeCount).toBe(3);
    live.apply({ type: "delta", event: "node_removed", payload: { name: "b" } });
    expect(live.nodeCount).toBe(2);
    expect([...live.chips.byId.keys()]).toEqual([1, 2]);
  });

  it("does not count a node the snapshot counted without chips as a new one", () => {
    const { live } = store();
    const withCpuNode = snapshot();
    withCpuNode.payload.summary.nodes = 3; // a, b (chips) and a control-plane node
    live.apply({ ...withCpuNode, payload: { ...withCpuNode.payload, nodes_without_chips: ["master-0"] } });
    expect(live.nodeCount).toBe(3);
    live.apply({ type: "delta", event: "nodes", payload: { nodes: [{ name: "master-0", ready: false }] } });
    expect(live.nodeCount).toBe(3); // it went NotReady: still one node
    live.apply({ type: "delta", event: "nodes", payload: { nodes: [{ name: "worker-9", ready: true }] } });
    expect(live.nodeCount).toBe(4);
    live.apply({ type: "delta", event: "node_removed", payload: { name: "master-0" } });
    expect(live.nodeCount).toBe(3);
  });

  it("takes batched `nodes` deltas: counts new nodes once, not known ones", () => {
    const { live } = store();
    live.apply(snapshot());
    const t0 = live.ticks.node;
    live.apply(
      {
        type: "delta",
        event: "nodes",
        payload: {
          nodes: [
            { name: "a", ready: true }, // in the snapshot: not a new node
            { name: "c", ready: true },
            { name: "d", ready: false },
          ],
        },
      },
      1000,
    );
    expect(live.nodeCount).toBe(4);
    expect(live.nodeReady.get("d")).toBe(false);
    expect(live.ticks.node).toBe(t0 + 1);
    expect(live.activity.map((a) => [a.kind, a.text, words(a).detail])).toEqual([
      ["node", "c", "node joined the cluster"],
      ["node_not_ready", "d", "node joined the cluster (not ready)"],
    ]);
    // the same nodes again, one of them now ready: no new node, one readiness change
    live.apply({ type: "delta", event: "nodes", payload: { nodes: [{ name: "c", ready: true }, { name: "d", ready: true }] } }, 2000);
    expect(live.nodeCount).toBe(4);
    expect(live.activity[0]).toMatchObject({ kind: "node", text: "d", t: 2000 });
    expect(words(live.activity[0]).detail).toBe("node is ready");
    expect(live.activity).toHaveLength(3);
    // a node of the snapshot going not ready
    live.apply({ type: "delta", event: "nodes", payload: { nodes: [{ name: "b", ready: false }] } }, 3000);
    expect(live.nodeCount).toBe(4);
    expect(live.activity[0]).toMatchObject({ kind: "node_not_ready", text: "b" });
    expect(words(live.activity[0]).detail).toBe("node is not ready");
    live.apply({ type: "delta", event: "node_removed", payload: { name: "c" } });
    expect(live.nodeCount).toBe(3);
  });

  it("bounds the log of a large `nodes` batch and skips malformed entries", () => {
    const { live } = store();
    live.apply(snapshot());
    const nodes = Array.from({ length: 1000 }, (_, i) => ({ name: `n${i}`, ready: true }));
    live.apply({ type: "delta", event: "nodes", payload: { nodes: [...nodes, { ready: true }, null] } }, 1000);
    expect(live.nodeCount).toBe(1002);
    expect(live.activity).toHaveLength(21);
    expect(words(live.activity[20]).text).toBe("… and 980 more");
    live.apply({ type: "delta", event: "nodes", payload: {} });
    expect(live.nodeCount).toBe(1002);
  });

  it("a snapshot forgets the nodes deltas told about", () => {
    const { live } = store();
    live.apply(snapshot());
    live.apply({ type: "delta", event: "nodes", payload: { nodes: [{ name: "c", ready: true }] } });
    expect(live.nodeCount).toBe(3);
    live.apply(snapshot()); // the server says 2 nodes: c left while we were away
    expect(live.nodeCount).toBe(2);
    expect(live.nodeReady.size).toBe(0);
    live.apply({ type: "delta", event: "nodes", payload: { nodes: [{ name: "c", ready: true }] } });
    expect(live.nodeCount).toBe(3);
  });

  it("ignores events it does not know", () => {
    const { live, flush } = store();
    live.apply(snapshot());
    flush();
    const v = live.version;
    live.apply({ type: "delta", event: "from_the_future", payload: {} });
    // nor the one-node `node` event: no server sends it (the contract has `nodes`)
    live.apply({ type: "delta", event: "node", payload: { name: "c", ready: true } });
    expect(live.version).toBe(v);
    expect(live.nodeCount).toBe(2);
  });

  it("tells of a snapshot at once, without waiting for a frame", () => {
    const { live, flush } = store();
    let seen = 0;
    live.subscribe(() => (seen = live.chips.size));
    live.apply(snapshot());
    expect(seen).toBe(3);
    expect(flush()).toBe(1); // nothing more queued
  });

  it("coalesces a burst of deltas into one notification", () => {
    const { live, flush } = store();
    live.apply(snapshot());
    expect(flush()).toBe(1);
    for (let i = 0; i < 100; i++) live.apply({ type: "delta", event: "chips", payload: { rows: [chipRow(3, "b", i % 7, 0)] } });
    expect(flush()).toBe(2);
  });

  it("a fresh snapshot after a reconnect replaces what deltas built", () => {
    const { live } = store();
    live.apply(snapshot());
    live.apply({ type: "delta", event: "chips", payload: { rows: [chipRow(9, "z", 1, 1)] } });
    expect(live.chips.size).toBe(4);
    const before = live.ticks.snapshot;
    live.apply(snapshot());
    expect(live.chips.size).toBe(3);
    expect(live.ticks.snapshot).toBe(before + 1);
  });
});

describe("ClusterLive: refetching after a snapshot", () => {
  // A fresh copy of the store and the page-load counter for each case.
  async function fresh() {
    vi.resetModules();
    const loads = await import("../lib/pageLoads");
    const { ClusterLive: Live } = await import("./store");
    return { loads, live: new Live(1, () => undefined) };
  }
  const joined = { type: "joined" as const, event: "joined", payload: {} };

  it("makes no page refetch when the socket joined before any page asked for data", async () => {
    const { loads, live } = await fresh();
    live.apply(joined);
    loads.pageLoadStarted(); // the overview mounts and asks, after the join
    const before = { ...live.ticks };
    live.apply(snapshot());
    expect(live.ticks).toEqual(before);
    expect(live.chips.size).toBe(3);
  });

  it("makes every page refetch when a page asked before the socket joined", async () => {
    const { loads, live } = await fresh();
    loads.pageLoadStarted(); // read before the subscription: may have missed a change
    live.apply(joined);
    const before = { ...live.ticks };
    live.apply(snapshot());
    expect(live.ticks.pending).toBe(before.pending + 1);
    expect(live.ticks.snapshot).toBe(before.snapshot + 1);
    expect(live.ticks.requests).toBe(before.requests + 1);
  });

  it("makes pages refetch on a reconnect's snapshot and on a resync", async () => {
    const { loads, live } = await fresh();
    live.apply(joined);
    live.apply(snapshot()); // the first: nothing to refetch
    loads.pageLoadStarted();
    const first = live.ticks.slices;
    live.apply(joined); // the socket dropped and came back: deltas may be lost
    live.apply(snapshot());
    expect(live.ticks.slices).toBe(first + 1);
    live.apply(snapshot()); // a resync the client asked for
    expect(live.ticks.slices).toBe(first + 2);
  });

  it("forgets a join when its connection ends before the snapshot came", async () => {
    const { loads, live } = await fresh();
    live.apply(joined); // nothing asked yet...
    live.setConnection("reconnecting", 1000); // ...but the socket dropped before its snapshot
    loads.pageLoadStarted(); // pages asked meanwhile
    live.setConnection("connecting");
    const before = live.ticks.pending;
    live.apply(snapshot()); // from a server that sends no "joined" (a rolling deploy)
    expect(live.ticks.pending).toBe(before + 1);
  });

  it("does not count the join as an update (no 'interrupted' banner before the snapshot)", async () => {
    const { live } = await fresh();
    live.apply(joined);
    expect(live.lastMessageAt).toBeNull();
    live.apply(snapshot(), 5000);
    expect(live.lastMessageAt).toBe(5000);
  });

  it("makes pages refetch after a snapshot that came without a join message (an older server)", async () => {
    const { live } = await fresh();
    const before = live.ticks.object;
    live.apply(snapshot());
    expect(live.ticks.object).toBe(before + 1);
  });
});
