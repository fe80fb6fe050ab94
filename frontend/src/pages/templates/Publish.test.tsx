import { afterEach, describe, expect, it, vi } from "vitest";
import { cleanup, fireEvent, screen, waitFor } from "@testing-library/react";
import type { DeviceConfigState, WhatIf, WhatIfSlice } from "../../api/types";
import { ENGLISH } from "../../i18n/catalog";
import { I18nProvider } from "../../i18n/I18nProvider";
import { makeI18n, setCurrentI18n } from "../../i18n/intl";
import { renderAs } from "../testing";
import { PublishTab } from "./Publish";

const slice = (pod: string, template: string, reason: string): WhatIfSlice => ({
  namespace: "default",
  pod_name: pod,
  node_name: "node-a",
  common_word: "Ascend310P",
  chip_uuid: `U-${pod}`,
  chip_index: 0,
  template,
  memory: 3072,
  reason,
});

const whatIf: WhatIf = {
  cluster: "demo",
  baseline_version: 2,
  valid: true,
  errors: [],
  chip_types: [],
  removed_chip_types: [],
  invalid_slices: [
    slice("npu-pod-310p", "vir01", "template vir01 of Ascend310P is resized from 3072 MB to 4096 MB"),
    slice("train-7", "vir01", "template vir01 of Ascend310P is resized from 3072 MB to 4096 MB"),
  ],
  already_invalid_slices: [slice("old-pod", "vir03", "template vir03 of Ascend310P is not in the config")],
  overbooked_chips: [],
};

const config: DeviceConfigState = {
  yaml: "",
  base_version: 2,
  diff_from_base: "-    memory: 3072\n+    memory: 4096\n",
  errors: [],
  warnings: [],
  shape_warnings: [],
  in_effect: { version: 2, published: 2, pending_restart: false, loaded_by: "", loaded_at: null, why: "" },
};

function json(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), { status, headers: { "Content-Type": "application/json" } });
}

/** The publish POSTs seen, answered by `answer`; every other call gets an empty restarts list. */
function stubApi(answer: (body: Record<string, unknown>) => Response) {
  const posts: Record<string, unknown>[] = [];
  vi.stubGlobal(
    "fetch",
    vi.fn(async (url: string, init?: RequestInit) => {
      if (String(url).includes("/publish/") && init?.method === "POST") {
        const body = JSON.parse(String(init.body)) as Record<string, unknown>;
        posts.push(body);
        return answer(body);
      }
      return json(200, { cluster: "demo", components: [] });
    }),
  );
  return posts;
}

function renderTab(onPublished = () => {}) {
  return renderAs(
    "operator",
    <PublishTab clusterId={1} config={config} configError={null} whatIf={whatIf} drift={undefined} driftError={null} onPublished={onPublished} />,
    "op",
  );
}

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  setCurrentI18n(makeI18n("en", ENGLISH));
});

describe("publishing an edit that breaks running slices", () => {
  it("blames this publish only for what it breaks", () => {
    stubApi(() => json(201, {}));
    renderTab();
    const breaks = screen.getByTestId("impact-breaks");
    expect(breaks.textContent).toContain("2 running slices this publish would break");
    expect(breaks.textContent).toContain("default/npu-pod-310p");
    expect(breaks.textContent).not.toContain("old-pod");
    const already = screen.getByTestId("impact-already-broken");
    expect(already.textContent).toContain("1 running slice already broken by the published config (not this publish)");
    expect(already.textContent).toContain("default/old-pod");
    expect(already.textContent).not.toContain("npu-pod-310p");
  });

  it("publishes only once the templates are accepted, and sends those templates", async () => {
    const posts = stubApi(() => json(201, { number: 3, previous_resource_version: "1", resource_version: "2", forced: false, diff: "", warnings: [], shape_warnings: [] }));
    renderTab();
    fireEvent.change(screen.getByTestId("publish-reason"), { target: { value: "bigger vir01" } });
    const box = screen.getByTestId("confirm-breaking") as HTMLInputElement;
    expect(box.required).toBe(true);
    expect(box.closest("label")!.textContent).toBe(
      "Publish anyway: the running slices of Ascend310P/vir01 lose their template, whichever pods run them when it lands (2 pods now: default/npu-pod-310p, default/train-7)",
    );
    const publish = screen.getByTestId("publish") as HTMLButtonElement;
    expect(publish.disabled).toBe(true);
    fireEvent.click(box);
    expect(publish.disabled).toBe(false);
    fireEvent.click(publish);
    await waitFor(() => expect(screen.getByTestId("publish-result").textContent).toContain("Published v3"));
    expect(posts).toHaveLength(1);
    expect(posts[0].confirm_breaking_templates).toEqual(["Ascend310P/vir01"]);
    expect(posts[0].confirm_breaking).toBeUndefined();
  });

  it("shows the API's refusal on the confirmation and fetches the impact again", async () => {
    const message = "this publish breaks 1 running slice(s): default/train-9 (template vir01 of Ascend310P is resized from 3072 MB to 4096 MB); name each one";
    stubApi(() => json(400, { code: "breaks_running_slices", message, errors: { confirm_breaking: [message], confirm_breaking_templates: ["the slices it breaks use Ascend310P/vir01"] } }));
    const onPublished = vi.fn();
    renderTab(onPublished);
    fireEvent.change(screen.getByTestId("publish-reason"), { target: { value: "bigger vir01" } });
    fireEvent.click(screen.getByTestId("confirm-breaking"));
    fireEvent.click(screen.getByTestId("publish"));
    const alert = await screen.findByText(message);
    expect(alert.closest(".field")!.querySelector("[data-testid=confirm-breaking]")).not.toBeNull();
    expect(onPublished).toHaveBeenCalledTimes(1);
  });
});

describe("publishing over a hand edit", () => {
  const drift = {
    in_sync: false,
    checked: "live" as const,
    baseline_version: 2,
    live_version: 3,
    live_resource_version: "9",
    diff: "-    memory: 12288\n+    memory: 12000\n",
    unpublished: "",
  };
  const refused = {
    code: "drift",
    message: "the ConfigMap was edited outside the portal",
    detail: { last_seen_version: 2, live_resource_version: "9", diff_live: "-    memory: 12288\n+    memory: 12000\n", diff_proposed: "" },
  };

  it("needs the admin to see the hand edit and type the word, then forces", async () => {
    const posts = stubApi((body) => (body.force ? json(201, { number: 4, previous_resource_version: "9", resource_version: "10", forced: true, diff: "", warnings: [], shape_warnings: [] }) : json(409, refused)));
    renderAs("admin", <PublishTab clusterId={1} config={config} configError={null} whatIf={{ ...whatIf, invalid_slices: [] }} drift={drift} driftError={null} onPublished={() => {}} />, "ada");
    fireEvent.change(screen.getByTestId("publish-reason"), { target: { value: "put vir04 back" } });
    fireEvent.click(screen.getByTestId("publish"));
    fireEvent.click(await screen.findByTestId("force"));
    expect(posts).toHaveLength(1); // the click opens the confirmation, it does not publish
    const dialog = screen.getByRole("dialog");
    expect(dialog.textContent).toContain("drops this hand edit");
    expect(dialog.textContent).toContain("+    memory: 12000");
    const confirm = screen.getByTestId("force-confirm") as HTMLButtonElement;
    expect(confirm.disabled).toBe(true);
    fireEvent.change(screen.getByTestId("force-typed"), { target: { value: "forc" } });
    expect(confirm.disabled).toBe(true);
    fireEvent.change(screen.getByTestId("force-typed"), { target: { value: "force" } });
    fireEvent.click(confirm);
    await waitFor(() => expect(screen.getByTestId("publish-result").textContent).toContain("Published v4"));
    expect(posts.map((p) => p.force)).toEqual([false, true]);
    // the drift answer still on screen is about v2, older than v4: not shown beside the success
    expect(screen.queryByTestId("drift-banner")).toBeNull();
  });
});

describe("publishing in Chinese", () => {
  it("says what breaks, what to confirm and what was published in Chinese", async () => {
    stubApi(() => json(201, { number: 3, previous_resource_version: "1", resource_version: "2", forced: true, diff: "", warnings: [], shape_warnings: [] }));
    renderAs(
      "operator",
      <I18nProvider locale="zh-CN">
        <PublishTab clusterId={1} config={config} configError={null} whatIf={whatIf} drift={undefined} driftError={null} onPublished={() => {}} />
      </I18nProvider>,
      "op",
    );
    const breaks = await screen.findByTestId("impact-breaks");
    expect(breaks.textContent).toContain("本次发布将破坏 2 个运行中的切片");
    expect(screen.getByTestId("impact-already-broken").textContent).toContain("1 个运行中的切片已被已发布的配置破坏（并非本次发布所致）");
    const impact = screen.getByTestId("impact");
    expect(impact.textContent).toContain("影响");
    expect(impact.textContent).toContain("有效");
    expect(impact.textContent).not.toContain("running slice");
    const box = screen.getByTestId("confirm-breaking");
    expect(box.closest("label")!.textContent).toBe(
      "仍然发布：Ascend310P/vir01 的运行中切片将失去其模板，无论发布生效时由哪些 Pod 运行（当前 2 个 Pod：default/npu-pod-310p, default/train-7）",
    );
    expect(screen.getByTestId("publish").textContent).toBe("发布到 ConfigMap");
    fireEvent.change(screen.getByTestId("publish-reason"), { target: { value: "调大 vir01" } });
    fireEvent.click(box);
    fireEvent.click(screen.getByTestId("publish"));
    await waitFor(() =>
      expect(screen.getByTestId("publish-result").textContent).toBe(
        "已发布 v3 到 ConfigMap（resourceVersion 1 → 2），覆盖了手动修改。HAMi 调度器、设备插件和 Volcano 在启动时读取它：请在下方重启它们。",
      ),
    );
  });
});
