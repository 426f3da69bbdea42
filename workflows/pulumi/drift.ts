// Drift: a field a stack declares whose live value someone else changed (`kubectl scale`, `kubectl edit`, another
// controller). An `up` of a stack that holds resources refreshes first (automation.ts); each refresh step carries its state
// before and after, and a declared field (one in the resource's inputs) whose value moved is drift. The up that
// follows puts it back (stacks/kiln-objects.ts), and the operation reports it.
import type { EngineEvent } from '@pulumi/pulumi/automation/index.js';

export interface Drift {
  /** The resource's type and name in the stack, e.g. `kubernetes:apps/v1:Deployment chat-deployment`. */
  readonly resource: string;
  /** The field, as a dotted path from the object's root, e.g. `spec.replicas`. */
  readonly path: string;
  /** What the stack had recorded, and what the refresh found. Secret values never appear: Pulumi masks them. */
  readonly recorded: unknown;
  readonly live: unknown;
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** Drift found by one engine event: the outputs event of a refresh step. */
export function driftOf(event: EngineEvent): Drift[] {
  const step = event.resOutputsEvent?.metadata;
  if (!step || step.op !== 'refresh' || !step.old || !step.new) return [];
  const resource = `${step.type} ${step.urn.split('::').at(-1)}`;
  const found: Drift[] = [];
  const walk = (declared: Json, recorded: Json | undefined, live: Json | undefined, path: string[]) => {
    if (isObject(declared)) {
      for (const key of Object.keys(declared)) {
        walk(declared[key]!, isObject(recorded) ? recorded[key] : undefined, isObject(live) ? live[key] : undefined, [...path, key]);
      }
      return;
    }
    if (JSON.stringify(recorded) !== JSON.stringify(live)) found.push({ resource, path: path.join('.'), recorded, live });
  };
  walk(step.old.inputs as Json, step.old.outputs as Json, step.new.outputs as Json, []);
  return found;
}

const isObject = (value: Json | undefined): value is { [key: string]: Json } => typeof value === 'object' && value !== null && !Array.isArray(value);

/** One line per drifted field, for logs and the Temporal UI: `kubernetes:apps/v1:Deployment chat-deployment spec.replicas: 3 -> 5`. */
export function describeDrift(drift: Drift): string {
  return `${drift.resource} ${drift.path}: ${JSON.stringify(drift.recorded)} -> ${JSON.stringify(drift.live)}`;
}
