// The node groups of an `aws` GPU cluster: their shape and the rule they follow, shared by the API (which
// stores and sends them), the cluster workflow's contract and the gpu-cluster stack (which builds them).

/** The EC2 instance type of each GPU type's node group: the smallest machine; the 80GB parts come only as 8-GPU machines. */
export const INSTANCE_TYPES: Readonly<Record<string, string>> = {
  'nvidia-h100-80gb': 'p5.48xlarge',
  'nvidia-a100-80gb': 'p4de.24xlarge',
  'nvidia-a10g': 'g5.xlarge',
  'nvidia-l4': 'g6.xlarge',
  'nvidia-t4': 'g4dn.xlarge',
};

/** GPUs on one machine of each instance type above. */
export const GPUS_PER_INSTANCE: Readonly<Record<string, number>> = {
  'p5.48xlarge': 8,
  'p4de.24xlarge': 8,
  'g5.xlarge': 1,
  'g6.xlarge': 1,
  'g4dn.xlarge': 1,
};

/** GPUs on one node of a GPU type's node group; 0 for a type with no instance type. */
export const nodeGroupGpusPerNode = (gpuType: string): number => GPUS_PER_INSTANCE[INSTANCE_TYPES[gpuType] ?? ''] ?? 0;

/** One managed node group per GPU type. `Size` lets the stack take the sizes as Pulumi inputs. */
export interface NodeGroup<Size = number> {
  /** GPU catalog id; picks the instance type and becomes the nodes' GPU_TYPE_LABEL. */
  readonly gpuType: string;
  /** Fewest nodes; 0 lets an idle GPU type cost nothing. */
  readonly minSize: Size;
  /** Nodes to start with. */
  readonly desiredSize: Size;
  /** Most nodes. */
  readonly maxSize: Size;
}

/** What is wrong with a list of node groups, `field` named as the API names it (`nodeGroups.0.gpuType`). */
export interface NodeGroupProblem {
  readonly field: string;
  readonly message: string;
}

/** At least one group, minSize <= desiredSize <= maxSize (where the sizes are known), one group per GPU type. */
export function nodeGroupsProblem(groups: readonly NodeGroup<unknown>[]): NodeGroupProblem | undefined {
  if (groups.length === 0) return { field: 'nodeGroups', message: 'a GPU cluster needs at least one node group' };
  const seen = new Set<string>();
  for (const [i, { gpuType, minSize, desiredSize, maxSize }] of groups.entries()) {
    if (typeof minSize === 'number' && typeof desiredSize === 'number' && typeof maxSize === 'number' && !(minSize <= desiredSize && desiredSize <= maxSize)) {
      return { field: `nodeGroups.${i}`, message: 'must satisfy minSize <= desiredSize <= maxSize' };
    }
    if (seen.has(gpuType)) return { field: `nodeGroups.${i}.gpuType`, message: `GPU type "${gpuType}" has more than one node group` };
    seen.add(gpuType);
  }
  return undefined;
}
