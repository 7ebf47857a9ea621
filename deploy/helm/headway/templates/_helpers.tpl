{{- define "headway.labels" -}}
app.kubernetes.io/name: headway
app.kubernetes.io/part-of: headway
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}
