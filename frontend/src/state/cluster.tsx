// The selected cluster and its live connection, shared by every page.

import { createContext, useContext, useSyncExternalStore } from "react";
import type { Cluster } from "../api/types";
import type { ClusterLive } from "../live/store";

export interface ClusterContextValue {
  clusters: Cluster[];
  cluster: Cluster | null;
  select: (id: number) => void;
  live: ClusterLive | null;
  reloadClusters: () => void;
  /** reconnect the live socket now instead of waiting for the backoff */
  retry: () => void;
}

export const ClusterContext = createContext<ClusterContextValue | null>(null);

export function useClusters(): ClusterContextValue {
  const value = useContext(ClusterContext);
  // i18n-ignore: a programming error for developers, never shown in the UI
  if (!value) throw new Error("useClusters outside ClusterContext");
  return value;
}

const noop = () => () => {};
const zero = () => 0;

/** Re-render when the live store changes (at most once per frame). Returns its version. */
export function useLiveVersion(live: ClusterLive | null): number {
  return useSyncExternalStore(live ? live.subscribe : noop, live ? live.getVersion : zero, zero);
}
