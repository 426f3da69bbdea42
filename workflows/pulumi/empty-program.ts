// A program that declares nothing: what `destroy` opens a stack with.
import type { PulumiFn } from '@pulumi/pulumi/automation/index.js';

export const emptyProgram = (): PulumiFn => async () => ({});
