import { afterEach, describe, expect, it, vi } from "vitest";
import { cleanup, fireEvent, render, screen, waitFor } from "@testing-library/react";
import { ApiError } from "../api/client";
import type { CiRequest } from "../api/types";
import { ENGLISH } from "../i18n/catalog";
import { I18nProvider } from "../i18n/I18nProvider";
import { makeI18n, setCurrentI18n } from "../i18n/intl";
import type { LogOpener, OpenedLog } from "../lib/logStream";
import { LogPanel } from "./LogPanel";

const base = {
  id: 9,
  state: "running",
  pod_name: "vnpu-req-9",
  result: null,
  exit_code: null,
} as unknown as CiRequest;

const T = (s: number) => `2026-12-06T20:00:0${s}.000000000Z`;

/** A log stream the test writes to. */
function stream(source: "live" | "kept" = "live", truncated = false) {
  const queue: string[] = [];
  let wake: (() => void) | null = null;
  let closed = false;
  async function* chunks() {
    for (;;) {
      while (queue.length) yield queue.shift()!;
      if (closed) return;
      await new Promise<void>((resolve) => (wake = resolve));
    }
  }
  const poke = () => {
    wake?.();
    wake = null;
  };
  return {
    log: { source, truncated, chunks: chunks() } as OpenedLog,
    write(text: string) {
      queue.push(text);
      poke();
    },
    close() {
      closed = true;
      poke();
    },
  };
}

function opener(...answers: (ReturnType<typeof stream> | Error)[]) {
  const paths: string[] = [];
  const open: LogOpener = vi.fn(async (path: string) => {
    paths.push(path);
    const answer = answers.shift();
    if (!answer) return new Promise<OpenedLog>(() => undefined);
    if (answer instanceof Error) throw answer;
    return answer.log;
  });
  return { open, paths };
}

const text = () => screen.getByTestId("log-text").textContent;

afterEach(() => {
  cleanup();
  setCurrentI18n(makeI18n("en", ENGLISH));
});

describe("LogPanel", () => {
  it("follows a running job's log as it comes, escaped, with timestamps on demand", async () => {
    const live = stream();
    const { open, paths } = opener(live);
    render(<LogPanel request={base} open={open} />);
    await waitFor(() => expect(screen.getByTestId("log-source").textContent).toBe("live"));
    expect(paths[0]).toBe("/api/requests/9/logs/?timestamps=true&follow=true");
    live.write(`${T(1)} epoch 1 <b>loss</b> 0.5\n${T(2)} epo`);
    await waitFor(() => expect(text()).toBe("epoch 1 <b>loss</b> 0.5"));
    expect(screen.getByTestId("log-text").querySelector("b")).toBeNull();
    live.write("ch 2\n");
    await waitFor(() => expect(text()).toBe("epoch 1 <b>loss</b> 0.5\nepoch 2"));
    fireEvent.click(screen.getByTestId("log-timestamps"));
    expect(text()).toBe(`${T(1)} epoch 1 <b>loss</b> 0.5\n${T(2)} epoch 2`);
    expect(screen.getByTestId("log-result").textContent).toContain("The result comes when the job ends");
    expect((screen.getByTestId("log-follow") as HTMLInputElement).checked).toBe(true);
  });

  it("resumes a dropped stream from its last timestamp without repeating lines", async () => {
    const first = stream();
    const second = stream();
    const { open, paths } = opener(first, second);
    render(<LogPanel request={base} open={open} />);
    first.write(`${T(1)} one\n${T(2)} two\n`);
    await waitFor(() => expect(text()).toBe("one\ntwo"));
    first.close(); // the connection dropped (or a web restart)
    await waitFor(() => expect(paths).toHaveLength(2), { timeout: 3000 });
    expect(paths[1]).toBe(`/api/requests/9/logs/?timestamps=true&follow=true&since_time=${encodeURIComponent(T(2))}`);
    second.write(`${T(2)} two\n${T(3)} three\n`);
    await waitFor(() => expect(text()).toBe("one\ntwo\nthree"));
  });

  it("shows the kept log of an ended job with its result, and says it was truncated", async () => {
    const kept = stream("kept", true);
    const { open, paths } = opener(kept);
    const ended = {
      ...base,
      state: "failed",
      exit_code: 3,
      result: { exit_code: 3, reason: "Error", finished_at: "2026-12-06T20:00:09Z", containers: [{ name: "main", exit_code: 3, reason: "Error", finished_at: "2026-12-06T20:00:09Z" }] },
    } as CiRequest;
    kept.write(`${T(1)} [vnpu-portal] log truncated: only its last 1048576 bytes were kept\n${T(8)} last words\n`);
    kept.close();
    render(<LogPanel request={ended} open={open} />);
    await waitFor(() => expect(screen.getByTestId("log-source").textContent).toBe("kept"));
    expect(paths).toEqual(["/api/requests/9/logs/?timestamps=true"]);
    expect(screen.getByTestId("log-truncated").textContent).toBe("truncated");
    expect(text()).toContain("last words");
    expect(screen.getByTestId("log-exit-code").textContent).toBe("3");
    expect(screen.getByTestId("log-reason").textContent).toBe("Error");
    expect(screen.getByTestId("log-finished-at").textContent).not.toBe("–");
  });

  it("reads an ended job's log again until the portal has kept it, though its result came first", async () => {
    // The portal keeps the exit code as soon as it sees the end, and the log a
    // moment later (fresh-clone run f16: the page showed the pod's log for good).
    const pods = stream("live");
    const kept = stream("kept");
    const { open, paths } = opener(pods, kept);
    const ended = {
      ...base,
      state: "failed",
      exit_code: 3,
      result: { exit_code: 3, reason: "Error", finished_at: "2026-12-06T20:00:09Z", containers: [] },
    } as unknown as CiRequest;
    pods.write(`${T(1)} first\n`);
    pods.close();
    kept.write(`${T(1)} first\n${T(2)} kept too\n`);
    kept.close();
    render(<LogPanel request={ended} open={open} />);
    await waitFor(() => expect(screen.getByTestId("log-source").textContent).toBe("live"));
    await waitFor(() => expect(screen.getByTestId("log-source").textContent).toBe("kept"), { timeout: 3000 });
    expect(text()).toContain("kept too");
    expect(paths).toEqual(["/api/requests/9/logs/?timestamps=true", "/api/requests/9/logs/?timestamps=true"]);
  });

  it("says when there is no pod yet, and when the container has not started", async () => {
    const noPod = opener(new ApiError(404, { code: "no_log", message: "request 9 has no pod yet (pending)" }));
    render(<LogPanel request={{ ...base, state: "pending", pod_name: "" } as CiRequest} open={noPod.open} />);
    await waitFor(() => expect(screen.getByTestId("log-note").textContent).toContain("No pod yet"));
    cleanup();
    const notReady = opener(new ApiError(409, { code: "log_not_ready", message: 'container "main" is waiting to start' }));
    render(<LogPanel request={base} open={notReady.open} />);
    await waitFor(() => expect(screen.getByTestId("log-note").textContent).toContain("has not started yet"));
  });

  it("keeps at most the last lines in the page", async () => {
    const live = stream();
    const { open } = opener(live);
    render(<LogPanel request={base} open={open} />);
    live.write(Array.from({ length: 5003 }, (_, i) => `${T(1)} line ${i}\n`).join(""));
    await waitFor(() => expect(screen.getByTestId("log-text").dataset.lines).toBe("5000"));
    expect(screen.getByTestId("log-dropped").textContent).toContain("3 earlier lines not shown");
    expect(text()?.startsWith("line 3\n")).toBe(true);
  });

  it("speaks Chinese: its heading, its source, the dropped lines and the result", async () => {
    const kept = stream("kept", true);
    const { open } = opener(kept);
    render(
      <I18nProvider locale="zh-CN">
        <LogPanel request={{ ...base, state: "succeeded" } as CiRequest} open={open} />
      </I18nProvider>,
    );
    kept.write(Array.from({ length: 5002 }, (_, i) => `${T(1)} line ${i}\n`).join(""));
    kept.close();
    await waitFor(() => expect(screen.getByTestId("log-source").textContent).toBe("已保存"));
    expect(screen.getByTestId("log-truncated").textContent).toBe("已截断");
    expect(screen.getByTestId("log-note").textContent).toBe("申请结束时门户保存的日志副本。");
    expect(screen.getByTestId("log-dropped").textContent).toBe("前面 2 行未显示（面板只保留最后 5,000 行；“原始日志”包含全部内容）。");
    expect(screen.getByTestId("log-result").textContent).toBe("正在记录结果。");
    const panel = screen.getByTestId("log-panel");
    expect(panel.textContent).toContain("跟随");
    expect(panel.textContent).not.toContain("timestamps");
  });
});
