package main

// Offline admission of custom resources against a CRD's structural schema (the seed CloneSets of
// tests/data/seeds and the examples of tests/chart/testdata), and the CRD's own structure.

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// CRD is the part of a CustomResourceDefinition admission needs.
type CRD struct {
	Group, Kind string
	Schemas     map[string]Schema // version -> openAPIV3Schema
	Raw         map[string]interface{}
}

// LoadCRD reads the first CustomResourceDefinition in a YAML file.
func LoadCRD(file string) (*CRD, error) {
	raw, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	objs, err := parseObjects(string(raw))
	if err != nil {
		return nil, fmt.Errorf("%s: %v", file, err)
	}
	for _, o := range objs {
		if o["kind"] != "CustomResourceDefinition" {
			continue
		}
		c := &CRD{Group: getStr(o, "spec", "group"), Kind: getStr(o, "spec", "names", "kind"),
			Schemas: map[string]Schema{}, Raw: o}
		for _, v := range getList(o, "spec", "versions") {
			s, _ := normalize(get(v, "schema", "openAPIV3Schema")).(map[string]interface{})
			c.Schemas[getStr(v, "name")] = Schema(s)
		}
		return c, nil
	}
	return nil, fmt.Errorf("%s: no CustomResourceDefinition", file)
}

var dnsSubdomain = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)

// Admit validates one custom resource the way the API server's schema validation would
// (strict field validation, as kubectl apply requests by default). CEL rules are not evaluated.
func (c *CRD) Admit(doc map[string]interface{}, partial bool) []string {
	var errs []string
	api := getStr(doc, "apiVersion")
	version := strings.TrimPrefix(api, c.Group+"/")
	schema, ok := c.Schemas[version]
	if !strings.HasPrefix(api, c.Group+"/") || !ok {
		return []string{fmt.Sprintf("apiVersion %q is not served by the CRD", api)}
	}
	if doc["kind"] != c.Kind {
		return []string{fmt.Sprintf("kind %v is not %s", doc["kind"], c.Kind)}
	}
	name := getStr(doc, "metadata", "name")
	if !partial && (name == "" || len(name) > 253 || !dnsSubdomain.MatchString(name)) {
		errs = append(errs, fmt.Sprintf("metadata.name %q is not a DNS subdomain", name))
	}
	body := map[string]interface{}{}
	for k, v := range doc {
		if k != "metadata" { // ObjectMeta is validated by the server itself, not the CRD schema
			body[k] = v
		}
	}
	v := &Validator{Root: schema, Strict: true, IgnoreRequired: partial}
	return append(errs, v.Validate(body)...)
}

// Lint checks the CRD has what the chart tests require and that its schemas are structural.
func (c *CRD) Lint() []string {
	var errs []string
	spec := getMap(c.Raw, "spec")
	short := fmt.Sprint(getList(spec, "names", "shortNames"))
	if !strings.Contains(short, "clone") {
		errs = append(errs, "names.shortNames lacks clone")
	}
	for _, v := range getList(spec, "versions") {
		vn := getStr(v, "name")
		if get(v, "subresources", "status") == nil || get(v, "subresources", "scale") == nil {
			errs = append(errs, vn+": status and scale subresources required")
		}
		var cols []string
		for _, col := range getList(v, "additionalPrinterColumns") {
			if p, _ := get(col, "priority").(int); p == 0 { // -o wide columns are extra
				cols = append(cols, getStr(col, "name"))
			}
		}
		if got := strings.Join(cols, ","); got != "DESIRED,UPDATED,UPDATED_READY,UPDATED_AVAILABLE,READY,TOTAL,AGE" {
			errs = append(errs, vn+": printer columns are "+got)
		}
		if s, ok := c.Schemas[vn]; ok {
			structural(s, vn, &errs)
		}
	}
	return errs
}

// structural requires a type on every node, the exceptions being int-or-string and preserve-unknown.
func structural(s Schema, path string, errs *[]string) {
	if _, ok := s["type"]; !ok && s["x-kubernetes-int-or-string"] != true && s["x-kubernetes-preserve-unknown-fields"] != true {
		*errs = append(*errs, path+": no type (not structural)")
	}
	for _, rule := range getList(map[string]interface{}(s), "x-kubernetes-validations") {
		if getStr(rule, "rule") == "" || getStr(rule, "message") == "" {
			*errs = append(*errs, path+": x-kubernetes-validations entry needs rule and message")
		}
	}
	if props, ok := asSchema(s["properties"]); ok {
		for k, p := range props {
			if ps, ok := asSchema(p); ok {
				structural(ps, path+"."+k, errs)
			}
		}
	}
	if items, ok := asSchema(s["items"]); ok {
		structural(items, path+"[]", errs)
	}
	if addl, ok := asSchema(s["additionalProperties"]); ok {
		structural(addl, path+"{}", errs)
	}
}

// SeedDoc is a CloneSet found in a seed manifest.
type SeedDoc struct {
	Where    string
	Doc      map[string]interface{}
	Complete bool // has metadata.name and spec.template: must be admitted in full
}

// LoadSeeds returns the CloneSets of a YAML manifest file (tests/data/seeds): complete ones, and the
// fragments the seed documents show (no name or no template), which are admitted ignoring required fields.
func LoadSeeds(file string) ([]SeedDoc, error) {
	raw, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	base := filepath.Base(filepath.Dir(file)) + "/" + filepath.Base(file)
	var docs []SeedDoc
	for i, text := range splitDocs(string(raw)) {
		var m map[string]interface{}
		if err := yaml.Unmarshal([]byte(text), &m); err != nil {
			return nil, fmt.Errorf("%s: document %d: %v", base, i, err)
		}
		if m["kind"] != "CloneSet" {
			continue
		}
		// spec.selector may be omitted: it then defaults to the template labels (seed 000 relies on it).
		complete := getStr(m, "metadata", "name") != "" && getMap(m, "spec", "template") != nil
		docs = append(docs, SeedDoc{Where: fmt.Sprintf("%s#%d", base, i), Doc: m, Complete: complete})
	}
	return docs, nil
}

func cmdSeeds(args []string) error {
	fs := flag.NewFlagSet("seeds", flag.ExitOnError)
	crdFile := fs.String("crd", "", "CRD file")
	minComplete := fs.Int("min-complete", 1, "fail if fewer complete CloneSets are found")
	fs.Parse(args)
	c, err := LoadCRD(*crdFile)
	if err != nil {
		return err
	}
	var files []string
	for _, dir := range fs.Args() {
		err := filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
			if err != nil {
				return err // a missing seed directory is an error, never an empty pass
			}
			if !info.IsDir() && (strings.HasSuffix(p, ".yaml") || strings.HasSuffix(p, ".yml")) {
				files = append(files, p)
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	sort.Strings(files)
	failed, complete, partial := 0, 0, 0
	for _, file := range files {
		docs, err := LoadSeeds(file)
		if err != nil {
			return err
		}
		for _, d := range docs {
			mode := "partial"
			if d.Complete {
				mode = "complete"
				complete++
			} else {
				partial++
			}
			if errs := c.Admit(d.Doc, !d.Complete); len(errs) > 0 {
				failed++
				fmt.Printf("REJECTED %s (%s %s):\n  %s\n", d.Where, mode, getStr(d.Doc, "metadata", "name"), strings.Join(errs, "\n  "))
			} else {
				fmt.Printf("accepted %s (%s %s)\n", d.Where, mode, getStr(d.Doc, "metadata", "name"))
			}
		}
	}
	fmt.Printf("seed CloneSets: %d complete, %d partial, %d rejected\n", complete, partial, failed)
	if failed > 0 {
		return fmt.Errorf("%d seed CloneSets rejected", failed)
	}
	if complete < *minComplete {
		return fmt.Errorf("found %d complete seed CloneSets, want at least %d", complete, *minComplete)
	}
	return nil
}

// cmdCRD lints the CRD, then admits each document file and compares with -expect. A file may carry
// "# expect-error: <substring>" lines; each substring must appear in the rejection.
func cmdCRD(args []string) error {
	fs := flag.NewFlagSet("crd", flag.ExitOnError)
	crdFile := fs.String("crd", "", "CRD file")
	expect := fs.String("expect", "accept", "accept|reject")
	partial := fs.Bool("partial", false, "ignore required fields")
	fs.Parse(args)
	c, err := LoadCRD(*crdFile)
	if err != nil {
		return err
	}
	if errs := c.Lint(); len(errs) > 0 {
		return fmt.Errorf("CRD lint:\n  %s", strings.Join(errs, "\n  "))
	}
	bad := 0
	for _, file := range fs.Args() {
		raw, err := os.ReadFile(file)
		if err != nil {
			return err
		}
		var wants []string
		for _, line := range strings.Split(string(raw), "\n") {
			if strings.HasPrefix(line, "# expect-error: ") {
				wants = append(wants, strings.TrimPrefix(line, "# expect-error: "))
			}
		}
		objs, err := parseObjects(string(raw))
		if err != nil {
			return fmt.Errorf("%s: %v", file, err)
		}
		for _, o := range objs {
			errs := c.Admit(o, *partial)
			msg := strings.Join(errs, "; ")
			switch {
			case *expect == "accept" && len(errs) > 0:
				bad++
				fmt.Printf("FAIL %s: rejected: %s\n", file, msg)
			case *expect == "reject" && len(errs) == 0:
				bad++
				fmt.Printf("FAIL %s: accepted, want rejection\n", file)
			default:
				ok := true
				for _, w := range wants {
					if !strings.Contains(msg, w) {
						ok = false
						bad++
						fmt.Printf("FAIL %s: rejection %q lacks %q\n", file, msg, w)
					}
				}
				if ok {
					fmt.Printf("ok   %s (%s) %s\n", file, *expect, msg)
				}
			}
		}
	}
	if bad > 0 {
		return fmt.Errorf("%d documents did not meet the expectation", bad)
	}
	return nil
}
