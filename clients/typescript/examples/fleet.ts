// The simulated fleet: instances of our own, kept in memory, that the planner sees as a CloneSet's pods. Its model
// of an instance is the one `clonesetctl simulate` uses (clonesetctl/sim_cluster.h), so that the same spec
// rolls out in the same batches: an instance is placed at once (round-robin over 3 nodes), its container runs
// `startDelayMs` after it is created or its image changes, and is ready `readyAfterMs` later; an instance is Ready
// when its container is ready and every readiness gate's condition is True. One chosen container start fails:
// that container runs but never becomes ready.
import { create } from "@bufbuild/protobuf";
import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import {
  ConditionSchema, ConflictError, ContainerSchema, ContainerStatusSchema, ControllerRevisionSchema, ObjectMetaSchema,
  OwnerReferenceSchema, PodSchema, planRequest,
} from "../src/index";
import type {
  Action, CloneSet, CloneSetSpec, CloneSetStatus, Condition, ControllerRevision, CreatePod, CreateRevision, DeletePod,
  Fleet, PatchPod, PatchPodStatus, PlanRequest, Pod,
} from "../src/index";

const REVISION_LABEL = "controller-revision-hash";
const LIFECYCLE_LABEL = "lifecycle.apps.kruise.io/state";
const NODES = 3;

interface Kubelet {
  images: Map<string, string>; // container -> the image the current attempt runs
  runningAt: number; // ms since the epoch
  readyAt: number;
  failing: boolean;
}

// What one plan did to the fleet, for the timeline.
export interface Applied {
  created: string[];
  deleted: string[];
  updatedInPlace: string[];
  lifecycle: string[];
}

export interface Counts {
  desired: number;
  pods: number;
  ready: number;
  available: number;
  updated: number;
  unavailable: number;
  surge: number;
}

// JSON with object keys sorted and no spaces: the form the executor sends templates and revision data in.
export function sortedJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(sortedJson).join(",")}]`;
  if (v !== null && typeof v === "object") {
    const o = v as Record<string, unknown>;
    return `{${Object.keys(o).sort().map((k) => `${JSON.stringify(k)}:${sortedJson(o[k])}`).join(",")}}`;
  }
  return JSON.stringify(v);
}

function sortedKeys<V>(m: Map<string, V>): string[] {
  return [...m.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

function condition(p: Pod, type: string): Condition | undefined {
  return p.conditions.find((c) => c.type === type);
}

// Sets condition `type`; its transition time moves only when the status changes, as the kubelet does.
function setCondition(p: Pod, type: string, value: boolean, now: number): boolean {
  const status = value ? "True" : "False";
  const c = condition(p, type);
  if (c) {
    if (c.status === status) return false;
    c.status = status;
    c.lastTransitionTime = timestampFromDate(new Date(now));
    return true;
  }
  p.conditions.push(create(ConditionSchema, { type, status, lastTransitionTime: timestampFromDate(new Date(now)) }));
  return true;
}

const dash = (s: string | undefined) => (s ? s : "-");

export class SimFleet implements Fleet {
  failNth = 0; // the failNth-th container start (counted from 1 once countStarts is on) fails; 0: none
  countStarts = false;
  out: Applied = { created: [], deleted: [], updatedInPlace: [], lifecycle: [] };
  private starts = 0;
  private version = 100;
  private uids = 0;
  private nextNode = 0;
  private readonly pods = new Map<string, Pod>();
  private readonly kubelets = new Map<string, Kubelet>();
  private readonly revisions = new Map<string, ControllerRevision>();
  private ownStatus = new Map<string, string>(); // versions our own status writes produced in the current plan
  private now = 0;

  constructor(readonly cs: CloneSet, private readonly startDelayMs: number, private readonly readyAfterMs: number, now: number) {
    const meta = cs.metadata ?? (cs.metadata = create(ObjectMetaSchema));
    // The uid clonesetctl simulate gives its CloneSet: with the same resourceVersions (every write and every
    // instance change takes the next one, as there) the states get the same random seeds, so the planner draws the
    // same instance names.
    meta.uid = "sim-cloneset-uid";
    meta.generation = 1n;
    meta.resourceVersion = this.nextVersion();
    meta.creationTimestamp = timestampFromDate(new Date(now));
  }

  private nextVersion(): string {
    return String(++this.version);
  }

  // Replaces the CloneSet's spec (a new generation), as a user's edit does.
  setSpec(spec: CloneSetSpec): void {
    this.cs.spec = spec;
    this.cs.metadata!.generation++;
    this.cs.metadata!.resourceVersion = this.nextVersion();
  }

  // Fleet: the CloneSet, its pods (sorted by name, with the random seed of the state: planRequest) and its
  // revisions.
  snapshot(now: Date): PlanRequest {
    this.now = now.getTime();
    this.ownStatus = new Map();
    const request = planRequest(this.cs, [...this.pods.values()], sortedKeys(this.revisions).map((n) => this.revisions.get(n)!), now);
    request.acceptInPlaceBatches = true; // the loop expands them
    return request;
  }

  // Fleet.
  writeStatus(status: CloneSetStatus): void {
    this.cs.status = status;
  }

  // Fleet: one action changes the fleet; a failed precondition is a conflict.
  apply(a: Action): void {
    switch (a.kind.case) {
      case "createRevision": return this.createRevision(a.kind.value);
      case "updateRevision": {
        const u = a.kind.value;
        const r = this.revisions.get(u.name);
        if (!r) throw new Error(`revision ${u.name} not found`);
        if (u.resourceVersion !== "" && u.resourceVersion !== r.metadata!.resourceVersion) {
          throw new ConflictError(`revision ${u.name} has been modified`);
        }
        if (u.revision !== 0n) r.revision = u.revision;
        Object.assign(r.metadata!.labels, u.setLabels);
        Object.assign(r.metadata!.annotations, u.setAnnotations);
        r.metadata!.resourceVersion = this.nextVersion();
        return;
      }
      case "deleteRevision": this.revisions.delete(a.kind.value.name); return;
      case "createPod": return this.createPod(a.kind.value);
      case "deletePod": return this.deletePod(a.kind.value);
      case "patchPod": return this.patchPod(a.kind.value);
      case "patchPodStatus": return this.patchPodStatus(a.kind.value);
      case "deletePvc": case "createPvc": case "updatePvcOwner": case "expandPvc": case "createImagePullJob": case "deleteImagePullJob":
        return; // the fleet has no volumes and no image pre-download
      default:
        throw new Error(`action ${a.kind.case} is not supported by this fleet`);
    }
  }

  private createRevision(c: CreateRevision): void {
    const doc = JSON.parse(c.revisionJson);
    const name: string = doc.metadata?.name ?? "";
    if (this.revisions.has(name)) return; // AlreadyExists counts as done
    this.revisions.set(name, create(ControllerRevisionSchema, {
      metadata: {
        name, namespace: doc.metadata?.namespace ?? "", uid: `rev-${++this.uids}`, resourceVersion: this.nextVersion(),
        labels: doc.metadata?.labels ?? {}, annotations: doc.metadata?.annotations ?? {},
        creationTimestamp: timestampFromDate(new Date(this.now)),
      },
      revision: BigInt(doc.revision ?? 0),
      dataJson: sortedJson(doc.data ?? {}), // compact, keys sorted: the form the planner compares
    }));
  }

  private createPod(c: CreatePod): void {
    const doc = JSON.parse(c.podJson);
    const m = doc.metadata ?? {};
    const name: string = m.name ?? "";
    if (this.pods.has(name)) return; // left over from an earlier attempt: reused
    this.nextNode++;
    const pod = create(PodSchema, {
      metadata: {
        name, namespace: m.namespace ?? "", uid: `pod-uid-${++this.uids}`, resourceVersion: this.nextVersion(),
        labels: m.labels ?? {}, annotations: m.annotations ?? {}, finalizers: m.finalizers ?? [],
        creationTimestamp: timestampFromDate(new Date(this.now)),
        ownerReferences: (m.ownerReferences ?? []).map((o: Record<string, unknown>) => create(OwnerReferenceSchema, {
          apiVersion: o.apiVersion as string, kind: o.kind as string, name: o.name as string, uid: o.uid as string,
          controller: Boolean(o.controller), blockOwnerDeletion: Boolean(o.blockOwnerDeletion),
        })),
      },
      nodeName: `node-${((this.nextNode - 1) % NODES) + 1}`,
      phase: "Pending",
      containers: (doc.spec?.containers ?? []).map((x: { name: string; image: string }) =>
        create(ContainerSchema, { name: x.name, image: x.image })),
      readinessGates: (doc.spec?.readinessGates ?? []).map((g: { conditionType: string }) => g.conditionType),
    });
    setCondition(pod, "PodScheduled", true, this.now);
    const k: Kubelet = { images: new Map(), runningAt: 0, readyAt: 0, failing: false };
    this.startContainers(pod, k);
    this.pods.set(name, pod);
    this.kubelets.set(name, k);
    this.out.created.push(name);
  }

  private startContainers(pod: Pod, k: Kubelet): void {
    k.images = new Map(pod.containers.map((c) => [c.name, c.image]));
    k.runningAt = this.now + this.startDelayMs;
    k.readyAt = k.runningAt + this.readyAfterMs;
    k.failing = false;
    if (this.countStarts) k.failing = ++this.starts === this.failNth;
  }

  private pod(name: string, uid: string): Pod {
    const p = this.pods.get(name);
    if (!p) throw new Error(`pod ${name} not found`);
    if (uid !== "" && uid !== p.metadata!.uid) throw new ConflictError(`pod ${name}: uid precondition failed`);
    return p;
  }

  private patchPod(patch: PatchPod): void {
    const p = this.pod(patch.name, patch.uid);
    const m = p.metadata!;
    if (patch.resourceVersion !== "" && patch.resourceVersion !== m.resourceVersion &&
        this.ownStatus.get(patch.name) !== m.resourceVersion) {
      throw new ConflictError(`pod ${patch.name} has been modified`);
    }
    const oldRevision = m.labels[REVISION_LABEL];
    const oldState = m.labels[LIFECYCLE_LABEL];
    Object.assign(m.labels, patch.setLabels);
    for (const k of patch.removeLabels) delete m.labels[k];
    Object.assign(m.annotations, patch.setAnnotations);
    for (const k of patch.removeAnnotations) delete m.annotations[k];
    for (const f of patch.addFinalizers) if (!m.finalizers.includes(f)) m.finalizers.push(f);
    m.finalizers = m.finalizers.filter((f) => !patch.removeFinalizers.includes(f));
    for (const c of p.containers) {
      const image = patch.containerImages[c.name];
      if (image !== undefined) c.image = image;
    }
    m.ownerReferences = m.ownerReferences.filter((o) => !patch.removeOwnerUids.includes(o.uid));
    m.resourceVersion = this.nextVersion();
    if (oldRevision && m.labels[REVISION_LABEL] !== oldRevision) this.out.updatedInPlace.push(patch.name);
    const newState = m.labels[LIFECYCLE_LABEL];
    if (newState !== oldState) this.out.lifecycle.push(`${patch.name}: ${dash(oldState)} -> ${dash(newState)}`);
  }

  private patchPodStatus(patch: PatchPodStatus): void {
    const p = this.pod(patch.name, patch.uid);
    if (patch.resourceVersion !== "" && patch.resourceVersion !== p.metadata!.resourceVersion) {
      throw new ConflictError(`pod ${patch.name} status has been modified`);
    }
    for (const set of patch.setConditions) {
      const i = p.conditions.findIndex((c) => c.type === set.type);
      if (i >= 0) p.conditions[i] = set;
      else p.conditions.push(set);
    }
    p.metadata!.resourceVersion = this.nextVersion();
    this.ownStatus.set(patch.name, p.metadata!.resourceVersion);
  }

  private deletePod(d: DeletePod): void {
    const p = this.pods.get(d.name);
    if (!p) return; // gone already: done
    if (d.uid !== "" && d.uid !== p.metadata!.uid) throw new ConflictError(`pod ${d.name}: uid precondition failed`);
    this.out.deleted.push(d.name);
    if (!p.metadata!.deletionTimestamp) {
      p.metadata!.deletionTimestamp = timestampFromDate(new Date(this.now));
      p.metadata!.resourceVersion = this.nextVersion();
    }
    if (p.metadata!.finalizers.length === 0) {
      this.pods.delete(d.name);
      this.kubelets.delete(d.name);
    }
  }

  // Runs every instance's container up to `now`; true when any instance changed.
  advance(now: number): boolean {
    this.now = now;
    let changed = false;
    for (const name of sortedKeys(this.pods)) {
      const p = this.pods.get(name)!;
      if (p.metadata!.deletionTimestamp) {
        if (p.metadata!.finalizers.length === 0) {
          this.pods.delete(name);
          this.kubelets.delete(name);
          changed = true;
        }
        continue;
      }
      if (this.step(p, this.kubelets.get(name)!, now)) {
        p.metadata!.resourceVersion = this.nextVersion();
        changed = true;
      }
    }
    return changed;
  }

  private step(p: Pod, k: Kubelet, now: number): boolean {
    let changed = false;
    const restart = p.containers.some((c) => k.images.get(c.name) !== c.image);
    if (restart && now >= k.runningAt) {
      for (const cs of p.containerStatuses) {
        const c = p.containers.find((x) => x.name === cs.name);
        if (c && k.images.get(c.name) !== c.image) {
          cs.restartCount++;
          cs.ready = false;
        }
      }
      this.startContainers(p, k);
      changed = true;
    }
    const running = now >= k.runningAt;
    if (running) {
      if (p.phase !== "Running") {
        p.phase = "Running";
        changed = true;
      }
      for (const c of p.containers) {
        let status = p.containerStatuses.find((cs) => cs.name === c.name);
        if (!status) {
          status = create(ContainerStatusSchema, { name: c.name });
          p.containerStatuses.push(status);
          changed = true;
        }
        const image = k.images.get(c.name) ?? "";
        if (status.image !== image) {
          status.image = image;
          status.imageId = `fleet://${image}`;
          status.containerId = `fleet://${p.metadata!.uid}/${c.name}/${status.restartCount}`;
          changed = true;
        }
        const ready = now >= k.readyAt && !k.failing;
        if (status.ready !== ready) {
          status.ready = ready;
          changed = true;
        }
      }
    }
    let containersReady = p.containerStatuses.length === p.containers.length && running;
    for (const cs of p.containerStatuses) containersReady &&= cs.ready;
    changed = setCondition(p, "ContainersReady", containersReady, now) || changed;
    let ready = containersReady;
    for (const gate of p.readinessGates) ready &&= condition(p, gate)?.status === "True";
    return setCondition(p, "Ready", ready, now) || changed;
  }

  // The earliest moment after `now` at which an instance changes by itself; undefined when none will.
  nextTransition(now: number): number | undefined {
    let next: number | undefined;
    const consider = (t: number) => { if (t > now && (next === undefined || t < next)) next = t; };
    const minReady = (this.cs.spec?.minReadySeconds ?? 0) * 1000;
    for (const [name, p] of this.pods) {
      const k = this.kubelets.get(name);
      if (p.metadata!.deletionTimestamp || !k) continue;
      consider(k.runningAt);
      if (!k.failing) consider(k.readyAt);
      const c = condition(p, "Ready");
      if (minReady > 0 && c?.status === "True" && c.lastTransitionTime) {
        consider(timestampDate(c.lastTransitionTime).getTime() + minReady + 1);
      }
    }
    return next;
  }

  counts(now: number): Counts {
    const c: Counts = { desired: this.cs.spec?.replicas ?? 1, pods: 0, ready: 0, available: 0, updated: 0, unavailable: 0, surge: 0 };
    const minReady = (this.cs.spec?.minReadySeconds ?? 0) * 1000;
    const rev = this.cs.status?.updateRevision ?? "";
    for (const p of this.pods.values()) {
      if (p.metadata!.deletionTimestamp || p.phase === "Succeeded" || p.phase === "Failed") continue;
      c.pods++;
      const r = condition(p, "Ready");
      if (r?.status === "True") {
        c.ready++;
        if (minReady === 0 || (r.lastTransitionTime && timestampDate(r.lastTransitionTime).getTime() + minReady < now)) c.available++;
      }
      if (rev !== "" && p.metadata!.labels[REVISION_LABEL] === rev) c.updated++;
    }
    c.unavailable = Math.max(c.desired - c.available, 0);
    c.surge = Math.max(c.pods - c.desired, 0);
    return c;
  }

  failedStarts(): number {
    let n = 0;
    for (const k of this.kubelets.values()) if (k.failing) n++;
    return n;
  }
}
