package main

// Invariants every rendered install must satisfy: hardened workloads, a dedicated
// ServiceAccount each, least-privilege RBAC (no Secret access for the agent, no wildcards), a
// NetworkPolicy selecting every workload and a PDB for every multi-replica Deployment.

import (
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"
)

func get(m interface{}, path ...string) interface{} {
	for _, p := range path {
		mm, ok := m.(map[string]interface{})
		if !ok {
			return nil
		}
		m = mm[p]
	}
	return m
}

func getMap(m interface{}, path ...string) map[string]interface{} {
	x, _ := get(m, path...).(map[string]interface{})
	return x
}

func getList(m interface{}, path ...string) []interface{} {
	x, _ := get(m, path...).([]interface{})
	return x
}

func getStr(m interface{}, path ...string) string {
	x, _ := get(m, path...).(string)
	return x
}

// CheckReport collects violations and what was looked at.
type CheckReport struct {
	Violations []string
	Workloads  int
	Containers int
	Rules      int
}

func (r *CheckReport) fail(format string, args ...interface{}) {
	r.Violations = append(r.Violations, fmt.Sprintf(format, args...))
}

func objName(o map[string]interface{}) string {
	return fmt.Sprintf("%s/%s", o["kind"], getStr(o, "metadata", "name"))
}

// labelsMatch reports whether a matchLabels selector selects the labels.
func labelsMatch(sel, labels map[string]interface{}) bool {
	if len(sel) == 0 {
		return false
	}
	for k, v := range sel {
		if fmt.Sprint(labels[k]) != fmt.Sprint(v) {
			return false
		}
	}
	return true
}

// CheckManifests runs every invariant over the decoded objects.
func CheckManifests(objs []map[string]interface{}) *CheckReport {
	r := &CheckReport{}
	sas := map[string]bool{}
	for _, o := range objs {
		if o["kind"] == "ServiceAccount" {
			sas[getStr(o, "metadata", "name")] = true
		}
	}
	agentSAs := map[string]bool{}
	for _, o := range objs {
		kind := fmt.Sprint(o["kind"])
		if kind != "Deployment" && kind != "DaemonSet" && kind != "StatefulSet" && kind != "Job" {
			continue
		}
		r.Workloads++
		tmpl := getMap(o, "spec", "template")
		pod := getMap(tmpl, "spec")
		name := objName(o)
		sa := getStr(pod, "serviceAccountName")
		switch {
		case sa == "" || sa == "default":
			r.fail("%s: no dedicated serviceAccountName", name)
		case !sas[sa]:
			r.fail("%s: ServiceAccount %q is not part of the release", name, sa)
		}
		if getStr(tmpl, "metadata", "labels", "app.kubernetes.io/component") == "agent" {
			agentSAs[sa] = true
		}
		for _, hk := range []string{"hostNetwork", "hostPID", "hostIPC"} {
			if pod[hk] == true {
				r.fail("%s: %s is on", name, hk)
			}
		}
		for _, v := range getList(pod, "volumes") {
			if hp := getMap(v, "hostPath"); hp != nil && getStr(hp, "type") != "Socket" {
				r.fail("%s: hostPath volume %q must be a single Socket, got type %q", name, getStr(v, "name"), getStr(hp, "type"))
			}
		}
		podSC := getMap(pod, "securityContext")
		var all []interface{}
		all = append(all, getList(pod, "initContainers")...)
		nInit := len(all)
		all = append(all, getList(pod, "containers")...)
		if len(all) == nInit {
			r.fail("%s: no containers", name)
		}
		for i, c := range all {
			r.Containers++
			cn := fmt.Sprintf("%s container %q", name, getStr(c, "name"))
			checkContainer(r, cn, c, podSC, i >= nInit)
		}
		checkSelectedBy(r, objs, o, "NetworkPolicy", []string{"spec", "podSelector", "matchLabels"})
		if kind == "Deployment" {
			if n, ok := get(o, "spec", "replicas").(int); ok && n > 1 {
				checkSelectedBy(r, objs, o, "PodDisruptionBudget", []string{"spec", "selector", "matchLabels"})
			}
		}
	}
	checkRBAC(r, objs, agentSAs)
	return r
}

func checkContainer(r *CheckReport, cn string, c interface{}, podSC map[string]interface{}, regular bool) {
	img := getStr(c, "image")
	if i := strings.LastIndex(img, ":"); i < 0 || strings.Contains(img[i:], "/") || strings.HasSuffix(img, ":latest") {
		if !strings.Contains(img, "@sha256:") {
			r.fail("%s: image %q must carry a tag other than latest or a digest", cn, img)
		}
	}
	for _, k := range []string{"cpu", "memory"} {
		if get(c, "resources", "limits", k) == nil {
			r.fail("%s: no resources.limits.%s", cn, k)
		}
		if get(c, "resources", "requests", k) == nil {
			r.fail("%s: no resources.requests.%s", cn, k)
		}
	}
	if regular {
		for _, p := range []string{"livenessProbe", "readinessProbe"} {
			if getMap(c, p) == nil {
				r.fail("%s: no %s", cn, p)
			}
		}
	}
	sc := getMap(c, "securityContext")
	eff := func(k string) interface{} { // container-level overrides pod-level, as in the kubelet
		if v, ok := sc[k]; ok {
			return v
		}
		return podSC[k]
	}
	if eff("runAsNonRoot") != true {
		r.fail("%s: runAsNonRoot is not true", cn)
	}
	if u, ok := eff("runAsUser").(int); ok && u == 0 {
		r.fail("%s: runAsUser is 0", cn)
	}
	if getStr(map[string]interface{}{"x": eff("seccompProfile")}, "x", "type") != "RuntimeDefault" {
		r.fail("%s: seccompProfile.type is not RuntimeDefault", cn)
	}
	if sc["readOnlyRootFilesystem"] != true {
		r.fail("%s: readOnlyRootFilesystem is not true", cn)
	}
	if sc["allowPrivilegeEscalation"] != false {
		r.fail("%s: allowPrivilegeEscalation is not false", cn)
	}
	if sc["privileged"] == true {
		r.fail("%s: privileged", cn)
	}
	drop := getList(sc, "capabilities", "drop")
	hasAll := false
	for _, d := range drop {
		hasAll = hasAll || d == "ALL"
	}
	if !hasAll {
		r.fail("%s: capabilities.drop does not contain ALL", cn)
	}
	if add := getList(sc, "capabilities", "add"); len(add) > 0 {
		r.fail("%s: adds capabilities %v", cn, add)
	}
}

// checkSelectedBy requires some object of kind whose selector (at selPath) matches the workload's pod labels.
func checkSelectedBy(r *CheckReport, objs []map[string]interface{}, w map[string]interface{}, kind string, selPath []string) {
	labels := getMap(w, "spec", "template", "metadata", "labels")
	for _, o := range objs {
		if o["kind"] == kind && labelsMatch(getMap(o, selPath...), labels) {
			return
		}
	}
	r.fail("%s: no %s selects its pods", objName(w), kind)
}

func ruleHas(rule interface{}, field, want string) bool {
	for _, x := range getList(rule, field) {
		if x == want || x == "*" {
			return true
		}
	}
	return false
}

func checkRBAC(r *CheckReport, objs []map[string]interface{}, agentSAs map[string]bool) {
	roles := map[string]map[string]interface{}{} // "Kind/name" -> role
	for _, o := range objs {
		if o["kind"] == "Role" || o["kind"] == "ClusterRole" {
			roles[objName(o)] = o
			for i, rule := range getList(o, "rules") {
				r.Rules++
				for _, f := range []string{"apiGroups", "resources", "verbs"} {
					for _, x := range getList(rule, f) {
						if x == "*" {
							r.fail("%s rule %d: wildcard in %s", objName(o), i, f)
						}
					}
				}
				for _, v := range []string{"escalate", "bind", "impersonate"} {
					if ruleHas(rule, "verbs", v) {
						r.fail("%s rule %d: grants %s", objName(o), i, v)
					}
				}
			}
		}
	}
	var grants []string
	for _, b := range objs {
		if b["kind"] != "ClusterRoleBinding" && b["kind"] != "RoleBinding" {
			continue
		}
		ref := getMap(b, "roleRef")
		role := roles[fmt.Sprintf("%s/%s", ref["kind"], ref["name"])]
		if role == nil {
			r.fail("%s: roleRef %s/%s is not part of the release", objName(b), ref["kind"], ref["name"])
			continue
		}
		for _, s := range getList(b, "subjects") {
			sa := getStr(s, "name")
			for i, rule := range getList(role, "rules") {
				if !ruleHas(rule, "resources", "secrets") {
					continue
				}
				scope := "namespace " + getStr(b, "metadata", "namespace")
				if b["kind"] == "ClusterRoleBinding" {
					scope = "cluster-wide"
					r.fail("%s grants ServiceAccount %q cluster-wide Secret access via %s rule %d", objName(b), sa, objName(role), i)
				} else if agentSAs[sa] && len(getList(rule, "resourceNames")) == 0 {
					r.fail("%s grants the agent %q every Secret in %s", objName(b), sa, scope)
				}
				grants = append(grants, fmt.Sprintf("%s -> %s (%s)", sa, objName(role), scope))
			}
		}
	}
	sort.Strings(grants)
	for _, g := range grants {
		fmt.Fprintln(os.Stderr, "note: Secret access:", g)
	}
}

func cmdCheck(args []string) error {
	fs := flag.NewFlagSet("check", flag.ExitOnError)
	manifests := fs.String("manifests", "", "rendered manifests (helm template output)")
	fs.Parse(args)
	raw, err := os.ReadFile(*manifests)
	if err != nil {
		return err
	}
	objs, err := parseObjects(string(raw))
	if err != nil {
		return err
	}
	r := CheckManifests(objs)
	fmt.Printf("checked %d objects: %d workloads, %d containers, %d RBAC rules\n", len(objs), r.Workloads, r.Containers, r.Rules)
	if r.Workloads == 0 {
		r.fail("no workloads rendered")
	}
	if len(r.Violations) > 0 {
		return fmt.Errorf("%d invariant violations:\n  %s", len(r.Violations), strings.Join(r.Violations, "\n  "))
	}
	return nil
}
