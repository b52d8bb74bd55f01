#!/usr/bin/env python3
"""Runs a client's rollout example and `clonesetctl simulate` on the same spec and checks that they roll out the
same way: the same steps (time, phase, counts) changing the same instances, and the same outcome.

    compare_timeline.py --spec tests/vectors/planner/v1/examples/<spec>.json --clonesetctl build/bin/clonesetctl \\
        -- EXAMPLE_COMMAND...

The spec file: {"manifest": {CloneSet, apps.kruise.io/v1alpha1}, "set": ["image=...", "partition=5", ...],
"failNth": N, "simulate": {"failRate": R, "seed": S}}. The example gets `-f MANIFEST --set ... --fail-nth N -o json`
appended (its flags are those of the Go and TypeScript examples); simulate gets `-f MANIFEST --set ... --fail-rate R
--seed S -o json`, where R and S make exactly the N-th container start of the rollout fail.

Steps are compared with every instance name replaced by its rank in name order among the instances the timeline
names (a readable diff), then by name: every example derives the request's random seed from its state as the
executor does (the FNV-1a PlanSeed of planapi/request.h over the resourceVersions its fleet model bumps as
simulate's does), so the planner draws the same instance names, and "the same instances" means the same names.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile


def run(cmd, what):
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    except FileNotFoundError as e:
        sys.exit(f"{what}: cannot run {cmd[0]}: {e}")
    except subprocess.TimeoutExpired:
        sys.exit(f"{what}: no answer within 300 s: {' '.join(cmd)}")
    if p.returncode != 0:
        sys.exit(f"{what} failed (exit {p.returncode}): {' '.join(cmd)}\n{p.stderr}{p.stdout}")
    try:
        return json.loads(p.stdout)
    except json.JSONDecodeError as e:
        sys.exit(f"{what}: output is not JSON ({e}):\n{p.stdout}")


def canonical(timeline):
    """The timeline with every instance name replaced by #rank (name order among the names it mentions)."""
    names = set()
    for s in timeline["steps"]:
        names.update(s["created"] + s["deleted"] + s["updatedInPlace"])
        names.update(line.split(":", 1)[0] for line in s["lifecycle"])
    rank = {n: f"#{i + 1}" for i, n in enumerate(sorted(names))}
    steps = []
    for s in timeline["steps"]:
        steps.append({
            "atSeconds": s["atSeconds"], "phase": s["phase"],
            "created": [rank[n] for n in s["created"]], "deleted": [rank[n] for n in s["deleted"]],
            "updatedInPlace": [rank[n] for n in s["updatedInPlace"]],
            "lifecycle": sorted(rank[l.split(":", 1)[0]] + ":" + l.split(":", 1)[1] for l in s["lifecycle"]),
            "counts": s["counts"],
        })
    keys = ("outcome", "final", "peakUnavailable", "peakSurge", "durationSeconds", "changes", "strategy",
            "fromRevision", "toRevision")
    return {"steps": steps, **{k: timeline.get(k) for k in keys}}


def show(step):
    who = " ".join(["+" + n for n in step["created"]] + ["-" + n for n in step["deleted"]] +
                   ["~" + n for n in step["updatedInPlace"]])
    return f"+{step['atSeconds']}s {step['phase']} {who} {step['counts']}"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--spec", required=True)
    ap.add_argument("--clonesetctl", required=True)
    ap.add_argument("example", nargs="+", help="the example's command (after --)")
    args = ap.parse_args()
    with open(args.spec) as f:
        spec = json.load(f)
    for key in ("manifest", "set", "failNth", "simulate"):
        if key not in spec:
            sys.exit(f"{args.spec}: missing {key!r}")
    with tempfile.TemporaryDirectory() as tmp:
        manifest = os.path.join(tmp, "manifest.json")
        with open(manifest, "w") as f:
            json.dump(spec["manifest"], f)
        sets = [a for s in spec["set"] for a in ("--set", s)]
        want = run([args.clonesetctl, "simulate", "-f", manifest, *sets,
                    "--fail-rate", str(spec["simulate"]["failRate"]), "--seed", str(spec["simulate"]["seed"]),
                    "-o", "json"], "clonesetctl simulate")
        got = run([*args.example, "-f", manifest, *sets, "--fail-nth", str(spec["failNth"]), "-o", "json"],
                  "the example")
    w, g = canonical(want), canonical(got)
    print(f"clonesetctl simulate: {len(w['steps'])} steps, {w['outcome']}; example: {len(g['steps'])} steps, "
          f"{g['outcome']}")
    for s in g["steps"]:
        print("  " + show(s))
    problems = []
    for i in range(max(len(w["steps"]), len(g["steps"]))):
        ws = w["steps"][i] if i < len(w["steps"]) else None
        gs = g["steps"][i] if i < len(g["steps"]) else None
        if ws != gs:
            problems.append(f"step {i + 1}: simulate {show(ws) if ws else '(none)'}\n"
                            f"        example  {show(gs) if gs else '(none)'}")
    if not problems:
        for i, (ws, gs) in enumerate(zip(want["steps"], got["steps"])):
            for key in ("created", "deleted", "updatedInPlace"):
                if ws[key] != gs[key]:
                    problems.append(f"step {i + 1}: the same ranks but other instances ({key}): simulate {ws[key]}, "
                                    f"example {gs[key]} (the example's random seed is not the executor's PlanSeed "
                                    "of the same state)")
    for key in ("outcome", "final", "peakUnavailable", "peakSurge", "durationSeconds", "changes", "strategy",
                "fromRevision", "toRevision"):
        if w[key] != g[key]:
            problems.append(f"{key}: simulate {w[key]!r}, example {g[key]!r}")
    if not w["steps"]:
        problems.append("simulate's timeline is empty: the spec rolls nothing out")
    if problems:
        print("DIFFERENT:\n" + "\n".join(problems))
        return 1
    print("same batches, same outcome")
    return 0


if __name__ == "__main__":
    sys.exit(main())
