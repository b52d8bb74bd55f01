package main

// A small validator for the JSON-Schema subset that Kubernetes structural OpenAPI v3 CRD schemas use,
// so the CRD can be checked against custom resources without an API server (Helm validates the chart's
// values.schema.json itself; the API server validates custom resources with its own implementation and
// the e2e-real test compares). It covers the keywords our CRD uses and fails loudly on any keyword it
// does not understand, so a schema can never silently pass unchecked.

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strings"
)

// Schema is a decoded schema node.
type Schema map[string]interface{}

// Validator carries the root (for $ref) and the options.
type Validator struct {
	Root Schema
	// Strict reports fields that no "properties" entry declares (kubectl's --validate=strict, and
	// JSON Schema "additionalProperties: false" is always honoured regardless).
	Strict bool
	// IgnoreRequired accepts partial documents (snippets in the seeds).
	IgnoreRequired bool
}

var knownKeywords = map[string]bool{
	"type": true, "properties": true, "required": true, "items": true, "enum": true,
	"minimum": true, "maximum": true, "exclusiveMinimum": true, "minLength": true, "maxLength": true,
	"pattern": true, "minItems": true, "maxItems": true, "additionalProperties": true, "description": true,
	"default": true, "format": true, "nullable": true, "anyOf": true, "oneOf": true, "allOf": true, "$ref": true,
	"$schema": true, "title": true, "definitions": true, "$defs": true, "examples": true, "const": true,
	"x-kubernetes-int-or-string": true, "x-kubernetes-preserve-unknown-fields": true,
	"x-kubernetes-validations": true, "x-kubernetes-list-type": true, "x-kubernetes-list-map-keys": true,
	"x-kubernetes-map-type": true, "x-kubernetes-embedded-resource": true, "uniqueItems": true,
	"minProperties": true, "maxProperties": true, "$id": true, "not": true,
}

// ParseSchema decodes JSON schema text.
func ParseSchema(raw []byte) (Schema, error) {
	var s Schema
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("schema: %v", err)
	}
	return s, nil
}

// Validate returns every violation found, sorted, each prefixed with the field path.
func (v *Validator) Validate(doc interface{}) []string {
	var errs []string
	v.check(v.Root, normalize(doc), "", &errs)
	sort.Strings(errs)
	return errs
}

// normalize converts YAML-decoded values (ints, map[string]interface{}) into JSON-like values.
func normalize(x interface{}) interface{} {
	switch t := x.(type) {
	case map[string]interface{}:
		m := map[string]interface{}{}
		for k, v := range t {
			m[k] = normalize(v)
		}
		return m
	case map[interface{}]interface{}:
		m := map[string]interface{}{}
		for k, v := range t {
			m[fmt.Sprint(k)] = normalize(v)
		}
		return m
	case []interface{}:
		s := make([]interface{}, len(t))
		for i, v := range t {
			s[i] = normalize(v)
		}
		return s
	case int:
		return float64(t)
	case int64:
		return float64(t)
	case uint64:
		return float64(t)
	default:
		return x
	}
}

func (v *Validator) resolve(s Schema, path string, errs *[]string) Schema {
	ref, ok := s["$ref"].(string)
	if !ok {
		return s
	}
	parts := strings.Split(strings.TrimPrefix(ref, "#/"), "/")
	var cur interface{} = map[string]interface{}(v.Root)
	for _, p := range parts {
		m, ok := cur.(map[string]interface{})
		if !ok {
			cur = nil
			break
		}
		cur = m[p]
	}
	m, ok := cur.(map[string]interface{})
	if !ok {
		*errs = append(*errs, fmt.Sprintf("%s: unresolvable $ref %q", orRoot(path), ref))
		return Schema{}
	}
	return Schema(m)
}

func orRoot(p string) string {
	if p == "" {
		return "<root>"
	}
	return p
}

func typeOf(x interface{}) string {
	switch t := x.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case float64:
		if t == math.Trunc(t) {
			return "integer"
		}
		return "number"
	case []interface{}:
		return "array"
	case map[string]interface{}:
		return "object"
	}
	return fmt.Sprintf("%T", x)
}

func typeMatches(want, got string) bool {
	return want == got || (want == "number" && got == "integer")
}

func asSchema(x interface{}) (Schema, bool) {
	m, ok := x.(map[string]interface{})
	return Schema(m), ok
}

func (v *Validator) check(s Schema, doc interface{}, path string, errs *[]string) {
	s = v.resolve(s, path, errs)
	for k := range s {
		if !knownKeywords[k] {
			*errs = append(*errs, fmt.Sprintf("%s: schema keyword %q not supported by the checker", orRoot(path), k))
		}
	}
	p := orRoot(path)
	if doc == nil && (s["nullable"] == true || v.IgnoreRequired) { // a snippet's "spec:  # ..." elides the value
		return
	}
	if s["x-kubernetes-int-or-string"] == true {
		if t := typeOf(doc); t != "integer" && t != "string" {
			*errs = append(*errs, fmt.Sprintf("%s: must be an integer or a string, got %s", p, t))
		}
	} else if t, ok := s["type"]; ok {
		var wants []string
		switch tt := t.(type) {
		case string:
			wants = []string{tt}
		case []interface{}:
			for _, w := range tt {
				wants = append(wants, fmt.Sprint(w))
			}
		}
		got, matched := typeOf(doc), false
		for _, w := range wants {
			matched = matched || typeMatches(w, got)
		}
		if !matched {
			*errs = append(*errs, fmt.Sprintf("%s: must be %s, got %s", p, strings.Join(wants, " or "), got))
			return
		}
	}
	if enum, ok := s["enum"].([]interface{}); ok {
		found := false
		for _, e := range enum {
			found = found || fmt.Sprint(normalize(e)) == fmt.Sprint(doc)
		}
		if !found {
			*errs = append(*errs, fmt.Sprintf("%s: %v is not one of %v", p, doc, enum))
		}
	}
	if c, ok := s["const"]; ok && fmt.Sprint(normalize(c)) != fmt.Sprint(doc) {
		*errs = append(*errs, fmt.Sprintf("%s: must equal %v", p, c))
	}
	v.checkScalar(s, doc, p, errs)
	if not, ok := asSchema(s["not"]); ok {
		var subErrs []string
		v.check(not, doc, path, &subErrs)
		if len(subErrs) == 0 {
			*errs = append(*errs, fmt.Sprintf("%s: %v is not allowed", p, doc))
		}
	}
	for _, key := range []string{"allOf", "anyOf", "oneOf"} {
		subs, ok := s[key].([]interface{})
		if !ok {
			continue
		}
		passed := 0
		for _, sub := range subs {
			ss, _ := asSchema(sub)
			var subErrs []string
			v.check(ss, doc, path, &subErrs)
			if len(subErrs) == 0 {
				passed++
			} else if key == "allOf" {
				*errs = append(*errs, subErrs...)
			}
		}
		if (key == "anyOf" && passed == 0) || (key == "oneOf" && passed != 1) {
			*errs = append(*errs, fmt.Sprintf("%s: %d of the %s alternatives match", p, passed, key))
		}
	}
	switch d := doc.(type) {
	case map[string]interface{}:
		v.checkObject(s, d, path, errs)
	case []interface{}:
		if n, ok := s["minItems"].(float64); ok && float64(len(d)) < n {
			*errs = append(*errs, fmt.Sprintf("%s: needs at least %v items", p, n))
		}
		if n, ok := s["maxItems"].(float64); ok && float64(len(d)) > n {
			*errs = append(*errs, fmt.Sprintf("%s: allows at most %v items", p, n))
		}
		if items, ok := asSchema(s["items"]); ok {
			for i, x := range d {
				v.check(items, x, fmt.Sprintf("%s[%d]", path, i), errs)
			}
		}
	}
}

func (v *Validator) checkScalar(s Schema, doc interface{}, p string, errs *[]string) {
	if f, ok := doc.(float64); ok {
		if m, ok := s["minimum"].(float64); ok && f < m {
			*errs = append(*errs, fmt.Sprintf("%s: %v is below the minimum %v", p, f, m))
		}
		if m, ok := s["maximum"].(float64); ok && f > m {
			*errs = append(*errs, fmt.Sprintf("%s: %v is above the maximum %v", p, f, m))
		}
		if m, ok := s["exclusiveMinimum"].(float64); ok && f <= m {
			*errs = append(*errs, fmt.Sprintf("%s: %v must be greater than %v", p, f, m))
		}
		if s["format"] == "int32" && (f > math.MaxInt32 || f < math.MinInt32) {
			*errs = append(*errs, fmt.Sprintf("%s: %v does not fit int32", p, f))
		}
	}
	if str, ok := doc.(string); ok {
		if m, ok := s["minLength"].(float64); ok && float64(len(str)) < m {
			*errs = append(*errs, fmt.Sprintf("%s: shorter than %v characters", p, m))
		}
		if m, ok := s["maxLength"].(float64); ok && float64(len(str)) > m {
			*errs = append(*errs, fmt.Sprintf("%s: longer than %v characters", p, m))
		}
		if pat, ok := s["pattern"].(string); ok {
			re, err := regexp.Compile(pat)
			if err != nil {
				*errs = append(*errs, fmt.Sprintf("%s: bad pattern %q: %v", p, pat, err))
			} else if !re.MatchString(str) {
				*errs = append(*errs, fmt.Sprintf("%s: %q does not match %q", p, str, pat))
			}
		}
	}
}

func (v *Validator) checkObject(s Schema, d map[string]interface{}, path string, errs *[]string) {
	p := orRoot(path)
	if req, ok := s["required"].([]interface{}); ok && !v.IgnoreRequired {
		for _, r := range req {
			if _, present := d[fmt.Sprint(r)]; !present {
				*errs = append(*errs, fmt.Sprintf("%s: required field %q is missing", p, r))
			}
		}
	}
	if n, ok := s["minProperties"].(float64); ok && float64(len(d)) < n {
		*errs = append(*errs, fmt.Sprintf("%s: needs at least %v fields", p, n))
	}
	props, hasProps := asSchema(s["properties"])
	addl, addlIsSchema := asSchema(s["additionalProperties"])
	preserve := s["x-kubernetes-preserve-unknown-fields"] == true
	keys := make([]string, 0, len(d))
	for k := range d {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		child := path + "." + k
		if ps, ok := asSchema(props[k]); ok {
			v.check(ps, d[k], child, errs)
			continue
		}
		switch {
		case addlIsSchema:
			v.check(addl, d[k], child, errs)
		case s["additionalProperties"] == false:
			*errs = append(*errs, fmt.Sprintf("%s: unknown field %q", p, k))
		case s["additionalProperties"] == true || preserve:
		case v.Strict && hasProps:
			*errs = append(*errs, fmt.Sprintf("%s: unknown field %q", p, k))
		case v.Strict && s["type"] == "object" && !hasProps:
			*errs = append(*errs, fmt.Sprintf("%s: unknown field %q (object declares no fields)", p, k))
		}
	}
}
