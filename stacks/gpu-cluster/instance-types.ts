// Which EC2 instance type gives a node group its GPUs, per GPU catalog id (the tables are the catalog's: the
// API's dry run and a node group's growth read them too).
import { GPU_TYPE_IDS } from '../../catalog/gpu-types.ts';
import { INSTANCE_TYPES } from '../../catalog/node-groups.ts';
import { StackArgsError } from '../args-error.ts';

export { GPUS_PER_INSTANCE, INSTANCE_TYPES } from '../../catalog/node-groups.ts';

export function instanceTypeFor(gpuType: string): string {
  const instanceType = INSTANCE_TYPES[gpuType];
  if (!instanceType) {
    throw new StackArgsError(`no EC2 instance type for GPU type "${gpuType}"; known types: ${GPU_TYPE_IDS.join(', ')}`);
  }
  return instanceType;
}
