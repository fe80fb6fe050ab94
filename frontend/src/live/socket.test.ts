import { beforeEach, describe, expect, it } from "vitest";
import { Backoff } from "../lib/backoff";
import { CHIP_COLUMNS } from "./contract";
import { LiveSocket, type SocketLike } from "./socket";
import { ClusterLive } from "./store";

class FakeSocket implements SocketLike {
  onopen: ((ev: unknown) => void) | null = null;
  onmessage: ((ev: { data: unknown }) => void) | null = null;
  onclose: ((ev: { code: number }) => void) | null = null;
  onerror: ((ev: unknown) => void) | null = null;
  readyState = 0;
  closed: number | null = null;
  sent: string[] = [];
  constructor(readonly url: string) {}
  close(code = 1000) {
    this.closed = code;
  }
  send(data: string) {
    this.sent.push(data);
  }
  // server side
  deliver(message: unknown) {
    this.onmessage?.({ data: JSON.stringify(message) });
  }
  drop(code = 1006) {
    this.onclose?.({ code });
  }
}

const snapshot = (slotsUsed: number) => ({
  type: "snapshot",
  event: "snapshot",
  payload: {
    summary: { nodes: 1, sync_state: "ok", last_sync_at: null },
    chips: { columns: CHIP_COLUMNS, rows: [[1, "n", "Ascend310P", 0, "U1", true, false, slotsUsed, 7, 0, 21527, 0, 8, 0, 7]] },
  },
});

describe("LiveSocket: reconnect with backoff and resync", () => {
  let sockets: FakeSocket[];
  let timers: { fn: () => void; ms: number; id: number }[];
  let now: number;
  let live: ClusterLive;
  let denied: number;
  let socket: LiveSocket;

  beforeEach(() => {
    sockets = [];
    timers = [];
    now = 1_000_000;
    denied = 0;
    live = new ClusterLive(1, (fn) => fn());
    let nextId = 1;
    socket = new LiveSocket("ws://portal/ws/clusters/1/", live, {
      backoff: new Backoff({ base: 500, max: 4000, factor: 2, jitter: 0 }),
      factory: (url) => {
        const s = new FakeSocket(url);
        sockets.push(s);
        return s;
      },
      onDenied: () => denied++,
      setTimer: (fn, ms) => {
        const t = { fn, ms, id: nextId++ };
        timers.push(t);
        return t.id;
      },
      clearTimer: (id) => {
        timers = timers.filter((t) => t.id !== id);
      },
      now: () => now,
    });
  });

  const fire = () => {
    const t = timers.shift()!;
    now += t.ms;
    t.fn();
    return t.ms;
  };

  it("is live once the snapshot arrives, and applies deltas", () => {
    socket.start();
    expect(live.connection).toBe("connecting");
    expect(sockets[0].url).toBe("ws://portal/ws/clusters/1/");
    sockets[0].deliver(snapshot(0));
    expect(live.connection).toBe("live");
    sockets[0].deliver({ type: "delta", event: "chips", payload: { rows: [[1, "n", "Ascend310P", 0, "U1", true, false, 3, 7, 9216, 21527, 0, 8, 0, 7]] } });
    expect(live.chips.byId.get(1)?.slotsUsed).toBe(3);
  });

  it("reconnects after 0.5 s, 1 s, 2 s, 4 s, 4 s... and resets after a snapshot", () => {
    socket.start();
    sockets[0].deliver(snapshot(0));
    sockets[0].drop();
    expect(live.connection).toBe("reconnecting");
    expect(live.retryAt).toBe(now + 500);
    const delays = [fire()];
    for (let i = 1; i < 5; i++) {
      sockets[i].drop(); // the server is still down
      delays.push(fire());
    }
    expect(delays).toEqual([500, 1000, 2000, 4000, 4000]);
    expect(sockets).toHaveLength(6);
    // back: a fresh snapshot resynchronises the store and resets the backoff
    sockets[5].deliver(snapshot(5));
    expect(live.connection).toBe("live");
    expect(live.chips.byId.get(1)?.slotsUsed).toBe(5);
    sockets[5].drop();
    expect(fire()).toBe(500);
  });

  it("retries at once when asked (tab visible, network back)", () => {
    socket.start();
    sockets[0].drop();
    expect(timers).toHaveLength(1);
    socket.retryNow();
    expect(timers).toHaveLength(0);
    expect(sockets).toHaveLength(2);
  });

  it("stops on 4401 (session gone) and 4404 (no such cluster)", () => {
    socket.start();
    sockets[0].drop(4401);
    expect(live.connection).toBe("denied");
    expect(denied).toBe(1);
    expect(timers).toHaveLength(0);
    socket.start();
    sockets[1].drop(4404);
    expect(live.connection).toBe("missing");
    expect(timers).toHaveLength(0);
  });

  it("does not reconnect after stop()", () => {
    socket.start();
    sockets[0].deliver(snapshot(0));
    socket.stop();
    expect(sockets[0].closed).toBe(1000);
    expect(live.connection).toBe("closed");
    sockets[0].drop();
    expect(timers).toHaveLength(0);
  });
});
