// Search attributes Kiln's workflows set, so an SRE can filter workflows in the Temporal UI
// (e.g. `KilnOrganizationId = "org_..." AND KilnStatus = "failed"`). Registered by the dev server start-up.
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

export const KilnOrganizationId = defineSearchAttributeKey('KilnOrganizationId', SearchAttributeType.KEYWORD);
export const KilnStatus = defineSearchAttributeKey('KilnStatus', SearchAttributeType.KEYWORD);
export const KilnGpuType = defineSearchAttributeKey('KilnGpuType', SearchAttributeType.KEYWORD);

export const SEARCH_ATTRIBUTES = [KilnOrganizationId, KilnStatus, KilnGpuType];
