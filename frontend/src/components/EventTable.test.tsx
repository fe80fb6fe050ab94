import { afterEach, describe, expect, it } from "vitest";
import { cleanup, fireEvent, render, screen } from "@testing-library/react";
import { dateTime } from "../lib/format";
import { EventTable, textOrDash, whenColumn, type EventColumn } from "./EventTable";

afterEach(cleanup);

interface Ev {
  id: number;
  at: string;
  action: string;
  reason: string;
  count: number;
  diff?: string;
}

const NOW = Date.parse("2026-12-02T12:00:00Z");
const events: Ev[] = [
  { id: 2, at: "2026-12-02T11:55:00Z", action: "template.update", reason: "", count: 3, diff: "+a" },
  { id: 1, at: "2026-12-02T10:00:00Z", action: "cluster.create", reason: "first", count: 12 },
];

const columns: EventColumn<Ev>[] = [
  whenColumn((e) => e.at, { now: NOW }),
  { header: "Action", className: "mono", cell: (e) => e.action, testId: (e) => `action-${e.id}` },
  { header: "Reason", maxWidth: 360, cell: (e) => textOrDash(e.reason) },
  { header: "Count", headerTitle: "how many", num: true, cell: (e) => e.count },
];

const cells = (row: Element) => [...row.querySelectorAll("td")].map((td) => td.textContent);

describe("EventTable", () => {
  it("draws a header and one row per event with the columns' cells, classes and tooltips", () => {
    render(<EventTable rows={events} rowKey={(e) => e.id} columns={columns} testId="events" rowTestId={() => "event-row"} />);
    const table = screen.getByTestId("events");
    expect(table.tagName).toBe("TABLE");
    expect(table.className).toBe("data");
    const heads = [...table.querySelectorAll("th")];
    expect(heads.map((th) => th.textContent)).toEqual(["When", "Action", "Reason", "Count"]);
    expect(heads[3].className).toBe("num");
    expect(heads[3].title).toBe("how many");
    const rows = screen.getAllByTestId("event-row");
    expect(rows.map(cells)).toEqual([
      ["5m ago", "template.update", "–", "3"],
      ["2h ago", "cluster.create", "first", "12"],
    ]);
    const first = rows[0].querySelectorAll("td");
    expect(first[0].className).toBe("nowrap");
    expect(first[0].title).toBe(dateTime("2026-12-02T11:55:00Z"));
    expect(first[1].className).toBe("mono");
    expect(first[1].dataset.testid).toBe("action-2");
    expect(first[2].className).toBe("maxw-360");
    expect(first[2].querySelector(".muted")!.textContent).toBe("–");
    expect(first[3].className).toBe("num");
  });

  it("shows exact times without `now`", () => {
    render(<EventTable rows={events} rowKey={(e) => e.id} columns={[whenColumn<Ev>((e) => e.at)]} />);
    const td = document.querySelector("td")!;
    expect(td.textContent).toBe(dateTime("2026-12-02T11:55:00Z"));
    expect(td.hasAttribute("title")).toBe(false);
  });

  it("sets a row's classes and data attributes; a timeline has no header", () => {
    render(
      <EventTable
        rows={events}
        rowKey={(e) => e.id}
        columns={columns}
        head={false}
        rowTestId={(e) => `step-${e.id}`}
        rowClass={(e) => (e.id === 1 ? "selected" : undefined)}
        rowData={(e) => ({ done: e.reason ? "yes" : "no" })}
      />,
    );
    expect(document.querySelector("thead")).toBeNull();
    expect(screen.getByTestId("step-1").className).toBe("selected");
    expect(screen.getByTestId("step-2").hasAttribute("class")).toBe(false);
    expect(screen.getByTestId("step-1").dataset.done).toBe("yes");
    expect(screen.getByTestId("step-2").dataset.done).toBe("no");
  });

  it("says so when there is no event, or draws an empty table without an empty text", () => {
    const { rerender } = render(<EventTable rows={[]} rowKey={(e: Ev) => e.id} columns={columns} testId="events" empty="No event matches." emptyTestId="none" />);
    expect(screen.queryByTestId("events")).toBeNull();
    expect(screen.getByTestId("none").textContent).toBe("No event matches.");
    expect(screen.getByTestId("none").className).toBe("empty");
    rerender(<EventTable rows={[]} rowKey={(e: Ev) => e.id} columns={columns} testId="events" />);
    expect(screen.getByTestId("events").querySelectorAll("tbody tr")).toHaveLength(0);
  });

  it("scrolls in a box of its own when asked", () => {
    render(<EventTable rows={events} rowKey={(e) => e.id} columns={columns} testId="events" scroll />);
    expect(screen.getByTestId("events").parentElement!.className).toBe("table-wrap");
  });

  it("opens one details row at a time under its event, from a button on the events that have details", () => {
    render(
      <EventTable
        rows={events}
        rowKey={(e) => e.id}
        columns={columns}
        testId="events"
        rowTestId={(e) => `event-${e.id}`}
        details={{ has: (e) => !!e.diff, render: (e) => <pre data-testid="details">{e.diff}</pre>, show: "Changes", hide: "Hide" }}
      />,
    );
    const table = screen.getByTestId("events");
    expect(table.querySelectorAll("th")).toHaveLength(5); // the button's column
    expect(screen.getByTestId("event-1").querySelector("button")).toBeNull();
    const button = screen.getByTestId("event-2").querySelector("button")!;
    expect(button.textContent).toBe("Changes");
    expect(screen.queryByTestId("details")).toBeNull();

    fireEvent.click(button);
    expect(button.textContent).toBe("Hide");
    expect(screen.getByTestId("event-2").className).toBe("selected");
    const details = screen.getByTestId("details");
    expect(details.textContent).toBe("+a");
    const cell = details.closest("td")!;
    expect(cell.colSpan).toBe(5);
    expect(cell.className).toBe("event-details");
    // the details row comes right after its event
    expect(cell.parentElement!.previousElementSibling).toBe(screen.getByTestId("event-2"));

    fireEvent.click(button);
    expect(button.textContent).toBe("Changes");
    expect(screen.queryByTestId("details")).toBeNull();
    expect(screen.getByTestId("event-2").hasAttribute("class")).toBe(false);
  });
});
