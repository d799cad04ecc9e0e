/** The scan reader: the public surface of `src/iceberg/scan/`. */
export { scanTable, readTableRows,    } from './table-scan.js';
export { planScan,    } from './scan-plan.js';
;
;
export { rowToJson,  } from './row-json.js';
