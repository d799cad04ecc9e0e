// Writes schemas/floe-config.schema.json from src/config/schema.ts (run: npm run gen:config-schema).
import { writeFileSync } from 'node:fs';
import { configJsonSchema } from '../src/config/json-schema.js';

writeFileSync(new URL('../schemas/floe-config.schema.json', import.meta.url), JSON.stringify(configJsonSchema(), null, 2) + '\n');
