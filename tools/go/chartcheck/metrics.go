package main

// Metric-name contract checks: every metric an alert rule or dashboard queries must be in
// deploy/metrics-contract.txt, and (when the binaries exist) every contract metric of a component
// must appear with the right type in that binary's /metrics exposition.

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// ContractMetric is one line of the contract file.
type ContractMetric struct{ Component, Name, Type, Labels string }

// LoadContract reads "component metric type labels" lines.
func LoadContract(file string) (map[string]ContractMetric, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]ContractMetric{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) != 4 {
			return nil, fmt.Errorf("%s:%d: want 4 fields, got %d", file, n, len(fields))
		}
		out[fields[1]] = ContractMetric{Component: fields[0], Name: fields[1], Type: fields[2], Labels: fields[3]}
	}
	return out, nil
}

var promqlWords = map[string]bool{
	"and": true, "or": true, "unless": true, "by": true, "without": true, "on": true, "ignoring": true,
	"group_left": true, "group_right": true, "offset": true, "bool": true, "inf": true, "nan": true,
	// aggregation operators may be followed by "by (...)" instead of "(".
	"sum": true, "min": true, "max": true, "avg": true, "count": true, "stddev": true, "stdvar": true,
	"topk": true, "bottomk": true, "quantile": true, "count_values": true, "group": true,
}

// MetricNames returns the metric names a PromQL expression selects. It skips label matchers
// ({...}), ranges ([...]), strings, function names (followed by "("), grouping label lists
// (after by/without/on/ignoring/group_*), numbers and keywords.
func MetricNames(expr string) []string {
	var names []string
	isIdent := func(c byte, first bool) bool {
		return c == '_' || c == ':' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (!first && c >= '0' && c <= '9')
	}
	prevWord := ""
	for i := 0; i < len(expr); {
		c := expr[i]
		switch {
		case c == '"' || c == '\'' || c == '`':
			j := i + 1
			for j < len(expr) && expr[j] != c {
				if expr[j] == '\\' {
					j++
				}
				j++
			}
			i = j + 1
		case c == '{' || c == '[':
			closer := map[byte]byte{'{': '}', '[': ']'}[c]
			j := i + 1
			for j < len(expr) && expr[j] != closer {
				if expr[j] == '"' {
					j++
					for j < len(expr) && expr[j] != '"' {
						j++
					}
				}
				j++
			}
			i = j + 1
		case c == '(' && (prevWord == "by" || prevWord == "without" || prevWord == "on" || prevWord == "ignoring" ||
			prevWord == "group_left" || prevWord == "group_right"):
			j := strings.IndexByte(expr[i:], ')')
			if j < 0 {
				return names
			}
			i += j + 1
			prevWord = ""
		case c >= '0' && c <= '9' || c == '.':
			j := i
			for j < len(expr) && (isIdent(expr[j], false) || expr[j] == '.') {
				j++ // numbers and durations such as 5m, 1e3
			}
			i = j
		case isIdent(c, true):
			j := i
			for j < len(expr) && isIdent(expr[j], false) {
				j++
			}
			word := expr[i:j]
			k := j
			for k < len(expr) && (expr[k] == ' ' || expr[k] == '\n' || expr[k] == '\t') {
				k++
			}
			isCall := k < len(expr) && expr[k] == '('
			lw := strings.ToLower(word)
			if !isCall && !promqlWords[lw] && !strings.HasPrefix(word, "$") {
				names = append(names, word)
			}
			prevWord = lw
			i = j
		default:
			if c != ' ' && c != '\n' && c != '\t' {
				prevWord = ""
			}
			i++
		}
	}
	return names
}

// resolve maps a series name to its contract metric (histogram _bucket/_sum/_count included).
func resolve(contract map[string]ContractMetric, name string) (ContractMetric, bool) {
	if m, ok := contract[name]; ok {
		return m, true
	}
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		if base := strings.TrimSuffix(name, suffix); base != name {
			if m, ok := contract[base]; ok && (m.Type == "histogram" || (m.Type == "summary" && suffix != "_bucket")) {
				return m, true
			}
		}
	}
	return ContractMetric{}, false
}

// exprsIn collects PromQL expressions: "expr" keys of alert rule files and dashboard JSON,
// and "query"/"definition" of template variables (label_values(metric, label)).
func exprsIn(x interface{}, out *[]string) {
	switch t := x.(type) {
	case map[string]interface{}:
		for k, v := range t {
			if s, ok := v.(string); ok && (k == "expr" || k == "definition") {
				*out = append(*out, labelValuesSelector(s))
			}
			exprsIn(v, out)
		}
	case []interface{}:
		for _, v := range t {
			exprsIn(v, out)
		}
	}
}

// labelValuesSelector turns Grafana's label_values(selector, label) into its selector (and
// label_values(label) into nothing); other expressions pass through.
func labelValuesSelector(s string) string {
	t := strings.TrimSpace(s)
	if !strings.HasPrefix(t, "label_values(") || !strings.HasSuffix(t, ")") {
		return s
	}
	inner := t[len("label_values(") : len(t)-1]
	depth := 0
	for i, c := range inner {
		switch c {
		case '{', '(':
			depth++
		case '}', ')':
			depth--
		case ',':
			if depth == 0 {
				return inner[:i]
			}
		}
	}
	return ""
}

func cmdMetrics(args []string) error {
	fs := flag.NewFlagSet("metrics", flag.ExitOnError)
	contractFile := fs.String("contract", "", "deploy/metrics-contract.txt")
	exposition := fs.String("exposition", "", "a /metrics scrape to compare with the contract")
	component := fs.String("component", "", "with -exposition: the component that was scraped")
	fs.Parse(args)
	contract, err := LoadContract(*contractFile)
	if err != nil {
		return err
	}
	if *exposition != "" {
		return checkExposition(contract, *component, *exposition)
	}
	used := map[string][]string{}
	for _, file := range fs.Args() {
		raw, err := os.ReadFile(file)
		if err != nil {
			return err
		}
		var doc interface{}
		if strings.HasSuffix(file, ".json") {
			err = json.Unmarshal(raw, &doc)
		} else {
			err = yaml.Unmarshal(raw, &doc)
		}
		if err != nil {
			return fmt.Errorf("%s: %v", file, err)
		}
		var exprs []string
		exprsIn(doc, &exprs)
		if len(exprs) == 0 {
			return fmt.Errorf("%s: no expressions found", file)
		}
		for _, e := range exprs {
			for _, n := range MetricNames(e) {
				used[n] = append(used[n], file)
			}
		}
	}
	var unknown []string
	names := make([]string, 0, len(used))
	for n := range used {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if _, ok := resolve(contract, n); !ok {
			unknown = append(unknown, fmt.Sprintf("%s (used in %s)", n, strings.Join(uniq(used[n]), ", ")))
		}
	}
	fmt.Printf("%d distinct metric names used, %d in the contract\n", len(names), len(names)-len(unknown))
	if len(unknown) > 0 {
		return fmt.Errorf("metrics not in the contract:\n  %s", strings.Join(unknown, "\n  "))
	}
	return nil
}

func uniq(s []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range s {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

// checkExposition requires every contract metric of the component in the scrape's # TYPE lines.
func checkExposition(contract map[string]ContractMetric, component, file string) error {
	raw, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	types := map[string]string{}
	for _, line := range strings.Split(string(raw), "\n") {
		if f := strings.Fields(line); len(f) == 4 && f[0] == "#" && f[1] == "TYPE" {
			types[f[2]] = f[3]
		}
	}
	var missing []string
	n := 0
	for _, m := range contract {
		if m.Component != component {
			continue
		}
		n++
		if got, ok := types[m.Name]; !ok {
			if m.Labels != "-" {
				// prometheus-cpp omits a labeled family until its first child exists (e.g. a
				// result="error" counter before the first error): only unlabeled ones must be there.
				fmt.Printf("note: %s{%s} not observed yet\n", m.Name, m.Labels)
				continue
			}
			missing = append(missing, m.Name+" is not exposed")
		} else if got != m.Type {
			missing = append(missing, fmt.Sprintf("%s is a %s, contract says %s", m.Name, got, m.Type))
		}
	}
	sort.Strings(missing)
	fmt.Printf("%s: %d contract metrics, %d exposed types\n", component, n, len(types))
	if n == 0 {
		return fmt.Errorf("no contract metrics for component %q", component)
	}
	if len(missing) > 0 {
		return fmt.Errorf("%s /metrics differs from the contract:\n  %s", component, strings.Join(missing, "\n  "))
	}
	return nil
}
