package main

import (
	"strings"
	"testing"
)

// hardened is a release that meets every invariant; each case breaks one thing with a string replacement.
const hardened = `
kind: ServiceAccount
metadata: {name: planner}
---
kind: Deployment
metadata: {name: planner}
spec:
  replicas: 2
  template:
    metadata: {labels: {app: planner}}
    spec:
      serviceAccountName: planner
      securityContext: {runAsNonRoot: true, seccompProfile: {type: RuntimeDefault}}
      containers:
      - name: planner
        image: ghcr.io/x/planner:1.0
        resources: {limits: {cpu: 1, memory: 1Gi}, requests: {cpu: 1, memory: 1Gi}}
        livenessProbe: {httpGet: {port: 1}}
        readinessProbe: {httpGet: {port: 1}}
        securityContext: {readOnlyRootFilesystem: true, allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}
---
kind: NetworkPolicy
metadata: {name: planner}
spec: {podSelector: {matchLabels: {app: planner}}}
---
kind: PodDisruptionBudget
metadata: {name: planner}
spec: {selector: {matchLabels: {app: planner}}}
---
kind: ClusterRole
metadata: {name: planner}
rules:
- {apiGroups: [""], resources: [pods], verbs: [get]}
---
kind: ClusterRoleBinding
metadata: {name: planner}
roleRef: {kind: ClusterRole, name: planner}
subjects: [{kind: ServiceAccount, name: planner}]
`

func TestCheckManifests(t *testing.T) {
	cases := []struct{ name, old, new, want string }{
		{"hardened", "", "", ""},
		{"default SA", "serviceAccountName: planner", "serviceAccountName: default", "no dedicated serviceAccountName"},
		{"foreign SA", "serviceAccountName: planner", "serviceAccountName: other", `ServiceAccount "other" is not part`},
		{"latest tag", "planner:1.0", "planner:latest", "must carry a tag other than latest"},
		{"no tag", "planner:1.0", "planner", "must carry a tag"},
		{"root", "runAsNonRoot: true", "runAsNonRoot: false", "runAsNonRoot is not true"},
		{"seccomp", "RuntimeDefault", "Unconfined", "seccompProfile.type is not RuntimeDefault"},
		{"writable root", "readOnlyRootFilesystem: true", "readOnlyRootFilesystem: false", "readOnlyRootFilesystem"},
		{"escalation", "allowPrivilegeEscalation: false", "allowPrivilegeEscalation: true", "allowPrivilegeEscalation"},
		{"caps", "drop: [ALL]", "drop: [NET_RAW], add: [SYS_ADMIN]", "capabilities.drop does not contain ALL"},
		{"no limits", "limits: {cpu: 1, memory: 1Gi}, ", "", "no resources.limits.cpu"},
		{"no probe", "livenessProbe: {httpGet: {port: 1}}", "", "no livenessProbe"},
		{"host network", "serviceAccountName: planner", "serviceAccountName: planner\n      hostNetwork: true", "hostNetwork is on"},
		{"no netpol", "podSelector: {matchLabels: {app: planner}}", "podSelector: {matchLabels: {app: other}}", "no NetworkPolicy selects"},
		{"no PDB", "selector: {matchLabels: {app: planner}}", "selector: {matchLabels: {app: other}}", "no PodDisruptionBudget selects"},
		{"wildcard", "verbs: [get]", `verbs: ["*"]`, "wildcard in verbs"},
		{"escalate", "verbs: [get]", "verbs: [escalate]", "grants escalate"},
		{"secrets cluster-wide", "resources: [pods]", "resources: [secrets]", "cluster-wide Secret access"},
		{"dangling roleRef", "roleRef: {kind: ClusterRole, name: planner}", "roleRef: {kind: ClusterRole, name: x}", "is not part of the release"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			text := hardened
			if c.old != "" {
				if !strings.Contains(text, c.old) {
					t.Fatalf("case does not apply: %q", c.old)
				}
				text = strings.Replace(text, c.old, c.new, 1)
			}
			objs, err := parseObjects(text)
			if err != nil {
				t.Fatal(err)
			}
			r := CheckManifests(objs)
			got := strings.Join(r.Violations, "\n")
			if c.want == "" && got != "" {
				t.Fatalf("unexpected violations:\n%s", got)
			}
			if !strings.Contains(got, c.want) {
				t.Fatalf("violations %q lack %q", got, c.want)
			}
		})
	}
}
