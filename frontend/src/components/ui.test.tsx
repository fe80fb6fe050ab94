import { afterEach, describe, expect, it, vi } from "vitest";
import { cleanup, fireEvent, render, screen } from "@testing-library/react";
import { ApiError, request } from "../api/client";
import { I18nProvider } from "../i18n/I18nProvider";
import { loadMessages } from "../i18n/catalog";
import { makeI18n, setCurrentI18n } from "../i18n/intl";
import { EventTable, whenColumn } from "./EventTable";
import { ScopeChip, StateFilter } from "./FilterBar";
import { ReasonModal } from "./ReasonModal";
import { ConnectionDot, CopyText, DiffView, ErrorNote, Loading, Pager, SyncBadge } from "./ui";

afterEach(async () => {
  cleanup();
  vi.unstubAllGlobals();
  setCurrentI18n(makeI18n("en", await loadMessages("en")));
});

interface Row {
  id: number;
  at: string;
}
const rows: Row[] = [{ id: 1, at: "2026-12-02T11:55:00Z" }];

function Pieces() {
  return (
    <>
      <Loading />
      <Pager page={2} count={1234} pageSize={50} onPage={() => undefined} />
      <ConnectionDot state="reconnecting" retryAt={10_000} now={7_000} onRetry={() => undefined} />
      <SyncBadge state="ok" />
      <SyncBadge state="paused" />
      <DiffView diff="" />
      <ErrorNote error={new Error("boom")} onRetry={() => undefined} />
      <CopyText value="94E3BF91" />
      <StateFilter value="" states={["pending"]} onChange={() => undefined} />
      <ScopeChip label="#3" onClear={() => undefined} />
      <EventTable rows={rows} rowKey={(r) => r.id} columns={[whenColumn<Row>((r) => r.at)]} details={{ has: () => true, render: () => "x" }} />
    </>
  );
}

describe("the shared pieces", () => {
  it("read in English by default", () => {
    render(<Pieces />);
    const text = document.body.textContent ?? "";
    expect(text).toContain("Loading…");
    expect(text).toContain("51–100 of 1,234");
    expect(text).toContain("page 2 / 25");
    expect(text).toContain("reconnectingin 3sretry now");
    expect(text).toContain("sync ok");
    expect(text).toContain("No differences.");
    expect(screen.getByRole("option", { name: "All states" })).toBeTruthy();
    expect(screen.getByRole("columnheader", { name: "When" })).toBeTruthy();
    expect(screen.getByRole("button", { name: "Details" })).toBeTruthy();
  });

  it("read in Chinese under a Chinese provider", async () => {
    render(
      <I18nProvider locale="zh-CN">
        <Pieces />
      </I18nProvider>,
    );
    expect(await screen.findByText("第 51–100 条，共 1,234 条")).toBeTruthy();
    const text = document.body.textContent ?? "";
    expect(text).toContain("加载中…");
    expect(text).toContain("第 2 / 25 页");
    expect(text).toContain("下一页 ›");
    expect(screen.getByTestId("connection").textContent).toBe("正在重新连接3 秒后立即重试");
    expect(text).toContain("同步正常");
    expect(text).toContain("同步 paused"); // a state the catalog does not know shows as the API names it
    expect(text).toContain("没有差异。");
    expect(screen.getByRole("button", { name: "重试" })).toBeTruthy();
    expect(screen.getByRole("button", { name: "复制 94E3BF91" }).textContent).toBe("复制");
    expect(screen.getByRole("option", { name: "全部状态" })).toBeTruthy();
    expect(screen.getByRole("button", { name: "显示全部" })).toBeTruthy();
    expect(screen.getByRole("columnheader", { name: "时间" })).toBeTruthy();
    fireEvent.click(screen.getByRole("button", { name: "详情" }));
    expect(screen.getByRole("button", { name: "收起" })).toBeTruthy();
    expect(text).not.toContain("Loading");
    expect(text).not.toContain("Next");
  });

  it("asks for a reason in Chinese", async () => {
    render(
      <I18nProvider locale="zh-CN">
        <ReasonModal title="隔离" verb="隔离" submit={async () => undefined} onClose={() => undefined} />
      </I18nProvider>,
    );
    expect(await screen.findByText("原因")).toBeTruthy();
    expect(screen.getByText("将记录在审计日志中。")).toBeTruthy();
    expect(screen.getByRole("textbox", { name: "原因" })).toBeTruthy();
    // the dialog's ✕ (by its label) and the footer's button (by its text)
    expect(screen.getAllByRole("button", { name: "关闭" }).map((b) => b.textContent)).toEqual(["✕", "关闭"]);
    expect(document.body.textContent).not.toContain("Recorded in the audit log.");
  });
});

describe("the API client", () => {
  it("says the portal is unreachable in the UI's language", async () => {
    vi.stubGlobal("fetch", vi.fn(async () => Promise.reject(new TypeError("Failed to fetch"))));
    await expect(request("/api/me/")).rejects.toMatchObject({ code: "network", message: "The portal could not be reached." });
    setCurrentI18n(makeI18n("zh-CN", await loadMessages("zh-CN")));
    const error = await request("/api/me/").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).message).toBe("无法连接到门户。");
    expect((error as ApiError).code).toBe("network");
  });
});
