/** The scan reader: the public surface of `src/iceberg/scan/`. */
export { scanTable, readTableRows, type ReadableTable, type ScanOptions, type TableScan } from './table-scan.js';
export { planScan, type FileScanTask, type PlanOptions, type ScanPlan } from './scan-plan.js';
export { DeleteIndex, type DataFileDeletes, type DeleteFileRef } from './delete-index.js';
export { tupleKey } from './value-keys.js';
export { rowToJson, valueToJson } from './row-json.js';
