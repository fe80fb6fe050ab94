{{/* The release's full name: "<release>-vnpu-portal", or the release name when it already holds the chart's. */}}
{{- define "vnpu.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "vnpu.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "vnpu.labels" -}}
{{ include "vnpu.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "vnpu.serviceAccountName" -}}
{{- default (include "vnpu.fullname" .) .Values.serviceAccount.name -}}
{{- end -}}

{{- define "vnpu.secretName" -}}
{{- default (include "vnpu.fullname" .) .Values.secrets.existingSecret -}}
{{- end -}}

{{- define "vnpu.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{/* NAMESPACE/NAME -> NAME (for the ClusterRole's resourceNames). */}}
{{- define "vnpu.objectName" -}}
{{- $parts := splitList "/" . -}}
{{- last $parts -}}
{{- end -}}

{{/* What every portal container shares: image, settings, secrets, security, scratch mounts. */}}
{{- define "vnpu.containerCommon" -}}
image: {{ include "vnpu.image" . }}
imagePullPolicy: {{ .Values.image.pullPolicy }}
envFrom:
  - configMapRef: {name: {{ include "vnpu.fullname" . }}}
  - secretRef: {name: {{ include "vnpu.secretName" . }}}
securityContext:
  {{- toYaml .Values.containerSecurityContext | nindent 2 }}
{{- end -}}

{{/* The OpenID client secret from a Secret you manage (web only: it signs people in). */}}
{{- define "vnpu.oidcSecretEnv" -}}
{{- with .Values.signIn.oidc }}
{{- if and .enabled .clientSecret.existingSecret }}
- name: OIDC_CLIENT_SECRET
  valueFrom:
    secretKeyRef: {name: {{ .clientSecret.existingSecret | quote }}, key: {{ .clientSecret.key | quote }}}
{{- end }}
{{- end }}
{{- end -}}

{{/* Pod-level fields every portal pod shares. */}}
{{- define "vnpu.podCommon" -}}
serviceAccountName: {{ include "vnpu.serviceAccountName" . }}
securityContext:
  {{- toYaml .Values.podSecurityContext | nindent 2 }}
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{/* Roll the pods when the settings or the generated Secret change. */}}
{{- define "vnpu.podAnnotations" -}}
checksum/config: {{ include (print $.Template.BasePath "/configmap.yaml") . | sha256sum }}
{{- end -}}

{{/* The portal's address as people reach it (PORTAL_URL, alert links): config.portalUrl, else https://<ingress.host>. */}}
{{- define "vnpu.portalUrl" -}}
{{- if .Values.config.portalUrl -}}
{{- trimSuffix "/" .Values.config.portalUrl -}}
{{- else -}}
{{- printf "https://%s" .Values.ingress.host -}}
{{- end -}}
{{- end -}}
