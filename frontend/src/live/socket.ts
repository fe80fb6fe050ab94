// The WebSocket to /ws/clusters/<id>/: connects, hands messages to the store,
// and reconnects with backoff (a fresh snapshot arrives on each connect, so
// nothing missed while away is lost).

import { Backoff } from "../lib/backoff";
import type { ClusterLive, LiveMessage } from "./store";

export interface SocketLike {
  onopen: ((ev: unknown) => void) | null;
  onmessage: ((ev: { data: unknown }) => void) | null;
  onclose: ((ev: { code: number; reason?: string }) => void) | null;
  onerror: ((ev: unknown) => void) | null;
  close(code?: number, reason?: string): void;
  send(data: string): void;
  readyState: number;
}

export type SocketFactory = (url: string) => SocketLike;

export interface LiveSocketOptions {
  backoff?: Backoff;
  factory?: SocketFactory;
  /** called when the server refuses the session (close code 4401) */
  onDenied?: () => void;
  /** no message for this long while live: assume a dead connection and reconnect */
  silenceMs?: number;
  setTimer?: (fn: () => void, ms: number) => unknown;
  clearTimer?: (handle: unknown) => void;
  now?: () => number;
}

export function wsUrl(clusterId: number, loc: Location = window.location): string {
  const scheme = loc.protocol === "https:" ? "wss:" : "ws:";
  // joined=1: the server says when the socket is subscribed, before the
  // snapshot (the store then spares pages a refetch; see ClusterLive).
  return `${scheme}//${loc.host}/ws/clusters/${clusterId}/?joined=1`;
}

export class LiveSocket {
  private socket: SocketLike | null = null;
  private timer: unknown = null;
  private watchdog: unknown = null;
  private stopped = false;
  private readonly backoff: Backoff;
  private readonly factory: SocketFactory;
  private readonly setTimer: (fn: () => void, ms: number) => unknown;
  private readonly clearTimer: (handle: unknown) => void;
  private readonly now: () => number;

  constructor(
    private readonly url: string,
    private readonly live: ClusterLive,
    private readonly options: LiveSocketOptions = {},
  ) {
    this.backoff = options.backoff ?? new Backoff();
    this.factory = options.factory ?? ((u) => new WebSocket(u) as unknown as SocketLike);
    this.setTimer = options.setTimer ?? ((fn, ms) => setTimeout(fn, ms));
    this.clearTimer = options.clearTimer ?? ((h) => clearTimeout(h as ReturnType<typeof setTimeout>));
    this.now = options.now ?? Date.now;
  }

  start(): void {
    this.stopped = false;
    this.connect();
  }

  stop(): void {
    this.stopped = true;
    this.clear();
    const socket = this.socket;
    this.socket = null;
    if (socket) {
      socket.onclose = null;
      socket.onmessage = null;
      socket.close(1000, "bye");
    }
    this.live.setConnection("closed");
  }

  /** Reconnect now if a retry is waiting (tab visible again, network back). */
  retryNow(): void {
    if (this.stopped || this.socket) return;
    this.clear();
    this.connect();
  }

  get attempts(): number {
    return this.backoff.attempts;
  }

  private clear(): void {
    if (this.timer !== null) this.clearTimer(this.timer);
    if (this.watchdog !== null) this.clearTimer(this.watchdog);
    this.timer = null;
    this.watchdog = null;
  }

  private connect(): void {
    if (this.live.connection !== "reconnecting") this.live.setConnection("connecting");
    let socket: SocketLike;
    try {
      socket = this.factory(this.url);
    } catch {
      this.scheduleRetry();
      return;
    }
    this.socket = socket;
    socket.onmessage = (ev) => this.onMessage(ev.data);
    socket.onclose = (ev) => this.onClose(ev.code);
    socket.onerror = () => {
      /* onclose follows */
    };
  }

  private onMessage(data: unknown): void {
    let message: LiveMessage;
    try {
      message = JSON.parse(String(data)) as LiveMessage;
    } catch {
      return;
    }
    if (message.type === "snapshot") {
      // A connection that delivered its snapshot has proved itself.
      this.backoff.reset();
      this.live.setConnection("live");
    }
    this.live.apply(message, this.now());
    this.armWatchdog();
  }

  private armWatchdog(): void {
    const silence = this.options.silenceMs;
    if (!silence) return;
    if (this.watchdog !== null) this.clearTimer(this.watchdog);
    this.watchdog = this.setTimer(() => {
      this.watchdog = null;
      this.socket?.close(4000, "silent");
    }, silence);
  }

  private onClose(code: number): void {
    this.socket = null;
    if (this.stopped) return;
    if (code === 4401) {
      this.clear();
      this.live.setConnection("denied");
      this.options.onDenied?.();
      return;
    }
    if (code === 4404) {
      this.clear();
      this.live.setConnection("missing");
      return;
    }
    this.scheduleRetry();
  }

  private scheduleRetry(): void {
    this.clear();
    const delay = this.backoff.next();
    this.live.setConnection("reconnecting", this.now() + delay);
    this.timer = this.setTimer(() => {
      this.timer = null;
      this.connect();
    }, delay);
  }
}
