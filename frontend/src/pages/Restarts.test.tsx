import { afterEach, describe, expect, it, vi } from "vitest";
import { cleanup, fireEvent, screen, waitFor } from "@testing-library/react";
import type { RestartStates } from "../api/types";
import { ENGLISH } from "../i18n/catalog";
import { I18nProvider } from "../i18n/I18nProvider";
import { makeI18n, setCurrentI18n } from "../i18n/intl";
import { RestartsPanel } from "./Restarts";
import { renderAs, stubFetch } from "./testing";

function states(pending: boolean): RestartStates {
  const loaded = pending ? 3 : 4;
  return {
    cluster: "demo",
    config_version: 4,
    config_changed_at: "2026-12-05T03:00:00Z",
    components: [
      {
        component: "volcano-scheduler",
        kind: "Deployment",
        namespace: "volcano-system",
        restart_state: pending ? "restart_pending" : "in_effect",
        message: "",
        restarted_at: null,
        loaded_version: loaded,
        pods: [],
      },
    ],
    in_effect: {
      version: loaded,
      published: 4,
      pending_restart: pending,
      loaded_by: "volcano-scheduler",
      loaded_at: "2026-12-05T02:00:00Z",
      why: pending ? "still places by v3" : "volcano-scheduler loaded v4 when it started",
    },
  };
}

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  setCurrentI18n(makeI18n("en", ENGLISH));
});

describe("RestartsPanel", () => {
  it("says which version places requests until the scheduler restarts, and what each component loaded", async () => {
    stubFetch(() => ({ body: states(true) }));
    renderAs("viewer", <RestartsPanel clusterId={1} />);
    const banner = await screen.findByTestId("config-in-effect-pending", {}, { timeout: 5000 });
    expect(banner.textContent).toContain("Requests are placed by v3, which volcano-scheduler loaded when it started");
    expect(banner.textContent).toContain("the published v4 takes effect when it restarts");
    expect(screen.getByTestId("loaded-volcano-scheduler").textContent).toBe("v3");
  });

  it("has no warning once the published version is loaded", async () => {
    stubFetch(() => ({ body: states(false) }));
    renderAs("viewer", <RestartsPanel clusterId={1} />);
    await waitFor(() => expect(screen.getByTestId("config-in-effect").textContent).toContain("placed by v4"), { timeout: 5000 });
    expect(screen.queryByTestId("config-in-effect-pending")).toBeNull();
    expect(screen.getByTestId("loaded-volcano-scheduler").textContent).toBe("v4");
  });

  it("restarts every pending component in one action, one audited restart each", async () => {
    const three = states(true);
    three.components = ["volcano-scheduler", "hami-scheduler", "hami-ascend-device-plugin"].map((name, i) => ({
      ...three.components[0],
      component: name,
      restart_state: i < 2 ? "restart_pending" : "in_effect",
      message: `${name} started before v4`,
    }));
    const fetch = stubFetch((_url, init) => (init.method === "POST" ? { status: 202, body: {} } : { body: three }));
    renderAs("operator", <RestartsPanel clusterId={1} />);
    fireEvent.click(await screen.findByTestId("restart-all", {}, { timeout: 5000 }));
    const list = screen.getByTestId("restart-all-list");
    expect(list.textContent).toContain("volcano-system/volcano-scheduler");
    expect(list.textContent).toContain("hami-scheduler");
    expect(list.textContent).not.toContain("hami-ascend-device-plugin");
    fireEvent.click(screen.getByTestId("restart-confirm"));
    await waitFor(() => expect(screen.queryByTestId("restart-all-list")).toBeNull());
    const posted = fetch.mock.calls.filter(([, init]) => init?.method === "POST").map(([url]) => String(url));
    expect(posted).toEqual(["/api/clusters/1/restarts/volcano-scheduler/", "/api/clusters/1/restarts/hami-scheduler/"]);
  });

  it("speaks Chinese: the states, the columns and the version in effect, with its bold versions", async () => {
    stubFetch(() => ({ body: states(true) }));
    renderAs(
      "operator",
      <I18nProvider locale="zh-CN">
        <RestartsPanel clusterId={1} />
      </I18nProvider>,
    );
    const banner = await screen.findByTestId("config-in-effect-pending");
    expect(banner.textContent).toContain("申请目前按 v3 放置，即 volcano-scheduler 启动时加载的版本；已发布的 v4 将在其重启后生效。");
    expect([...banner.querySelectorAll("b")].map((b) => b.textContent)).toEqual(["v3", "v4"]);
    const panel = screen.getByTestId("restarts");
    expect(panel.textContent).toContain("待重启");
    expect(panel.textContent).toContain("组件");
    expect(panel.textContent).toContain("0/0 就绪");
    expect(panel.textContent).not.toContain("restart pending");
    fireEvent.click(screen.getByRole("button", { name: "重启" }));
    expect(screen.getByText("重启 volcano-scheduler？")).toBeTruthy();
    expect(screen.getByTestId("restart-confirm").textContent).toBe("重启所有 Pod");
  });
});
