"""Field numbers of the Kubernetes messages simcluster decodes from protobuf.

Hand-written from the ``generated.proto`` files of k8s.io/api and
k8s.io/apimachinery v0.35 (``message X { optional string name = 1; ... }``),
only for the kinds that kubectl's generators and typed clients send
(``kubectl create configmap|secret|namespace|serviceaccount|service|deployment|
priorityclass|poddisruptionbudget|clusterrole|role|...binding``, pods,
evictions, bindings, DeleteOptions). A field that is missing here makes the
decoder answer 415 naming it when the client sets it, rather than drop it.

One message is a whitespace-separated list of ``number:jsonName:type`` where
``type`` is

- ``str``, ``bool``, ``int`` (any varint integer), ``bytes`` (base64 in JSON),
  ``time`` (metav1.Time), ``qty`` (resource.Quantity), ``ios``
  (intstr.IntOrString), ``fields`` (metav1.FieldsV1, raw JSON);
- ``{str}``, ``{bytes}``, ``{qty}``: a map with string keys;
- ``[str]``, ``[int]``, ``[Message]``: repeated;
- ``Message``: another message of this table;

followed by ``*`` when a zero value means something (Go pointer fields and
fields whose JSON tag has no ``omitempty``; Go writes every other field even when
unset, and the JSON form omits it) and ``^`` when the Go field is embedded
``json:",inline"`` (its fields appear in the parent object).
"""

from __future__ import annotations

MESSAGES: dict[str, str] = {
    # -- k8s.io/apimachinery meta/v1 -----------------------------------------
    "ObjectMeta": """
        1:name:str 2:generateName:str 3:namespace:str 4:selfLink:str 5:uid:str
        6:resourceVersion:str 7:generation:int 8:creationTimestamp:time
        9:deletionTimestamp:time* 10:deletionGracePeriodSeconds:int*
        11:labels:{str} 12:annotations:{str} 13:ownerReferences:[OwnerReference]
        14:finalizers:[str] 17:managedFields:[ManagedFieldsEntry]
    """,
    "OwnerReference": """
        5:apiVersion:str* 1:kind:str* 3:name:str* 4:uid:str* 6:controller:bool*
        7:blockOwnerDeletion:bool*
    """,
    "ManagedFieldsEntry": """
        1:manager:str 2:operation:str 3:apiVersion:str 4:time:time*
        6:fieldsType:str 7:fieldsV1:fields* 8:subresource:str
    """,
    "LabelSelector": "1:matchLabels:{str} 2:matchExpressions:[LabelSelectorRequirement]",
    "LabelSelectorRequirement": "1:key:str* 2:operator:str* 3:values:[str]",
    "DeleteOptions": """
        1:gracePeriodSeconds:int* 2:preconditions:Preconditions*
        3:orphanDependents:bool* 4:propagationPolicy:str* 5:dryRun:[str]
        6:ignoreStoreReadErrorWithClusterBreakingPotential:bool*
    """,
    "Preconditions": "1:uid:str* 2:resourceVersion:str*",
    # -- core/v1 --------------------------------------------------------------
    "ConfigMap": "1:metadata:ObjectMeta 4:immutable:bool* 2:data:{str} 3:binaryData:{bytes}",
    "Secret": """
        1:metadata:ObjectMeta 5:immutable:bool* 2:data:{bytes} 4:stringData:{str}
        3:type:str
    """,
    "Namespace": "1:metadata:ObjectMeta 2:spec:NamespaceSpec",
    "NamespaceSpec": "1:finalizers:[str]",
    "ServiceAccount": """
        1:metadata:ObjectMeta 2:secrets:[ObjectReference]
        3:imagePullSecrets:[LocalObjectReference] 4:automountServiceAccountToken:bool*
    """,
    "ObjectReference": """
        1:kind:str 2:namespace:str 3:name:str 4:uid:str 5:apiVersion:str
        6:resourceVersion:str 7:fieldPath:str
    """,
    "LocalObjectReference": "1:name:str",
    "Binding": "1:metadata:ObjectMeta 2:target:ObjectReference*",
    "Service": "1:metadata:ObjectMeta 2:spec:ServiceSpec",
    "ServiceSpec": """
        1:ports:[ServicePort] 2:selector:{str} 3:clusterIP:str 18:clusterIPs:[str]
        4:type:str 5:externalIPs:[str] 7:sessionAffinity:str 8:loadBalancerIP:str
        9:loadBalancerSourceRanges:[str] 10:externalName:str
        11:externalTrafficPolicy:str 12:healthCheckNodePort:int
        13:publishNotReadyAddresses:bool 19:ipFamilies:[str] 17:ipFamilyPolicy:str*
        20:allocateLoadBalancerNodePorts:bool* 21:loadBalancerClass:str*
        22:internalTrafficPolicy:str* 23:trafficDistribution:str*
    """,
    "ServicePort": """
        1:name:str 2:protocol:str 6:appProtocol:str* 3:port:int* 4:targetPort:ios
        5:nodePort:int
    """,
    "Pod": "1:metadata:ObjectMeta 2:spec:PodSpec",
    "PodTemplateSpec": "1:metadata:ObjectMeta 2:spec:PodSpec",
    "PodSpec": """
        1:volumes:[Volume] 20:initContainers:[Container] 2:containers:[Container]
        3:restartPolicy:str 4:terminationGracePeriodSeconds:int*
        5:activeDeadlineSeconds:int* 6:dnsPolicy:str 7:nodeSelector:{str}
        8:serviceAccountName:str 9:serviceAccount:str
        21:automountServiceAccountToken:bool* 10:nodeName:str 11:hostNetwork:bool
        12:hostPID:bool 13:hostIPC:bool 27:shareProcessNamespace:bool*
        14:securityContext:PodSecurityContext*
        15:imagePullSecrets:[LocalObjectReference] 16:hostname:str 17:subdomain:str
        18:affinity:Affinity* 19:schedulerName:str 22:tolerations:[Toleration]
        23:hostAliases:[HostAlias] 24:priorityClassName:str 25:priority:int*
        26:dnsConfig:PodDNSConfig* 28:readinessGates:[PodReadinessGate]
        29:runtimeClassName:str* 30:enableServiceLinks:bool* 31:preemptionPolicy:str*
        32:overhead:{qty} 33:topologySpreadConstraints:[TopologySpreadConstraint]
        35:setHostnameAsFQDN:bool* 37:hostUsers:bool*
        38:schedulingGates:[PodSchedulingGate] 40:resources:ResourceRequirements*
        41:hostnameOverride:str*
    """,
    "Container": """
        1:name:str* 2:image:str 3:command:[str] 4:args:[str] 5:workingDir:str
        6:ports:[ContainerPort] 19:envFrom:[EnvFromSource] 7:env:[EnvVar]
        8:resources:ResourceRequirements 23:resizePolicy:[ContainerResizePolicy]
        24:restartPolicy:str* 9:volumeMounts:[VolumeMount] 10:livenessProbe:Probe*
        11:readinessProbe:Probe* 22:startupProbe:Probe* 12:lifecycle:Lifecycle*
        13:terminationMessagePath:str 20:terminationMessagePolicy:str
        14:imagePullPolicy:str 15:securityContext:SecurityContext* 16:stdin:bool
        17:stdinOnce:bool 18:tty:bool
    """,
    "ContainerPort": """
        1:name:str 2:hostPort:int 3:containerPort:int* 4:protocol:str 5:hostIP:str
    """,
    "ContainerResizePolicy": "1:resourceName:str* 2:restartPolicy:str*",
    "EnvVar": "1:name:str* 2:value:str 3:valueFrom:EnvVarSource*",
    "EnvVarSource": """
        1:fieldRef:ObjectFieldSelector* 2:resourceFieldRef:ResourceFieldSelector*
        3:configMapKeyRef:ConfigMapKeySelector* 4:secretKeyRef:SecretKeySelector*
    """,
    "ObjectFieldSelector": "1:apiVersion:str 2:fieldPath:str*",
    "ResourceFieldSelector": "1:containerName:str 2:resource:str* 3:divisor:qty",
    "ConfigMapKeySelector": """
        1:localObjectReference:LocalObjectReference^ 2:key:str* 3:optional:bool*
    """,
    "SecretKeySelector": """
        1:localObjectReference:LocalObjectReference^ 2:key:str* 3:optional:bool*
    """,
    "EnvFromSource": """
        1:prefix:str 2:configMapRef:ConfigMapEnvSource* 3:secretRef:SecretEnvSource*
    """,
    "ConfigMapEnvSource": "1:localObjectReference:LocalObjectReference^ 2:optional:bool*",
    "SecretEnvSource": "1:localObjectReference:LocalObjectReference^ 2:optional:bool*",
    "ResourceRequirements": "1:limits:{qty} 2:requests:{qty} 3:claims:[ResourceClaim]",
    "ResourceClaim": "1:name:str* 2:request:str",
    "VolumeMount": """
        1:name:str* 2:readOnly:bool 7:recursiveReadOnly:str* 3:mountPath:str*
        4:subPath:str 5:mountPropagation:str* 6:subPathExpr:str
    """,
    "Volume": "1:name:str* 2:volumeSource:VolumeSource^",
    "VolumeSource": """
        1:hostPath:HostPathVolumeSource* 2:emptyDir:EmptyDirVolumeSource*
        6:secret:SecretVolumeSource*
        10:persistentVolumeClaim:PersistentVolumeClaimVolumeSource*
        16:downwardAPI:DownwardAPIVolumeSource* 19:configMap:ConfigMapVolumeSource*
    """,
    "HostPathVolumeSource": "1:path:str* 2:type:str*",
    "EmptyDirVolumeSource": "1:medium:str 2:sizeLimit:qty*",
    "SecretVolumeSource": """
        1:secretName:str 2:items:[KeyToPath] 3:defaultMode:int* 4:optional:bool*
    """,
    "ConfigMapVolumeSource": """
        1:localObjectReference:LocalObjectReference^ 2:items:[KeyToPath]
        3:defaultMode:int* 4:optional:bool*
    """,
    "PersistentVolumeClaimVolumeSource": "1:claimName:str* 2:readOnly:bool",
    "DownwardAPIVolumeSource": "1:items:[DownwardAPIVolumeFile] 2:defaultMode:int*",
    "DownwardAPIVolumeFile": """
        1:path:str* 2:fieldRef:ObjectFieldSelector*
        3:resourceFieldRef:ResourceFieldSelector* 4:mode:int*
    """,
    "KeyToPath": "1:key:str* 2:path:str* 3:mode:int*",
    "Toleration": """
        1:key:str 2:operator:str 3:value:str 4:effect:str 5:tolerationSeconds:int*
    """,
    "Probe": """
        1:handler:ProbeHandler^ 2:initialDelaySeconds:int 3:timeoutSeconds:int
        4:periodSeconds:int 5:successThreshold:int 6:failureThreshold:int
        7:terminationGracePeriodSeconds:int*
    """,
    "ProbeHandler": """
        1:exec:ExecAction* 2:httpGet:HTTPGetAction* 3:tcpSocket:TCPSocketAction*
        4:grpc:GRPCAction*
    """,
    "ExecAction": "1:command:[str]",
    "HTTPGetAction": """
        1:path:str 2:port:ios* 3:host:str 4:scheme:str 5:httpHeaders:[HTTPHeader]
    """,
    "HTTPHeader": "1:name:str* 2:value:str*",
    "TCPSocketAction": "1:port:ios* 2:host:str",
    "GRPCAction": "1:port:int* 2:service:str*",
    "Lifecycle": """
        1:postStart:LifecycleHandler* 2:preStop:LifecycleHandler* 3:stopSignal:str*
    """,
    "LifecycleHandler": """
        1:exec:ExecAction* 2:httpGet:HTTPGetAction* 3:tcpSocket:TCPSocketAction*
        4:sleep:SleepAction*
    """,
    "SleepAction": "1:seconds:int*",
    "Affinity": "1:nodeAffinity:NodeAffinity*",
    "NodeAffinity": """
        1:requiredDuringSchedulingIgnoredDuringExecution:NodeSelector*
        2:preferredDuringSchedulingIgnoredDuringExecution:[PreferredSchedulingTerm]
    """,
    "NodeSelector": "1:nodeSelectorTerms:[NodeSelectorTerm]",
    "NodeSelectorTerm": """
        1:matchExpressions:[NodeSelectorRequirement]
        2:matchFields:[NodeSelectorRequirement]
    """,
    "NodeSelectorRequirement": "1:key:str* 2:operator:str* 3:values:[str]",
    "PreferredSchedulingTerm": "1:weight:int* 2:preference:NodeSelectorTerm*",
    "PodReadinessGate": "1:conditionType:str*",
    "PodSchedulingGate": "1:name:str*",
    "HostAlias": "1:ip:str* 2:hostnames:[str]",
    "PodDNSConfig": """
        1:nameservers:[str] 2:searches:[str] 3:options:[PodDNSConfigOption]
    """,
    "PodDNSConfigOption": "1:name:str 2:value:str*",
    "TopologySpreadConstraint": """
        1:maxSkew:int* 2:topologyKey:str* 3:whenUnsatisfiable:str*
        4:labelSelector:LabelSelector* 5:minDomains:int* 6:nodeAffinityPolicy:str*
        7:nodeTaintsPolicy:str* 8:matchLabelKeys:[str]
    """,
    "SecurityContext": """
        1:capabilities:Capabilities* 2:privileged:bool* 4:runAsUser:int*
        8:runAsGroup:int* 5:runAsNonRoot:bool* 6:readOnlyRootFilesystem:bool*
        7:allowPrivilegeEscalation:bool* 9:procMount:str*
        11:seccompProfile:SeccompProfile*
    """,
    "PodSecurityContext": """
        2:runAsUser:int* 6:runAsGroup:int* 3:runAsNonRoot:bool*
        4:supplementalGroups:[int] 12:supplementalGroupsPolicy:str* 5:fsGroup:int*
        9:fsGroupChangePolicy:str* 10:seccompProfile:SeccompProfile*
        13:seLinuxChangePolicy:str*
    """,
    "Capabilities": "1:add:[str] 2:drop:[str]",
    "SeccompProfile": "1:type:str* 2:localhostProfile:str*",
    # -- apps/v1 --------------------------------------------------------------
    "Deployment": "1:metadata:ObjectMeta 2:spec:DeploymentSpec",
    "DeploymentSpec": """
        1:replicas:int* 2:selector:LabelSelector* 3:template:PodTemplateSpec*
        4:strategy:DeploymentStrategy 5:minReadySeconds:int
        6:revisionHistoryLimit:int* 7:paused:bool 9:progressDeadlineSeconds:int*
    """,
    "DeploymentStrategy": "1:type:str 2:rollingUpdate:RollingUpdateDeployment*",
    "RollingUpdateDeployment": "1:maxUnavailable:ios* 2:maxSurge:ios*",
    "DaemonSet": "1:metadata:ObjectMeta 2:spec:DaemonSetSpec",
    "DaemonSetSpec": """
        1:selector:LabelSelector* 2:template:PodTemplateSpec*
        3:updateStrategy:DaemonSetUpdateStrategy 4:minReadySeconds:int
        6:revisionHistoryLimit:int*
    """,
    "DaemonSetUpdateStrategy": "1:type:str 2:rollingUpdate:RollingUpdateDaemonSet*",
    "RollingUpdateDaemonSet": "1:maxUnavailable:ios* 2:maxSurge:ios*",
    # -- scheduling.k8s.io/v1, policy/v1 ---------------------------------------
    "PriorityClass": """
        1:metadata:ObjectMeta 2:value:int* 3:globalDefault:bool 4:description:str
        5:preemptionPolicy:str*
    """,
    "PodDisruptionBudget": "1:metadata:ObjectMeta 2:spec:PodDisruptionBudgetSpec",
    "PodDisruptionBudgetSpec": """
        1:minAvailable:ios* 2:selector:LabelSelector* 3:maxUnavailable:ios*
        4:unhealthyPodEvictionPolicy:str*
    """,
    "Eviction": "1:metadata:ObjectMeta 2:deleteOptions:DeleteOptions*",
    # -- rbac.authorization.k8s.io/v1 ----------------------------------------
    "ClusterRole": """
        1:metadata:ObjectMeta 2:rules:[PolicyRule] 3:aggregationRule:AggregationRule*
    """,
    "AggregationRule": "1:clusterRoleSelectors:[LabelSelector]",
    "Role": "1:metadata:ObjectMeta 2:rules:[PolicyRule]",
    "PolicyRule": """
        1:verbs:[str] 2:apiGroups:[str] 3:resources:[str] 4:resourceNames:[str]
        5:nonResourceURLs:[str]
    """,
    "ClusterRoleBinding": "1:metadata:ObjectMeta 2:subjects:[Subject] 3:roleRef:RoleRef*",
    "RoleBinding": "1:metadata:ObjectMeta 2:subjects:[Subject] 3:roleRef:RoleRef*",
    "Subject": "1:kind:str* 2:apiGroup:str 3:name:str* 4:namespace:str",
    "RoleRef": "1:apiGroup:str* 2:kind:str* 3:name:str*",
}

# The top-level kinds by (apiVersion, kind). DeleteOptions is registered in every
# group-version, so it is looked up by kind alone.
KINDS: dict[tuple[str, str], str] = {
    ("v1", kind): kind
    for kind in (
        "ConfigMap",
        "Secret",
        "Namespace",
        "ServiceAccount",
        "Service",
        "Pod",
        "Binding",
    )
} | {
    ("apps/v1", "Deployment"): "Deployment",
    ("apps/v1", "DaemonSet"): "DaemonSet",
    ("scheduling.k8s.io/v1", "PriorityClass"): "PriorityClass",
    ("policy/v1", "PodDisruptionBudget"): "PodDisruptionBudget",
    ("policy/v1", "Eviction"): "Eviction",
    ("rbac.authorization.k8s.io/v1", "ClusterRole"): "ClusterRole",
    ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"): "ClusterRoleBinding",
    ("rbac.authorization.k8s.io/v1", "Role"): "Role",
    ("rbac.authorization.k8s.io/v1", "RoleBinding"): "RoleBinding",
}
ANY_VERSION_KINDS = frozenset({"DeleteOptions"})
