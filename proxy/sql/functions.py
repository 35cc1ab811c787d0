"""The functions a SQL query may call, per dialect, and the system catalogs it may not read.

Only pure built-ins are allowed: string, math, date/time, aggregates, window functions, JSON
and array accessors, casts and conditionals. "Pure" means: computes a value from its arguments
and the rows it is given, and does nothing else — no large objects, sequences, advisory locks,
replication slots, notifications, statistics resets, settings, files, URLs, other databases,
sleeping, or whole-table / whole-database exports (`table_to_xml`, `database_to_xml`, …).
Everything else is `SEC.FUNCTION` (plugins/sql_read_only.py) unless the operator lists it in
`[guard] sql_allowed_functions`.

sqlglot reads many built-ins into typed expressions (`LOWER(x)` is `exp.Lower`, PostgreSQL's
`to_char` and SQLite's `strftime` are both `exp.TimeToStr`): those are judged by their class
(`SQLGLOT_PURE`, the same in every dialect — the parser chose the built-in). Calls sqlglot does
not know (`exp.Anonymous`) are judged by the name written, against `COMMON_FUNCTIONS` plus the
dialect's own list (`DIALECT_FUNCTIONS`); a dialect without a list of its own (any other
sqlglot dialect) gets only `COMMON_FUNCTIONS`. A call qualified by a schema (`evil.lower(x)`)
is another function than the built-in: it is judged by its qualified name (only PostgreSQL's
`pg_catalog.` prefix is dropped).

docs/functions.md is generated from this module and proxy/cypher/functions.py
(`python -m query_guard.sql.functions_page > docs/functions.md`), and a test keeps it in step.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from fnmatch import fnmatchcase, translate

from sqlglot import exp

# sqlglot expression classes that are pure built-ins (or syntax written like a call), by group.
SQLGLOT_PURE: dict[str, tuple[str, ...]] = {
    "syntax and conditionals": (
        "And", "Or", "Xor", "Case", "If", "Coalesce", "Nullif", "Nvl2", "EqualNull", "Greatest",
        "Least", "Cast", "TryCast", "CastToStrType", "Convert", "Collate", "Exists", "Extract",
        "Decode", "DecodeCase", "Typeof",
    ),
    "aggregates": (
        "Count", "CountIf", "Sum", "Avg", "Min", "Max", "GroupConcat", "ArrayAgg", "AnyValue",
        "ApproxDistinct", "ApproxQuantile", "Quantile", "Median", "Mode", "PercentileCont",
        "PercentileDisc", "Stddev", "StddevPop", "StddevSamp", "Variance", "VariancePop", "Corr",
        "CovarPop", "CovarSamp", "LogicalAnd", "LogicalOr", "ArgMax", "ArgMin", "First", "Last",
        "BitwiseAndAgg", "BitwiseOrAgg", "BitwiseXorAgg", "JSONArrayAgg", "JSONObjectAgg",
        "JSONBObjectAgg", "Skewness", "Kurtosis", "RegrSlope", "RegrIntercept", "RegrR2",
        "RegrCount", "RegrAvgx", "RegrAvgy", "RegrSxx", "RegrSxy", "RegrSyy", "Grouping",
        "GroupingId",
    ),
    "window": (
        "RowNumber", "Rank", "DenseRank", "PercentRank", "CumeDist", "Ntile", "Lag", "Lead",
        "FirstValue", "LastValue", "NthValue",
    ),
    "string": (
        "Lower", "Upper", "Length", "BitLength", "ByteLength", "Substring", "SubstringIndex",
        "Trim", "Concat", "ConcatWs", "Replace", "Left", "Right", "Pad", "Initcap",
        "StrPosition", "SplitPart", "Split", "Reverse", "Repeat", "Ascii", "Chr", "Unicode",
        "Hex", "Unhex", "LowerHex", "MD5", "MD5Digest", "SHA", "SHA2", "RegexpLike",
        "RegexpILike", "RegexpReplace", "RegexpExtract", "RegexpExtractAll", "RegexpSplit",
        "RegexpCount", "RegexpInstr", "RegexpSubstr", "RegexpFullMatch", "StartsWith",
        "EndsWith", "Contains", "Translate", "Overlay", "Levenshtein", "JarowinklerSimilarity",
        "Soundex", "Space", "Format", "MatchAgainst", "Encode", "ToBase64", "FromBase64",
        "Normalize", "StringToArray", "ArrayToString", "Stuff", "ToChar", "ToNumber",
        "NumberToStr", "Elt",
    ),
    "math": (
        "Abs", "Ceil", "Floor", "Round", "Trunc", "Sqrt", "Cbrt", "Pow", "Exp", "Ln", "Log",
        "Sign", "Pi", "Radians", "Degrees", "Sin", "Cos", "Tan", "Cot", "Asin", "Acos", "Atan",
        "Atan2", "Sinh", "Cosh", "Tanh", "Asinh", "Acosh", "Atanh", "Rand", "Factorial",
        "WidthBucket", "IsNan", "IsInf", "SafeDivide",
    ),
    "date and time": (
        "CurrentDate", "CurrentTime", "CurrentTimestamp", "CurrentDatetime", "Localtime",
        "Localtimestamp", "Date", "Datetime", "Time", "Timestamp", "DateAdd", "DateSub",
        "DateDiff", "DateTrunc", "DatetimeAdd", "DatetimeSub", "DatetimeDiff", "DatetimeTrunc",
        "TimestampAdd", "TimestampSub", "TimestampDiff", "TimestampTrunc", "TimeAdd", "TimeSub",
        "TimeDiff", "TimeTrunc", "Year", "Quarter", "Month", "Week", "WeekOfYear", "Day",
        "DayOfMonth", "DayOfWeek", "DayOfWeekIso", "DayOfYear", "Hour", "Minute", "Second",
        "Dayname", "Monthname", "LastDay", "TimeToStr", "TimeStrToTime", "TimeStrToDate",
        "TimeStrToUnix", "TimeToTimeStr", "TimeToUnix", "StrToDate", "StrToTime", "StrToUnix",
        "UnixToStr", "UnixToTime", "UnixToTimeStr", "TsOrDsAdd", "TsOrDsDiff", "TsOrDsToDate",
        "TsOrDsToDateStr", "TsOrDsToTimestamp", "TsOrDsToDatetime", "TsOrDsToTime",
        "DateStrToDate", "DateToDateStr", "DateFromParts", "TimeFromParts",
        "TimestampFromParts", "MakeInterval", "JustifyDays", "JustifyHours", "JustifyInterval",
        "AddMonths", "MonthsBetween", "DateBin", "ConvertTimezone", "UnixDate", "UnixSeconds",
        "UnixMillis", "UnixMicros", "ToDays",
    ),
    "JSON": (
        "JSONExtract", "JSONExtractScalar", "JSONBExtract", "JSONBExtractScalar",
        "JSONBContains", "JSONBExists", "JSONExtractArray", "JSONObject", "JSONArray",
        "JSONFormat", "JSONKeys", "JSONType", "ParseJSON", "JSONArrayContains", "JSONExists",
        "JSONBPathExists", "JSONStripNulls", "JSONBContainsAnyTopKeys",
        "JSONBContainsAllTopKeys", "JSONBContainsTopKey",
    ),
    "arrays, lists, structs": (
        "Array", "ArraySize", "ArrayContains", "ArrayContainsAll", "ArrayOverlaps",
        "ArrayConcat", "ArrayAppend", "ArrayPrepend", "ArrayPosition", "ArraySlice", "ArraySort",
        "ArrayDistinct", "ArrayReverse", "ArrayFilter", "ArrayFirst", "ArrayLast", "ArrayMin",
        "ArrayMax", "ArraySum", "Explode", "Unnest", "ExplodingGenerateSeries", "GenerateSeries",
        "GenerateDateArray", "GenerateTimestampArray", "Struct", "StructExtract", "Map",
        "VarMap", "MapKeys", "ToArray", "Flatten", "List", "Transform",
    ),
}  # fmt: skip

# Built-ins most SQL databases share, as written (lower case); the default for other dialects.
COMMON_FUNCTIONS: dict[str, tuple[str, ...]] = {
    "aggregates": (
        "count", "sum", "avg", "min", "max", "string_agg", "array_agg", "listagg", "stddev",
        "stddev_pop", "stddev_samp", "variance", "var_pop", "var_samp",
    ),
    "window": (
        "row_number", "rank", "dense_rank", "percent_rank", "cume_dist", "ntile", "lag", "lead",
        "first_value", "last_value", "nth_value",
    ),
    "string": (
        "lower", "upper", "length", "char_length", "character_length", "octet_length",
        "substring", "substr", "trim", "ltrim", "rtrim", "replace", "concat", "position",
    ),
    "math": (
        "abs", "ceil", "ceiling", "floor", "round", "sqrt", "power", "mod", "exp", "ln", "log",
        "sign",
    ),
    "conditionals and casts": ("coalesce", "nullif", "greatest", "least", "cast", "extract"),
    "date and time": ("current_date", "current_time", "current_timestamp"),
}  # fmt: skip

_MORE_MATH = (
    "log10", "pi", "degrees", "radians", "sin", "cos", "tan", "cot", "asin", "acos", "atan",
    "atan2", "trunc", "cbrt", "pow", "random", "gcd", "lcm", "factorial",
)  # fmt: skip

DIALECT_FUNCTIONS: dict[str, dict[str, tuple[str, ...]]] = {
    "postgres": {
        "aggregates": (
            "json_agg", "jsonb_agg", "json_object_agg", "jsonb_object_agg", "bool_and",
            "bool_or", "every", "bit_and", "bit_or", "corr", "covar_pop", "covar_samp",
            "regr_slope", "regr_intercept", "regr_r2", "regr_count", "percentile_cont",
            "percentile_disc", "mode", "any_value",
        ),
        "string": (
            "initcap", "bit_length", "left", "right", "lpad", "rpad", "btrim", "translate",
            "reverse", "repeat", "strpos", "split_part", "concat_ws", "format", "quote_ident",
            "quote_literal", "quote_nullable", "regexp_replace", "regexp_match",
            "regexp_matches", "regexp_split_to_array", "regexp_split_to_table", "regexp_count",
            "regexp_like", "regexp_substr", "regexp_instr", "starts_with", "md5", "sha224",
            "sha256", "sha384", "sha512", "encode", "decode", "to_hex", "ascii", "chr",
            "normalize", "string_to_array", "array_to_string", "to_tsvector", "to_tsquery",
            "plainto_tsquery", "phraseto_tsquery", "websearch_to_tsquery", "ts_rank",
            "ts_rank_cd", "ts_headline",
        ),
        "math": (*_MORE_MATH, "div", "scale", "width_bucket", "trim_scale"),
        "date and time": (
            "now", "age", "date_part", "date_trunc", "date_bin", "to_char", "to_date",
            "to_timestamp", "to_number", "make_date", "make_time", "make_timestamp",
            "make_timestamptz", "make_interval", "timezone", "justify_days", "justify_hours",
            "justify_interval", "isfinite", "localtime", "localtimestamp", "clock_timestamp",
            "statement_timestamp", "transaction_timestamp",
        ),
        "JSON": (
            "json_extract_path", "json_extract_path_text", "jsonb_extract_path",
            "jsonb_extract_path_text", "json_array_length", "jsonb_array_length",
            "json_array_elements", "json_array_elements_text", "jsonb_array_elements",
            "jsonb_array_elements_text", "json_each", "json_each_text", "jsonb_each",
            "jsonb_each_text", "json_object_keys", "jsonb_object_keys", "json_typeof",
            "jsonb_typeof", "json_build_object", "jsonb_build_object", "json_build_array",
            "jsonb_build_array", "to_json", "to_jsonb", "row_to_json", "array_to_json",
            "jsonb_pretty", "jsonb_path_query", "jsonb_path_query_array",
            "jsonb_path_query_first", "jsonb_path_exists", "jsonb_path_match",
            "json_strip_nulls", "jsonb_strip_nulls", "jsonb_set", "jsonb_insert",
        ),
        "arrays and sets": (
            "array_length", "cardinality", "array_position", "array_positions",
            "array_remove", "array_replace", "array_append", "array_prepend", "array_cat",
            "array_dims", "array_lower", "array_upper", "unnest", "generate_series",
            "generate_subscripts",
        ),
        "conditionals": ("num_nulls", "num_nonnulls"),
        # Apache AGE: the dollar-quoted body is a Cypher query, judged by every Cypher rule
        "Apache AGE": ("cypher",),
    },
    "sqlite": {
        "aggregates": ("group_concat", "total", "json_group_array", "json_group_object"),
        "string": (
            "char", "hex", "unhex", "instr", "printf", "format", "quote", "unicode", "soundex",
            "concat_ws",
        ),
        "math": (*_MORE_MATH, "log2", "unixepoch"),
        "date and time": ("date", "time", "datetime", "julianday", "strftime", "timediff"),
        "JSON": (
            "json", "json_array", "json_array_length", "json_extract", "json_object",
            "json_type", "json_valid", "json_quote", "json_each", "json_tree",
        ),
        "conditionals": ("ifnull", "iif", "likely", "unlikely", "likelihood", "typeof"),
    },
    "duckdb": {
        "aggregates": (
            "group_concat", "list", "mean", "median", "mode", "quantile", "quantile_cont",
            "quantile_disc", "arg_max", "arg_min", "max_by", "min_by", "first", "last",
            "any_value", "bool_and", "bool_or", "corr", "approx_count_distinct",
            "approx_quantile", "histogram", "count_if", "countif", "product", "favg", "fsum",
            "kurtosis", "skewness", "entropy",
        ),
        "string": (
            "lcase", "ucase", "strlen", "len", "left", "right", "lpad", "rpad", "reverse",
            "repeat", "strpos", "instr", "contains", "starts_with", "ends_with", "prefix",
            "suffix", "split_part", "string_split", "str_split", "concat_ws", "format", "printf",
            "regexp_matches", "regexp_replace", "regexp_extract", "regexp_extract_all",
            "regexp_full_match", "levenshtein", "jaro_winkler_similarity", "jaccard",
            "damerau_levenshtein", "hamming", "md5", "sha256", "hash", "ascii", "chr",
        ),
        "math": (*_MORE_MATH, "log2", "even", "isnan", "isinf", "isfinite", "bit_count"),
        "date and time": (
            "date_trunc", "date_part", "datepart", "date_diff", "datediff", "date_add",
            "date_sub", "strftime", "strptime", "epoch", "epoch_ms", "make_date", "make_time",
            "make_timestamp", "now", "today", "age", "last_day", "dayname", "monthname", "year",
            "month", "day", "hour", "minute", "second", "week", "quarter", "dayofweek",
            "dayofyear", "isodow", "yearweek", "to_timestamp",
        ),
        "JSON": (
            "json_extract", "json_extract_string", "json_extract_path",
            "json_extract_path_text", "json_array_length", "json_keys", "json_type",
            "json_valid", "json_object", "json_array", "to_json", "json_structure",
            "json_value", "json_exists",
        ),
        "lists and structs": (
            "list_value", "list_contains", "list_has", "array_contains", "list_extract",
            "list_element", "array_length", "list_sort", "list_distinct", "list_slice",
            "unnest", "generate_series", "range", "flatten", "struct_pack", "struct_extract",
            "map",
        ),
        "conditionals": ("ifnull", "if", "typeof"),
    },
    "mysql": {
        "aggregates": (
            "group_concat", "json_arrayagg", "json_objectagg", "std", "bit_and", "bit_or",
            "bit_xor", "any_value",
        ),
        "string": (
            "lcase", "ucase", "bit_length", "substring_index", "mid", "left", "right", "lpad",
            "rpad", "reverse", "repeat", "instr", "locate", "concat_ws", "format", "field",
            "find_in_set", "elt", "ascii", "char", "hex", "unhex", "md5", "sha1", "sha", "sha2",
            "space", "strcmp", "soundex", "regexp_like", "regexp_replace", "regexp_instr",
            "regexp_substr",
        ),
        "math": (*_MORE_MATH, "truncate", "log2", "rand", "conv", "crc32"),
        "date and time": (
            "now", "curdate", "curtime", "date", "time", "year", "month", "day", "dayofmonth",
            "dayofweek", "dayofyear", "dayname", "monthname", "week", "weekday", "weekofyear",
            "yearweek", "quarter", "hour", "minute", "second", "date_format", "time_format",
            "str_to_date", "date_add", "date_sub", "adddate", "subdate", "datediff", "timediff",
            "timestampdiff", "timestampadd", "last_day", "makedate", "maketime",
            "from_unixtime", "unix_timestamp", "to_days", "from_days", "period_diff",
            "convert_tz", "utc_date", "utc_timestamp",
        ),
        "JSON": (
            "json_extract", "json_unquote", "json_contains", "json_contains_path", "json_keys",
            "json_length", "json_type", "json_valid", "json_object", "json_array",
            "json_search", "json_value", "json_pretty", "json_quote", "json_depth",
        ),
        "conditionals": ("if", "ifnull", "isnull"),
    },
}  # fmt: skip

# System catalogs and views that hold secrets (password hashes, user-mapping passwords,
# connection strings), server configuration, sampled column values or other sessions' query
# text: refused in every dialect (SEC.CATALOG). A pattern with a dot names `schema.table`;
# without one, a table of that name in any schema. information_schema's tables and columns
# views and SQLite's sqlite_master / sqlite_schema stay readable: they are what an LLM
# application reads to learn the schema.
SECRET_CATALOGS: dict[str, tuple[str, ...]] = {
    "PostgreSQL": (
        "pg_authid", "pg_shadow", "pg_user_mapping", "pg_user_mappings", "pg_statistic",
        "pg_statistic_ext_data", "pg_largeobject", "pg_largeobject_metadata",
        "pg_hba_file_rules", "pg_ident_file_mappings", "pg_file_settings", "pg_config",
        "pg_settings", "pg_db_role_setting", "pg_stat_activity", "pg_stat_statements",
        "pg_stat_statements_info", "pg_subscription", "pg_foreign_server",
        "pg_stat_wal_receiver", "pg_stat_replication", "pg_stat_ssl",
        "information_schema.user_mapping_options",
    ),
    "SQLite": ("pragma_database_list",),
    "MySQL": (
        "mysql.*", "performance_schema.*", "information_schema.processlist",
        "sys.processlist", "sys.session", "sys.x$*",
    ),
}  # fmt: skip

_PURE_CLASSES = frozenset(name for names in SQLGLOT_PURE.values() for name in names)
_COMMON = frozenset(name for names in COMMON_FUNCTIONS.values() for name in names)
_BY_DIALECT = {
    dialect: _COMMON | {name for names in groups.values() for name in names}
    for dialect, groups in DIALECT_FUNCTIONS.items()
}
_SECRETS = tuple(p for patterns in SECRET_CATALOGS.values() for p in patterns)
# the patterns as two regular expressions: `schema.name` ones and bare-name ones
_SECRET_QUALIFIED = re.compile("|".join(translate(p) for p in _SECRETS if "." in p))
_SECRET_NAMES = re.compile("|".join(translate(p) for p in _SECRETS if "." not in p))


def call_name(node: exp.Func) -> str:
    """The lower-case name a call is judged by: as written for calls sqlglot does not know,
    sqlglot's SQL name for the others; `schema.f` when qualified."""
    if isinstance(node, exp.Anonymous | exp.AnonymousAggFunc):
        name = str(node.name).lower()
    else:
        name = node.sql_name().lower()
    parent, qualifier = node.parent, ""
    if isinstance(parent, exp.Dot) and parent.expression is node:  # evil.f(x)
        qualifier = parent.this.sql().replace('"', "").replace("`", "")
    elif isinstance(parent, exp.Table) and parent.this is node:  # FROM evil.f(x)
        qualifier = ".".join(part for part in (parent.catalog, parent.db) if part)
    return f"{qualifier.lower()}.{name}" if qualifier else name


def is_allowed_call(node: exp.Func, dialect: str, extra: Iterable[str] = ()) -> bool:
    """Whether a read-only query may make this call in `dialect` (`extra`: the operator's
    shell patterns, `[guard] sql_allowed_functions`)."""
    name = call_name(node)
    if any(fnmatchcase(name, p.lower()) for p in extra):
        return True
    if dialect == "postgres" and name.startswith("pg_catalog."):
        name = name.removeprefix("pg_catalog.")
    elif "." in name:
        return False  # a schema's own function, not the built-in
    allowed = _BY_DIALECT.get(dialect, _COMMON)
    if isinstance(node, exp.Anonymous | exp.AnonymousAggFunc):
        return name in allowed
    if type(node).__name__ in _PURE_CLASSES:
        return True
    return any(n.lower() in allowed for n in node.sql_names())


# A printf/format width or precision above this (or read from an argument, `*`) pads inside
# one call: SQLite's printf('%.*c', 1000000000, 'x') ran 30 s past a 1.5 s timeout (its progress
# handler is not called within a function) and held a pool thread meanwhile.
MAX_FORMAT_WIDTH = 10_000
_FORMAT_NAMES = frozenset({"printf", "format"})
_WIDTH = re.compile(r"%[-+ #0,!]*(\*|\d+)?(?:\.(\*|\d+))?")


def unbounded_format(node: exp.Func) -> bool:
    """A printf/format call whose format is not a literal, or whose width or precision is
    `*` or above MAX_FORMAT_WIDTH: its padding is unbounded."""
    if call_name(node).removeprefix("pg_catalog.") not in _FORMAT_NAMES:
        return False
    first = node.this if isinstance(node, exp.Format) else (node.expressions or [None])[0]
    if not isinstance(first, exp.Literal) or not first.is_string:
        return True
    for width, precision in _WIDTH.findall(str(first.this)):
        for value in (width, precision):
            if value == "*" or (value and int(value) > MAX_FORMAT_WIDTH):
                return True
    return False


def is_secret_catalog(table: exp.Table) -> bool:
    """Whether a table reference names a catalog that holds secrets (`SECRET_CATALOGS`)."""
    name, schema = table.name.lower(), table.db.lower()
    return bool(_SECRET_NAMES.match(name) or _SECRET_QUALIFIED.match(f"{schema}.{name}"))


def is_secret_call(node: exp.Func) -> bool:
    """Whether a call is a catalog of `SECRET_CATALOGS` read as a table-valued function
    (SQLite's `pragma_database_list()`, PostgreSQL's `pg_config()`): refused like the table,
    even when `[guard] sql_allowed_functions` allows the name."""
    return bool(_SECRET_NAMES.match(call_name(node).rpartition(".")[2]))
