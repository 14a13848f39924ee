{{/* Names, labels and the pieces several templates share. */}}

{{- define "sluice-upf.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "sluice-upf.fullname" -}}
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

{{- define "sluice-upf.selectorLabels" -}}
app.kubernetes.io/name: {{ include "sluice-upf.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "sluice-upf.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "sluice-upf.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/component: upf
{{- end }}

{{- define "sluice-upf.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}

{{/*
The roles in use, in order: n3 and n6 always, n9 and n4 when enabled.
Returns them space-separated; split with splitList " ".
*/}}
{{- define "sluice-upf.roles" -}}
{{- $roles := list "n3" "n6" }}
{{- if .Values.networks.n9.enabled }}{{ $roles = append $roles "n9" }}{{ end }}
{{- if .Values.networks.n4.enabled }}{{ $roles = append $roles "n4" }}{{ end }}
{{- join " " $roles }}
{{- end }}

{{/* An address without its prefix length: 198.18.3.2/24 -> 198.18.3.2. */}}
{{- define "sluice-upf.bareAddress" -}}
{{- regexReplaceAll "/[0-9]+$" . "" }}
{{- end }}

{{/*
The NetworkAttachmentDefinition of a role, as the pod's networks annotation
names it: {"name", "namespace"?, "interface"}.
*/}}
{{- define "sluice-upf.selection" -}}
{{- $net := index .root.Values.networks .role }}
{{- $sel := dict "name" (printf "%s-%s" (include "sluice-upf.fullname" .root) .role) "interface" $net.interface }}
{{- if not .root.Values.networks.createAttachments }}
{{- if not $net.attachment }}
{{- fail (printf "networks.%s.attachment: empty, but networks.createAttachments is false; name the NetworkAttachmentDefinition to use (name or namespace/name), or set createAttachments: true" .role) }}
{{- end }}
{{- $parts := splitList "/" $net.attachment }}
{{- if eq (len $parts) 2 }}
{{- $_ := set $sel "namespace" (index $parts 0) }}
{{- $_ := set $sel "name" (index $parts 1) }}
{{- else }}
{{- $_ := set $sel "name" $net.attachment }}
{{- end }}
{{- end }}
{{- toJson $sel }}
{{- end }}

{{/*
The CNI configuration of a role's NetworkAttachmentDefinition: the main
plugin, then tuning, which turns forwarding on for the device (upfd's
datapath looks next hops up with bpf_fib_lookup, which finds none where
forwarding is off; /proc/sys is read-only inside the pod).
*/}}
{{- define "sluice-upf.cniConfig" -}}
{{- $net := index .root.Values.networks .role }}
{{- $main := dict "type" $net.cni }}
{{- if eq $net.cni "macvlan" }}
{{- $_ := set $main "master" (required (printf "networks.%s.master: the node's device the macvlan sits on, e.g. eth1" .role) $net.master) }}
{{- $_ := set $main "mode" $net.macvlanMode }}
{{- else if eq $net.cni "host-device" }}
{{- $_ := set $main "device" (required (printf "networks.%s.master: the node's device to move into the pod, e.g. eth1" .role) $net.master) }}
{{- else if eq $net.cni "sriov" }}
{{- if $net.vlan }}{{ $_ := set $main "vlan" (int $net.vlan) }}{{ end }}
{{- else }}
{{- fail (printf "networks.%s.cni: %q is not one the chart knows; want macvlan, host-device or sriov (or create the NetworkAttachmentDefinition yourself: createAttachments false, and name it in attachment)" .role $net.cni) }}
{{- end }}
{{- if $net.ipam }}
{{- $_ := set $main "ipam" $net.ipam }}
{{- else if $net.address }}
{{- $addr := dict "address" $net.address }}
{{- if $net.gateway }}{{ $_ := set $addr "gateway" $net.gateway }}{{ end }}
{{- $ipam := dict "type" "static" "addresses" (list $addr) }}
{{- if $net.routes }}{{ $_ := set $ipam "routes" $net.routes }}{{ end }}
{{- $_ := set $main "ipam" $ipam }}
{{- end }}
{{- $plugins := list $main }}
{{- if and (ne .role "n4") .root.Values.networks.forwardingSysctls }}
{{- $sysctl := dict }}
{{- range .root.Values.networks.forwardingSysctls }}{{ $_ := set $sysctl . "1" }}{{ end }}
{{- $plugins = append $plugins (dict "type" "tuning" "sysctl" $sysctl) }}
{{- end }}
{{- toJson (dict "cniVersion" .root.Values.networks.cniVersion "name" (printf "%s-%s" (include "sluice-upf.fullname" .root) .role) "plugins" $plugins) }}
{{- end }}

{{/* address:port of the pod's IP, from the POD_IP variable. */}}
{{- define "sluice-upf.podListen" -}}
{{- if eq .root.Values.podIPFamily "IPv6" }}[$(POD_IP)]:{{ .port }}{{ else }}$(POD_IP):{{ .port }}{{ end }}
{{- end }}

{{/* Whether N4 is on the pod network (no n4 attachment, no host network). */}}
{{- define "sluice-upf.n4OnPodNetwork" -}}
{{- if not .Values.networks.n4.enabled }}true{{ end }}
{{- end }}

{{- define "sluice-upf.pinPath" -}}
{{- printf "/sys/fs/bpf/sluice-upf/%s-%s" .Release.Namespace (include "sluice-upf.fullname" .) | replace "." "-" }}
{{- end }}

{{/*
upfd.yaml: .Values.config with the keys the chart owns. Those set by
variables (POD_IP is known only in the pod) are left to the Deployment.
*/}}
{{- define "sluice-upf.config" -}}
{{- $cfg := deepCopy (default dict .Values.config) }}
{{- range $key := list "interfaces" "pin_path" "state_file" }}
{{- if hasKey $cfg $key }}
{{- fail (printf "config.%s: the chart writes this key itself; set it through %s instead" $key (ternary "networks" "pinning" (eq $key "interfaces"))) }}
{{- end }}
{{- end }}
{{- range $section := list "api" "metrics" }}
{{- if and (hasKey $cfg $section) (kindIs "map" (index $cfg $section)) (hasKey (index $cfg $section) "listen") }}
{{- fail (printf "config.%s.listen: the chart writes this key itself (the pod's IP, so that probes and Prometheus reach it and N3/N6 do not); set %s.port instead" $section $section) }}
{{- end }}
{{- end }}
{{- $ifaces := list }}
{{- range $role := splitList " " (include "sluice-upf.roles" .) }}
{{- if ne $role "n4" }}
{{- $net := index $.Values.networks $role }}
{{- $iface := dict "name" $net.interface "role" $role }}
{{- if ne $role "n6" }}
{{- $_ := set $iface "address" (include "sluice-upf.bareAddress" (required (printf "networks.%s.address: the pod's %s address, e.g. 198.18.3.2/24: upfd's GTP-U address there" $role $role) $net.address)) }}
{{- end }}
{{- if $net.mtu }}{{ $_ := set $iface "mtu" (int $net.mtu) }}{{ end }}
{{- $ifaces = append $ifaces $iface }}
{{- end }}
{{- end }}
{{- $_ := set $cfg "interfaces" $ifaces }}
{{- if .Values.networks.n4.enabled }}
{{- $n4 := include "sluice-upf.bareAddress" (required "networks.n4.address: the pod's N4 address, e.g. 198.18.4.2/24" .Values.networks.n4.address) }}
{{- $pfcp := default dict (get $cfg "pfcp") }}
{{- if not (hasKey $pfcp "listen") }}
{{- $_ := set $pfcp "listen" (ternary (printf "[%s]:%d" $n4 (int .Values.pfcp.port)) (printf "%s:%d" $n4 (int .Values.pfcp.port)) (contains ":" $n4)) }}
{{- end }}
{{- $_ := set $cfg "pfcp" $pfcp }}
{{- if not (hasKey $cfg "node_id") }}{{ $_ := set $cfg "node_id" $n4 }}{{ end }}
{{- end }}
{{- if .Values.pinning.enabled }}
{{- $_ := set $cfg "pin_path" (include "sluice-upf.pinPath" .) }}
{{- $_ := set $cfg "state_file" "/var/lib/upfd/state.journal" }}
{{- end }}
{{- toYaml $cfg }}
{{- end }}

{{/* SR-IOV resources the pod asks for: {resource: count}. */}}
{{- define "sluice-upf.sriovResources" -}}
{{- $res := dict }}
{{- if not .Values.hostNetwork }}
{{- range $role := splitList " " (include "sluice-upf.roles" .) }}
{{- $net := index $.Values.networks $role }}
{{- if eq $net.cni "sriov" }}
{{- $name := required (printf "networks.%s.sriovResource: the SR-IOV device plugin's resource to take a VF from, e.g. intel.com/sriov_%s" $role $role) $net.sriovResource }}
{{- $_ := set $res $name (add1 (default 0 (get $res $name))) }}
{{- end }}
{{- end }}
{{- end }}
{{- toJson $res }}
{{- end }}

{{/*
The init container's script: for each UE pool, a rule to the UE table and
that table's default route via the data network's router. Replaces what an
earlier run in the same namespace left.
*/}}
{{- define "sluice-upf.ueRoutesScript" -}}
set -e
{{- $table := int64 .Values.ueRoutesTable }}
{{- range .Values.ueRoutes }}
{{- $family := ternary "-6" "-4" (contains ":" .from) }}
{{- $dev := default $.Values.networks.n6.interface .dev }}
ip {{ $family }} rule del from {{ .from }} table {{ $table }} 2>/dev/null || true
ip {{ $family }} rule add from {{ .from }} table {{ $table }}
ip {{ $family }} route replace default via {{ .via }} dev {{ $dev }} table {{ $table }}
{{- end }}
{{- end }}
