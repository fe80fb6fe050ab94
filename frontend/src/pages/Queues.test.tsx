import { afterEach, describe, expect, it, vi } from "vitest";
import { cleanup, fireEvent, render, screen, waitFor } from "@testing-library/react";
import type { Page, Queue, Role } from "../api/types";
import { I18nProvider } from "../i18n/I18nProvider";
import { loadMessages } from "../i18n/catalog";
import { makeI18n, setCurrentI18n } from "../i18n/intl";
import { QueueCreateForm, QueuesPage, QuotaForm } from "./Queues";
import { renderAs } from "./testing";

const ci: Queue = {
  id: 4,
  cluster: 1,
  name: "ci",
  description: "pipelines",
  quotas: [
    { chip_type: "Ascend310P", memory_limit: 12288, slots_limit: null },
    { chip_type: "Ascend910B", memory_limit: null, slots_limit: 4 },
  ],
  allowed_namespaces: ["ci", "batch"],
  pod_security: "restricted",
  allowed_service_accounts: [],
  allowed_secrets: ["ci-creds"],
  allowed_config_maps: [],
  open_to_all: false,
  members: [],
  member_groups: [],
  max_priority: null,
  system_priority_classes: [],
  usage: [{ chip_type: "Ascend310P", memory_used: 6144, slots_used: 2, pending: 3, running: 1 }],
  volcano: { state: "Closed", managed: true, capability: {}, reason: 'Volcano queue "ci" is Closed in the cluster; waiting until it is Open again (vcctl queue operate -n ci -a open)' },
  created_at: "2026-12-02T12:00:00Z",
  updated_at: "2026-12-02T12:00:00Z",
};

const missing: Queue = {
  ...ci,
  id: 5,
  name: "empty",
  description: "",
  quotas: [],
  usage: [],
  allowed_namespaces: [],
  volcano: { state: "Missing", managed: false, capability: {}, reason: 'Volcano queue "empty" does not exist in the cluster' },
};

afterEach(async () => {
  cleanup();
  vi.unstubAllGlobals();
  setCurrentI18n(makeI18n("en", await loadMessages("en")));
});

function json(body: unknown, status = 200) {
  return new Response(JSON.stringify(body), { status, headers: { "Content-Type": "application/json" } });
}

function renderPage(role: Role, locale?: "zh-CN") {
  const page: Page<Queue> = { count: 2, next: null, previous: null, results: [ci, missing] };
  const fetch = vi.fn(async (url: string) =>
    String(url).startsWith("/api/chip-types/")
      ? json({ count: 1, next: null, previous: null, results: [{ common_word: "Ascend310P" }, { common_word: "Ascend910B" }] })
      : json(page),
  );
  vi.stubGlobal("fetch", fetch);
  renderAs(role, locale ? <I18nProvider locale={locale}><QueuesPage /></I18nProvider> : <QueuesPage />);
  return fetch;
}

describe("QueuesPage in Chinese", () => {
  it("shows the cards, the pod policy and who may submit in Chinese", async () => {
    renderPage("admin", "zh-CN");
    await screen.findByTestId("queue-ci");
    expect(screen.getByRole("heading", { level: 1 }).textContent).toBe("队列");
    expect(screen.getByText("2 个队列")).toBeTruthy();
    expect(screen.getByTestId("counts-ci").textContent).toBe("3 个等待中 · 1 个运行中");
    expect(screen.getByTestId("edit-quotas-ci").textContent).toBe("编辑配额");
    expect(screen.getByTestId("policy-ci").textContent).toBe(
      "命名空间 ci, batch · Pod 安全级别 restricted · ServiceAccount 仅 default · Secret ci-creds · ConfigMap 无",
    );
    expect(screen.getByTestId("access-ci").textContent).toBe("可提交者 仅管理员 · 优先级 最高 1000000000");
    expect(screen.getByTestId("volcano-empty").textContent).toContain("Volcano: 缺失");
    expect(screen.getByTestId("volcano-ci").textContent).toContain("Volcano: Closed"); // Volcano's own state name
    const row = screen.getByTestId("quota-ci-Ascend910B");
    expect(row.textContent).toContain("已用 0 MB · 不限");
    expect(screen.getByTestId("no-quota-empty").textContent).toContain("无配额");
    expect(screen.getAllByRole("columnheader", { name: "显存" }).length).toBeGreaterThan(0);
    expect(document.body.textContent).not.toContain("pending");
    expect(document.body.textContent).not.toContain("unlimited");
  });

  it("asks for a new queue's fields in Chinese", async () => {
    render(
      <I18nProvider locale="zh-CN">
        <QueueCreateForm clusterId={1} onClose={() => undefined} onDone={() => undefined} />
      </I18nProvider>,
    );
    expect(await screen.findByText("新建队列")).toBeTruthy();
    expect(screen.getByText("最高优先级")).toBeTruthy();
    expect(screen.getByText("向所有人开放")).toBeTruthy();
    expect(screen.getByTestId("queue-create-submit").textContent).toBe("创建");
    expect((screen.getByTestId("queue-members") as HTMLInputElement).placeholder).toBe("ci-bot, alice");
    expect(document.body.textContent).not.toContain("Highest priority");
  });
});

describe("QueuesPage", () => {
  it("shows each quota next to what the queue holds, and unlimited where there is no limit", async () => {
    const fetch = renderPage("viewer");
    await screen.findByTestId("queue-ci");
    expect((fetch.mock.calls[0] as unknown as [string])[0]).toBe("/api/queues/?cluster=1&page_size=1000");
    const row = screen.getByTestId("quota-ci-Ascend310P");
    expect(row.textContent).toContain("50%");
    expect(row.textContent).toContain("6 GiB / 12 GiB");
    expect(row.textContent).toContain("2 used · unlimited");
    const other = screen.getByTestId("quota-ci-Ascend910B");
    expect(other.textContent).toContain("0 / 4");
    expect(other.textContent).toContain("0 MB used · unlimited");
    expect(screen.getByTestId("counts-ci").textContent).toBe("3 pending · 1 running");
    expect(screen.getByTestId("no-quota-empty")).toBeTruthy();
  });
  it("says why a Closed or Missing Volcano Queue holds requests, and how to fix it", async () => {
    renderPage("viewer");
    await screen.findByTestId("queue-ci");
    expect(screen.getByTestId("volcano-ci").textContent).toContain("Volcano: Closed");
    expect(screen.getByTestId("volcano-reason-ci").textContent).toContain("vcctl queue operate -n ci -a open");
    expect(screen.getByTestId("volcano-empty").textContent).toContain("Volcano: Missing");
  });
  it("summarises the pod policy; empty lists mean default only", async () => {
    renderPage("viewer");
    await screen.findByTestId("queue-ci");
    expect(screen.getByTestId("policy-ci").textContent).toBe(
      "Namespaces ci, batch · Pod Security restricted · Service accounts default only · Secrets ci-creds · ConfigMaps none",
    );
    expect(screen.getByTestId("policy-empty").textContent).toContain("Namespaces default only");
    // a queue nobody is named in is for admins; no ceiling set is the user-class maximum
    expect(screen.getByTestId("access-ci").textContent).toBe("Who may submit admins only · Priority up to 1000000000");
  });
  it("gives admins New queue and Edit quotas, and nobody else", async () => {
    renderPage("admin");
    await screen.findByTestId("queue-ci");
    expect(screen.getByTestId("queue-create")).toBeTruthy();
    expect(screen.getByTestId("edit-quotas-ci")).toBeTruthy();
    cleanup();
    for (const role of ["operator", "viewer", "ci"] as Role[]) {
      renderPage(role);
      await screen.findByTestId("queue-ci");
      expect(screen.queryByTestId("queue-create")).toBeNull();
      expect(screen.queryByTestId("edit-quotas-ci")).toBeNull();
      cleanup();
    }
  });
});

describe("QueueCreateForm", () => {
  it("posts name and namespaces and puts the API's field errors on the fields", async () => {
    const fetch = vi.fn(async () =>
      json({ code: "invalid", message: "Invalid.", errors: { name: ["queue 'ci' already exists"], "allowed_namespaces[1]": ["a DNS-1123 label"] } }, 400),
    );
    vi.stubGlobal("fetch", fetch);
    const onDone = vi.fn();
    render(<QueueCreateForm clusterId={1} onClose={() => {}} onDone={onDone} />);
    fireEvent.change(screen.getByTestId("queue-name"), { target: { value: " ci " } });
    fireEvent.change(screen.getByTestId("queue-namespaces"), { target: { value: "ci, Bad_NS" } });
    fireEvent.click(screen.getByTestId("queue-create-submit"));
    await waitFor(() => expect(screen.getByText("queue 'ci' already exists")).toBeTruthy());
    expect(screen.getByText("a DNS-1123 label")).toBeTruthy();
    expect(screen.getByTestId("queue-namespaces").className).toContain("invalid");
    const [url, init] = fetch.mock.calls[0] as unknown as [string, RequestInit];
    expect(url).toBe("/api/queues/");
    expect(JSON.parse(String(init.body))).toEqual({
      cluster: 1,
      name: "ci",
      description: "",
      allowed_namespaces: ["ci", "Bad_NS"],
      open_to_all: false,
      members: [],
      member_groups: [],
    });
    expect(onDone).not.toHaveBeenCalled();
  });
});

describe("QueueCreateForm's Secrets and ConfigMaps", () => {
  it("posts the lists the pods may reference and puts an entry's error on its field", async () => {
    const fetch = vi.fn(async () => json({ code: "invalid", message: "Invalid.", errors: { "allowed_secrets[1]": ["a DNS-1123 subdomain"] } }, 400));
    vi.stubGlobal("fetch", fetch);
    render(<QueueCreateForm clusterId={1} onClose={() => {}} onDone={() => {}} />);
    fireEvent.change(screen.getByTestId("queue-name"), { target: { value: "team" } });
    fireEvent.change(screen.getByTestId("queue-secrets"), { target: { value: "creds, Bad_Name" } });
    fireEvent.change(screen.getByTestId("queue-config-maps"), { target: { value: "cfg" } });
    fireEvent.click(screen.getByTestId("queue-create-submit"));
    await waitFor(() => expect(screen.getByText("a DNS-1123 subdomain")).toBeTruthy());
    expect(screen.getByTestId("queue-secrets").className).toContain("invalid");
    expect(screen.getByTestId("queue-config-maps").className).not.toContain("invalid");
    const [, init] = fetch.mock.calls[0] as unknown as [string, RequestInit];
    expect(JSON.parse(String(init.body))).toEqual({
      cluster: 1,
      name: "team",
      description: "",
      allowed_namespaces: [],
      allowed_secrets: ["creds", "Bad_Name"],
      allowed_config_maps: ["cfg"],
      open_to_all: false,
      members: [],
      member_groups: [],
    });
  });
});

describe("QueueCreateForm's access", () => {
  it("posts who may submit and the priority ceiling, and puts a member's error on its field", async () => {
    const fetch = vi.fn(async () => json({ code: "invalid", message: "Invalid.", errors: { "members[0]": ["no user 'nobody'"] } }, 400));
    vi.stubGlobal("fetch", fetch);
    render(<QueueCreateForm clusterId={1} onClose={() => {}} onDone={() => {}} />);
    fireEvent.change(screen.getByTestId("queue-name"), { target: { value: "team" } });
    fireEvent.click(screen.getByTestId("queue-open-to-all"));
    fireEvent.change(screen.getByTestId("queue-members"), { target: { value: "nobody" } });
    fireEvent.change(screen.getByTestId("queue-groups"), { target: { value: "ml-team, sre" } });
    fireEvent.change(screen.getByTestId("queue-max-priority"), { target: { value: "1000" } });
    fireEvent.click(screen.getByTestId("queue-create-submit"));
    await waitFor(() => expect(screen.getByText("no user 'nobody'")).toBeTruthy());
    expect(screen.getByTestId("queue-members").className).toContain("invalid");
    const [, init] = fetch.mock.calls[0] as unknown as [string, RequestInit];
    expect(JSON.parse(String(init.body))).toMatchObject({
      open_to_all: true,
      members: ["nobody"],
      member_groups: ["ml-team", "sre"],
      max_priority: 1000,
    });
  });
});

describe("QuotaForm", () => {
  it("patches every quota, empty as unlimited, and shows a row's error on that row's field", async () => {
    const fetch = vi.fn(async () => json({ code: "invalid", message: "Invalid.", errors: { "quotas.1.slots_limit": ["Ensure this value is greater than or equal to 0."] } }, 400));
    vi.stubGlobal("fetch", fetch);
    render(<QuotaForm queue={ci} chipTypes={["Ascend310P", "Ascend910B"]} onClose={() => {}} onDone={() => {}} />);
    expect(screen.queryByTestId("quota-add")).toBeNull(); // every chip type has a row
    fireEvent.change(screen.getByTestId("quota-0-memory_limit"), { target: { value: "" } });
    fireEvent.change(screen.getByTestId("quota-1-slots_limit"), { target: { value: "-1" } });
    fireEvent.click(screen.getByTestId("quota-submit"));
    await waitFor(() => expect(screen.getByText("Ensure this value is greater than or equal to 0.")).toBeTruthy());
    expect(screen.getByTestId("quota-1-slots_limit").className).toContain("invalid");
    expect(screen.getByTestId("quota-0-slots_limit").className).not.toContain("invalid");
    const [url, init] = fetch.mock.calls[0] as unknown as [string, RequestInit];
    expect(url).toBe("/api/queues/4/");
    expect(init.method).toBe("PATCH");
    expect(JSON.parse(String(init.body))).toEqual({
      quotas: [
        { chip_type: "Ascend310P", memory_limit: null, slots_limit: null },
        { chip_type: "Ascend910B", memory_limit: null, slots_limit: "-1" },
      ],
    });
  });
  it("adds a row for a chip type without a quota", async () => {
    const fetch = vi.fn(async () => json(missing));
    vi.stubGlobal("fetch", fetch);
    const onDone = vi.fn();
    render(<QuotaForm queue={missing} chipTypes={["Ascend310P"]} onClose={() => {}} onDone={onDone} />);
    fireEvent.click(screen.getByTestId("quota-add"));
    fireEvent.change(screen.getByTestId("quota-0-memory_limit"), { target: { value: "8192" } });
    fireEvent.click(screen.getByTestId("quota-submit"));
    await waitFor(() => expect(onDone).toHaveBeenCalled());
    const [, init] = fetch.mock.calls[0] as unknown as [string, RequestInit];
    expect(JSON.parse(String(init.body))).toEqual({ quotas: [{ chip_type: "Ascend310P", memory_limit: 8192, slots_limit: null }] });
  });
});
