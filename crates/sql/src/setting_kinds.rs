//! What each setting that tunes absent machinery is (guc/tunables.rs
//! keeps a session's values): its kind, range, default and units, and how
//! its values are read and shown. A leaf module, so that pg_settings
//! (catalog_views) can describe a value without depending on the
//! settings' home.

/// How a setting's value is read and shown.
#[derive(Clone, Copy)]
pub(crate) enum Kind {
    /// An integer of memory in units of `unit_kb` kilobytes (kB for
    /// work_mem, 8 kB blocks for the parallel scan sizes), within
    /// `min..=max` units.
    Memory {
        unit_kb: i64,
        min: i64,
        max: i64,
    },
    /// A plain integer within `min..=max`.
    Int {
        min: i64,
        max: i64,
    },
    /// A real within `min..=max`.
    Real {
        min: f64,
        max: f64,
    },
    /// A real number of milliseconds within `min..=max`.
    Millis {
        min: f64,
        max: f64,
    },
    Bool,
    /// One of these words (PostgreSQL's visible values, in its order).
    Enum(&'static [&'static str]),
    /// One of these strings, compared exactly; `what` names the kind of
    /// object the value must be for the DETAIL of a refusal.
    OneOf {
        values: &'static [&'static str],
        what: &'static str,
    },
}

/// Every tunable with its kind and its default as SHOW prints it, by name.
pub(crate) const TUNABLES: [(&str, Kind, &str); 33] = [
    ("constraint_exclusion", Kind::Enum(&["partition", "on", "off"]), "partition"),
    ("default_statistics_target", Kind::Int { min: 1, max: 10_000 }, "100"),
    ("default_table_access_method", Kind::OneOf { values: &["heap"], what: "Table access method" }, "heap"),
    ("default_tablespace", Kind::OneOf { values: &["", "pg_default"], what: "Tablespace" }, ""),
    ("default_toast_compression", Kind::Enum(&["pglz", "lz4"]), "pglz"),
    ("force_parallel_mode", Kind::Enum(&["off", "on", "regress"]), "off"),
    // The planner joins FROM items in their written order (and semi joins
    // after them), whatever these say: as PostgreSQL does with
    // join_collapse_limit 1, and planning time grows with the number of
    // items, not exponentially.
    ("from_collapse_limit", Kind::Int { min: 1, max: i32::MAX as i64 }, "8"),
    ("geqo", Kind::Bool, "on"),
    ("geqo_threshold", Kind::Int { min: 2, max: i32::MAX as i64 }, "12"),
    ("gin_fuzzy_search_limit", Kind::Int { min: 0, max: i32::MAX as i64 }, "0"),
    ("hash_mem_multiplier", Kind::Real { min: 1.0, max: 1000.0 }, "2"),
    ("jit", Kind::Bool, "on"),
    ("jit_above_cost", Kind::Real { min: -1.0, max: f64::MAX }, "100000"),
    ("jit_inline_above_cost", Kind::Real { min: -1.0, max: f64::MAX }, "500000"),
    ("jit_optimize_above_cost", Kind::Real { min: -1.0, max: f64::MAX }, "500000"),
    ("join_collapse_limit", Kind::Int { min: 1, max: i32::MAX as i64 }, "8"),
    ("logical_decoding_work_mem", Kind::Memory { unit_kb: 1, min: 64, max: i32::MAX as i64 }, "64MB"),
    ("maintenance_work_mem", Kind::Memory { unit_kb: 1, min: 1024, max: i32::MAX as i64 }, "64MB"),
    ("max_parallel_maintenance_workers", Kind::Int { min: 0, max: 1024 }, "2"),
    ("max_parallel_workers", Kind::Int { min: 0, max: 1024 }, "8"),
    ("max_parallel_workers_per_gather", Kind::Int { min: 0, max: 1024 }, "2"),
    ("min_parallel_index_scan_size", Kind::Memory { unit_kb: 8, min: 0, max: 715_827_882 }, "512kB"),
    ("min_parallel_table_scan_size", Kind::Memory { unit_kb: 8, min: 0, max: 715_827_882 }, "8MB"),
    ("parallel_leader_participation", Kind::Bool, "on"),
    ("parallel_setup_cost", Kind::Real { min: 0.0, max: f64::MAX }, "1000"),
    ("parallel_tuple_cost", Kind::Real { min: 0.0, max: f64::MAX }, "0.1"),
    ("plan_cache_mode", Kind::Enum(&["auto", "force_generic_plan", "force_custom_plan"]), "auto"),
    ("stats_fetch_consistency", Kind::Enum(&["none", "cache", "snapshot"]), "cache"),
    ("vacuum_cost_delay", Kind::Millis { min: 0.0, max: 100.0 }, "0"),
    ("vacuum_cost_limit", Kind::Int { min: 1, max: 10000 }, "200"),
    ("vacuum_cost_page_dirty", Kind::Int { min: 0, max: 10000 }, "20"),
    ("vacuum_cost_page_hit", Kind::Int { min: 0, max: 10000 }, "1"),
    ("work_mem", Kind::Memory { unit_kb: 1, min: 64, max: i32::MAX as i64 }, "4MB"),
];

pub(crate) fn kind(name: &str) -> Option<Kind> {
    TUNABLES.iter().find(|(n, ..)| *n == name).map(|(_, k, _)| *k)
}

/// pg_settings' view of a tunable whose SHOW value is `shown`: its
/// setting in the base unit, the unit, and its type's name; `None` if
/// `name` is not a tunable.
pub(crate) fn describe(name: &str, shown: &str) -> Option<(String, Option<&'static str>, &'static str)> {
    Some(match kind(name)? {
        Kind::Memory { unit_kb, .. } => {
            let units = memory_units(shown, unit_kb).unwrap_or_default();
            (units.to_string(), Some(if unit_kb == 1 { "kB" } else { "8kB" }), "integer")
        }
        Kind::Int { .. } => (shown.to_owned(), None, "integer"),
        Kind::Real { .. } => (shown.to_owned(), None, "real"),
        Kind::Millis { .. } => (millis(shown).map(show_real).unwrap_or_default(), Some("ms"), "real"),
        Kind::Bool => (shown.to_owned(), None, "bool"),
        Kind::Enum(_) => (shown.to_owned(), None, "enum"),
        Kind::OneOf { .. } => (shown.to_owned(), None, "string"),
    })
}

/// An integer as PostgreSQL's settings read one (decimal, or hex with 0x).
pub(crate) fn integer(value: &str) -> Option<i64> {
    let v = value.trim();
    match v.strip_prefix("0x").or_else(|| v.strip_prefix("0X")) {
        Some(hex) => i64::from_str_radix(hex, 16).ok(),
        None => v.parse().ok().or_else(|| {
            // A fraction rounds to the nearest integer, as in PostgreSQL.
            v.parse::<f64>().ok().filter(|x| x.is_finite() && x.abs() < 9.0e18).map(|x| x.round() as i64)
        }),
    }
}

/// A memory value in units of `unit_kb` kB: a number with an optional
/// unit (B, kB, MB, GB, TB; none means the setting's own unit), rounded
/// to the nearest unit as PostgreSQL rounds it. `Err(true)`: a number
/// with an unknown unit; `Err(false)`: no number.
pub(crate) fn memory_units(value: &str, unit_kb: i64) -> Result<i64, bool> {
    let v = value.trim();
    let split =
        v.find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-' || c == '+')).unwrap_or(v.len());
    let (number, unit) = v.split_at(split);
    let x: f64 = number.parse().ok().filter(|x: &f64| x.is_finite()).ok_or(false)?;
    let kb = match unit.trim() {
        "" => return Ok(x.round() as i64),
        "B" => x / 1024.0,
        "kB" => x,
        "MB" => x * 1024.0,
        "GB" => x * 1024.0 * 1024.0,
        "TB" => x * 1024.0 * 1024.0 * 1024.0,
        _ => return Err(true),
    };
    let units = (kb / unit_kb as f64).round();
    if units.abs() < 9.0e18 {
        Ok(units as i64)
    } else {
        Err(false)
    }
}

/// kB as PostgreSQL shows memory: the largest unit that divides it.
pub(crate) fn show_memory(kb: i64) -> String {
    if kb == 0 {
        return "0".into();
    }
    for (unit, size) in [("TB", 1i64 << 30), ("GB", 1 << 20), ("MB", 1 << 10)] {
        if kb % size == 0 {
            return format!("{}{unit}", kb / size);
        }
    }
    format!("{kb}kB")
}

/// A time value in milliseconds: a number with an optional unit (us, ms,
/// s, min, h, d; none means milliseconds).
pub(crate) fn millis(value: &str) -> Option<f64> {
    let v = value.trim();
    let split =
        v.find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-' || c == '+')).unwrap_or(v.len());
    let (number, unit) = v.split_at(split);
    let x: f64 = number.parse().ok().filter(|x: &f64| x.is_finite())?;
    Some(match unit.trim() {
        "us" => x / 1000.0,
        "" | "ms" => x,
        "s" => x * 1000.0,
        "min" => x * 60_000.0,
        "h" => x * 3_600_000.0,
        "d" => x * 86_400_000.0,
        _ => return None,
    })
}

/// Milliseconds as PostgreSQL shows a real time setting: whole
/// milliseconds with "ms", else microseconds with "us"; zero bare.
pub(crate) fn show_millis(ms: f64) -> String {
    if ms == 0.0 {
        "0".into()
    } else if ms.fract() == 0.0 {
        format!("{}ms", show_real(ms))
    } else {
        format!("{}us", show_real((ms * 1000.0).round()))
    }
}

/// A real as PostgreSQL's `%g` shows it, for the values settings hold.
pub(crate) fn show_real(x: f64) -> String {
    if x == f64::MAX {
        return "1.79769e+308".into();
    }
    let s = format!("{x}");
    if s.len() > 12 {
        format!("{x:e}")
    } else {
        s
    }
}
