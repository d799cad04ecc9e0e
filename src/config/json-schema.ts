/** Generates the editor JSON Schema of floe's config file into schemas/floe-config.schema.json. */
import { z } from 'zod';
import { configSchema } from './schema.js';

export function configJsonSchema(): Record<string, unknown> {
  const schema = z.toJSONSchema(configSchema, { io: 'input' }) as Record<string, unknown>;
  return { ...schema, $id: 'https://github.com/floe/floe/schemas/floe-config.schema.json', title: 'floe configuration' };
}
