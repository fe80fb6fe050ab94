import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { rememberCluster } from "../lib/rememberedCluster";

/** A WebSocket that never connects: records what was opened and closed. */
class FakeSocket {
  static opened: FakeSocket[] = [];
  onopen: ((ev: unknown) => void) | null = null;
  onmessage: ((ev: { data: unknown }) => void) | null = null;
  onclose: ((ev: { code: number }) => void) | null = null;
  onerror: ((ev: unknown) => void) | null = null;
  readyState = 0;
  closed = false;
  constructor(readonly url: string) {
    FakeSocket.opened.push(this);
  }
  close() {
    this.closed = true;
  }
  send() {}
}

async function early() {
  vi.resetModules();
  return import("./early");
}

beforeEach(() => {
  FakeSocket.opened = [];
  vi.stubGlobal("WebSocket", FakeSocket);
  window.localStorage.clear();
});
afterEach(() => vi.unstubAllGlobals());

describe("the early live socket", () => {
  it("opens nothing without a remembered cluster", async () => {
    const { openEarly } = await early();
    openEarly();
    expect(FakeSocket.opened).toHaveLength(0);
  });

  it("opens the remembered cluster's socket at once, and the provider adopts it", async () => {
    const { openEarly, takeLive } = await early();
    rememberCluster(7);
    openEarly();
    expect(FakeSocket.opened.map((s) => s.url)).toEqual([expect.stringMatching(/\/ws\/clusters\/7\/\?joined=1$/)]);
    const live = takeLive(7, () => undefined);
    expect(live.store.clusterId).toBe(7);
    expect(FakeSocket.opened).toHaveLength(1); // no second connection
    expect(FakeSocket.opened[0].closed).toBe(false);
  });

  it("drops a socket for another cluster and opens the right one", async () => {
    const { openEarly, takeLive } = await early();
    rememberCluster(7);
    openEarly();
    const live = takeLive(8, () => undefined);
    expect(live.store.clusterId).toBe(8);
    expect(FakeSocket.opened[0].closed).toBe(true);
    expect(FakeSocket.opened[1].url).toMatch(/\/ws\/clusters\/8\/\?joined=1$/);
  });

  it("does not act on a refusal before anyone owns the socket, and drops that socket", async () => {
    const { openEarly, takeLive } = await early();
    rememberCluster(7);
    openEarly();
    const denied = vi.fn();
    FakeSocket.opened[0].onclose!({ code: 4401 }); // not signed in yet
    const live = takeLive(7, denied);
    expect(denied).not.toHaveBeenCalled();
    expect(FakeSocket.opened).toHaveLength(2);
    FakeSocket.opened[1].onclose!({ code: 4401 }); // the session ended while the app showed it
    expect(denied).toHaveBeenCalledOnce();
    expect(live.store.connection).toBe("denied");
  });
});
