// Sample usage rows for the tests (the lib's and the page's), built from
// defaults: a 310P3 chip half booked, a vir02 slice using more HBM than booked.

import type { ChipUsage, SliceUsage } from "../api/types";

export function chipUsage(over: Partial<ChipUsage> = {}): ChipUsage {
  return {
    chip: 1,
    node: "node-a",
    index: 0,
    common_word: "310P3",
    healthy: true,
    hardware_healthy: true,
    aicore: 8,
    aicore_booked: 4,
    aicore_used_percent: 25,
    memory_mb: 21527,
    memory_booked_mb: 12288,
    memory_used_mb: 3072,
    slices: 2,
    flags: [],
    ...over,
  };
}

export const slice = (over: Partial<SliceUsage> = {}): SliceUsage => ({
  slice: 1,
  namespace: "ci",
  pod_name: "job-1",
  container_index: 0,
  queue: "default",
  node: "node-a",
  chip: 1,
  chip_index: 0,
  common_word: "310P3",
  template: "vir02",
  aicore: 2,
  memory_mb: 6144,
  aicore_used_percent: 40,
  memory_used_mb: 9216,
  idle_seconds: null,
  flags: ["over_memory"],
  ...over,
});

