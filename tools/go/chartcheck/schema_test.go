package main

import (
	"reflect"
	"testing"

	"gopkg.in/yaml.v3"
)

func mustYAML(t *testing.T, s string) map[string]interface{} {
	t.Helper()
	m := map[string]interface{}{}
	if err := yaml.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestValidator(t *testing.T) {
	schema, err := ParseSchema([]byte(`{
	  "type": "object", "required": ["spec"],
	  "definitions": {"port": {"type": "integer", "minimum": 1, "maximum": 65535}},
	  "properties": {
	    "spec": {"type": "object", "properties": {
	      "replicas": {"type": "integer", "minimum": 0, "format": "int32"},
	      "partition": {"x-kubernetes-int-or-string": true},
	      "port": {"$ref": "#/definitions/port"},
	      "type": {"type": "string", "enum": ["ReCreate", "InPlaceIfPossible"]},
	      "labels": {"type": "object", "additionalProperties": {"type": "string"}},
	      "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
	      "name": {"type": "string", "not": {"const": "*"}, "pattern": "^[a-z]+$"}
	    }}
	  }}`))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		doc    string
		strict bool
		want   []string
	}{
		{"spec: {replicas: 3, partition: 50%, port: 80, type: ReCreate, labels: {a: b}, free: {x: 1}, name: ab}", true, nil},
		{"spec: {partition: 1}", true, nil},
		{"{}", false, []string{`<root>: required field "spec" is missing`}},
		{"spec: {replicas: -1}", false, []string{".spec.replicas: -1 is below the minimum 0"}},
		{"spec: {replicas: 3000000000}", false, []string{".spec.replicas: 3e+09 does not fit int32"}},
		{"spec: {replicas: '3'}", false, []string{".spec.replicas: must be integer, got string"}},
		{"spec: {partition: 1.5}", false, []string{".spec.partition: must be an integer or a string, got number"}},
		{"spec: {port: 0}", false, []string{".spec.port: 0 is below the minimum 1"}},
		{"spec: {type: OnDelete}", false, []string{".spec.type: OnDelete is not one of [ReCreate InPlaceIfPossible]"}},
		{"spec: {labels: {a: 1}}", false, []string{".spec.labels.a: must be string, got integer"}},
		{"spec: {name: '*'}", false, []string{`.spec.name: "*" does not match "^[a-z]+$"`, ".spec.name: * is not allowed"}},
		{"spec: {bogus: 1}", true, []string{`.spec: unknown field "bogus"`}},
		{"spec: {bogus: 1}", false, nil},
	}
	for _, c := range cases {
		v := &Validator{Root: schema, Strict: c.strict}
		got := v.Validate(mustYAML(t, c.doc))
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("Validate(%s) = %q, want %q", c.doc, got, c.want)
		}
	}
}

func TestValidatorRejectsUnknownKeywords(t *testing.T) {
	schema, _ := ParseSchema([]byte(`{"type": "object", "patternProperties": {}}`))
	got := (&Validator{Root: schema}).Validate(map[string]interface{}{})
	want := []string{`<root>: schema keyword "patternProperties" not supported by the checker`}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}
