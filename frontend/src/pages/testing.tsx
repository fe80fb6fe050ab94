// Test helpers of the page tests: a page inside a session and a cluster, and a
// fetch that answers by URL.

import { render } from "@testing-library/react";
import type { ReactNode } from "react";
import { vi } from "vitest";
import type { Cluster, Me, Role } from "../api/types";
import { ClusterContext } from "../state/cluster";
import { allows, SessionContext } from "../state/session";

export const testCluster: Cluster = {
  id: 1,
  name: "demo",
  description: "",
  connection: "kubeconfig",
  has_kubeconfig: true,
  kubeconfig_path: "",
  kubeconfig_context: "",
  api_url: "",
  has_token: false,
  ca_cert: "",
  verify_tls: true,
  device_config_namespace: "kube-system",
  device_config_name: "hami-scheduler-device",
  scheduler: "auto",
  scheduler_in_effect: { kind: "hami", scheduler_name: "hami-scheduler", honours_pins: true, why: "" },
  sync_state: "ok",
  last_sync_at: null,
  last_sync_error: "",
  sync_lag_seconds: 0,
  created_at: "2026-01-01T00:00:00Z",
  updated_at: "2026-01-01T00:00:00Z",
};

export function renderAs(role: Role, page: ReactNode, username = "u") {
  const me: Me = { username, role, is_service_account: false };
  const session = { me, logout: async () => {}, can: (n: Role) => allows(role, n) };
  const value = { clusters: [testCluster], cluster: testCluster, select: () => {}, live: null, reloadClusters: () => {}, retry: () => {} };
  return render(
    <SessionContext.Provider value={session}>
      <ClusterContext.Provider value={value}>{page}</ClusterContext.Provider>
    </SessionContext.Provider>,
  );
}

export type Route = (url: string, init: RequestInit) => { status?: number; body: unknown } | undefined;

/** Stub fetch: the first route that answers wins; anything else is an empty page. */
export function stubFetch(route: Route) {
  const fetch = vi.fn(async (url: string, init: RequestInit = {}) => {
    const answer = route(url, init) ?? { body: { count: 0, next: null, previous: null, results: [] } };
    return new Response(JSON.stringify(answer.body), { status: answer.status ?? 200 });
  });
  vi.stubGlobal("fetch", fetch);
  return fetch;
}

export function page<T>(results: T[]) {
  return { count: results.length, next: null, previous: null, results };
}
