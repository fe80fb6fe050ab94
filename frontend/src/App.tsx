// The app: session (login or the shell), the selected cluster and its live
// connection, the layout (left nav, top bar) and the routes.

import { Suspense, useCallback, useEffect, useMemo, useState, type ReactNode } from "react";
import { api, ApiError, onUnauthorized } from "./api/client";
import type { Cluster, LogoutAnswer, Me, Page, Role } from "./api/types";
import { Icon } from "./components/Icon";
import { Banner, ConnectionDot, Loading, SyncBadge, Badge } from "./components/ui";
import type { ClusterLive } from "./live/store";
import type { LiveSocket } from "./live/socket";
import { takeLive } from "./live/early";
import { rememberCluster, rememberedCluster } from "./lib/rememberedCluster";
import { Link, navigate, useLocation } from "./lib/router";
import { useNow } from "./lib/useApi";
import { ago } from "./lib/format";
import { allows, SessionContext, useSession, type Session } from "./state/session";
import { ClusterContext, useClusters, useLiveVersion } from "./state/cluster";
import { LoginPage } from "./pages/Login";
import { lazyPage, type LazyPage } from "./lib/lazyPage";
import { LanguageMenu, useT } from "./i18n/I18nProvider";
import type { Translate } from "./i18n/intl";

// Every page but the login is a chunk of its own, loaded when first shown
// (lib/lazyPage: main.tsx preloads the one the URL opens).
const PAGES: Record<string, LazyPage> = {
  "/": lazyPage(() => import("./pages/Overview").then((m) => m.OverviewPage)),
  "/chips": lazyPage(() => import("./pages/Chips").then((m) => m.ChipsPage)),
  "/slices": lazyPage(() => import("./pages/Slices").then((m) => m.SlicesPage)),
  "/templates": lazyPage(() => import("./pages/Templates").then((m) => m.TemplatesPage)),
  "/requests": lazyPage(() => import("./pages/Requests").then((m) => m.RequestsPage)),
  "/requests/new": lazyPage(() => import("./pages/SubmitRequest").then((m) => m.SubmitRequestPage)),
  "/preemptions": lazyPage(() => import("./pages/Preemptions").then((m) => m.PreemptionsPage)),
  "/drains": lazyPage(() => import("./pages/Drains").then((m) => m.DrainsPage)),
  "/node-config": lazyPage(() => import("./pages/NodeConfig").then((m) => m.NodeConfigPage)),
  "/tokens": lazyPage(() => import("./pages/Tokens").then((m) => m.TokensPage)),
  "/queues": lazyPage(() => import("./pages/Queues").then((m) => m.QueuesPage)),
  "/priority-classes": lazyPage(() => import("./pages/PriorityClasses").then((m) => m.PriorityClassesPage)),
  "/usage": lazyPage(() => import("./pages/Usage").then((m) => m.UsagePage)),
  "/cost": lazyPage(() => import("./pages/Cost").then((m) => m.CostPage)),
  "/cost/monthly": lazyPage(() => import("./pages/CostMonthly").then((m) => m.CostMonthlyPage)),
  "/health": lazyPage(() => import("./pages/Health").then((m) => m.HealthPage)),
  "/audit": lazyPage(() => import("./pages/Audit").then((m) => m.AuditPage)),
  "/alerts": lazyPage(() => import("./pages/Alerts").then((m) => m.AlertsPage)),
};
const REQUEST_DETAIL = lazyPage<{ id: number }>(() => import("./pages/RequestDetail").then((m) => m.RequestDetailPage));

/** Start loading the page at `path` (at start-up: while the session and the data are asked for). */
export function preloadRoute(path: string): void {
  const clean = path.replace(/\/+$/, "") || "/";
  const page = /^\/requests\/\d+$/.test(clean) ? REQUEST_DETAIL : PAGES[clean];
  page?.preload().catch(() => undefined); // rendering the page tries again and shows the error
}

export function App() {
  const t = useT();
  const [me, setMe] = useState<Me | null | undefined>(undefined);

  useEffect(() => {
    api.get<Me>("/api/me/").then(setMe, () => setMe(null));
    return onUnauthorized(() => setMe(null));
  }, []);

  const logout = useCallback(async () => {
    let answer: LogoutAnswer | undefined;
    try {
      answer = await api.post<LogoutAnswer>("/api/auth/logout/");
    } finally {
      if (answer?.end_session_url) {
        // Signed in through the identity provider: end its session too; it
        // sends the browser back to the portal's login page. Never resolves:
        // nothing else may navigate meanwhile.
        window.location.assign(answer.end_session_url);
      } else {
        setMe(null);
      }
    }
    if (answer?.end_session_url) await new Promise<never>(() => undefined);
  }, []);

  const session = useMemo<Session | null>(
    () => (me ? { me, logout, can: (needed) => allows(me.role, needed) } : null),
    [me, logout],
  );

  if (me === undefined) return <Loading label={t("app.starting")} />;
  if (!session) return <LoginPage onLogin={setMe} />;
  return (
    <SessionContext.Provider value={session}>
      <ClusterProvider>
        <Shell />
      </ClusterProvider>
    </SessionContext.Provider>
  );
}

/** The cluster a link names by ``?cluster=<name>``, if the portal has it. */
export function clusterNamed(clusters: Cluster[] | null, name: string | null): Cluster | undefined {
  return name ? clusters?.find((c) => c.name === name) : undefined;
}

export function ClusterProvider({ children }: { children: ReactNode }) {
  const t = useT();
  const [clusters, setClusters] = useState<Cluster[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [selected, setSelected] = useState<number | null>(rememberedCluster());
  const [nonce, setNonce] = useState(0);

  useEffect(() => {
    api.get<Page<Cluster>>("/api/clusters/?page_size=1000").then(
      (page) => {
        setClusters(page.results);
        setError(null);
      },
      (e: ApiError) => setError(e.message),
    );
  }, [nonce]);

  // A link naming a cluster (?cluster=<name>, as the alerts' links do) opens
  // on it: at load, and when a link inside the portal leads there.
  const named = useLocation().search.get("cluster");
  useEffect(() => {
    const linked = clusterNamed(clusters, named);
    if (linked) setSelected(linked.id);
  }, [clusters, named]);

  const cluster = useMemo(() => {
    if (!clusters?.length) return null;
    return clusters.find((c) => c.id === selected) ?? clusters[0];
  }, [clusters, selected]);

  const [live, setLive] = useState<ClusterLive | null>(null);
  const [socket, setSocket] = useState<LiveSocket | null>(null);
  const clusterId = cluster?.id ?? null;
  useEffect(() => {
    if (clusterId === null) return undefined;
    // The socket main.tsx opened at start-up when this was the cluster shown last.
    const { store, socket } = takeLive(clusterId, () => window.location.reload());
    rememberCluster(clusterId);
    setLive(store);
    setSocket(socket);
    const sampler = setInterval(() => store.sample(), 10_000);
    // The socket sends the sync state when it changes; its last success time
    // moves all the time, so read it now and then.
    const refreshSync = () =>
      api.get<Cluster>(`/api/clusters/${clusterId}/`).then(
        (c) => store.setSync({ state: c.sync_state, lastSyncAt: c.last_sync_at, lastSyncError: c.last_sync_error }),
        () => undefined,
      );
    const syncPoller = setInterval(() => {
      if (!document.hidden) void refreshSync();
    }, 15_000);
    const wake = () => socket.retryNow();
    window.addEventListener("online", wake);
    document.addEventListener("visibilitychange", wake);
    return () => {
      window.removeEventListener("online", wake);
      document.removeEventListener("visibilitychange", wake);
      clearInterval(sampler);
      clearInterval(syncPoller);
      socket.stop();
    };
  }, [clusterId]);

  const value = useMemo(
    () => ({
      clusters: clusters ?? [],
      cluster,
      // The cluster shown is remembered when its socket opens (above).
      select: (id: number) => setSelected(id),
      live: live && live.clusterId === clusterId ? live : null,
      reloadClusters: () => setNonce((n) => n + 1),
      retry: () => socket?.retryNow(),
    }),
    [clusters, cluster, live, clusterId, socket],
  );

  if (error) return <div className="empty">{t("app.clustersFailed", { error })}</div>;
  if (clusters === null) return <Loading label={t("app.loadingClusters")} />;
  return <ClusterContext.Provider value={value}>{children}</ClusterContext.Provider>;
}

// label: the message id of the entry's name.
const NAV: { to: string; label: string; icon: string; role?: Role }[] = [
  { to: "/", label: "nav.overview", icon: "overview" },
  { to: "/chips", label: "nav.chips", icon: "chips" },
  { to: "/slices", label: "nav.slices", icon: "slices" },
  { to: "/templates", label: "nav.templates", icon: "templates" },
  { to: "/node-config", label: "nav.nodeConfig", icon: "nodeconfig" },
  { to: "/requests", label: "nav.requests", icon: "requests" },
  { to: "/preemptions", label: "nav.preemptions", icon: "preemptions" },
  { to: "/drains", label: "nav.drains", icon: "drains" },
  { to: "/queues", label: "nav.queues", icon: "queues" },
  { to: "/priority-classes", label: "nav.priorityClasses", icon: "priorities" },
  { to: "/usage", label: "nav.usage", icon: "usage" },
  { to: "/cost", label: "nav.cost", icon: "cost" },
  { to: "/health", label: "nav.health", icon: "health" },
  { to: "/alerts", label: "nav.alerts", icon: "alerts" },
  { to: "/audit", label: "nav.audit", icon: "audit" },
  { to: "/tokens", label: "nav.tokens", icon: "tokens", role: "admin" },
];

function Shell() {
  const t = useT();
  const { path } = useLocation();
  const { cluster } = useClusters();
  const { can } = useSession();
  const page = route(path, t);
  useEffect(() => {
    const item = NAV.find((n) => n.to === path) ?? (path.startsWith("/cost/monthly") ? { label: "nav.monthlyReport" } : undefined);
    document.title = `${item ? t(item.label) + " · " : ""}${cluster ? cluster.name + " · " : ""}vNPU Portal`;
  }, [path, cluster, t]);
  return (
    <div className="shell">
      <nav className="nav" aria-label={t("app.mainNav")}>
        <div className="brand">
          <span className="brand-mark">v</span> vNPU Portal
        </div>
        <ul>
          {NAV.filter((item) => !item.role || can(item.role)).map((item) => (
            <li key={item.to}>
              <Link to={item.to} className={isActive(path, item.to) ? "active" : ""}>
                <Icon name={item.icon} />
                {t(item.label)}
              </Link>
            </li>
          ))}
        </ul>
        <div className="nav-foot">
          HAMi · Volcano · Ascend
          <br />
          <a href="/api/docs/">{t("app.apiDocs")}</a>
        </div>
      </nav>
      <TopBar />
      <main className="main">
        <StaleBanner />
        <Suspense fallback={<Loading label={t("app.loadingPage")} />}>{cluster ? page : <NoCluster />}</Suspense>
      </main>
    </div>
  );
}

function isActive(path: string, to: string) {
  return to === "/" ? path === "/" : path === to || path.startsWith(to + "/");
}

function route(path: string, t: Translate): ReactNode {
  const clean = path.replace(/\/+$/, "") || "/";
  const detail = /^\/requests\/(\d+)$/.exec(clean);
  if (detail) return <REQUEST_DETAIL.Page key={detail[1]} id={Number(detail[1])} />;
  const page = PAGES[clean];
  if (page) return <page.Page />;
  return (
    <div className="empty">
      {t("app.noPage", { path })} <Link to="/">{t("app.toOverview")}</Link>
    </div>
  );
}

/** While the socket is down, every page says its figures may be old. */
function StaleBanner() {
  const t = useT();
  const { live } = useClusters();
  useLiveVersion(live);
  const now = useNow(1000);
  if (!live || live.connection === "live" || live.connection === "closed" || !live.lastMessageAt) return null;
  const text =
    live.connection === "denied"
      ? t("app.sessionEnded")
      : live.connection === "missing"
        ? t("app.clusterGone")
        : t("app.liveInterrupted", { ago: ago(new Date(live.lastMessageAt).toISOString(), now) });
  return (
    <Banner kind={live.connection === "reconnecting" || live.connection === "connecting" ? "warn" : "error"} testId="stale-banner">
      {text}
    </Banner>
  );
}

function NoCluster() {
  const t = useT();
  const { can } = useSession();
  return (
    <div className="panel">
      <div className="empty">
        {t("app.noCluster")} {can("admin") ? t("app.noClusterAdmin") : t("app.noClusterAsk")}
      </div>
    </div>
  );
}

function TopBar() {
  const t = useT();
  const { me, logout } = useSession();
  const { clusters, cluster, select, live, retry } = useClusters();
  useLiveVersion(live);
  const now = useNow(1000);
  return (
    <header className="topbar">
      <label className="muted" htmlFor="cluster-select">
        {t("app.cluster")}
      </label>
      <select
        id="cluster-select"
        data-testid="cluster-select"
        value={cluster?.id ?? ""}
        onChange={(e) => select(Number(e.target.value))}
        disabled={!clusters.length}
      >
        {clusters.map((c) => (
          <option key={c.id} value={c.id}>
            {c.name}
          </option>
        ))}
      </select>
      {live && (
        <>
          <SyncBadge state={live.sync.state} />
          <span className="muted" title={t("app.syncedTitle")}>
            {t("app.synced", { ago: ago(live.sync.lastSyncAt, now) })}
          </span>
        </>
      )}
      <span className="spacer" />
      {live && <ConnectionDot state={live.connection} retryAt={live.retryAt} now={now} onRetry={retry} />}
      <span className="user" data-testid="user">
        <b>{me.username}</b>
        <Badge kind="role">{me.role ? t(`roles.${me.role}`) : t("roles.none")}</Badge>
      </span>
      <LanguageMenu />
      <button
        className="btn small"
        data-testid="sign-out"
        onClick={() => {
          void logout().then(() => navigate("/"));
        }}
      >
        {t("app.signOut")}
      </button>
    </header>
  );
}
