// A virtualised list of fixed-height rows under a sticky header: only the rows
// in view (plus a margin) are in the DOM, so 8,000 chips scroll smoothly.

import { useEffect, useRef, useState, type ReactNode } from "react";

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
}

export function VirtualRows({ count, rowHeight, height, header, renderRow, overscan = 12, scrollToIndex, testId }: Props) {
  const ref = useRef<HTMLDivElement>(null);
  const [scrollTop, setScrollTop] = useState(0);
  const [viewport, setViewport] = useState(600);
  const frame = useRef<number | null>(null);

  useEffect(() => {
    const el = ref.current;
    if (!el) return undefined;
    setViewport(el.clientHeight);
    if (typeof ResizeObserver === "undefined") return undefined;
    const ro = new ResizeObserver(() => setViewport(el.clientHeight));
    ro.observe(el);
    return () => ro.disconnect();
  }, []);

  useEffect(() => {
    const el = ref.current;
    if (!el || scrollToIndex === null || scrollToIndex === undefined || scrollToIndex < 0) return;
    const top = scrollToIndex * rowHeight;
    const headerH = 32;
    if (top < el.scrollTop || top + rowHeight > el.scrollTop + el.clientHeight - headerH) {
      el.scrollTop = Math.max(0, top - el.clientHeight / 3);
    }
  }, [scrollToIndex, rowHeight]);

  const onScroll = () => {
    if (frame.current !== null) return;
    frame.current = requestAnimationFrame(() => {
      frame.current = null;
      if (ref.current) setScrollTop(ref.current.scrollTop);
    });
  };

  const first = Math.max(0, Math.floor(scrollTop / rowHeight) - overscan);
  const last = Math.min(count, Math.ceil((scrollTop + viewport) / rowHeight) + overscan);
  const rows: ReactNode[] = [];
  for (let i = first; i < last; i++) rows.push(renderRow(i));

  return (
    <div ref={ref} className="vtable" style={{ height }} onScroll={onScroll} data-testid={testId} role="table">
      {header}
      <div style={{ height: first * rowHeight }} />
      {rows}
      <div style={{ height: Math.max(0, (count - last) * rowHeight) }} />
    </div>
  );
}
