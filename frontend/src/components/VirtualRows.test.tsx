import { afterEach, describe, expect, it } from "vitest";
import { act, cleanup, fireEvent, render, screen } from "@testing-library/react";
import { firstRow, VirtualRows } from "./VirtualRows";

afterEach(cleanup);

const ROW = 30;

function table(count: number) {
  return (
    <VirtualRows
      count={count}
      rowHeight={ROW}
      height={300}
      overscan={2}
      testId="t"
      header={<div role="row">head</div>}
      renderRow={(i) => (
        <div role="row" data-testid="row" data-index={i}>
          row {i}
        </div>
      )}
    />
  );
}

const shown = () => screen.queryAllByTestId("row").map((r) => Number(r.dataset.index));

function scrollTo(top: number) {
  const el = screen.getByTestId("t");
  el.scrollTop = top;
  act(() => {
    fireEvent.scroll(el);
  });
}

describe("VirtualRows", () => {
  it("renders the rows in view and the overscan, not the rest", () => {
    render(table(1000));
    // 300 px / 30 px = 10 rows, 2 of overscan on either side, one for a cut row
    expect(shown()).toEqual([...Array(15).keys()]);
  });

  it("renders every row of a short list", () => {
    render(table(3));
    expect(shown()).toEqual([0, 1, 2]);
  });

  it("gives scrolled-away slots the rows scrolled to, reusing their elements", () => {
    render(table(1000));
    const before = new Map(screen.getAllByTestId("row").map((r) => [Number(r.dataset.index), r]));
    scrollTo(100 * ROW);
    const rows = shown();
    expect([...rows].sort((a, b) => a - b)).toEqual([...Array(15).keys()].map((k) => 98 + k));
    // Row 98 is drawn by the slot that drew row 98 % 15 = 8, in the same element.
    const row98 = screen.getAllByTestId("row").find((r) => r.dataset.index === "98")!;
    expect(row98).toBe(before.get(8));
    // Each slot is moved to its row's place, below the 32 px header.
    expect(row98.parentElement!.style.transform).toBe(`translateY(${32 + 98 * ROW}px)`);
  });

  it("starts no lower than a shorter list allows", () => {
    const { rerender } = render(table(1000));
    scrollTo(900 * ROW);
    rerender(table(20));
    // The browser clamps the position to the end: rows 10-19 in view, 8 and 9 of overscan.
    expect([...shown()].sort((a, b) => a - b)).toEqual([...Array(12).keys()].map((k) => 8 + k));
  });

  it("the first row for a position keeps the overscan above it", () => {
    expect(firstRow(0, ROW, 12)).toBe(0);
    expect(firstRow(100 * ROW + 5, ROW, 12)).toBe(88);
  });
});
