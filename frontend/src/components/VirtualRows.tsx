// A virtualised list of fixed-height rows under a sticky header: only the rows
// in view (plus a margin) are in the DOM, so 8,000 chips scroll smoothly.
//
// The rows live in a fixed pool of slots: row i is drawn by slot i % pool,
// moved into place with a transform. Scrolling gives a slot another row (its
// row component re-renders and React patches text and attributes) instead of
// removing one element tree and building another: creating, styling and
// laying out some twenty rows' boxes a frame was most of a fast scroll's
// cost. The slots stay in pool order in the DOM, so the rows' DOM order is
// their visual order only up to a rotation; rows should carry aria-rowindex.
// For the reuse to happen renderRow's element must not be keyed by its item
// (a key change makes React build it anew, which is still correct, just slower).
//
// Frame budget (issue 19): the rows in view are rendered in the scroll event
// itself (flushSync), which the browser runs at the start of a frame, so the
// new rows are painted in the frame that scrolled to them. Rendering from a
// requestAnimationFrame callback instead left React's update to a task after
// that frame: one frame showed the overscan's edge (or nothing) and the next
// carried the render. Only this component re-renders on scroll; the rows
// themselves should be memoised by their caller.

import { useEffect, useLayoutEffect, useRef, useState, type ReactNode } from "react";
import { flushSync } from "react-dom";

interface Props {
  count: number;
  rowHeight: number;
  height: number | string;
  header: ReactNode;
  renderRow: (index: number) => ReactNode;
  overscan?: number;
  /** scroll so that this row is visible */
  scrollToIndex?: number | null;
  testId?: string;
  /** height of the header row (px): the rows start below it */
  headerHeight?: number;
}

/** The first row to render for a scroll position (rows above it stay out of the DOM). */
export function firstRow(scrollTop: number, rowHeight: number, overscan: number): number {
  return Math.max(0, Math.floor(scrollTop / rowHeight) - overscan);
}

/**
 * Before the list is laid out its height is not known: the window's height is
 * an upper bound for a list on screen, so the first render has every row it
 * needs without reading the layout (which would force it early).
 */
function initialViewport(height: number | string): number {
  if (typeof height === "number") return height;
  return typeof window !== "undefined" && window.innerHeight > 0 ? window.innerHeight : 600;
}

export function VirtualRows({ count, rowHeight, height, header, renderRow, overscan = 12, scrollToIndex, testId, headerHeight = 32 }: Props) {
  const ref = useRef<HTMLDivElement>(null);
  const [first, setFirst] = useState(0);
  const [viewport, setViewport] = useState(() => initialViewport(height));

  useEffect(() => {
    const el = ref.current;
    if (!el || typeof ResizeObserver === "undefined") return undefined;
    // The observer reports the size after layout: no forced layout here.
    const ro = new ResizeObserver(([entry]) => setViewport(Math.ceil(entry.contentRect.height)));
    ro.observe(el);
    return () => ro.disconnect();
  }, []);

  useLayoutEffect(() => {
    const el = ref.current;
    if (!el || scrollToIndex === null || scrollToIndex === undefined || scrollToIndex < 0) return;
    const top = scrollToIndex * rowHeight;
    if (top < el.scrollTop || top + rowHeight > el.scrollTop + el.clientHeight - headerHeight) {
      el.scrollTop = Math.max(0, top - el.clientHeight / 3);
      setFirst(firstRow(el.scrollTop, rowHeight, overscan));
    }
  }, [scrollToIndex, rowHeight, overscan, headerHeight]);

  // A shorter list (a filter) moves the scroll position up to its new end
  // before any scroll event says so: start no lower than that end allows.
  const start = Math.min(first, firstRow(Math.max(0, count * rowHeight - viewport), rowHeight, overscan));
  const onScroll = () => {
    const el = ref.current;
    if (!el) return;
    const next = firstRow(el.scrollTop, rowHeight, overscan);
    if (next !== first) flushSync(() => setFirst(next));
  };

  // The pool covers the largest window: the viewport's rows, the overscan on
  // both sides, and one more for a row cut by either edge.
  const pool = Math.ceil(viewport / rowHeight) + 2 * overscan + 1;
  const last = Math.min(count, start + pool);
  const slots: ReactNode[] = new Array<ReactNode>(Math.min(pool, count)).fill(null);
  for (let i = start; i < last; i++) {
    slots[i % pool] = (
      <div key={i % pool} className="vslot" style={{ transform: `translateY(${headerHeight + i * rowHeight}px)` }}>
        {renderRow(i)}
      </div>
    );
  }

  return (
    <div ref={ref} className="vtable" style={{ height }} onScroll={onScroll} data-testid={testId} role="table" aria-rowcount={count + 1}>
      {header}
      <div style={{ height: count * rowHeight }} />
      {slots}
    </div>
  );
}
