// A pool of simulated GPU machines on Kiln's local cluster, shaped like a managed node group of the gpu-cluster
// stack: Node objects `<name>-0` to `<name>-<desiredSize - 1>` that kwok turns into Ready GPU nodes. A new
// desiredSize adds or removes nodes at the end, leaving the others as they are.
import * as k8s from '@pulumi/kubernetes';
import * as pulumi from '@pulumi/pulumi';
import { KILN_OBJECT_ANNOTATIONS } from '../kiln-objects.ts';
import { checkPool, type LocalGpuPoolArgs } from './args.ts';
import { simulatedGpuNode } from './node.ts';

export { checkPool, type LocalGpuPoolArgs } from './args.ts';
export { GPU_COUNT_LABEL, KWOK_NODE_ANNOTATION, NODE_POOL_LABEL, SIMULATED_NODE_RESOURCES, simulatedGpuNode } from './node.ts';
export { StackArgsError } from '../args-error.ts';

export class LocalGpuPool extends pulumi.ComponentResource {
  /** The pool's nodes, in index order. */
  readonly nodeNames: pulumi.Output<string[]>;

  constructor(name: string, args: LocalGpuPoolArgs, opts?: pulumi.ComponentResourceOptions) {
    const pool = checkPool(name, args);
    super('kiln:stacks:LocalGpuPool', name, args, opts);
    const nodes = Array.from({ length: args.desiredSize }, (_, index) => {
      const node = simulatedGpuNode(pool, index, args.gpuType, args.gpusPerNode);
      // Taking back fields (patchForce): the node lifecycle controller rewrites the taint list while a node is not Ready.
      return new k8s.core.v1.Node(node.metadata.name, {
        metadata: { ...node.metadata, annotations: { ...node.metadata.annotations, ...KILN_OBJECT_ANNOTATIONS } },
        spec: node.spec,
      }, { parent: this });
    });
    this.nodeNames = pulumi.all(nodes.map((n) => n.metadata.name));
    this.registerOutputs({ nodeNames: this.nodeNames });
  }
}
