package main

// The CloneSet manifest (JSON, apps.kruise.io/v1alpha1) as a planner message, and the --set changes of
// `clonesetctl simulate` applied to it. Only the fields this example's fleet can honour are read; any other
// field of spec is an error naming it, rather than silently ignored.

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	pb "cloneset.dev/planner/plannerv1"
)

// applySets applies "key=value" changes (image, image.<container>, replicas, partition, maxUnavailable, maxSurge,
// paused, type, minReadySeconds) to the manifest document; changes receives "key: old -> new".
func applySets(doc map[string]any, sets []string) ([]string, error) {
	var changes []string
	spec := object(doc, "spec")
	for _, set := range sets {
		key, value, ok := strings.Cut(set, "=")
		if !ok || value == "" {
			return nil, fmt.Errorf("-set %s: expected key=value", set)
		}
		var parent map[string]any
		field := key
		var newValue any = value
		switch {
		case key == "image" || strings.HasPrefix(key, "image."):
			containers, _ := object(object(spec, "template"), "spec")["containers"].([]any)
			if len(containers) == 0 {
				return nil, fmt.Errorf("-set %s: spec.template.spec.containers is empty", key)
			}
			want := strings.TrimPrefix(key, "image.")
			for i, c := range containers {
				c := c.(map[string]any)
				if (key == "image" && i == 0) || (key != "image" && c["name"] == want) {
					parent = c
				}
			}
			if parent == nil {
				return nil, fmt.Errorf("-set %s: no container named %s", key, want)
			}
			field = "image"
		case key == "replicas" || key == "minReadySeconds":
			n, err := strconv.Atoi(value)
			if err != nil || n < 0 {
				return nil, fmt.Errorf("-set %s: expected a non-negative integer", key)
			}
			parent, newValue = spec, float64(n)
		case key == "partition" || key == "maxUnavailable" || key == "maxSurge":
			parent = object(spec, "updateStrategy")
			if n, err := strconv.Atoi(value); err == nil {
				newValue = float64(n)
			}
		case key == "paused":
			if value != "true" && value != "false" {
				return nil, fmt.Errorf("-set paused: expected true or false")
			}
			parent, newValue = object(spec, "updateStrategy"), value == "true"
		case key == "type":
			parent = object(spec, "updateStrategy")
		default:
			return nil, fmt.Errorf("-set %s: unknown key (known: image, image.<container>, replicas, partition, "+
				"maxUnavailable, maxSurge, paused, type, minReadySeconds)", key)
		}
		changes = append(changes, fmt.Sprintf("%s: %s -> %s", key, show(parent[field]), show(newValue)))
		parent[field] = newValue
	}
	return changes, nil
}

func object(m map[string]any, key string) map[string]any {
	o, ok := m[key].(map[string]any)
	if !ok {
		o = map[string]any{}
		m[key] = o
	}
	return o
}

func show(v any) string {
	switch v := v.(type) {
	case nil:
		return "unset"
	case string:
		return v
	default:
		b, _ := json.Marshal(v)
		return string(b)
	}
}

// cloneSetFromManifest converts the manifest into the planner's CloneSet message.
func cloneSetFromManifest(doc map[string]any) (*pb.CloneSet, error) {
	if kind, _ := doc["kind"].(string); kind != "CloneSet" {
		return nil, fmt.Errorf("kind: want CloneSet, got %q", kind)
	}
	apiVersion, _ := doc["apiVersion"].(string)
	if apiVersion != "apps.kruise.io/v1alpha1" {
		return nil, fmt.Errorf("apiVersion: this example reads apps.kruise.io/v1alpha1, got %q", apiVersion)
	}
	meta := object(doc, "metadata")
	cs := &pb.CloneSet{ApiVersion: apiVersion, Metadata: &pb.ObjectMeta{Namespace: "default"}, Spec: &pb.CloneSetSpec{},
		Status: &pb.CloneSetStatus{}}
	cs.Metadata.Name, _ = meta["name"].(string)
	if ns, _ := meta["namespace"].(string); ns != "" {
		cs.Metadata.Namespace = ns
	}
	if cs.Metadata.Name == "" {
		return nil, fmt.Errorf("metadata.name: required")
	}
	spec := object(doc, "spec")
	for _, key := range sortedKeys(spec) {
		v := spec[key]
		var err error
		switch key {
		case "replicas":
			var n int32
			n, err = integer(v, "spec.replicas")
			cs.Spec.Replicas = &n
		case "minReadySeconds":
			cs.Spec.MinReadySeconds, err = integer(v, "spec.minReadySeconds")
		case "revisionHistoryLimit":
			var n int32
			n, err = integer(v, "spec.revisionHistoryLimit")
			cs.Spec.RevisionHistoryLimit = &n
		case "selector":
			cs.Spec.Selector, err = selector(v)
		case "template":
			// Compact JSON with sorted keys (encoding/json sorts map keys), as the executor sends it.
			b, merr := json.Marshal(v)
			cs.Spec.TemplateJson, err = string(b), merr
		case "updateStrategy":
			cs.Spec.UpdateStrategy, err = updateStrategy(v)
		default:
			err = fmt.Errorf("spec.%s: not supported by this example's fleet", key)
		}
		if err != nil {
			return nil, err
		}
	}
	return cs, nil
}

func integer(v any, field string) (int32, error) {
	f, ok := v.(float64)
	if !ok || f != float64(int32(f)) {
		return 0, fmt.Errorf("%s: want an integer, got %v", field, v)
	}
	return int32(f), nil
}

func intOrString(v any, field string) (*pb.IntOrString, error) {
	switch v := v.(type) {
	case float64:
		n, err := integer(v, field)
		return &pb.IntOrString{Value: &pb.IntOrString_IntValue{IntValue: n}}, err
	case string:
		return &pb.IntOrString{Value: &pb.IntOrString_StrValue{StrValue: v}}, nil
	}
	return nil, fmt.Errorf("%s: want an integer or a percentage, got %v", field, v)
}

func selector(v any) (*pb.LabelSelector, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("spec.selector: want an object")
	}
	s := &pb.LabelSelector{MatchLabels: map[string]string{}}
	for k, v := range object(m, "matchLabels") {
		s.MatchLabels[k], _ = v.(string)
	}
	if exprs, ok := m["matchExpressions"].([]any); ok {
		for _, e := range exprs {
			e, _ := e.(map[string]any)
			r := &pb.LabelSelectorRequirement{}
			r.Key, _ = e["key"].(string)
			r.Operator, _ = e["operator"].(string)
			values, _ := e["values"].([]any)
			for _, x := range values {
				s, _ := x.(string)
				r.Values = append(r.Values, s)
			}
			s.MatchExpressions = append(s.MatchExpressions, r)
		}
	}
	return s, nil
}

func updateStrategy(v any) (*pb.UpdateStrategy, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("spec.updateStrategy: want an object")
	}
	u := &pb.UpdateStrategy{}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		var err error
		field := "spec.updateStrategy." + k
		switch k {
		case "type":
			u.Type, _ = m[k].(string)
		case "partition":
			u.Partition, err = intOrString(m[k], field)
		case "maxUnavailable":
			u.MaxUnavailable, err = intOrString(m[k], field)
		case "maxSurge":
			u.MaxSurge, err = intOrString(m[k], field)
		case "paused":
			u.Paused, _ = m[k].(bool)
		default:
			err = fmt.Errorf("%s: not supported by this example's fleet", field)
		}
		if err != nil {
			return nil, err
		}
	}
	return u, nil
}
