// Command chartcheck checks what Helm does not: the manifests `helm template` renders (workload hardening,
// least-privilege RBAC), the CRD (structure, printer columns) and custom resources against its schema offline,
// and the metric names of the alerts and dashboards against deploy/metrics-contract.txt. Rendering, values
// merging and values.schema.json validation are Helm's (tools/go/helm).
//
//	chartcheck check    -manifests FILE                               invariants over rendered manifests
//	chartcheck crd      -crd FILE [-partial] [-expect accept|reject] DOC...
//	chartcheck seeds    -crd FILE [-min-complete N] DIR...            every CloneSet in the seed manifests is accepted
//	chartcheck metrics  -contract FILE RULES_OR_DASHBOARD...          metric names used must be in the contract
//	chartcheck metrics  -contract FILE -exposition SCRAPE -component C  the binary exposes its contract metrics
package main

import (
	"fmt"
	"os"
	"strings"

	"gopkg.in/yaml.v3"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: chartcheck check|crd|seeds|metrics [flags]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
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
		fmt.Fprintln(os.Stderr, "chartcheck:", err)
		os.Exit(1)
	}
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
