// Shapes of the portal's API answers (see /api/schema/). Only what the UI reads.

export type Role = "viewer" | "ci" | "operator" | "admin";

export interface Me {
  username: string;
  role: Role | null;
  is_service_account: boolean;
}

/** GET /api/auth/login/: the CSRF token the login POST needs (also set as the csrftoken cookie). */
export interface LoginCsrf {
  csrf_token: string;
}

export interface Page<T> {
  count: number;
  next: string | null;
  previous: string | null;
  results: T[];
}

export type SyncState = "never" | "ok" | "stale" | "error" | string;

export interface Cluster {
  id: number;
  name: string;
  description: string;
  connection: string;
  has_kubeconfig?: boolean;
  sync_state: SyncState;
  last_sync_at: string | null;
  last_sync_error: string;
  sync_lag_seconds: number | null;
}

export interface ChipTypeSummary {
  common_word: string;
  chips: number;
  healthy_chips: number;
  slices: number;
  memory_total: number;
  memory_used: number;
  memory_free: number;
  slots_total: number;
  slots_used: number;
  slots_free: number;
  aicore_total: number;
  aicore_used: number;
  aicpu_total: number;
  aicpu_used: number;
}

export interface ClusterSummary {
  cluster: string;
  nodes: number;
  chips: number;
  slices: number;
  sync_state: SyncState;
  last_sync_at: string | null;
  chip_types: ChipTypeSummary[];
}

export interface ChipUsage {
  cluster: string;
  columns: string[];
  rows: unknown[][];
}

export interface SyncCursor {
  resource: string;
  resource_version: string;
  last_list_at: string | null;
  last_event_at: string | null;
  last_success_at: string | null;
  last_error: string;
  last_error_at: string | null;
  relists: number;
  restarts: number;
  events: number;
  skipped_objects: SkippedObject[];
  /** False: the cluster does not serve this optional resource (no Volcano CRDs). */
  served: boolean;
}

/** An object a sync stream could not apply and went on without. */
export interface SkippedObject {
  kind: string;
  namespace: string;
  name: string;
  resource_version: string;
  reason: string;
  at: string;
}

export interface Slice {
  id: number;
  cluster: number;
  chip: number | null;
  chip_uuid: string;
  chip_index: number | null;
  common_word: string;
  namespace: string;
  pod_name: string;
  pod_uid: string;
  container_index: number;
  node_name: string;
  template: string;
  memory: number;
  aicore: number;
  aicpu: number;
  priority: number;
  priority_class: string;
  phase: string;
  started_at: string | null;
}

/** One line of a chip's history (GET /api/chips/<id>/history/, newest first). */
export interface ChipEvent {
  id: number;
  chip_uuid: string;
  kind: "placed" | "released";
  namespace: string;
  pod_name: string;
  template: string;
  memory: number;
  priority: number;
  at: string;
}

export interface PendingPod {
  id: number;
  cluster: number;
  namespace: string;
  name: string;
  common_word: string;
  memory: number | null;
  priority: number;
  priority_class: string;
  reason: string;
  created_at: string | null;
}

export interface TemplateSpec {
  id?: number;
  name: string;
  memory: number;
  ai_core: number | null;
  ai_cpu: number | null;
  extra?: Record<string, unknown>;
}

export interface Template extends TemplateSpec {
  id: number;
  chip_type: number;
  cluster: number;
  common_word: string;
}

export interface ChipType {
  id: number;
  cluster: number;
  common_word: string;
  chip_name: string;
  resource_name: string;
  resource_memory_name: string;
  resource_core_name: string;
  memory_allocatable: number;
  memory_capacity: number;
  ai_core: number | null;
  ai_cpu: number | null;
  extra: Record<string, unknown>;
  templates: TemplateSpec[];
  slots_per_chip: number;
  /** template names ascend-docker-runtime and the chip family accept, sorted */
  allowed_template_names: string[];
}

export interface ValidationIssue {
  field: string;
  message: string;
  chip_type: string | null;
  template: string | null;
  severity: string;
}

/** Successful writes of chip types and templates also carry the config's warnings. */
export type WithWarnings<T> = T & { warnings?: ValidationIssue[] };

/** A running component that cannot (or may not) read the vnpus shape of a config. */
export interface ShapeWarning {
  component: "volcano" | "hami" | "device_plugin";
  workload: string;
  image: string;
  /** from the image's release tag; null: unknown */
  version: string | null;
  shape: "list" | "wrapper";
  /** crash: exits at its next start (publishing needs confirm_shape); fallback: silently uses its 310P3-only default */
  effect: "crash" | "fallback" | "unknown";
  message: string;
  fix: string;
}

export interface DeviceConfigState {
  yaml: string;
  base_version: number | null;
  diff_from_base: string;
  errors: ValidationIssue[];
  warnings: ValidationIssue[];
  shape_warnings: ShapeWarning[];
}

export interface DeviceConfigVersion {
  id: number;
  cluster: number;
  number: number;
  shape: string;
  source: "imported" | "published" | "observed" | "adopted" | string;
  author: string | null;
  reason: string;
  sha256: string;
  resource_version: string;
  created_at: string;
  text?: string;
}

export interface Diff {
  before: number;
  after: number;
  diff: string;
}

export interface AuditEvent {
  id: number;
  created_at: string;
  cluster: number | null;
  actor_name: string;
  action: string;
  object_type: string;
  object_id: string;
  object_repr: string;
  reason: string;
  before: unknown;
  after: unknown;
}

export interface UsageSample {
  at: string;
  common_word: string;
  chips: number;
  slices: number;
  memory_total: number;
  memory_used: number;
  slots_total: number;
  slots_used: number;
  aicore_total: number;
  aicore_used: number;
  aicpu_total: number;
  aicpu_used: number;
  stranded_memory: number;
}

export interface TemplateRoom {
  name: string;
  memory: number;
  ai_core: number | null;
  ai_cpu: number | null;
  /** healthy, uncordoned chips where one more slice fits */
  chips_with_room: number;
  /** slices of this template that fit at once, over all chips */
  slices_that_fit: number;
  /** free MB left once as many of these slices as fit are placed */
  stranded_memory: number;
}

export interface Fragmentation {
  common_word: string;
  chips: number;
  eligible_chips: number;
  free_memory: number;
  largest_template: string | null;
  largest_template_memory: number | null;
  /** smallest first */
  templates: TemplateRoom[];
  /** measured against the smallest template */
  stranded_memory: number;
  stranded_chips: number;
  smallest_template_memory: number | null;
}

// --- publishing -------------------------------------------------------------------

export interface PublishResult {
  id: number;
  number: number;
  source: string;
  author: string | null;
  reason: string;
  resource_version: string;
  previous_resource_version: string;
  created_at: string;
  diff: string;
  forced: boolean;
  rollback_of: number | null;
  warnings: ValidationIssue[];
  shape_warnings: ShapeWarning[];
}

export interface Drift {
  in_sync: boolean;
  checked: "live" | "recorded";
  baseline_version: number | null;
  live_version: number | null;
  live_resource_version: string;
  diff: string;
  /** the portal's edits not yet published: what adopting discards */
  unpublished: string;
}

export interface DriftConflictDetail {
  baseline_version: number;
  live_resource_version: string;
  last_seen: string;
  live: string;
  proposed: string;
  diff_live: string;
  diff_proposed: string;
}

export type RestartState = "restart_pending" | "rolling" | "in_effect" | "missing" | "unknown";

export interface RestartPod {
  name: string;
  node: string;
  started_at: string | null;
  ready: boolean;
  terminating: boolean;
  stale: boolean;
}

export interface ComponentRestart {
  component: string;
  kind: string;
  namespace: string;
  restart_state: RestartState;
  message: string;
  restarted_at: string | null;
  /** the device-config version its oldest pod read when it started */
  loaded_version: number | null;
  pods: RestartPod[];
}

/** The device-config version requests are placed by: the one the scheduler loaded. */
export interface ConfigInEffect {
  version: number | null;
  published: number | null;
  pending_restart: boolean;
  loaded_by: string;
  loaded_at: string | null;
  why: string;
}

export interface RestartStates {
  cluster: string;
  config_version: number | null;
  config_changed_at: string | null;
  components: ComponentRestart[];
  in_effect: ConfigInEffect;
}

export interface WhatIfTemplate {
  name: string;
  memory: number;
  ai_core: number | null;
  ai_cpu: number | null;
  fit_alone: number;
  template_change: "added" | "resized" | "unchanged";
  memory_before: number | null;
}

export interface WhatIfChipType {
  common_word: string;
  chip_name: string;
  chip_type_change: "added" | "changed" | "renamed" | "unchanged";
  renamed_from: string | null;
  memory_allocatable: number;
  slots_per_chip: number;
  slots_per_chip_before: number | null;
  templates: WhatIfTemplate[];
  removed_templates: string[];
  overcommit: string[];
  warnings: string[];
}

export interface WhatIfSlice {
  namespace: string;
  pod_name: string;
  node_name: string;
  common_word: string;
  chip_uuid: string;
  chip_index: number | null;
  template: string;
  memory: number;
  reason: string;
}

export interface WhatIfChip {
  node_name: string;
  common_word: string;
  chip_index: number;
  slots_used: number;
  slots_per_chip: number;
  memory_used: number;
  memory_allocatable: number;
}

export interface WhatIf {
  cluster: string;
  baseline_version: number | null;
  valid: boolean;
  errors: string[];
  chip_types: WhatIfChipType[];
  removed_chip_types: { common_word: string; renamed_to: string | null }[];
  /** running slices this publish would break (publishing names each in confirm_breaking) */
  invalid_slices: WhatIfSlice[];
  /** running slices the published config already fails the same way: not this publish's doing */
  already_invalid_slices: WhatIfSlice[];
  overbooked_chips: WhatIfChip[];
}

export type CheckStatus = "ok" | "warn" | "fail";

export interface HealthCheck {
  id: string;
  check_status: CheckStatus;
  message: string;
  fix: string;
}

export interface ClusterHealth {
  cluster: string;
  check_status: CheckStatus;
  checks: HealthCheck[];
}

export type RequestState = "pending" | "reserved" | "admitted" | "running" | "succeeded" | "failed" | "cancelled" | "expired";

/** A CI request of `/api/requests/` (the fields the UI reads). */
/** An env entry as the API shows it: `value` is "***" unless `secret` is false. */
export interface EnvEntry {
  name: string;
  value?: string;
  secret?: false;
  valueFrom?: Record<string, unknown>;
}

export interface CiWorkload {
  image: string;
  command: string[];
  args: string[];
  env: EnvEntry[];
}

export interface CiRequest {
  id: number;
  cluster_name?: string;
  workload?: CiWorkload | Record<string, never>;
  pod_template?: Record<string, unknown> | null;
  cluster: number;
  state: RequestState;
  queue: string;
  position: number | null;
  namespace: string;
  chip_type: string;
  memory: number | null;
  template: string;
  whole_card: boolean;
  template_booked: string;
  memory_booked: number | null;
  priority: string;
  priority_value: number;
  chip: number | null;
  /** null before the bind where the scheduler picks the chip itself (Volcano). */
  chip_uuid: string | null;
  node: string;
  pod_name: string;
  reason: string;
  submitted_by: string;
  created_at: string;
  admitted_at: string | null;
  running_at: string | null;
  finished_at: string | null;
  updated_at: string;
  reserved_at?: string | null;
  expires_at?: string | null;
  attempts?: number;
  time_limit_seconds?: number | null;
  allow_preemption?: boolean;
}

/** Pod Security Standards level a queue's pods must meet (Kubernetes semantics). */
export type PodSecurityLevel = "restricted" | "baseline" | "privileged";

/** A queue of `/api/queues/`: quotas per chip type and the pod policy (admins write). */
export interface Queue {
  id: number;
  cluster: number;
  name: string;
  description: string;
  quotas: { chip_type: string; memory_limit: number | null; slots_limit: number | null }[];
  /** Namespaces its pods may run in; empty: only `default`. */
  allowed_namespaces: string[];
  pod_security: PodSecurityLevel;
  /** ServiceAccounts its pods may use; empty: only `default`. */
  allowed_service_accounts: string[];
  usage: {
    chip_type: string;
    memory_used: number;
    slots_used: number;
    pending: number;
    running: number;
  }[];
  /** Its Volcano Queue as sync sees it. */
  volcano: VolcanoQueue | null;
  created_at: string;
  updated_at: string;
}

/** A portal queue's Volcano Queue: requests wait while it is not Open. */
export interface VolcanoQueue {
  /** Open, Closed, Closing, Unknown, Missing, or "" when not known (see reason). */
  state: string;
  /** Created by the portal and kept in step with its quotas. */
  managed: boolean;
  capability: Record<string, string>;
  /** Why its requests wait, or why the state is not known; "" when Open. */
  reason: string;
}

/** A PriorityClass mirrored from the cluster (`/api/priority-classes/`); requests name one as `priority`. */
export interface PriorityClass {
  id: number;
  cluster: number;
  name: string;
  value: number;
  global_default: boolean;
  /** PreemptLowerPriority, Never, or "" (Kubernetes' default: PreemptLowerPriority). */
  preemption_policy: string;
  description: string;
}

export type ProposalState = "pending" | "approved" | "rejected" | "evicting" | "done" | "failed" | "superseded";

export interface Victim {
  namespace: string;
  pod: string;
  priority: number;
  priority_class?: string;
  lost_seconds: number;
  memory?: number;
  template?: string;
  queue?: string;
  request?: number | null;
  evicted?: boolean;
  blocked?: string;
  last_error?: string;
}

/** A preemption proposal of `/api/preemptions/`. */
export interface PreemptionProposal {
  id: number;
  cluster: number;
  request: number;
  request_namespace: string;
  request_queue: string;
  request_priority: number;
  request_priority_class: string;
  request_state: string;
  chip: number | null;
  chip_uuid: string;
  node: string;
  template: string;
  memory: number;
  state: ProposalState;
  victims: Victim[];
  lost_seconds: number;
  max_victim_priority: number;
  /** Queues of victims outside the request's queue (Volcano's own preempt never crosses them). */
  crosses_queues: string[];
  /** what is not guaranteed once the victims are gone (empty: nothing) */
  caveat: string;
  auto_approved: boolean;
  progress: string;
  reason: string;
  decided_by: string | null;
  decided_at: string | null;
  created_at: string;
}

/** An API token of `/api/tokens/` (admins). The plaintext is never listed. */
export interface ApiToken {
  id: number;
  username: string;
  /** the role of its user: what the token may do */
  role: Role | null;
  name: string;
  prefix: string;
  /** queues it is limited to; empty: any queue */
  queues: string[];
  created_at: string;
  last_used_at: string | null;
  expires_at: string | null;
  revoked_at: string | null;
}

/** The answer of a create or a rotate: the token with its plaintext, shown once. */
export interface ApiTokenIssued extends ApiToken {
  token: string;
}
