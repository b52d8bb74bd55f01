package main

// Helm-compatible offline rendering: the subset of `helm template` this chart needs.
// Helm is not installable here, so this mirrors its engine (pkg/engine/engine.go, funcs.go):
// text/template + sprig, include/tpl/required/toYaml/fromYaml/toJson/lookup, missingkey=zero with
// "<no value>" removed, partials (files starting with "_") parsed but not emitted, NOTES.txt separate.

import (
	"bytes"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"text/template"

	"github.com/Masterminds/sprig"
	"gopkg.in/yaml.v3"
)

// Release mirrors Helm's .Release.
type Release struct {
	Name      string
	Namespace string
	Service   string
	Revision  int
	IsInstall bool
	IsUpgrade bool
}

// KubeVersion mirrors Helm's .Capabilities.KubeVersion.
type KubeVersion struct{ Version, Major, Minor, GitVersion string }

// String lets templates print {{ .Capabilities.KubeVersion }} like Helm does.
func (k KubeVersion) String() string { return k.Version }

// VersionSet mirrors Helm's .Capabilities.APIVersions.
type VersionSet []string

// Has reports whether an apiVersion ("group/version" or "group/version/Kind") is available.
func (v VersionSet) Has(apiVersion string) bool {
	for _, x := range v {
		if x == apiVersion {
			return true
		}
	}
	return false
}

// Capabilities mirrors Helm's .Capabilities.
type Capabilities struct {
	KubeVersion KubeVersion
	APIVersions VersionSet
}

// Files mirrors Helm's .Files (Get, Glob, AsConfig) over the chart's non-template files.
type Files map[string][]byte

// Get returns a file's content or "" like Helm.
func (f Files) Get(name string) string { return string(f[name]) }

// Glob returns the files matching a path.Match pattern.
func (f Files) Glob(pattern string) Files {
	out := Files{}
	for name, data := range f {
		if ok, _ := path.Match(pattern, name); ok {
			out[name] = data
		}
	}
	return out
}

// AsConfig renders the files as ConfigMap data keyed by base name, like Helm.
func (f Files) AsConfig() string {
	m := map[string]string{}
	for name, data := range f {
		m[path.Base(name)] = string(data)
	}
	s, _ := toYAML(m)
	return s
}

// Chart is a loaded chart directory.
type Chart struct {
	Dir       string
	Meta      map[string]interface{} // Chart.yaml with Helm's capitalised keys
	Values    map[string]interface{} // values.yaml
	Schema    []byte                 // values.schema.json, may be nil
	Templates map[string]string      // "templates/x.yaml" -> text
	Files     Files
	CRDs      map[string]string // "crds/x.yaml" -> text
}

// LoadChart reads a chart directory.
func LoadChart(dir string) (*Chart, error) {
	c := &Chart{Dir: dir, Templates: map[string]string{}, Files: Files{}, CRDs: map[string]string{}}
	raw, err := os.ReadFile(filepath.Join(dir, "Chart.yaml"))
	if err != nil {
		return nil, err
	}
	meta := map[string]interface{}{}
	if err := yaml.Unmarshal(raw, &meta); err != nil {
		return nil, fmt.Errorf("Chart.yaml: %v", err)
	}
	c.Meta = map[string]interface{}{}
	for k, v := range meta { // Helm exposes apiVersion as .Chart.APIVersion, appVersion as .Chart.AppVersion, ...
		key := strings.ToUpper(k[:1]) + k[1:]
		if k == "apiVersion" {
			key = "APIVersion"
		}
		c.Meta[key] = v
	}
	if raw, err = os.ReadFile(filepath.Join(dir, "values.yaml")); err == nil {
		c.Values = map[string]interface{}{}
		if err := yaml.Unmarshal(raw, &c.Values); err != nil {
			return nil, fmt.Errorf("values.yaml: %v", err)
		}
	}
	if raw, err = os.ReadFile(filepath.Join(dir, "values.schema.json")); err == nil {
		c.Schema = raw
	}
	err = filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		switch {
		case strings.HasPrefix(rel, "templates/"):
			c.Templates[rel] = string(data)
		case strings.HasPrefix(rel, "crds/"):
			c.CRDs[rel] = string(data)
		case rel == "Chart.yaml" || rel == "values.yaml" || rel == "values.schema.json":
		default:
			c.Files[rel] = data
		}
		return nil
	})
	return c, err
}

// toYAML matches Helm's toYaml: 2-space indent, trailing newline trimmed.
func toYAML(v interface{}) (string, error) {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	return strings.TrimSuffix(buf.String(), "\n"), nil
}

// Render executes every template and returns name -> rendered text (partials excluded).
func Render(c *Chart, values map[string]interface{}, rel Release, caps Capabilities) (map[string]string, error) {
	root := template.New("gotpl").Option("missingkey=zero")
	var includedNames []string
	funcs := sprig.TxtFuncMap()
	funcs["toYaml"] = func(v interface{}) string { s, _ := toYAML(v); return s }
	funcs["fromYaml"] = func(s string) map[string]interface{} {
		m := map[string]interface{}{}
		if err := yaml.Unmarshal([]byte(s), &m); err != nil {
			m["Error"] = err.Error()
		}
		return m
	}
	funcs["required"] = func(msg string, v interface{}) (interface{}, error) {
		if v == nil {
			return nil, fmt.Errorf(msg)
		}
		if s, ok := v.(string); ok && s == "" {
			return nil, fmt.Errorf(msg)
		}
		return v, nil
	}
	funcs["lookup"] = func(string, string, string, string) map[string]interface{} { return map[string]interface{}{} }
	funcs["include"] = func(name string, data interface{}) (string, error) {
		if len(includedNames) > 100 {
			return "", fmt.Errorf("rendering template has a nested reference name: %s", name)
		}
		includedNames = append(includedNames, name)
		defer func() { includedNames = includedNames[:len(includedNames)-1] }()
		var buf bytes.Buffer
		err := root.ExecuteTemplate(&buf, name, data)
		return buf.String(), err
	}
	funcs["tpl"] = func(text string, data interface{}) (string, error) {
		t, err := root.Clone()
		if err != nil {
			return "", err
		}
		t, err = t.New("tpl").Parse(text)
		if err != nil {
			return "", err
		}
		var buf bytes.Buffer
		err = t.Execute(&buf, data)
		return strings.ReplaceAll(buf.String(), "<no value>", ""), err
	}
	root.Funcs(funcs)

	names := make([]string, 0, len(c.Templates))
	for n := range c.Templates {
		names = append(names, n)
	}
	sort.Strings(names)
	chartName, _ := c.Meta["Name"].(string)
	for _, n := range names {
		full := chartName + "/" + n
		if _, err := root.New(full).Parse(c.Templates[n]); err != nil {
			return nil, err
		}
	}
	out := map[string]string{}
	for _, n := range names {
		base := path.Base(n)
		if strings.HasPrefix(base, "_") {
			continue
		}
		full := chartName + "/" + n
		data := map[string]interface{}{
			"Values":       values,
			"Release":      rel,
			"Chart":        c.Meta,
			"Capabilities": caps,
			"Files":        c.Files,
			"Template":     map[string]interface{}{"Name": full, "BasePath": chartName + "/templates"},
		}
		var buf bytes.Buffer
		if err := root.ExecuteTemplate(&buf, full, data); err != nil {
			return nil, err
		}
		out[n] = strings.ReplaceAll(buf.String(), "<no value>", "")
	}
	return out, nil
}

// MergeValues deep-merges src over dst like Helm's coalescing of -f files (maps merge, scalars and
// lists replace; a null in src deletes the key).
func MergeValues(dst, src map[string]interface{}) map[string]interface{} {
	if dst == nil {
		dst = map[string]interface{}{}
	}
	for k, v := range src {
		if v == nil {
			delete(dst, k)
			continue
		}
		sm, sok := v.(map[string]interface{})
		dm, dok := dst[k].(map[string]interface{})
		if sok && dok {
			dst[k] = MergeValues(dm, sm)
		} else {
			dst[k] = v
		}
	}
	return dst
}

// deepCopy copies a YAML value tree so merges never alias the chart's defaults.
func deepCopy(v interface{}) interface{} {
	switch t := v.(type) {
	case map[string]interface{}:
		m := make(map[string]interface{}, len(t))
		for k, x := range t {
			m[k] = deepCopy(x)
		}
		return m
	case []interface{}:
		s := make([]interface{}, len(t))
		for i, x := range t {
			s[i] = deepCopy(x)
		}
		return s
	default:
		return v
	}
}

// SetValue applies one --set a.b.c=value (value parsed as YAML scalar like Helm's strvals for
// ints/bools/null; no list-index syntax).
func SetValue(values map[string]interface{}, expr string) error {
	eq := strings.IndexByte(expr, '=')
	if eq <= 0 {
		return fmt.Errorf("--set %q: want key=value", expr)
	}
	keys := strings.Split(expr[:eq], ".")
	var v interface{}
	if err := yaml.Unmarshal([]byte(expr[eq+1:]), &v); err != nil {
		v = expr[eq+1:]
	}
	m := values
	for _, k := range keys[:len(keys)-1] {
		next, ok := m[k].(map[string]interface{})
		if !ok {
			next = map[string]interface{}{}
			m[k] = next
		}
		m = next
	}
	if v == nil { // Helm: --set key=null removes the key
		delete(m, keys[len(keys)-1])
		return nil
	}
	m[keys[len(keys)-1]] = v
	return nil
}
