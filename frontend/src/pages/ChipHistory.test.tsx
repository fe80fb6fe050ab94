import { afterEach, describe, expect, it, vi } from "vitest";
import { cleanup, fireEvent, render, screen, waitFor } from "@testing-library/react";
import type { ChipEvent, Page } from "../api/types";
import { ENGLISH } from "../i18n/catalog";
import { I18nProvider } from "../i18n/I18nProvider";
import { makeI18n, setCurrentI18n } from "../i18n/intl";
import { dateTime } from "../lib/format";
import { ChipHistory, chipHistoryUrl } from "./ChipHistory";

const NOW = Date.parse("2026-12-02T12:00:00Z");

const event = (id: number, kind: ChipEvent["kind"], pod: string, minutesAgo: number, template = "vir01", memory = 3072): ChipEvent => ({
  id,
  chip_uuid: "U1",
  kind,
  namespace: "ci",
  pod_name: pod,
  template,
  memory,
  priority: 0,
  at: new Date(NOW - minutesAgo * 60_000).toISOString(),
});

function pageOf(results: ChipEvent[], count = results.length): Page<ChipEvent> {
  return { count, next: null, previous: null, results };
}

function serve(...pages: Page<ChipEvent>[]) {
  const fetch = vi.fn(async () => new Response(JSON.stringify(pages.shift() ?? pageOf([])), { status: 200 }));
  vi.stubGlobal("fetch", fetch);
  return fetch;
}

const urls = (fetch: ReturnType<typeof serve>) => fetch.mock.calls.map((c) => (c as unknown as [string])[0]);

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  setCurrentI18n(makeI18n("en", ENGLISH));
});

describe("chip history", () => {
  it("asks the API for the chip's history, a page at a time", () => {
    expect(chipHistoryUrl(7, 1)).toBe("/api/chips/7/history/?page_size=20");
    expect(chipHistoryUrl(7, 3)).toBe("/api/chips/7/history/?page=3&page_size=20");
  });

  it("lists placed and released slices, newest first as the API sends them", async () => {
    const fetch = serve(
      pageOf([event(2, "released", "job-1", 5), event(1, "placed", "job-1", 65), event(0, "placed", "whole", 90, "", 21527)]),
    );
    render(<ChipHistory chipId={7} now={NOW} />);
    const rows = await screen.findAllByTestId("chip-history-row");
    expect(urls(fetch)).toEqual(["/api/chips/7/history/?page_size=20"]);
    const cells = rows.map((r) => [...r.querySelectorAll("td")].map((td) => td.textContent));
    expect(cells).toEqual([
      ["5m ago", "released", "job-1ci", "vir01", "3 GiB"],
      ["1h 5m ago", "placed", "job-1ci", "vir01", "3 GiB"],
      ["1h 30m ago", "placed", "wholeci", "whole card", "21.0 GiB"],
    ]);
    // the exact time is in the tooltip
    expect(rows[0].querySelector("td")!.getAttribute("title")).toBe(dateTime("2026-12-02T11:55:00.000Z"));
  });

  it("speaks Chinese", async () => {
    serve(pageOf([event(2, "released", "job-1", 5), { ...event(0, "placed", "whole", 90, "", 21527), priority: 100 }]));
    render(
      <I18nProvider locale="zh-CN">
        <ChipHistory chipId={7} now={NOW} />
      </I18nProvider>,
    );
    const rows = await screen.findAllByTestId("chip-history-row");
    const cells = rows.map((r) => [...r.querySelectorAll("td")].map((td) => td.textContent));
    expect(cells).toEqual([
      ["5分钟前", "已释放", "job-1ci", "vir01", "3 GiB"],
      ["1小时30分钟前", "已放置", "wholeci · 优先级 100", "整卡", "21.0 GiB"],
    ]);
    const head = screen.getByTestId("chip-history").querySelector("thead")!.textContent!;
    expect(head).toContain("事件");
    expect(head).toContain("模板");
    expect(head).toContain("显存");
    expect(head).not.toMatch(/Event|Template|Memory/);
  });

  it("says so in Chinese when the chip has no history", async () => {
    serve(pageOf([]));
    render(
      <I18nProvider locale="zh-CN">
        <ChipHistory chipId={7} now={NOW} />
      </I18nProvider>,
    );
    expect((await screen.findByTestId("chip-history-empty")).textContent).toBe("自门户开始监视集群以来，此芯片上没有放置或释放任何切片。");
  });

  it("says so when the chip has no history", async () => {
    serve(pageOf([]));
    render(<ChipHistory chipId={7} now={NOW} />);
    expect((await screen.findByTestId("chip-history-empty")).textContent).toContain("Nothing placed on or released");
    expect(screen.queryByTestId("chip-history")).toBeNull();
  });

  it("pages through a long history", async () => {
    const first = Array.from({ length: 20 }, (_, i) => event(100 - i, "placed", `p${i}`, i));
    const fetch = serve(pageOf(first, 25), pageOf([event(1, "placed", "old", 500)], 25));
    render(<ChipHistory chipId={7} now={NOW} />);
    expect(await screen.findAllByTestId("chip-history-row")).toHaveLength(20);
    fireEvent.click(screen.getByText("Next ›"));
    await waitFor(() => expect(screen.getAllByTestId("chip-history-row")).toHaveLength(1));
    expect(urls(fetch)).toEqual(["/api/chips/7/history/?page_size=20", "/api/chips/7/history/?page=2&page_size=20"]);
  });

  it("refetches when the chip changes", async () => {
    const fetch = serve(pageOf([event(1, "placed", "a", 1)]), pageOf([event(2, "placed", "b", 0), event(1, "placed", "a", 1)]));
    const { rerender } = render(<ChipHistory chipId={7} refresh={{ v: 1 }} now={NOW} />);
    expect(await screen.findAllByTestId("chip-history-row")).toHaveLength(1);
    rerender(<ChipHistory chipId={7} refresh={{ v: 2 }} now={NOW} />);
    await waitFor(() => expect(screen.getAllByTestId("chip-history-row")).toHaveLength(2));
    expect(fetch).toHaveBeenCalledTimes(2);
  });

  it("shows the API's error with a retry", async () => {
    vi.stubGlobal(
      "fetch",
      vi.fn(async () => new Response(JSON.stringify({ code: "not_found", message: "No Chip matches the given query." }), { status: 404 })),
    );
    render(<ChipHistory chipId={7} now={NOW} />);
    await waitFor(() => expect(document.body.textContent).toContain("No Chip matches the given query."));
  });
});
