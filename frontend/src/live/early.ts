// The live socket opened as the app starts, before React has rendered
// anything (issue 19). A page load otherwise asks /api/me/, then
// /api/clusters/, and only then opens /ws/clusters/<id>/, whose snapshot the
// server takes some 150 ms to build at 8,000 chips: three round trips one after
// the other. The cluster the app showed last is remembered
// (lib/rememberedCluster), so its snapshot is on its way while the app still
// asks who is signed in; the
// cluster provider adopts the socket when it settles on that same cluster.
// A stale guess costs one snapshot the app throws away.

import { ClusterLive } from "./store";
import { LiveSocket, wsUrl } from "./socket";
import { rememberedCluster } from "../lib/rememberedCluster";

export interface LiveConnection {
  store: ClusterLive;
  socket: LiveSocket;
}

let early: LiveConnection | null = null;
/** What to do when the server refuses the session, once a provider owns the socket. */
let onDenied: (() => void) | null = null;

/** A socket with the app's options: the session's end is only acted on once someone owns the socket. */
export function openLive(clusterId: number): LiveConnection {
  const store = new ClusterLive(clusterId);
  const socket = new LiveSocket(wsUrl(clusterId), store, { onDenied: () => onDenied?.() });
  socket.start();
  return { store, socket };
}

/** Open the remembered cluster's socket now (at start-up, before the first render). */
export function openEarly(): void {
  const clusterId = rememberedCluster();
  if (clusterId === null || early !== null || typeof WebSocket === "undefined") return;
  early = openLive(clusterId);
}

/**
 * The socket for `clusterId`: the early one when it was for this cluster and
 * the server has not refused it, else a new one. `denied` is what the owner
 * does when the session ends (an early socket refused before anyone owned it,
 * e.g. before signing in, is just dropped: the login page shows anyway).
 */
export function takeLive(clusterId: number, denied: () => void): LiveConnection {
  const candidate = early;
  early = null;
  onDenied = denied;
  if (candidate) {
    const { connection } = candidate.store;
    if (candidate.store.clusterId === clusterId && connection !== "denied" && connection !== "missing" && connection !== "closed") {
      return candidate;
    }
    candidate.socket.stop();
  }
  return openLive(clusterId);
}
