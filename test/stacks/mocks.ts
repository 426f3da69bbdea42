// Pulumi's engine replaced by mocks: every resource the program registers is recorded with its inputs, and a
// test waits for the one it asserts on. setMocks must run before the component modules are imported.
import * as pulumi from '@pulumi/pulumi';

export interface Registered {
  readonly type: string;
  readonly name: string;
  // Resolved inputs are plain JSON as the provider would receive them.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  readonly inputs: Record<string, any>;
  /** Reference to the provider managing it, `urn::id`, when one was given. */
  readonly provider?: string;
}

/** Output state a real provider would compute (ARNs, endpoints), added to the inputs. */
type Computed = (resource: Registered) => Record<string, unknown>;

export async function mockPulumi(computed: Computed = () => ({})) {
  const seen = new Map<string, Registered>();
  const waiting = new Map<string, (r: Registered) => void>();
  await pulumi.runtime.setMocks({
    newResource: (args) => {
      const registered = { type: args.type, name: args.name, inputs: args.inputs, provider: args.provider };
      seen.set(`${args.type}::${args.name}`, registered);
      waiting.get(`${args.type}::${args.name}`)?.(registered);
      return { id: `${args.name}-id`, state: { ...args.inputs, ...computed(registered) } };
    },
    call: (args) => args.inputs,
  }, 'kiln', 'test');

  /** The resource of this type and name once registered; fails after a few seconds if it never is. */
  const resource = (type: string, name: string) => new Promise<Registered>((resolve, reject) => {
    const key = `${type}::${name}`;
    const found = seen.get(key);
    if (found) return resolve(found);
    const timer = setTimeout(() => reject(new Error(`${key} was never registered`)), 5000);
    waiting.set(key, (r) => { clearTimeout(timer); resolve(r); });
  });
  /** Every resource of a type registered so far. */
  const ofType = (type: string) => [...seen.values()].filter((r) => r.type === type);
  return { resource, ofType };
}

/** What AWS computes for the GPU cluster's resources: ARNs, names, the EKS endpoint. */
export const awsState: Computed = (r) => {
  switch (r.type) {
    case 'aws:iam/role:Role': return { arn: `arn:aws:iam::123456789012:role/${r.name}`, name: r.name };
    case 'aws:eks/nodeGroup:NodeGroup': return { nodeGroupName: r.name };
    case 'aws:eks/cluster:Cluster': return {
      name: 'kiln-eks-1a2b3c',
      arn: 'arn:aws:eks:us-west-2:123456789012:cluster/kiln-eks-1a2b3c',
      endpoint: 'https://ABC.gr7.us-west-2.eks.amazonaws.com',
      certificateAuthority: { data: 'Q0EgUEVN' },
    };
    default: return {};
  }
};

/** The value of an output (mocks resolve every output). */
export function valueOf<T>(output: pulumi.Output<T>): Promise<T> {
  return new Promise((resolve) => output.apply(resolve));
}
