import { afterEach, describe, expect, it } from "vitest";
import { cleanup, render, screen } from "@testing-library/react";
import { useApi } from "./useApi";
import { pageLoadsStarted } from "./pageLoads";

afterEach(cleanup);

function Shows({ load }: { load: ((signal: AbortSignal) => Promise<string>) | null }) {
  const { data } = useApi(load, [load]);
  return <p>{data ?? "nothing"}</p>;
}

describe("useApi", () => {
  it("counts each load it starts (the live store asks whether any page asked before its socket joined)", async () => {
    const before = pageLoadsStarted();
    render(<Shows load={null} />);
    expect(pageLoadsStarted()).toBe(before);
    render(<Shows load={async () => "chips"} />);
    expect(await screen.findByText("chips")).toBeTruthy();
    expect(pageLoadsStarted()).toBe(before + 1);
  });
});
