package main

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func writeChart(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestRenderHelmFunctions(t *testing.T) {
	dir := writeChart(t, map[string]string{
		"Chart.yaml":             "apiVersion: v2\nname: demo\nversion: 1.2.3\nappVersion: \"9.9\"\n",
		"values.yaml":            "name: web\nlabels: {b: \"2\", a: \"1\"}\nlist: [x, y]\ntext: 'v={{ .Values.name }}'\n",
		"files/data.txt":         "hello",
		"templates/_helpers.tpl": `{{- define "demo.fullname" -}}{{ .Release.Name }}-{{ .Chart.Name }}{{- end }}`,
		"templates/cm.yaml":      "name: {{ include \"demo.fullname\" . }}\nlabels:\n  {{- toYaml .Values.labels | nindent 2 }}\nlist:\n  {{- toYaml .Values.list | nindent 2 }}\ntpl: {{ tpl .Values.text . }}\nfile: {{ .Files.Get \"files/data.txt\" }}\nmissing: [{{ .Values.nothing }}]\nversion: {{ .Chart.AppVersion }} {{ .Capabilities.KubeVersion.Minor }} {{ .Capabilities.APIVersions.Has \"policy/v1\" }}\n",
		"templates/empty.yaml":   "{{- if .Values.off }}x{{ end }}",
	})
	c, err := LoadChart(dir)
	if err != nil {
		t.Fatal(err)
	}
	values, err := loadValues(c, nil, []string{"name=api"})
	if err != nil {
		t.Fatal(err)
	}
	caps := Capabilities{KubeVersion: KubeVersion{Minor: "28"}, APIVersions: VersionSet{"policy/v1"}}
	out, err := Render(c, values, Release{Name: "rel", Namespace: "ns"}, caps)
	if err != nil {
		t.Fatal(err)
	}
	want := "name: rel-demo\nlabels:\n  a: \"1\"\n  b: \"2\"\nlist:\n  - x\n  - \"y\"\ntpl: v=api\nfile: hello\nmissing: []\nversion: 9.9 28 true\n"
	if got := out["templates/cm.yaml"]; got != want {
		t.Errorf("rendered:\n%s\nwant:\n%s", got, want)
	}
	if _, ok := out["templates/_helpers.tpl"]; ok {
		t.Error("partials must not be emitted")
	}
	if strings.TrimSpace(out["templates/empty.yaml"]) != "" {
		t.Errorf("empty template rendered %q", out["templates/empty.yaml"])
	}
}

func TestRenderRequiredFails(t *testing.T) {
	dir := writeChart(t, map[string]string{
		"Chart.yaml":       "apiVersion: v2\nname: demo\nversion: 1.0.0\n",
		"templates/x.yaml": `x: {{ required "x.name is required" .Values.x }}`,
	})
	c, err := LoadChart(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Render(c, map[string]interface{}{}, Release{}, Capabilities{})
	if err == nil || !strings.Contains(err.Error(), "x.name is required") {
		t.Fatalf("err = %v, want the required message", err)
	}
}

func TestMergeAndSet(t *testing.T) {
	base := map[string]interface{}{"a": map[string]interface{}{"b": 1, "c": 2}, "l": []interface{}{1, 2}, "d": 4}
	got := MergeValues(base, map[string]interface{}{"a": map[string]interface{}{"c": 3}, "l": []interface{}{9}, "d": nil})
	if err := SetValue(got, "x.y=true"); err != nil {
		t.Fatal(err)
	}
	if err := SetValue(got, "a.b=null"); err != nil {
		t.Fatal(err)
	}
	want := map[string]interface{}{"a": map[string]interface{}{"c": 3}, "l": []interface{}{9},
		"x": map[string]interface{}{"y": true}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if err := SetValue(got, "novalue"); err == nil {
		t.Error("want an error for a --set without =")
	}
}

func TestExtractSeeds(t *testing.T) {
	dir := t.TempDir()
	text := "prose\n```yaml\napiVersion: apps.kruise.io/v1alpha1\nkind: CloneSet\nmetadata: {name: a}\nspec:\n  selector: {matchLabels: {app: a}}\n  template: {metadata: {labels: {app: a}}}\n---\nkind: Service\n```\n" +
		"more prose\napiVersion: apps.kruise.io/v1alpha1\nkind: CloneSet\nspec:\n  replicas: 2\n\n" +
		"apiVersion: apps.kruise.io/v1alpha1 kind: CloneSet metadata: flattened: [\n"
	file := filepath.Join(dir, "seed.txt")
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	docs, skipped, err := ExtractSeeds(file)
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) != 2 || !docs[0].Complete || docs[1].Complete || len(skipped) != 1 {
		t.Fatalf("docs=%+v skipped=%v", docs, skipped)
	}
	if docs[0].Where != filepath.Base(dir)+"/seed.txt:3#0" {
		t.Errorf("where = %s", docs[0].Where)
	}
}
