import { afterEach, describe, expect, it, vi } from "vitest";
import { act, cleanup, fireEvent, render, screen } from "@testing-library/react";
import { useState } from "react";
import { backToPageOne, CheckFilter, FilterBar, SelectFilter, StateFilter, TextFilter } from "./FilterBar";

afterEach(() => {
  cleanup();
  vi.useRealTimers();
});

describe("FilterBar", () => {
  it("puts the filters left, then the summary, the spinner while busy and the actions right", () => {
    const { container, rerender } = render(
      <FilterBar summary={<span data-testid="summary">3 of 9</span>} actions={<button>Refresh</button>}>
        <input aria-label="first" />
      </FilterBar>,
    );
    const bar = container.firstElementChild!;
    expect(bar.className).toBe("toolbar");
    const order = () => [...bar.children].map((c) => c.tagName.toLowerCase() + (c.className ? `.${c.className}` : ""));
    expect(order()).toEqual(["input", "span.grow", "span", "button"]);
    expect(bar.lastElementChild!.textContent).toBe("Refresh");
    expect(bar.querySelector(".spinner")).toBeNull();
    rerender(
      <FilterBar busy summary={<span data-testid="summary">3 of 9</span>} actions={<button>Refresh</button>}>
        <input aria-label="first" />
      </FilterBar>,
    );
    expect(order()).toEqual(["input", "span.grow", "span", "span.spinner", "button"]);
  });
});

describe("TextFilter", () => {
  it("calls onChange once typing stops, with the last text only", () => {
    vi.useFakeTimers();
    const onChange = vi.fn();
    render(<TextFilter label="queue" value="" onChange={onChange} debounceMs={300} testId="q" />);
    const box = screen.getByTestId("q") as HTMLInputElement;
    fireEvent.change(box, { target: { value: "c" } });
    fireEvent.change(box, { target: { value: "ci" } });
    expect(box.value).toBe("ci");
    act(() => void vi.advanceTimersByTime(299));
    expect(onChange).not.toHaveBeenCalled();
    act(() => void vi.advanceTimersByTime(1));
    expect(onChange).toHaveBeenCalledTimes(1);
    expect(onChange).toHaveBeenCalledWith("ci");
  });

  it("does not call onChange with the value it already has", () => {
    vi.useFakeTimers();
    const onChange = vi.fn();
    render(<TextFilter label="queue" value="ci" onChange={onChange} testId="q" />);
    act(() => void vi.advanceTimersByTime(1000));
    fireEvent.change(screen.getByTestId("q"), { target: { value: "cix" } });
    fireEvent.change(screen.getByTestId("q"), { target: { value: "ci" } });
    act(() => void vi.advanceTimersByTime(1000));
    expect(onChange).not.toHaveBeenCalled();
  });

  it("follows a value changed from outside (a link, the back button)", () => {
    const { rerender } = render(<TextFilter label="node filter" value="a" onChange={() => {}} testId="n" />);
    expect((screen.getByTestId("n") as HTMLInputElement).value).toBe("a");
    rerender(<TextFilter label="node filter" value="node-7" onChange={() => {}} testId="n" />);
    expect((screen.getByTestId("n") as HTMLInputElement).value).toBe("node-7");
  });

  it("has its label, placeholder, search type and width class", () => {
    render(<TextFilter label="search slices" placeholder="Search pods" search width={320} value="" onChange={() => {}} />);
    const box = screen.getByLabelText("search slices") as HTMLInputElement;
    expect(box.type).toBe("search");
    expect(box.placeholder).toBe("Search pods");
    expect(box.className).toBe("input w-320");
  });

  it("round-trips through its parent's state", () => {
    vi.useFakeTimers();
    function Parent() {
      const [q, setQ] = useState("");
      return (
        <>
          <TextFilter label="q" value={q} onChange={setQ} debounceMs={100} testId="q" />
          <output data-testid="applied">{q}</output>
        </>
      );
    }
    render(<Parent />);
    fireEvent.change(screen.getByTestId("q"), { target: { value: "job" } });
    expect(screen.getByTestId("applied").textContent).toBe("");
    act(() => void vi.advanceTimersByTime(100));
    expect(screen.getByTestId("applied").textContent).toBe("job");
    expect((screen.getByTestId("q") as HTMLInputElement).value).toBe("job");
  });
});

describe("SelectFilter", () => {
  it("offers 'all' with the empty value, then options, then groups", () => {
    const onChange = vi.fn();
    render(
      <SelectFilter
        label="room for template"
        value=""
        onChange={onChange}
        all="Room for any template"
        options={["plain", { value: "v", label: "Shown" }]}
        groups={[{ group: "Ascend310P", options: [{ value: "vir01", label: "Room for vir01 (3 GiB)" }] }]}
        testId="room"
      />,
    );
    const select = screen.getByTestId("room") as HTMLSelectElement;
    expect(select.getAttribute("aria-label")).toBe("room for template");
    expect([...select.options].map((o) => [o.value, o.textContent])).toEqual([
      ["", "Room for any template"],
      ["plain", "plain"],
      ["v", "Shown"],
      ["vir01", "Room for vir01 (3 GiB)"],
    ]);
    expect(select.querySelector("optgroup")!.getAttribute("label")).toBe("Ascend310P");
    fireEvent.change(select, { target: { value: "vir01" } });
    expect(onChange).toHaveBeenCalledWith("vir01");
  });

  it("has no 'all' option unless asked", () => {
    render(<SelectFilter label="scope" value="all" onChange={() => {}} options={[{ value: "cluster", label: "This cluster" }, { value: "all", label: "Everywhere" }]} />);
    const select = screen.getByLabelText("scope") as HTMLSelectElement;
    expect([...select.options].map((o) => o.value)).toEqual(["cluster", "all"]);
    expect(select.value).toBe("all");
  });

  it("StateFilter: 'All states' or one state, labelled state", () => {
    const onChange = vi.fn();
    render(<StateFilter value="" states={["pending", "running"]} onChange={onChange} testId="request-state" />);
    const select = screen.getByLabelText("state") as HTMLSelectElement;
    expect(select.dataset.testid).toBe("request-state");
    expect([...select.options].map((o) => o.textContent)).toEqual(["All states", "pending", "running"]);
    fireEvent.change(select, { target: { value: "running" } });
    expect(onChange).toHaveBeenCalledWith("running");
  });
});

describe("CheckFilter", () => {
  it("is a labelled check box that reports on and off", () => {
    const onChange = vi.fn();
    render(<CheckFilter label="Flagged only" checked={false} onChange={onChange} testId="flagged-only" />);
    const box = screen.getByLabelText("Flagged only") as HTMLInputElement;
    expect(box.dataset.testid).toBe("flagged-only");
    fireEvent.click(box);
    expect(onChange).toHaveBeenCalledWith(true);
  });
});

describe("backToPageOne", () => {
  it("sets the filter, then page 1", () => {
    const calls: string[] = [];
    const refilter = backToPageOne((p) => calls.push(`page=${p}`));
    refilter((v) => calls.push(`state=${v}`))("running");
    expect(calls).toEqual(["state=running", "page=1"]);
  });
});
