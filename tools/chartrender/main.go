// Command chartrender renders the Helm chart offline the way `helm template` does and checks the
// result (values schema, workload/RBAC invariants, CRD schema against the seed manifests).
//
//	chartrender render   -chart DIR [-f values.yaml]... [-set k=v]... [-name N] [-namespace NS] [-include-crds] [-notes]
//	chartrender values   -chart DIR [-f values.yaml]...              validate merged values against values.schema.json
//	chartrender check    -manifests FILE [-agent-sa NAME]             invariants over rendered manifests
//	chartrender crd      -crd FILE [-version v1alpha1] [-partial] [-expect accept|reject] DOC...
//	chartrender seeds    -crd FILE DIR                                every CloneSet in the seed texts must be accepted
//	chartrender metrics  -contract FILE RULES_OR_DASHBOARD...         metric names used must be in the contract
//	chartrender metrics  -contract FILE -exposition SCRAPE -component C  the binary exposes its contract metrics
//
// Built in GOPATH mode against Debian's golang-github-masterminds-sprig-dev and golang-gopkg-yaml.v3-dev.
package main

import (
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: chartrender render|values|check|crd|seeds [flags]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "render":
		err = cmdRender(os.Args[2:])
	case "values":
		err = cmdValues(os.Args[2:])
	case "check":
		err = cmdCheck(os.Args[2:])
	case "crd":
		err = cmdCRD(os.Args[2:])
	case "metrics":
		err = cmdMetrics(os.Args[2:])
	case "seeds":
		err = cmdSeeds(os.Args[2:])
	default:
		err = fmt.Errorf("unknown subcommand %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "chartrender:", err)
		os.Exit(1)
	}
}

// loadValues returns the chart defaults merged with each -f file and -set expression, in order.
func loadValues(c *Chart, files, sets []string) (map[string]interface{}, error) {
	values, _ := deepCopy(c.Values).(map[string]interface{})
	if values == nil {
		values = map[string]interface{}{}
	}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		user := map[string]interface{}{}
		if err := yaml.Unmarshal(raw, &user); err != nil {
			return nil, fmt.Errorf("%s: %v", f, err)
		}
		values = MergeValues(values, user)
	}
	for _, s := range sets {
		if err := SetValue(values, s); err != nil {
			return nil, err
		}
	}
	return values, nil
}

func validateValues(c *Chart, values map[string]interface{}) error {
	if c.Schema == nil {
		return nil
	}
	root, err := ParseSchema(c.Schema)
	if err != nil {
		return err
	}
	v := &Validator{Root: root}
	if errs := v.Validate(values); len(errs) > 0 {
		return fmt.Errorf("values don't meet the specifications of the schema(s):\n  %s", strings.Join(errs, "\n  "))
	}
	return nil
}

// valuesFlags are the -chart, -f and -set flags of the subcommands that read the chart's values.
type valuesFlags struct {
	chartDir    *string
	files, sets multiFlag
}

func addValuesFlags(fs *flag.FlagSet) *valuesFlags {
	v := &valuesFlags{chartDir: fs.String("chart", "", "chart directory")}
	fs.Var(&v.files, "f", "values file (repeatable)")
	fs.Var(&v.sets, "set", "key=value (repeatable)")
	return v
}

// load reads the chart and its values (defaults, each -f, each -set) and checks them against the chart's schema.
func (v *valuesFlags) load() (*Chart, map[string]interface{}, error) {
	c, err := LoadChart(*v.chartDir)
	if err != nil {
		return nil, nil, err
	}
	values, err := loadValues(c, v.files, v.sets)
	if err != nil {
		return nil, nil, err
	}
	if err := validateValues(c, values); err != nil {
		return nil, nil, err
	}
	return c, values, nil
}

func cmdValues(args []string) error {
	fs := flag.NewFlagSet("values", flag.ExitOnError)
	vf := addValuesFlags(fs)
	fs.Parse(args)
	if _, _, err := vf.load(); err != nil {
		return err
	}
	fmt.Println("values OK")
	return nil
}

func cmdRender(args []string) error {
	fs := flag.NewFlagSet("render", flag.ExitOnError)
	vf := addValuesFlags(fs)
	name := fs.String("name", "cloneset", "release name")
	ns := fs.String("namespace", "cloneset-system", "release namespace")
	kube := fs.String("kube-version", "v1.28.0", "Capabilities.KubeVersion")
	includeCRDs := fs.Bool("include-crds", false, "emit crds/ first, like helm template --include-crds")
	notes := fs.Bool("notes", false, "print the rendered NOTES.txt instead of the manifests")
	var apis multiFlag
	fs.Var(&apis, "api-versions", "extra Capabilities.APIVersions (repeatable)")
	fs.Parse(args)
	c, values, err := vf.load()
	if err != nil {
		return err
	}
	ver := strings.TrimPrefix(*kube, "v")
	parts := strings.SplitN(ver, ".", 3)
	if len(parts) < 2 {
		return fmt.Errorf("-kube-version %q: want vMAJOR.MINOR.PATCH", *kube)
	}
	caps := Capabilities{
		KubeVersion: KubeVersion{Version: "v" + ver, Major: parts[0], Minor: parts[1], GitVersion: "v" + ver},
		APIVersions: append(VersionSet{"v1", "apps/v1", "policy/v1", "autoscaling/v2", "networking.k8s.io/v1",
			"rbac.authorization.k8s.io/v1", "coordination.k8s.io/v1", "apiextensions.k8s.io/v1"}, apis...),
	}
	rel := Release{Name: *name, Namespace: *ns, Service: "Helm", Revision: 1, IsInstall: true}
	out, err := Render(c, values, rel, caps)
	if err != nil {
		return err
	}
	if *notes {
		fmt.Print(out["templates/NOTES.txt"])
		return nil
	}
	var b strings.Builder
	if *includeCRDs {
		for _, n := range sortedKeys(c.CRDs) {
			fmt.Fprintf(&b, "---\n# Source: %s/%s\n%s\n", c.Meta["Name"], n, strings.TrimSpace(c.CRDs[n]))
		}
	}
	for _, n := range sortedKeys(out) {
		if n == "templates/NOTES.txt" || strings.TrimSpace(out[n]) == "" {
			continue
		}
		// Like Helm, each document must be valid YAML; report the template that broke it.
		for i, doc := range splitDocs(out[n]) {
			var x interface{}
			if err := yaml.Unmarshal([]byte(doc), &x); err != nil {
				return fmt.Errorf("%s: document %d is not valid YAML: %v\n%s", n, i, err, doc)
			}
		}
		fmt.Fprintf(&b, "---\n# Source: %s/%s\n%s\n", c.Meta["Name"], n, strings.TrimSpace(out[n]))
	}
	fmt.Print(b.String())
	return nil
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// splitDocs splits a YAML stream on "---" lines.
func splitDocs(s string) []string {
	var docs []string
	var cur []string
	for _, line := range strings.Split(s, "\n") {
		if strings.TrimRight(line, " ") == "---" {
			docs = append(docs, strings.Join(cur, "\n"))
			cur = nil
			continue
		}
		cur = append(cur, line)
	}
	return append(docs, strings.Join(cur, "\n"))
}

// parseObjects decodes every non-empty document of a YAML stream.
func parseObjects(s string) ([]map[string]interface{}, error) {
	var objs []map[string]interface{}
	for i, doc := range splitDocs(s) {
		var m map[string]interface{}
		if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
			return nil, fmt.Errorf("document %d: %v", i, err)
		}
		if len(m) > 0 {
			objs = append(objs, m)
		}
	}
	return objs, nil
}
