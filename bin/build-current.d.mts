/** Whether floe's build (dist/) under `root` exists and no source file under src/ is newer (bin/build-current.mjs). */
export function buildIsCurrent(root: string): boolean;
