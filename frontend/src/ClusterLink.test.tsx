import { afterEach, describe, expect, it, vi } from "vitest";
import { act, cleanup, render, screen, waitFor } from "@testing-library/react";
import { ClusterProvider } from "./App";
import { navigate } from "./lib/router";
import { useClusters } from "./state/cluster";
import { page, stubFetch, testCluster } from "./pages/testing";

// The live socket is another test's subject: a quiet stand-in here.
vi.mock("./live/early", () => ({
  takeLive: (clusterId: number) => ({
    store: { clusterId, sample: () => {}, setSync: () => {}, connection: "open" },
    socket: { stop: () => {}, retryNow: () => {} },
  }),
}));

function Shown() {
  const { cluster } = useClusters();
  return <p data-testid="shown">{cluster?.name}</p>;
}

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  window.history.replaceState(null, "", "/");
});

describe("a link naming a cluster", () => {
  it("opens on it at load and when a link inside the portal leads there", async () => {
    const other = { ...testCluster, id: 2, name: "bj-2" };
    stubFetch((url) => (url.startsWith("/api/clusters/?") ? { body: page([testCluster, other]) } : undefined));
    window.history.replaceState(null, "", "/chips?cluster=bj-2");
    render(
      <ClusterProvider>
        <Shown />
      </ClusterProvider>,
    );
    await waitFor(() => expect(screen.getByTestId("shown").textContent).toBe("bj-2"));
    // an alert's link to the other cluster, clicked inside the portal
    act(() => navigate("/chips?cluster=demo&chip=U-1"));
    await waitFor(() => expect(screen.getByTestId("shown").textContent).toBe("demo"));
    // a name the portal does not know leaves the cluster shown
    act(() => navigate("/chips?cluster=nowhere"));
    expect(screen.getByTestId("shown").textContent).toBe("demo");
  });
});
