// A pool's arguments: a local cluster's node pool (catalog/node-pools.ts, the rule the API checks too) whose name
// defaults to the component's. Plain numbers: each node is a child resource, so the count must be known.
import { nodePoolProblem, type NodePool } from '../../catalog/node-pools.ts';
import { StackArgsError } from '../args-error.ts';

export interface LocalGpuPoolArgs extends Omit<NodePool, 'name'> {
  /** Names the nodes `<name>-0` to `<name>-<desiredSize - 1>`; the component's name when absent. */
  readonly name?: string;
}

/** The pool's name once every rule holds; StackArgsError naming the argument otherwise. */
export function checkPool(name: string, args: LocalGpuPoolArgs): string {
  const pool = args.name ?? name;
  const problem = nodePoolProblem({ ...args, name: pool });
  if (problem) throw new StackArgsError(problem.message);
  return pool;
}
