// rollout-example rolls out a simulated fleet of instances (ours, in memory: no Kubernetes) with the CloneSet
// planner, using only the Go client and its loop helper (cloneset.dev/planner), and prints the timeline in the
// format of `clonesetctl simulate` for the same spec:
//
//	rollout-example -f fleet.json -set image=registry.local/fleet:v2 -set partition=5 -fail-nth 4 \
//	    -planner 127.0.0.1:7070
//
// The fleet first reaches the steady state of the manifest as written (every instance ready), then takes the
// -set changes as the new spec and rolls out until nothing moves any more. -fail-nth N makes the N-th container
// start of the rollout fail readiness (the instance runs but never becomes ready): `clonesetctl simulate
// --fail-rate R --seed S` fails the same start when its seeded draws put exactly that one below R
// (docs/planner-api.md names the pair the example's test uses).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"

	"cloneset.dev/planner"
	"cloneset.dev/planner/internal/plannertest"
	pb "cloneset.dev/planner/plannerv1"
)

type step struct {
	At             time.Duration
	Phase          string
	Created        []string
	Deleted        []string
	UpdatedInPlace []string
	Lifecycle      []string
	Counts         counts
}

type result struct {
	name, namespace, strategy  string
	changes                    []string
	fromRevision, toRevision   string
	steps                      []step
	outcome                    string
	reasons, warnings          []string
	duration                   time.Duration
	peakUnavailable, peakSurge int
	final                      counts
}

type setsFlag []string

func (s *setsFlag) String() string     { return strings.Join(*s, ",") }
func (s *setsFlag) Set(v string) error { *s = append(*s, v); return nil }

func main() {
	var sets setsFlag
	file := flag.String("f", "", "the CloneSet manifest (JSON, apps.kruise.io/v1alpha1)")
	flag.Var(&sets, "set", "a change for the new spec, key=value (repeatable): image, image.<container>, replicas, partition, maxUnavailable, maxSurge, paused, type, minReadySeconds")
	address := flag.String("planner", "", "planner address host:port")
	plannerBin := flag.String("planner-bin", "", "start this cloneset-planner on 127.0.0.1 instead of -planner")
	failNth := flag.Int("fail-nth", 0, "the N-th container start of the rollout never becomes ready (0: none)")
	startDelay := flag.Duration("start-delay", time.Second, "instance created or image changed -> running")
	readyAfter := flag.Duration("ready-after", 5*time.Second, "running -> ready")
	output := flag.String("o", "table", "table or json")
	flag.Parse()
	if err := run(*file, sets, *address, *plannerBin, *failNth, *startDelay, *readyAfter, *output, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

func run(file string, sets []string, address, plannerBin string, failNth int, startDelay, readyAfter time.Duration,
	output string, w io.Writer) error {
	if output != "table" && output != "json" {
		return fmt.Errorf("-o must be table or json")
	}
	if file == "" {
		return fmt.Errorf("-f: the CloneSet manifest is required")
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	old, err := cloneSetFromManifest(doc)
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	changes, err := applySets(doc, sets)
	if err != nil {
		return err
	}
	updated, err := cloneSetFromManifest(doc)
	if err != nil {
		return fmt.Errorf("%s after -set: %w", file, err)
	}

	if plannerBin != "" {
		p, err := plannertest.Start(plannerBin, 60*time.Second)
		if err != nil {
			return err
		}
		defer p.Stop()
		address = p.Address
	}
	client, err := planner.Dial(address)
	if err != nil {
		return err
	}
	defer client.Close()
	ctx := context.Background()
	// The planner's admission rules first: a spec it rejects is an error naming the field.
	for _, v := range []*pb.ValidateRequest{{CloneSet: old}, {CloneSet: updated, Old: old}} {
		resp, err := client.Validate(ctx, v)
		if err != nil {
			return err
		}
		if len(resp.Errors) > 0 {
			var lines []string
			for _, e := range resp.Errors {
				lines = append(lines, e.Field+": "+e.Message)
			}
			return fmt.Errorf("invalid CloneSet: %s", strings.Join(lines, "; "))
		}
	}

	epoch := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	f := newFleet(old, startDelay, readyAfter, epoch)
	f.failNth = failNth
	loop := &planner.Loop{Client: client, Fleet: f}
	r := &result{name: old.Metadata.Name, namespace: old.Metadata.Namespace, changes: changes}
	now := epoch
	var warmup result
	if _, err := settle(ctx, loop, f, &now, now, &warmup); err != nil {
		return err
	}
	if c := f.counts(now); c.Available != c.Desired || c.Updated != c.Desired {
		return fmt.Errorf("the manifest as written never reaches a steady state (%d/%d available)", c.Available, c.Desired)
	}
	r.fromRevision = f.cs.Status.UpdateRevision
	f.setSpec(updated.Spec)
	f.countStarts = true // failures start with the rollout
	r.strategy = strategy(f.cs)
	last, err := settle(ctx, loop, f, &now, now, r)
	if err != nil {
		return err
	}
	r.toRevision = f.cs.Status.UpdateRevision
	r.final = f.counts(now)
	c := r.final
	allAvailable := c.Available == c.Desired && c.Pods == c.Desired
	switch {
	case allAvailable && c.Updated == c.Desired:
		r.outcome = "complete"
	case allAvailable && c.Updated == int(f.cs.Status.ExpectedUpdatedReplicas) && c.Updated < c.Desired:
		r.outcome = "partition"
		r.reasons = append(r.reasons, fmt.Sprintf("partition keeps %d of %d pods at the old revision", c.Desired-c.Updated, c.Desired))
	default:
		r.outcome = "stalled"
	}
	if r.outcome != "complete" {
		r.reasons = append(r.reasons, last.GetSummary().GetBlockedReasons()...)
	}
	if r.outcome == "stalled" {
		if n := f.failedStarts(); n > 0 {
			r.reasons = append(r.reasons, fmt.Sprintf("%d pods never became ready (-fail-nth %d)", n, failNth))
		}
	}
	if output == "json" {
		return printJSON(w, r)
	}
	printTable(w, r, startDelay, readyAfter, failNth)
	return nil
}

// settle runs the loop until nothing changes any more, recording every plan that touched an instance into r
// (times relative to start). It mirrors `clonesetctl simulate`: after a plan that acted, plan again at the same
// instant; otherwise move to the next instance transition or the plan's requeue, whichever is first.
func settle(ctx context.Context, loop *planner.Loop, f *fleet, now *time.Time, start time.Time, r *result) (*pb.PlanResponse, error) {
	sameInstant, idle := 0, 0
	lastChange := *now
	seen := map[string]bool{}
	peaks := func() {
		c := f.counts(*now)
		r.peakUnavailable = max(r.peakUnavailable, c.Unavailable)
		r.peakSurge = max(r.peakSurge, c.Surge)
	}
	var last *pb.PlanResponse
	for {
		if f.advance(*now) {
			lastChange, idle = *now, 0
		}
		peaks()
		before := proto.Clone(f.cs.Status).(*pb.CloneSetStatus)
		f.out = applied{}
		res, err := loop.Step(ctx, *now)
		if err != nil {
			return nil, err
		}
		last = res.Plan
		for _, e := range res.Plan.Events {
			line := e.Reason + ": " + e.Message
			if e.Type == pb.EventType_WARNING && !seen[line] {
				seen[line] = true
				r.warnings = append(r.warnings, line)
			}
		}
		if res.Stopped != nil {
			return nil, fmt.Errorf("at +%s the fleet refused an action: %v", formatDuration(now.Sub(start)), res.Stopped)
		}
		statusChanges := res.Plan.WriteStatus && !proto.Equal(res.Plan.Status, before)
		if len(res.Plan.Actions) > 0 || statusChanges {
			if sameInstant++; sameInstant > 200 {
				return nil, fmt.Errorf("the plan does not settle at +%s (phase %s)", formatDuration(now.Sub(start)), res.Plan.GetSummary().GetPhase())
			}
			lastChange, idle = *now, 0
			o := f.out
			if len(o.created)+len(o.deleted)+len(o.updatedInPlace)+len(o.lifecycle) > 0 {
				phase := res.Plan.GetSummary().GetPhase()
				if phase == "" {
					switch {
					case len(o.created) > 0:
						phase = "create"
					case len(o.deleted) > 0:
						phase = "delete"
					case len(o.updatedInPlace) > 0:
						phase = "update"
					default:
						phase = "lifecycle"
					}
				}
				r.steps = append(r.steps, step{At: now.Sub(start), Phase: phase, Created: o.created, Deleted: o.deleted,
					UpdatedInPlace: o.updatedInPlace, Lifecycle: o.lifecycle, Counts: f.counts(*now)})
			}
			peaks()
			continue
		}
		sameInstant = 0
		next, ok := f.nextTransition(*now)
		if d := res.RequeueAfter; d > 0 && (!ok || now.Add(d).Before(next)) {
			next, ok = now.Add(d), true
		}
		if !ok {
			break
		}
		if idle++; idle > 3 {
			if _, moving := f.nextTransition(*now); !moving {
				break // only timers that change nothing
			}
		}
		if next.Sub(start) > 24*time.Hour {
			return nil, fmt.Errorf("still changing after 24h")
		}
		*now = next
	}
	r.duration = lastChange.Sub(start)
	return last, nil
}

func strategy(cs *pb.CloneSet) string {
	u := cs.GetSpec().GetUpdateStrategy()
	ios := func(v *pb.IntOrString, unset string) string {
		switch x := v.GetValue().(type) {
		case *pb.IntOrString_IntValue:
			return fmt.Sprint(x.IntValue)
		case *pb.IntOrString_StrValue:
			return x.StrValue
		}
		return unset
	}
	t := u.GetType()
	if t == "" {
		t = "ReCreate"
	}
	s := fmt.Sprintf("%s, maxUnavailable %s, maxSurge %s, partition %s", t, ios(u.GetMaxUnavailable(), "20%"),
		ios(u.GetMaxSurge(), "0"), ios(u.GetPartition(), "0"))
	if u.GetPaused() {
		s += ", paused"
	}
	return s
}

// formatDuration prints d as clonesetctl does (absl's FormatDuration): "0", "500ms", "6s", "1m", "1m30.5s".
func formatDuration(d time.Duration) string {
	if d == 0 {
		return "0"
	}
	if d < time.Second {
		return fmt.Sprintf("%gms", float64(d)/float64(time.Millisecond))
	}
	out := ""
	if h := d / time.Hour; h > 0 {
		out += fmt.Sprintf("%dh", h)
		d -= h * time.Hour
	}
	if m := d / time.Minute; m > 0 {
		out += fmt.Sprintf("%dm", m)
		d -= m * time.Minute
	}
	if d > 0 {
		out += fmt.Sprintf("%gs", d.Seconds())
	}
	return out
}

func offset(d time.Duration) string {
	if d <= 0 {
		return "+0s"
	}
	return "+" + formatDuration(d.Truncate(100*time.Millisecond))
}

func printTable(w io.Writer, r *result, startDelay, readyAfter time.Duration, failNth int) {
	fmt.Fprintf(w, "CloneSet %s/%s\n", r.namespace, r.name)
	fmt.Fprintf(w, "Change:   %s\n", strings.Join(r.changes, ", "))
	fmt.Fprintf(w, "Strategy: %s\n", r.strategy)
	fmt.Fprintf(w, "Revision: %s -> %s\n", r.fromRevision, r.toRevision)
	fmt.Fprintf(w, "Model:    container start %s, ready %s later, container start %d of the rollout fails\n\n",
		formatDuration(startDelay), formatDuration(readyAfter), failNth)
	fmt.Fprintf(w, "%-8s %-16s %7s %7s %8s %11s %5s %7s %5s %7s  %s\n", "TIME", "PHASE", "CREATED", "DELETED",
		"IN-PLACE", "UNAVAILABLE", "SURGE", "UPDATED", "READY", "DESIRED", "PODS (+created -deleted ~in-place)")
	for _, s := range r.steps {
		var parts []string
		for _, n := range s.Created {
			parts = append(parts, "+"+n)
		}
		for _, n := range s.Deleted {
			parts = append(parts, "-"+n)
		}
		for _, n := range s.UpdatedInPlace {
			parts = append(parts, "~"+n)
		}
		if len(s.Lifecycle) == 1 {
			parts = append(parts, "("+s.Lifecycle[0]+")")
		} else if len(s.Lifecycle) > 1 {
			parts = append(parts, fmt.Sprintf("(lifecycle of %d pods)", len(s.Lifecycle)))
		}
		fmt.Fprintf(w, "%-8s %-16s %7d %7d %8d %11d %5d %7d %5d %7d  %s\n", offset(s.At), s.Phase, len(s.Created),
			len(s.Deleted), len(s.UpdatedInPlace), s.Counts.Unavailable, s.Counts.Surge, s.Counts.Updated,
			s.Counts.Ready, s.Counts.Desired, strings.Join(parts, " "))
	}
	if len(r.steps) == 0 {
		fmt.Fprintln(w, "(no pod changes)")
	}
	fmt.Fprintln(w)
	c := r.final
	switch r.outcome {
	case "complete":
		fmt.Fprintf(w, "Result:   complete in %s: %d/%d pods updated and available\n", formatDuration(r.duration), c.Updated, c.Desired)
	case "partition":
		fmt.Fprintf(w, "Result:   stops at the partition after %s: %d/%d pods updated\n", formatDuration(r.duration), c.Updated, c.Desired)
	default:
		fmt.Fprintf(w, "Result:   STALLS after %s: %d/%d updated, %d/%d available\n", formatDuration(r.duration),
			c.Updated, c.Desired, c.Available, c.Desired)
	}
	for _, why := range r.reasons {
		fmt.Fprintf(w, "          because %s\n", why)
	}
	fmt.Fprintf(w, "Peak:     %d unavailable, %d surge\n", r.peakUnavailable, r.peakSurge)
	for _, warning := range r.warnings {
		fmt.Fprintf(w, "Warning:  %s\n", warning)
	}
}

// printJSON prints the result with the keys of `clonesetctl simulate -o json`.
func printJSON(w io.Writer, r *result) error {
	steps := []map[string]any{}
	nonNil := func(s []string) []string {
		if s == nil {
			return []string{}
		}
		return s
	}
	for _, s := range r.steps {
		steps = append(steps, map[string]any{"atSeconds": s.At.Seconds(), "phase": s.Phase, "created": nonNil(s.Created),
			"deleted": nonNil(s.Deleted), "updatedInPlace": nonNil(s.UpdatedInPlace), "lifecycle": nonNil(s.Lifecycle),
			"counts": s.Counts})
	}
	out := map[string]any{"name": r.name, "namespace": r.namespace, "changes": nonNil(r.changes), "strategy": r.strategy,
		"fromRevision": r.fromRevision, "toRevision": r.toRevision, "steps": steps, "outcome": r.outcome,
		"finished": r.outcome == "complete", "reasons": nonNil(r.reasons), "warnings": nonNil(r.warnings),
		"durationSeconds": r.duration.Seconds(), "peakUnavailable": r.peakUnavailable, "peakSurge": r.peakSurge,
		"final": r.final}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
