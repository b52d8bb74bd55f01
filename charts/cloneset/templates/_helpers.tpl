{{/* Chart name, truncated to the 63 characters DNS labels allow. */}}
{{- define "cloneset.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Release-qualified name; the release name alone when it already contains the chart name. */}}
{{- define "cloneset.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* Per-component name: include "cloneset.componentName" (dict "root" $ "component" "planner") */}}
{{- define "cloneset.componentName" -}}
{{- printf "%s-%s" (include "cloneset.fullname" .root | trunc 50 | trimSuffix "-") .component }}
{{- end }}

{{- define "cloneset.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/name: {{ include "cloneset.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: cloneset
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/* Selector labels of one component (immutable: never add version labels here). */}}
{{- define "cloneset.selectorLabels" -}}
app.kubernetes.io/name: {{ include "cloneset.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{- define "cloneset.componentLabels" -}}
{{ include "cloneset.labels" .root }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{/* Image reference: registry/repository:tag, tag defaulting to the chart's appVersion. */}}
{{- define "cloneset.image" -}}
{{- $registry := .root.Values.global.imageRegistry | default .image.registry -}}
{{- $tag := .image.tag | default .root.Chart.AppVersion -}}
{{- if .image.digest -}}
{{- printf "%s/%s@%s" $registry .image.repository .image.digest }}
{{- else -}}
{{- printf "%s/%s:%s" $registry .image.repository $tag }}
{{- end -}}
{{- end }}

{{- define "cloneset.serviceAccountName" -}}
{{- include "cloneset.componentName" . }}
{{- end }}

{{/* Namespace holding the executor's shard Leases. */}}
{{- define "cloneset.leaseNamespace" -}}
{{- .Values.executor.leaseNamespace | default .Release.Namespace }}
{{- end }}

{{/* Namespace of the agent's DaemonSet, ServiceAccount and Service (agent.namespace, else the release's). */}}
{{- define "cloneset.agentNamespace" -}}
{{- .Values.agent.namespace | default .Release.Namespace }}
{{- end }}

{{- define "cloneset.plannerTLSSecret" -}}
{{- .Values.tls.planner.secretName | default (printf "%s-tls" (include "cloneset.componentName" (dict "root" . "component" "planner"))) }}
{{- end }}

{{- define "cloneset.executorTLSSecret" -}}
{{- .Values.tls.executor.secretName | default (printf "%s-tls" (include "cloneset.componentName" (dict "root" . "component" "executor"))) }}
{{- end }}

{{/* Hardened container securityContext shared by every component (Pod Security "restricted"). */}}
{{- define "cloneset.containerSecurityContext" -}}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
runAsNonRoot: true
privileged: false
capabilities:
  drop: ["ALL"]
seccompProfile:
  type: RuntimeDefault
{{- end }}

{{/* Pod-level securityContext: include "cloneset.podSecurityContext" (dict "root" $ "extra" .Values.x.podSecurityContext) */}}
{{- define "cloneset.podSecurityContext" -}}
{{- $base := dict "runAsNonRoot" true "runAsUser" 65532 "runAsGroup" 65532 "fsGroup" 65532 "seccompProfile" (dict "type" "RuntimeDefault") -}}
{{- toYaml (mergeOverwrite $base (.extra | default dict)) }}
{{- end }}

{{/* Soft zone/host spread unless the user sets topologySpreadConstraints. */}}
{{- define "cloneset.topologySpread" -}}
{{- if .values.topologySpreadConstraints }}
{{- toYaml .values.topologySpreadConstraints }}
{{- else }}
- maxSkew: 1
  topologyKey: topology.kubernetes.io/zone
  whenUnsatisfiable: ScheduleAnyway
  labelSelector:
    matchLabels:
      {{- include "cloneset.selectorLabels" . | nindent 6 }}
- maxSkew: 1
  topologyKey: kubernetes.io/hostname
  whenUnsatisfiable: ScheduleAnyway
  labelSelector:
    matchLabels:
      {{- include "cloneset.selectorLabels" . | nindent 6 }}
{{- end }}
{{- end }}

{{/* Secret with the conversion webhook's serving certificate (tls.crt, tls.key, ca.crt). */}}
{{- define "cloneset.webhookTLSSecret" -}}
{{- .Values.conversionWebhook.certificate.secretName | default (printf "%s-webhook-tls" (include "cloneset.componentName" (dict "root" . "component" "planner"))) }}
{{- end }}

{{/* Whether the planner serves the CRD's conversion webhook (it does whenever the chart renders the CRD). */}}
{{- define "cloneset.servesConversion" -}}
{{- if .Values.crd.install }}true{{ end }}
{{- end }}
