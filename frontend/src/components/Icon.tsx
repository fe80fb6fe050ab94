// A handful of line icons (inline SVG: no font, no request).

const PATHS: Record<string, string> = {
  overview: "M3 13h8V3H3zm0 8h8v-6H3zm10 0h8V11h-8zm0-18v6h8V3z",
  chips: "M9 3v2M15 3v2M9 19v2M15 19v2M3 9h2M3 15h2M19 9h2M19 15h2M7 5h10a2 2 0 0 1 2 2v10a2 2 0 0 1-2 2H7a2 2 0 0 1-2-2V7a2 2 0 0 1 2-2zm3 5h4v4h-4z",
  slices: "M12 3 2 8l10 5 10-5zM2 13l10 5 10-5M2 18l10 5 10-5",
  templates: "M4 21v-7M4 10V3M12 21v-9M12 8V3M20 21v-5M20 12V3M1 14h6M9 8h6M17 16h6",
  health: "M22 12h-4l-3 9L9 3l-3 9H2",
  requests: "M8 6h13M8 12h13M8 18h13M3 6h.01M3 12h.01M3 18h.01",
  preemptions: "M12 22a10 10 0 1 0 0-20 10 10 0 0 0 0 20zM8 12h8",
  drains: "M12 3v12M7 10l5 5 5-5M4 21h16",
  nodeconfig: "M4 4h16v6H4zM4 14h16v6H4zM8 7h.01M8 17h.01",
  tokens: "M15 7a4 4 0 1 1-3.9 4.9L3 20v-3h2v-2h2l2.1-2.1A4 4 0 0 1 15 7zm1 3h.01",
  queues: "M3 5h18v4H3zM3 11h18v4H3zM3 17h11v4H3z",
  priorities: "M12 20V4M6 10l6-6 6 6M4 20h16",
  usage: "M3 3v18h18M7 15l4-4 3 3 6-7",
  cost: "M12 2v20M17 5H9.5a3.5 3.5 0 0 0 0 7h5a3.5 3.5 0 0 1 0 7H6",
  alerts: "M18 8a6 6 0 1 0-12 0c0 7-3 9-3 9h18s-3-2-3-9M13.7 21a2 2 0 0 1-3.4 0",
  audit: "M12 8v4l3 3M3.05 11a9 9 0 1 1 .5 4M3 4v5h5",
  info: "M12 22a10 10 0 1 0 0-20 10 10 0 0 0 0 20zM12 16v-4M12 8h.01",
  warn: "M10.3 3.9 1.8 18a2 2 0 0 0 1.7 3h17a2 2 0 0 0 1.7-3L13.7 3.9a2 2 0 0 0-3.4 0zM12 9v4M12 17h.01",
  error: "M12 22a10 10 0 1 0 0-20 10 10 0 0 0 0 20zM15 9l-6 6M9 9l6 6",
  ok: "M22 11.1V12a10 10 0 1 1-5.9-9.1M22 4 12 14l-3-3",
};

export function Icon({ name, size = 16 }: { name: keyof typeof PATHS | string; size?: number }) {
  return (
    <svg width={size} height={size} viewBox="0 0 24 24" fill="none" stroke="currentColor" strokeWidth={2} strokeLinecap="round" strokeLinejoin="round" aria-hidden className="icon">
      <path d={PATHS[name] ?? PATHS.info} />
    </svg>
  );
}
