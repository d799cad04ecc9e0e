/**
 * A table with every MySQL type floe maps (docs/design.md §6), and rows at the edges of each type — the same
 * values as the source's round-trip test (test/source/mysql/schema/round-trip.test.ts): NULLs, maxima, minima,
 * zero dates, a non-UTC wall clock, negative and >24h durations (column `dur`, which the config maps
 * to long microseconds with `source.timeAsMicros`). Insert with `ALL_TYPES_SESSION` (sql_mode '' for
 * the zero dates, time_zone +05:30 so a TIMESTAMP's instant differs from its wall clock).
 */
export const ALL_TYPES_DDL = (name: string) => `CREATE TABLE ${name} (
  id INT PRIMARY KEY,
  ti TINYINT, tiu TINYINT UNSIGNED, b1 TINYINT(1), si SMALLINT, siu SMALLINT UNSIGNED, mi MEDIUMINT, miu MEDIUMINT UNSIGNED,
  i INT DEFAULT 7, iu INT UNSIGNED, bi BIGINT, biu BIGINT UNSIGNED,
  f FLOAT, d DOUBLE, dec1 DECIMAL(10,2) DEFAULT 1.50, dec65 DECIMAL(65,30), dec0 DECIMAL(20,0),
  bit1 BIT(1), bit12 BIT(12), bit64 BIT(64),
  dt DATE, dtm DATETIME, dtm6 DATETIME(6), ts TIMESTAMP NULL DEFAULT NULL, ts6 TIMESTAMP(6) NULL DEFAULT NULL,
  tm TIME, tm3 TIME(3), dur TIME(6),
  y YEAR,
  c CHAR(10) DEFAULT 'abc', vc VARCHAR(100), vcbin VARCHAR(50) COLLATE utf8mb4_bin, txt TEXT, latin VARCHAR(20) CHARACTER SET latin1,
  bn BINARY(6), vb VARBINARY(20), bl BLOB,
  e ENUM('a','b,c','d''e','x y'), s SET('p','q''','r'),
  j JSON,
  gv BIGINT AS (i * 2) VIRTUAL, gs VARCHAR(120) AS (CONCAT(vc, '!')) STORED
)`;

export const ALL_TYPES_COLUMNS = 'id, ti, tiu, b1, si, siu, mi, miu, i, iu, bi, biu, f, d, dec1, dec65, dec0, bit1, bit12, bit64, dt, dtm, dtm6, ts, ts6, tm, tm3, dur, y, c, vc, vcbin, txt, latin, bn, vb, bl, e, s, j';

export const ALL_TYPES_SESSION = ["SET time_zone = '+05:30'", "SET sql_mode = ''"];

/** Value tuples (without the id) of the edge rows; `(${id}, ${tuple})` makes a row. */
export const ALL_TYPES_VALUES: readonly string[] = [
  // NULL everywhere
  Array(39).fill('NULL').join(', '),
  // maxima
  `127, 255, 1, 32767, 65535, 8388607, 16777215, 2147483647, 4294967295, 9223372036854775807, 18446744073709551615,
    3.4028235e38, 1.7976931348623157e308, 99999999.99, 99999999999999999999999999999999999.999999999999999999999999999999, 99999999999999999999,
    b'1', b'111111111111', b'${'1'.repeat(64)}',
    '9999-12-31', '9999-12-31 23:59:59', '9999-12-31 23:59:59.999999', '2038-01-19 08:44:07', '2038-01-19 08:44:07.999999',
    '23:59:59', '23:59:59.999', '838:59:59.000000', 2155,
    'abc', _utf8mb4'😀 4-byte ✓ 한글 ü', 'AbC', REPEAT('long text ', 300), 'Ünïcödé €',
    X'000102000000', X'00ff00', X'', 'b,c', 'p,r', '{"b": 1, "a": [1, 2.5, "x"], "10": null}'`,
  // minima
  `-128, 0, 0, -32768, 0, -8388608, 0, -2147483648, 0, -9223372036854775808, 0,
    -1.17549435e-38, -2.2250738585072014e-308, -99999999.99, -99999999999999999999999999999999999.999999999999999999999999999999, -99999999999999999999,
    b'0', b'0', b'0',
    '1000-01-01', '1000-01-01 00:00:00', '1000-01-01 00:00:00.000000', '1970-01-01 05:30:01', '1970-01-01 05:30:01.000001',
    '00:00:00', '00:00:00.000', '-838:59:59.000000', 0,
    '', '', '', '', '',
    X'', X'', X'00', 'd''e', '', 'null'`,
  // zero dates, an invalid ENUM value, negative zero, fractions
  `1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1,
    -0e0, 0.1, 0.5, 0.000000000000000000000000000001, 0,
    b'1', b'101010101010', b'1000000000000000000000000000000000000000000000000000000000000001',
    '0000-00-00', '0000-00-00 00:00:00', '2020-00-15 10:00:00.5', '0000-00-00 00:00:00', '0000-00-00 00:00:00.000000',
    '12:00:00', '00:00:00.001', '-00:00:00.000001', 1901,
    'x', 'tab\\there', 'ß', 'line\\nbreak', 'a',
    X'ff', X'80', X'deadbeef', 'not a label', 'r,zz,p', '[]'`,
  // a non-UTC wall clock, big unsigned values
  `0, 0, 1, 0, 0, 0, 0, 21, 0, 0, 9007199254740993,
    3.1415927, 3.0000000000000004e-1, 12.5, 1.5, 12345678901234567890,
    b'0', b'000000000001', b'0',
    '2024-02-29', '2024-02-29 12:34:56', '2024-02-29 12:34:56.123456', '2024-02-29 12:34:56', '2024-02-29 12:34:56.123456',
    '07:08:09', '07:08:09.123', '100:00:00.5', 1999,
    'padded  ', 'x y', 'x y', 'é', 'x',
    X'0000000000ff', X'0102', X'ff00ff', 'x y', 'q''', '{"k": "v"}'`,
];
