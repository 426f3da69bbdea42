// Rules a deployment's configuration follows wherever it is checked: the API refuses a request that breaks
// one (422 naming the field) and the vllm-deployment stack refuses its arguments, from this one definition.

/** A deployment's name becomes its Service's name, hence a DNS label (RFC 1035): it starts with a letter. */
export const NAME_PATTERN = /^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$/;
