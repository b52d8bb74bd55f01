// The CloneSet manifest (JSON, apps.kruise.io/v1alpha1) as a planner message, and the --set changes of
// `clonesetctl simulate` applied to it. Only the fields this example's fleet can honour are read; any other field
// of spec is an error naming it, rather than silently ignored.
import { create } from "@bufbuild/protobuf";
import { CloneSetSchema, IntOrStringSchema, LabelSelectorSchema, UpdateStrategySchema } from "../src/index";
import type { CloneSet, IntOrString, LabelSelector, UpdateStrategy } from "../src/index";
import { sortedJson } from "./fleet";

type Json = Record<string, unknown>;

function object(m: Json, key: string): Json {
  const o = m[key];
  if (o !== null && typeof o === "object" && !Array.isArray(o)) return o as Json;
  return (m[key] = {});
}

const show = (v: unknown) => (v === undefined ? "unset" : typeof v === "string" ? v : JSON.stringify(v));

// Applies "key=value" changes (image, image.<container>, replicas, partition, maxUnavailable, maxSurge, paused,
// type, minReadySeconds) to the manifest document; returns "key: old -> new" lines.
export function applySets(doc: Json, sets: string[]): string[] {
  const changes: string[] = [];
  const spec = object(doc, "spec");
  for (const set of sets) {
    const i = set.indexOf("=");
    const key = i < 0 ? set : set.slice(0, i);
    const value = i < 0 ? "" : set.slice(i + 1);
    if (i < 0 || value === "") throw new Error(`--set ${set}: expected key=value`);
    let parent: Json | undefined;
    let field = key;
    let newValue: unknown = value;
    if (key === "image" || key.startsWith("image.")) {
      const containers = object(object(spec, "template"), "spec").containers as Json[] | undefined;
      if (!containers?.length) throw new Error(`--set ${key}: spec.template.spec.containers is empty`);
      const want = key.slice("image.".length);
      parent = key === "image" ? containers[0] : containers.find((c) => c.name === want);
      if (!parent) throw new Error(`--set ${key}: no container named ${want}`);
      field = "image";
    } else if (key === "replicas" || key === "minReadySeconds") {
      if (!/^\d+$/.test(value)) throw new Error(`--set ${key}: expected a non-negative integer`);
      parent = spec;
      newValue = Number(value);
    } else if (key === "partition" || key === "maxUnavailable" || key === "maxSurge") {
      parent = object(spec, "updateStrategy");
      if (/^-?\d+$/.test(value)) newValue = Number(value);
    } else if (key === "paused") {
      if (value !== "true" && value !== "false") throw new Error("--set paused: expected true or false");
      parent = object(spec, "updateStrategy");
      newValue = value === "true";
    } else if (key === "type") {
      parent = object(spec, "updateStrategy");
    } else {
      throw new Error(`--set ${key}: unknown key (known: image, image.<container>, replicas, partition, ` +
        "maxUnavailable, maxSurge, paused, type, minReadySeconds)");
    }
    changes.push(`${key}: ${show(parent[field])} -> ${show(newValue)}`);
    parent[field] = newValue;
  }
  return changes;
}

function integer(v: unknown, field: string): number {
  if (typeof v !== "number" || !Number.isInteger(v) || Math.abs(v) > 2 ** 31 - 1) {
    throw new Error(`${field}: want an integer, got ${JSON.stringify(v)}`);
  }
  return v;
}

function intOrString(v: unknown, field: string): IntOrString {
  if (typeof v === "number") return create(IntOrStringSchema, { value: { case: "intValue", value: integer(v, field) } });
  if (typeof v === "string") return create(IntOrStringSchema, { value: { case: "strValue", value: v } });
  throw new Error(`${field}: want an integer or a percentage, got ${JSON.stringify(v)}`);
}

function selector(v: unknown): LabelSelector {
  if (v === null || typeof v !== "object") throw new Error("spec.selector: want an object");
  const m = v as Json;
  return create(LabelSelectorSchema, {
    matchLabels: (m.matchLabels ?? {}) as Record<string, string>,
    matchExpressions: ((m.matchExpressions ?? []) as Json[]).map((e) => ({
      key: e.key as string, operator: e.operator as string, values: (e.values ?? []) as string[],
    })),
  });
}

function updateStrategy(v: unknown): UpdateStrategy {
  if (v === null || typeof v !== "object") throw new Error("spec.updateStrategy: want an object");
  const u = create(UpdateStrategySchema);
  const m = v as Json;
  for (const k of Object.keys(m).sort()) {
    const field = `spec.updateStrategy.${k}`;
    switch (k) {
      case "type": u.type = String(m[k]); break;
      case "partition": u.partition = intOrString(m[k], field); break;
      case "maxUnavailable": u.maxUnavailable = intOrString(m[k], field); break;
      case "maxSurge": u.maxSurge = intOrString(m[k], field); break;
      case "paused": u.paused = m[k] === true; break;
      default: throw new Error(`${field}: not supported by this example's fleet`);
    }
  }
  return u;
}

// The manifest as the planner's CloneSet message.
export function cloneSetFromManifest(doc: Json): CloneSet {
  if (doc.kind !== "CloneSet") throw new Error(`kind: want CloneSet, got ${JSON.stringify(doc.kind)}`);
  if (doc.apiVersion !== "apps.kruise.io/v1alpha1") {
    throw new Error(`apiVersion: this example reads apps.kruise.io/v1alpha1, got ${JSON.stringify(doc.apiVersion)}`);
  }
  const meta = object(doc, "metadata");
  if (!meta.name) throw new Error("metadata.name: required");
  const cs = create(CloneSetSchema, {
    apiVersion: doc.apiVersion,
    metadata: { name: String(meta.name), namespace: meta.namespace ? String(meta.namespace) : "default" },
    spec: {},
    status: {},
  });
  const spec = object(doc, "spec");
  for (const key of Object.keys(spec).sort()) {
    const v = spec[key];
    switch (key) {
      case "replicas": cs.spec!.replicas = integer(v, "spec.replicas"); break;
      case "minReadySeconds": cs.spec!.minReadySeconds = integer(v, "spec.minReadySeconds"); break;
      case "revisionHistoryLimit": cs.spec!.revisionHistoryLimit = integer(v, "spec.revisionHistoryLimit"); break;
      case "selector": cs.spec!.selector = selector(v); break;
      case "template": cs.spec!.templateJson = sortedJson(v); break; // compact, keys sorted, as the executor sends it
      case "updateStrategy": cs.spec!.updateStrategy = updateStrategy(v); break;
      default: throw new Error(`spec.${key}: not supported by this example's fleet`);
    }
  }
  return cs;
}
