package main

import (
	"reflect"
	"testing"
)

func TestMetricNames(t *testing.T) {
	cases := []struct {
		expr string
		want []string
	}{
		{`up{job="planner"} == 0`, []string{"up"}},
		{`sum by (le) (rate(a_bucket{x="y"}[5m]))`, []string{"a_bucket"}},
		{`histogram_quantile(0.99, sum by (le, verb) (rate(b_seconds_bucket[$__rate_interval])))`, []string{"b_seconds_bucket"}},
		{`sum(x_total) / on (instance) group_left (node) y_info > 0.5 and z`, []string{"x_total", "y_info", "z"}},
		{`max without (pod) (m{name=~"a|b", q='{}'}) offset 5m`, []string{"m"}},
		{`increase(c_total[1h]) > bool 1e3`, []string{"c_total"}},
		{`count(up) - 1`, []string{"up"}},
	}
	for _, c := range cases {
		if got := MetricNames(c.expr); !reflect.DeepEqual(got, c.want) {
			t.Errorf("MetricNames(%q) = %v, want %v", c.expr, got, c.want)
		}
	}
}

func TestLabelValuesSelector(t *testing.T) {
	cases := map[string]string{
		`label_values(m{a="b,c"}, name)`: `m{a="b,c"}`,
		`label_values(namespace)`:        ``,
		`sum(m)`:                         `sum(m)`,
	}
	for in, want := range cases {
		if got := labelValuesSelector(in); got != want {
			t.Errorf("labelValuesSelector(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestResolveHistogramSuffixes(t *testing.T) {
	contract := map[string]ContractMetric{
		"h_seconds": {Name: "h_seconds", Type: "histogram"},
		"c_total":   {Name: "c_total", Type: "counter"},
	}
	for name, want := range map[string]bool{
		"h_seconds_bucket": true, "h_seconds_count": true, "h_seconds_sum": true, "h_seconds": true,
		"c_total": true, "c_total_count": false, "unknown": false,
	} {
		if _, got := resolve(contract, name); got != want {
			t.Errorf("resolve(%q) = %v, want %v", name, got, want)
		}
	}
}
