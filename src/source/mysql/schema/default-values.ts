/**
 * A column's literal default in the value model (docs/design.md §5: it becomes the Iceberg field's
 * `write-default`, and `initial-default` too when the column is added later). The literal text is
 * converted by the same converter as a snapshot value of the column, so a default reads exactly like a
 * row that stores it.
 */
import type { Value } from '../../../model/values.js';
import { errorMessage } from '../../../util/errors.js';
import type { MappedColumn } from './type-mapping.js';
import { snapshotValueConverter } from '../snapshot/snapshot-values.js';

export type DefaultValue =
  /** A literal default; `value` may be null (DEFAULT NULL, or a zero date). */
  | { literal: true; value: Value }
  /** No usable literal: no default, an expression, or a literal the lake type cannot hold. */
  | { literal: false; reason: string };

export function literalDefaultValue(column: MappedColumn): DefaultValue {
  const d = column.column.default;
  switch (d.kind) {
    case 'none':
      return { literal: false, reason: 'the column has no default' };
    case 'null':
      return { literal: true, value: null };
    case 'expression':
      return { literal: false, reason: `the default is the expression ${d.expression}, evaluated per row` };
    case 'literal':
      try {
        return { literal: true, value: snapshotValueConverter(column, 'default')(d.literal) };
      } catch (e) {
        return { literal: false, reason: `the literal default cannot be represented: ${errorMessage(e)}` };
      }
  }
}
