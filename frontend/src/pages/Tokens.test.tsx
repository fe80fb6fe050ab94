import { afterEach, describe, expect, it, vi } from "vitest";
import { cleanup, fireEvent, render, screen, waitFor } from "@testing-library/react";
import type { ApiToken } from "../api/types";
import { I18nProvider } from "../i18n/I18nProvider";
import { loadMessages } from "../i18n/catalog";
import { makeI18n, setCurrentI18n } from "../i18n/intl";
import { IssuedToken, parseQueues, TokensPage } from "./Tokens";
import { page, renderAs, stubFetch } from "./testing";

const token: ApiToken = {
  id: 4,
  username: "ci-bot",
  role: "ci",
  name: "nightly",
  prefix: "vnp_ab12",
  queues: ["ci"],
  created_at: "2026-01-01T10:00:00Z",
  last_used_at: null,
  expires_at: null,
  revoked_at: null,
};

afterEach(async () => {
  cleanup();
  vi.unstubAllGlobals();
  vi.restoreAllMocks();
  setCurrentI18n(makeI18n("en", await loadMessages("en")));
});

describe("TokensPage", () => {
  it("says admins only to others and asks nothing of the API", () => {
    const fetch = stubFetch(() => undefined);
    renderAs("operator", <TokensPage />);
    expect(screen.getByTestId("admins-only").textContent).toContain("admins only");
    expect(fetch).not.toHaveBeenCalled();
  });

  it("lists tokens with role, queues and state", async () => {
    stubFetch(() => ({ body: page([token, { ...token, id: 5, name: "old", revoked_at: "2026-01-02T00:00:00Z" }]) }));
    renderAs("admin", <TokensPage />);
    const row = await screen.findByTestId("token-4");
    expect(row.textContent).toContain("nightly");
    expect(row.textContent).toContain("ci-bot");
    expect(row.textContent).toContain("never");
    expect(row.textContent).toContain("active");
    expect(screen.getByTestId("token-5").textContent).toContain("revoked");
    expect(screen.queryByTestId("rotate-5")).toBeNull();
  });

  it("creates a ci token and shows its plaintext once", async () => {
    const fetch = stubFetch((url, init) =>
      url === "/api/tokens/" && init.method === "POST" ? { status: 201, body: { ...token, token: "vnp_ab12_SECRET" } } : { body: page([]) },
    );
    renderAs("admin", <TokensPage />);
    fireEvent.click(await screen.findByTestId("token-new"));
    fireEvent.change(screen.getByTestId("token-username"), { target: { value: "ci-bot" } });
    fireEvent.change(screen.getByTestId("token-name"), { target: { value: "nightly" } });
    fireEvent.change(screen.getByTestId("token-queues"), { target: { value: "ci, nightly" } });
    fireEvent.click(screen.getByTestId("token-submit"));
    await waitFor(() => expect(screen.getByTestId("issued-token").textContent).toContain("vnp_ab12_SECRET"));
    expect(screen.getByText(/you will not see it again/)).toBeTruthy();
    const post = fetch.mock.calls.find(([, init]) => (init as RequestInit)?.method === "POST")!;
    expect(JSON.parse(String((post[1] as RequestInit).body))).toEqual({
      username: "ci-bot",
      name: "nightly",
      role: "ci",
      queues: ["ci", "nightly"],
      expires_at: null,
    });
    fireEvent.click(screen.getByTestId("issued-done"));
    expect(screen.queryByText("vnp_ab12_SECRET")).toBeNull();
  });

  it("puts the API's errors on the fields", async () => {
    stubFetch((_url, init) =>
      init.method === "POST" ? { status: 400, body: { code: "invalid", message: "Invalid.", errors: { role: ["required to create a new service account"] } } } : { body: page([]) },
    );
    renderAs("admin", <TokensPage />);
    fireEvent.click(await screen.findByTestId("token-new"));
    fireEvent.click(screen.getByTestId("token-submit"));
    await waitFor(() => expect(screen.getByText("required to create a new service account")).toBeTruthy());
  });

  it("rotates after asking, and shows the new plaintext", async () => {
    const confirm = vi.fn(() => true);
    vi.stubGlobal("confirm", confirm);
    const fetch = stubFetch((url) => (url === "/api/tokens/4/rotate/" ? { status: 201, body: { ...token, id: 6, token: "vnp_cd34_NEW" } } : { body: page([token]) }));
    renderAs("admin", <TokensPage />);
    fireEvent.click(await screen.findByTestId("rotate-4"));
    await waitFor(() => expect(screen.getByTestId("issued-token").textContent).toContain("vnp_cd34_NEW"));
    expect(confirm).toHaveBeenCalled();
    expect(screen.getByText(/old token no longer works/)).toBeTruthy();
    expect(fetch.mock.calls.some(([url]) => url === "/api/tokens/4/rotate/")).toBe(true);
  });

  it("does not revoke when the admin says no", async () => {
    vi.stubGlobal("confirm", vi.fn(() => false));
    const fetch = stubFetch(() => ({ body: page([token]) }));
    renderAs("admin", <TokensPage />);
    fireEvent.click(await screen.findByTestId("revoke-4"));
    expect(fetch.mock.calls.some(([url]) => String(url).includes("revoke"))).toBe(false);
  });
});

describe("TokensPage in Chinese", () => {
  it("shows the list, its states and its buttons in Chinese", async () => {
    stubFetch(() => ({ body: page([token, { ...token, id: 5, name: "old", revoked_at: "2026-01-02T00:00:00Z" }]) }));
    renderAs(
      "admin",
      <I18nProvider locale="zh-CN">
        <TokensPage />
      </I18nProvider>,
    );
    const row = await screen.findByTestId("token-4");
    expect(screen.getByRole("heading", { level: 1 }).textContent).toBe("API 令牌");
    expect(screen.getByText("2 个令牌")).toBeTruthy();
    expect(screen.getByTestId("token-new").textContent).toBe("新建令牌");
    expect(row.textContent).toContain("有效");
    expect(row.textContent).toContain("从不");
    expect(screen.getByTestId("rotate-4").textContent).toBe("轮换");
    expect(screen.getByTestId("token-5").textContent).toContain("已吊销");
    expect(screen.getByRole("columnheader", { name: "最近使用" })).toBeTruthy();
    expect(row.textContent).not.toContain("active");
    expect(row.textContent).not.toContain("never");
  });

  it("words a new token's warning in Chinese, with the role by its name", async () => {
    render(
      <I18nProvider locale="zh-CN">
        <IssuedToken issued={{ ...token, role: "operator", queues: [], token: "vnp_x_SECRET" }} rotated onClose={() => undefined} />
      </I18nProvider>,
    );
    expect((await screen.findByText(/之后将无法再次查看/)).tagName).toBe("B");
    expect(screen.getByText(/旧令牌已失效/)).toBeTruthy();
    expect(screen.getByText("令牌已轮换：nightly")).toBeTruthy();
    expect(screen.getByText("运维").tagName).toBe("B");
    expect(screen.getByText("Authorization: Bearer …").className).toBe("mono");
    expect(document.body.textContent).toContain("可用于所有队列");
    expect(document.body.textContent).not.toContain("you will not see it again");
  });
});

describe("parseQueues", () => {
  it("splits on commas and spaces", () => {
    expect(parseQueues(" ci, nightly  gpu,")).toEqual(["ci", "nightly", "gpu"]);
    expect(parseQueues("")).toEqual([]);
  });
});
