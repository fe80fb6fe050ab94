// Names for the portal's API answers. The shapes are generated from the OpenAPI
// schema into ./schema.d.ts (`npm run gen:api`, checked by scripts/test.sh);
// this file only names them. A shape the schema does not describe is marked so.

import type { components } from "./schema";

type Schemas = components["schemas"];

export type Role = Schemas["RoleEnum"];
export type Me = Schemas["Me"];
/** GET /api/auth/login/: the CSRF token the login POST needs (also set as the csrftoken cookie). */
export type LoginCsrf = Schemas["LoginCsrf"];
/** GET /api/auth/config/: how people sign in here (local passwords, OpenID Connect). */
export type AuthConfig = Schemas["AuthConfig"];
/** POST /api/auth/logout/: where to end the identity provider's session too, if anywhere. */
export type LogoutAnswer = Schemas["Logout"];

/** A page of a list endpoint (the schema's `Paginated…List`), by the type of its items. */
export type Page<T> = Omit<Schemas["PaginatedClusterList"], "results"> & { results: T[] };

// --- clusters and inventory ----------------------------------------------------------

export type SyncState = Schemas["SyncStateEnum"];
export type Cluster = Schemas["Cluster"];
export type ChipTypeSummary = Schemas["ChipTypeSummary"];
export type ClusterSummary = Schemas["ClusterSummary"];
export type SyncCursor = Schemas["SyncCursor"];
/** An object a sync stream could not apply and went on without. */
export type SkippedObject = Schemas["SkippedObject"];
export type Slice = Schemas["Slice"];
/** One line of a chip's history (GET /api/chips/<id>/history/, newest first). */
export type ChipEvent = Schemas["ChipEvent"];
export type PendingPod = Schemas["PendingPod"];
export type UsageSample = Schemas["UsageSample"];
export type TemplateRoom = Schemas["TemplateRoom"];
export type Fragmentation = Schemas["Fragmentation"];
export type AuditEvent = Schemas["AuditEvent"];

// --- chip types, templates and the device config --------------------------------------

/** A template as its chip type lists it. */
export type TemplateSpec = Schemas["NestedTemplate"];
export type Template = Schemas["Template"];
export type ChipType = Schemas["ChipType"];
export type ValidationIssue = Schemas["ValidationIssue"];
/**
 * Successful writes of chip types and templates also carry the config's warnings
 * (not in the schema: it documents the plain object).
 */
export type WithWarnings<T> = T & { warnings?: ValidationIssue[] };
/** A running component that cannot (or may not) read the vnpus shape of a config. */
export type ShapeWarning = Schemas["ShapeWarning"];
export type DeviceConfigState = Schemas["DeviceConfigState"];
/** A version as listed (`text` only in the detail). */
export type DeviceConfigVersion = Schemas["DeviceConfigVersionList"] & Partial<Pick<Schemas["DeviceConfigVersion"], "text">>;
export type Diff = Schemas["Diff"];

// --- publishing -------------------------------------------------------------------

export type PublishResult = Schemas["PublishResult"];
export type Drift = Schemas["Drift"];
export type DriftConflictDetail = Schemas["DriftConflictDetail"];
export type RestartState = Schemas["RestartStateEnum"];
export type RestartPod = Schemas["RestartPod"];
export type ComponentRestart = Schemas["ComponentRestart"];
/** The device-config version requests are placed by: the one the scheduler loaded. */
export type ConfigInEffect = Schemas["ConfigInEffect"];
export type RestartStates = Schemas["RestartStates"];
export type WhatIfTemplate = Schemas["WhatIfTemplate"];
export type WhatIfChipType = Schemas["WhatIfChipType"];
export type WhatIfSlice = Schemas["WhatIfSlice"];
export type WhatIfChip = Schemas["WhatIfChip"];
export type WhatIf = Schemas["WhatIf"];

// --- health -------------------------------------------------------------------------

export type CheckStatus = Schemas["CheckStatusEnum"];
export type HealthCheck = Schemas["HealthCheck"];
export type ClusterHealth = Schemas["ClusterHealth"];

// --- requests, queues and preemption ---------------------------------------------------

export type RequestState = Schemas["RequestStateEnum"];
/** A CI request of `/api/requests/`. */
export type CiRequest = Schemas["Request"];
/** Pod Security Standards level a queue's pods must meet (Kubernetes semantics). */
export type PodSecurityLevel = Schemas["PodSecurityEnum"];
/** A queue of `/api/queues/`: quotas per chip type and the pod policy (admins write). */
export type Queue = Schemas["Queue"];
/** A portal queue's Volcano Queue: requests wait while it is not Open. */
export type VolcanoQueue = Schemas["VolcanoQueue"];
/** A PriorityClass mirrored from the cluster (`/api/priority-classes/`); requests name one as `priority`. */
export type PriorityClass = Schemas["PriorityClass"];
export type ProposalState = Schemas["ProposalStateEnum"];
export type Victim = Schemas["Victim"];
/** A preemption proposal of `/api/preemptions/`. */
export type PreemptionProposal = Schemas["PreemptionProposal"];

// --- tokens ---------------------------------------------------------------------------

/** An API token of `/api/tokens/` (admins). The plaintext is never listed. */
export type ApiToken = Schemas["ApiToken"];
/** The answer of a create or a rotate: the token with its plaintext, shown once. */
export type ApiTokenIssued = Schemas["ApiTokenIssued"];

// --- usage and cost (apps/metering: /api/usage/..., /api/chip-prices/) -------------

/** On every usage answer: can the portal see what slices use (Prometheus), and why not. */
export type MetricsStatus = Schemas["MetricsStatus"];
export type ChipUsage = Schemas["ChipMeasured"];
export type SliceUsage = Schemas["SliceMeasured"];
export type ChipFlag = Schemas["ChipMeasuredFlagsEnum"];
export type SliceFlag = Schemas["SliceMeasuredFlagsEnum"];
/** The usage lists: every row of the cluster at once (not pages), with the metrics status. */
export type UsageList<T> = Omit<Schemas["ChipMeasuredList"], "results"> & { results: T[] };
export type UsageHistory = Schemas["History"];
export type HistorySeries = Schemas["Series"];
export type HistorySeriesName = Schemas["Series"]["name"];
export type ReportGroupBy = Schemas["Report"]["group_by"];
export type ReportRow = Schemas["ReportRow"];
export type UsageReport = Schemas["Report"];
export type ChipPrice = Schemas["ChipPrice"];

// --- alerts --------------------------------------------------------------------------

/** GET /api/alerts/: the portal's alerts, from Alertmanager or evaluated by the portal. */
export type AlertList = Schemas["AlertList"];
export type PortalAlert = Schemas["PortalAlert"];
/** POST /api/alerts/silences/: the silence created. */
export type Silence = Schemas["Silence"];

// --- acting on chips and nodes: drains, isolation, the node config's checks -------------

/** A chip as GET /api/chips/<id>/ answers it: its state, drain and isolation fields. */
export type ChipDetail = Schemas["Chip"];
export type ChipStateName = Schemas["ChipStateEnum"];
export type Node = Schemas["Node"];
/** GET /api/chips/<id>/drain/, /api/nodes/<id>/drain/: what a drain would do. */
export type DrainPlan = Schemas["DrainPlan"];
export type DrainPod = Schemas["DrainPod"];
export type Drain = Schemas["Drain"];
export type DrainState = Schemas["DrainStateEnum"];
/** GET /api/clusters/<id>/node-config/health/: is the node config read at all. */
export type NodeConfigHealth = Schemas["NodeConfigHealth"];
export type NodeConfigNodeHealth = Schemas["NodeConfigNodeHealth"];
/** POST /api/clusters/<id>/node-config/what-if/: a draft's effect per node. */
export type NodeConfigWhatIf = Schemas["NodeConfigWhatIf"];
export type NodeConfigWhatIfNode = Schemas["NodeConfigWhatIfNode"];
/** GET /api/clusters/<id>/node-config/: the live entries per node, the version in effect on each, drift. */
export type NodeConfigState = Schemas["NodeConfigState"];
export type NodeConfigNode = Schemas["NodeConfigNode"];
export type NodeConfigIssue = Schemas["NodeConfigIssue"];
/** POST .../node-config/validate/: the text a draft makes and its errors and warnings by path. */
export type NodeConfigValidation = Schemas["NodeConfigValidation"];
export type NodeConfigVersion = Schemas["NodeConfigVersion"];
export type NodeConfigPublishResult = Schemas["NodeConfigPublishResult"];
export type NodeConfigDiff = Schemas["NodeConfigDiff"];
export type NodePluginRestartResult = Schemas["NodePluginRestartResult"];
/** GET /api/clusters/<id>/chip-suggestions/: chips offered for isolation or restore. */
export type ChipSuggestions = Schemas["ChipSuggestions"];
export type ChipSuggestion = Schemas["Suggestion"];
