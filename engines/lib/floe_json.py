"""floe scan's JSON form of a row, from the values an engine returns.

`floe scan` prints one JSON object per row keyed by column name, each primitive value in Iceberg's
JSON single-value form as floe writes it: ints and longs as exact integers, floats and doubles as
JavaScript prints them with a fraction kept ("1.0", "1e+21", "1.5e-7"; a float as the shortest text
that reads back as the same float32), "NaN"/"Infinity"/"-Infinity" as strings, decimals as strings
with exactly `scale` digits, dates "YYYY-MM-DD" (years outside 0..9999 as +/-YYYYYY), times
"HH:MM:SS[.ffffff]", timestamps "YYYY-MM-DDTHH:MM:SS[.ffffff]" (+"+00:00" for timestamptz; 9
fraction digits for the _ns types), uuids in lowercase, binary and fixed as lowercase hex. A struct is
an object keyed by field name, a list an array, a map {"keys": [...], "values": [...]}. Objects are
written without spaces, strings as JSON.stringify writes them.

Each engine hands back other Python types (Spark Rows, DuckDB dicts, Arrow lists, Trino tuples,
the Java dumper's exact integers), so values are first brought to one canonical form per Iceberg type
(`canonical`), then printed (`to_json`). The Iceberg type comes from the table metadata, never from
the engine, so an engine that reads a column as the wrong type shows up as a different value.
"""

import datetime as _dt
import decimal as _decimal
import json
import math
import re
import struct
import uuid as _uuid

_EPOCH = _dt.datetime(1970, 1, 1)
_EPOCH_UTC = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)
_EPOCH_DATE = _dt.date(1970, 1, 1)
_DECIMAL_RE = re.compile(r"^decimal\(\s*(\d+)\s*,\s*(-?\d+)\s*\)$")
_FIXED_RE = re.compile(r"^fixed\[\s*(\d+)\s*\]$")


def kind(t):
    """The type's kind: 'struct', 'list', 'map', 'decimal', 'fixed' or the primitive name."""
    if isinstance(t, dict):
        return t["type"]
    if _DECIMAL_RE.match(t):
        return "decimal"
    if _FIXED_RE.match(t):
        return "fixed"
    return t


def decimal_scale(t):
    return int(_DECIMAL_RE.match(t).group(2))


# ---------------------------------------------------------------------------------------------------
# canonical values: bool, int (int/long, decimal unscaled, date days, time micros, timestamp micros or
# nanos), float, str (string, uuid), bytes (binary, fixed), list (struct values in field order, list
# elements, map [key, value] pairs)


def _float32(x):
    """x rounded to float32, as Math.fround does (beyond the float range: infinity)."""
    try:
        return struct.unpack("<f", struct.pack("<f", x))[0]
    except OverflowError:
        return math.copysign(math.inf, x)


def _micros(td):
    return (td.days * 86_400 + td.seconds) * 1_000_000 + td.microseconds


def _timestamp_units(v, adjust_to_utc, nanos):
    if isinstance(v, int):
        return v
    if isinstance(v, _dt.datetime):
        if v.tzinfo is not None:
            micros = _micros(v - _EPOCH_UTC)
        else:
            # An engine that hands back naive datetimes for timestamptz does so in its session zone,
            # which engines/read sets to UTC.
            micros = _micros(v - _EPOCH)
        return micros * 1000 if nanos else micros
    if isinstance(v, str):
        return _timestamp_units(_dt.datetime.fromisoformat(v), adjust_to_utc, nanos)
    raise TypeError(f"not a timestamp: {v!r}")


def canonical(t, v):
    if v is None:
        return None
    k = kind(t)
    if k == "boolean":
        return bool(v)
    if k in ("int", "long"):
        return int(v)
    if k == "float":
        return _float32(float(v))
    if k == "double":
        return float(v)
    if k == "decimal":
        scale = decimal_scale(t)
        if isinstance(v, (int, str)):
            return int(v)
        d = v if isinstance(v, _decimal.Decimal) else _decimal.Decimal(v)
        unscaled = d.scaleb(scale, context=_decimal.Context(prec=100))
        if unscaled != unscaled.to_integral_value():
            raise ValueError(f"decimal {v} has more than {scale} fraction digits")
        return int(unscaled)
    if k == "date":
        if isinstance(v, int):
            return v
        if isinstance(v, _dt.datetime):
            v = v.date()
        if isinstance(v, str):
            v = _dt.date.fromisoformat(v)
        return (v - _EPOCH_DATE).days
    if k == "time":
        if isinstance(v, int):
            return v
        if isinstance(v, _dt.timedelta):
            return _micros(v)
        if isinstance(v, str):
            v = _dt.time.fromisoformat(v)
        return ((v.hour * 60 + v.minute) * 60 + v.second) * 1_000_000 + v.microsecond
    if k in ("timestamp", "timestamptz"):
        return _timestamp_units(v, k == "timestamptz", False)
    if k in ("timestamp_ns", "timestamptz_ns"):
        return _timestamp_units(v, k == "timestamptz_ns", True)
    if k == "string":
        return str(v)
    if k == "uuid":
        if isinstance(v, _uuid.UUID):
            return str(v)
        if isinstance(v, (bytes, bytearray, memoryview)):
            return str(_uuid.UUID(bytes=bytes(v)))
        return str(_uuid.UUID(str(v)))
    if k in ("binary", "fixed"):
        if isinstance(v, str):
            return bytes.fromhex(v)
        return bytes(v)
    if k == "struct":
        fields = t["fields"]
        if isinstance(v, dict):
            # DuckDB structs, Arrow structs: keyed by field name (DuckDB may lowercase nothing here)
            vals = [v.get(f["name"]) for f in fields]
        else:
            vals = list(v)
        if len(vals) != len(fields):
            raise ValueError(f"struct with {len(fields)} fields read as {len(vals)} values")
        return [canonical(f["type"], x) for f, x in zip(fields, vals)]
    if k == "list":
        return [canonical(t["element"], x) for x in v]
    if k == "map":
        pairs = v.items() if isinstance(v, dict) else v
        return [[canonical(t["key"], a), canonical(t["value"], b)] for a, b in pairs]
    if k == "unknown":
        return None
    raise TypeError(f"unsupported Iceberg type {t!r}")


# ---------------------------------------------------------------------------------------------------
# printing


def js_number(x):
    """ECMAScript Number::toString of a finite double (what JSON.stringify and String() write)."""
    if x == 0:
        return "0"
    sign = "-" if x < 0 else ""
    # repr is the shortest text that reads back as x, as ECMAScript's digits are.
    d = _decimal.Decimal(repr(abs(x)))
    _, digits, exp = d.as_tuple()
    s = "".join(map(str, digits)).rstrip("0") or "0"
    exp += len(digits) - len(s)
    k = len(s)
    n = exp + k
    if k <= n <= 21:
        out = s + "0" * (n - k)
    elif 0 < n <= 21:
        out = s[:n] + "." + s[n:]
    elif -6 < n <= 0:
        out = "0." + "0" * (-n) + s
    else:
        e = n - 1
        mant = s if k == 1 else s[0] + "." + s[1:]
        out = f"{mant}e{'+' if e >= 0 else '-'}{abs(e)}"
    return sign + out


def _floating(text):
    return text if re.search(r"[.eE]", text) else text + ".0"


def _float_text(v, single):
    if math.isnan(v):
        return '"NaN"'
    if math.isinf(v):
        return '"Infinity"' if v > 0 else '"-Infinity"'
    if v == 0 and math.copysign(1.0, v) < 0:
        return "-0.0"
    if single:
        for p in range(1, 10):
            candidate = float(f"{v:.{p}g}")
            if _float32(candidate) == v:
                return _floating(js_number(candidate))
    return _floating(js_number(v))


def format_decimal(unscaled, scale):
    if scale < 0:
        return f"{unscaled}E+{-scale}"
    neg = unscaled < 0
    digits = str(abs(unscaled))
    if scale > 0:
        digits = digits.rjust(scale + 1, "0")
        digits = digits[: len(digits) - scale] + "." + digits[len(digits) - scale :]
    return ("-" if neg else "") + digits


def civil_from_days(z):
    """(year, month, day) of a day number since 1970-01-01, proleptic Gregorian, any year."""
    z += 719468
    era = z // 146097  # floor division (the C++ original adjusts for truncating division)
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    y = yoe + era * 400
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    m = mp + 3 if mp < 10 else mp - 9
    return (y + 1 if m <= 2 else y), m, d


def format_date(days):
    y, m, d = civil_from_days(days)
    ys = f"{y:04d}" if 0 <= y <= 9999 else ("-" if y < 0 else "+") + f"{abs(y):06d}"
    return f"{ys}-{m:02d}-{d:02d}"


def _time_of_day(units, per_second, digits):
    secs, frac = divmod(units, per_second)
    hms = f"{secs // 3600:02d}:{(secs // 60) % 60:02d}:{secs % 60:02d}"
    return hms if frac == 0 else f"{hms}.{frac:0{digits}d}"


def _timestamp_text(units, per_second, digits):
    days, rem = divmod(units, 86_400 * per_second)
    return f"{format_date(days)}T{_time_of_day(rem, per_second, digits)}"


def to_json(t, c):
    """JSON text of canonical value `c` of Iceberg type `t`, exactly as floe scan writes it."""
    if c is None:
        return "null"
    k = kind(t)
    if k == "boolean":
        return "true" if c else "false"
    if k in ("int", "long"):
        return str(c)
    if k == "float":
        return _float_text(c, True)
    if k == "double":
        return _float_text(c, False)
    if k == "decimal":
        return json.dumps(format_decimal(c, decimal_scale(t)))
    if k == "date":
        return json.dumps(format_date(c))
    if k == "time":
        return json.dumps(_time_of_day(c, 1_000_000, 6))
    if k == "timestamp":
        return json.dumps(_timestamp_text(c, 1_000_000, 6))
    if k == "timestamptz":
        return json.dumps(_timestamp_text(c, 1_000_000, 6) + "+00:00")
    if k == "timestamp_ns":
        return json.dumps(_timestamp_text(c, 1_000_000_000, 9))
    if k == "timestamptz_ns":
        return json.dumps(_timestamp_text(c, 1_000_000_000, 9) + "+00:00")
    if k in ("string", "uuid"):
        return json.dumps(c, ensure_ascii=False)
    if k in ("binary", "fixed"):
        return json.dumps(c.hex())
    if k == "struct":
        return object_json(t["fields"], c)
    if k == "list":
        return "[" + ",".join(to_json(t["element"], x) for x in c) + "]"
    if k == "map":
        keys = ",".join(to_json(t["key"], a) for a, _ in c)
        values = ",".join(to_json(t["value"], b) for _, b in c)
        return '{"keys":[' + keys + '],"values":[' + values + "]}"
    raise TypeError(f"unsupported Iceberg type {t!r}")


def object_json(fields, canon_values):
    return "{" + ",".join(json.dumps(f["name"], ensure_ascii=False) + ":" + to_json(f["type"], v) for f, v in zip(fields, canon_values)) + "}"


def row_json(fields, values):
    """One output line for a row given as engine values in the schema's column order."""
    values = list(values)
    if len(values) != len(fields):
        raise ValueError(f"the table has {len(fields)} columns, the engine returned {len(values)}")
    return object_json(fields, [canonical(f["type"], v) for f, v in zip(fields, values)])
