// A pool's arguments: an EKS node group's shape (catalog/node-groups.ts) with a name and the GPUs per machine, which
// on EKS the instance type decides. Plain numbers: each node is a child resource, so the count must be known.
import { GPU_TYPE_IDS, findGpuType } from '../../catalog/gpu-types.ts';
import { NAME_PATTERN } from '../../catalog/deployment-rules.ts';
import type { NodeGroup } from '../../catalog/node-groups.ts';
import { StackArgsError } from '../args-error.ts';

export interface LocalGpuPoolArgs extends NodeGroup {
  /** Names the nodes `<name>-0` to `<name>-<desiredSize - 1>`; the component's name when absent. */
  readonly name?: string;
  /** GPUs each node advertises as `nvidia.com/gpu`. */
  readonly gpusPerNode: number;
}

/** A node's name is also its `kubernetes.io/hostname` label, whose values are at most 63 characters. */
const MAX_NODE_NAME_LENGTH = 63;

/** The pool's name once every rule holds; StackArgsError naming the argument otherwise. */
export function checkPool(name: string, args: LocalGpuPoolArgs): string {
  const { gpuType, gpusPerNode, minSize, desiredSize, maxSize } = args;
  const count = (field: string, value: number, least: number) => {
    if (!Number.isInteger(value) || value < least) throw new StackArgsError(`${field} must be a whole number, ${least} or more, got ${value}`);
  };
  count('minSize', minSize, 0);
  count('desiredSize', desiredSize, 0);
  count('maxSize', maxSize, 1);
  if (!(minSize <= desiredSize && desiredSize <= maxSize)) {
    throw new StackArgsError(`must satisfy minSize <= desiredSize <= maxSize, got ${minSize} <= ${desiredSize} <= ${maxSize}`);
  }
  count('gpusPerNode', gpusPerNode, 1);
  if (!findGpuType(gpuType)) throw new StackArgsError(`gpuType "${gpuType}" is not in the GPU catalog: one of ${GPU_TYPE_IDS.join(', ')}`);
  const pool = args.name ?? name;
  const lastNode = `${pool}-${maxSize - 1}`;
  if (!NAME_PATTERN.test(pool) || lastNode.length > MAX_NODE_NAME_LENGTH) {
    throw new StackArgsError(`name "${pool}" must be a DNS label (lowercase letters, digits and '-', starting with a letter) short enough that node "${lastNode}" has at most ${MAX_NODE_NAME_LENGTH} characters`);
  }
  return pool;
}
