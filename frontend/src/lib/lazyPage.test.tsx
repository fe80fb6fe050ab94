import { afterEach, describe, expect, it, vi } from "vitest";
import { Suspense } from "react";
import { cleanup, render, screen } from "@testing-library/react";
import { lazyPage } from "./lazyPage";

afterEach(cleanup);

const Hello = () => <p>hello</p>;

describe("lazyPage", () => {
  it("loads the chunk once, however often it is preloaded and rendered", async () => {
    const load = vi.fn(async () => Hello);
    const page = lazyPage(load);
    void page.preload();
    void page.preload();
    render(
      <Suspense fallback={<p>loading</p>}>
        <page.Page />
      </Suspense>,
    );
    expect(await screen.findByText("hello")).toBeTruthy();
    expect(load).toHaveBeenCalledOnce();
  });

  it("tries a failed load again", async () => {
    const load = vi.fn().mockRejectedValueOnce(new Error("offline")).mockResolvedValue(Hello);
    const page = lazyPage(load);
    await expect(page.preload()).rejects.toThrow("offline");
    await expect(page.preload()).resolves.toBe(Hello);
    expect(load).toHaveBeenCalledTimes(2);
  });
});

describe("lazyPage, once loaded", () => {
  it("renders at once, without the fallback", async () => {
    const page = lazyPage(async () => Hello);
    await page.preload();
    render(
      <Suspense fallback={<p>loading</p>}>
        <page.Page />
      </Suspense>,
    );
    expect(screen.getByText("hello")).toBeTruthy();
    expect(screen.queryByText("loading")).toBeNull();
  });
});
