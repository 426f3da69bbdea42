import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { UserSchema } from '../auth/user.entity.ts';
import { BaseSchema } from '../database/base.entity.ts';
import { OrganizationSchema } from '../organizations/organization.entity.ts';
import type { OnboardingStepId } from './steps.ts';

/**
 * What a user chose about their onboarding in one organization: hidden (dismissed) and the steps they
 * skipped. Whether a step is done is never stored: it is read from the records the step is about.
 */
export const OnboardingStateSchema = defineEntity({
  name: 'OnboardingState',
  extends: BaseSchema,
  uniques: [{ properties: ['user', 'organization'] }],
  properties: {
    user: () => p.manyToOne(UserSchema).ref(),
    organization: () => p.manyToOne(OrganizationSchema).ref(),
    dismissedAt: p.datetime(3).nullable(),
    skipped: p.json<OnboardingStepId[]>(),
    updatedAt: p.datetime(3).onCreate(() => new Date()).onUpdate(() => new Date()),
  },
});

export type OnboardingState = InferEntity<typeof OnboardingStateSchema>;
