// Which EC2 instance type gives a node group its GPUs, per GPU catalog id.
import { GPU_TYPE_IDS } from '../../catalog/gpu-types.ts';
import { StackArgsError } from '../args-error.ts';

/** The smallest machine of each GPU type; the 80GB parts come only as 8-GPU machines on EC2. */
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

export function instanceTypeFor(gpuType: string): string {
  const instanceType = INSTANCE_TYPES[gpuType];
  if (!instanceType) {
    throw new StackArgsError(`no EC2 instance type for GPU type "${gpuType}"; known types: ${GPU_TYPE_IDS.join(', ')}`);
  }
  return instanceType;
}
