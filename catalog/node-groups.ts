// The node groups of an `aws` GPU cluster: their shape and the rule they follow, shared by the API (which
// stores and sends them), the cluster workflow's contract and the gpu-cluster stack (which builds them).

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
