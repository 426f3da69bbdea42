// How the Kubernetes provider treats every object a Kiln stack declares: annotations the provider reads (and the
// API server keeps on the object, so an operator sees them with kubectl).
//
// The provider applies objects by server-side apply, each under a field manager of its own. Other writers
// (`kubectl scale` or `edit`, a controller, a stack applied where its objects already exist) then own some of
// the fields Kiln declares, and the next apply fails with a field conflict. Kiln's stack is the record of what
// should run, so it takes those fields back (patchForce); the fields it does not declare stay as others set them.
// The alternative, `ignoreChanges` on every field someone might touch, would leave Kiln's record silently wrong.
export const KILN_OBJECT_ANNOTATIONS = {
  /** Pulumi applies the objects and returns; Kiln's worker waits for readiness itself, holding no stack lock. */
  'pulumi.com/skipAwait': 'true',
  /** Server-side apply takes the fields Kiln declares from any other field manager instead of failing on a conflict. */
  'pulumi.com/patchForce': 'true',
  /**
   * A delete removes the object at once and its pods after it. With Foreground (the provider's default) the
   * object stays until its pods are gone, and a replacement that deletes first (a new Deployment selector)
   * would apply its new object onto the old one while it terminates.
   */
  'pulumi.com/deletionPropagationPolicy': 'background',
} as const;
