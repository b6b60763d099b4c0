import { runtimeConfigSchema } from '@feedmill/config';

export { feedConfigSchema } from '@feedmill/contracts';

/** Every environment variable feedmill reads. */
export const runtimeConfigSchemaKeys = Object.keys(runtimeConfigSchema.shape);
