//! Settings that tune machinery this engine does not have, or has in
//! another shape: the memory budgets of sorts and hashes (rows live in
//! memory here and nothing spills), parallel query, JIT, the cost-based
//! vacuum delay, TOAST compression, the plan cache's mode. Applications,
//! migration tools and PostgreSQL's own tests SET them (`SET work_mem =
//! '64MB'` before a report is ordinary), so each is accepted, checked as
//! PostgreSQL checks it (its type, units, range and values, with
//! PostgreSQL's messages), kept per session, shown and reset; none of them
//! changes what a statement computes or how it is run.

use std::collections::BTreeMap;

use super::SettingError;

/// How a setting's value is read and shown.
#[derive(Clone, Copy)]
enum Kind {
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
const TUNABLES: [(&str, Kind, &str); 28] = [
    ("constraint_exclusion", Kind::Enum(&["partition", "on", "off"]), "partition"),
    ("default_table_access_method", Kind::OneOf { values: &["heap"], what: "Table access method" }, "heap"),
    ("default_tablespace", Kind::OneOf { values: &["", "pg_default"], what: "Tablespace" }, ""),
    ("default_toast_compression", Kind::Enum(&["pglz", "lz4"]), "pglz"),
    ("force_parallel_mode", Kind::Enum(&["off", "on", "regress"]), "off"),
    ("gin_fuzzy_search_limit", Kind::Int { min: 0, max: i32::MAX as i64 }, "0"),
    ("hash_mem_multiplier", Kind::Real { min: 1.0, max: 1000.0 }, "2"),
    ("jit", Kind::Bool, "on"),
    ("jit_above_cost", Kind::Real { min: -1.0, max: f64::MAX }, "100000"),
    ("jit_inline_above_cost", Kind::Real { min: -1.0, max: f64::MAX }, "500000"),
    ("jit_optimize_above_cost", Kind::Real { min: -1.0, max: f64::MAX }, "500000"),
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

fn kind(name: &str) -> Option<Kind> {
    TUNABLES.iter().find(|(n, ..)| *n == name).map(|(_, k, _)| *k)
}

/// One session's values of the tunables that differ from their defaults,
/// as SHOW prints them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tunables {
    set: BTreeMap<&'static str, String>,
}

impl Tunables {
    /// The tunables' names.
    pub(super) fn names() -> impl Iterator<Item = &'static str> {
        TUNABLES.iter().map(|(n, ..)| *n)
    }

    /// Whether `name` is a tunable.
    pub(super) fn has(name: &str) -> bool {
        kind(name).is_some()
    }

    /// SET name = value, checked as PostgreSQL checks it.
    pub(super) fn set(&mut self, name: &str, value: &str) -> Result<(), SettingError> {
        let Some(&(key, kind, _)) = TUNABLES.iter().find(|(n, ..)| *n == name) else {
            return Err(SettingError::Unknown(name.into()));
        };
        let shown = normalise(name, kind, value)?;
        self.set.insert(key, shown);
        Ok(())
    }

    /// SHOW name; `None` if `name` is not a tunable.
    pub(super) fn show(&self, name: &str) -> Option<String> {
        let (key, _, default) = TUNABLES.iter().find(|(n, ..)| *n == name)?;
        Some(self.set.get(key).cloned().unwrap_or_else(|| (*default).to_owned()))
    }
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

/// `value` read as `kind` and shown as PostgreSQL shows it.
fn normalise(name: &str, kind: Kind, value: &str) -> Result<String, SettingError> {
    let bad = |hint: Option<String>| SettingError::InvalidValue {
        message: format!("invalid value for parameter \"{name}\": \"{value}\""),
        detail: None,
        hint,
    };
    match kind {
        Kind::Memory { unit_kb, min, max } => {
            let units = memory_units(value, unit_kb).map_err(|unit| {
                // A number with a unit this setting lacks names the units;
                // no number at all is just invalid.
                bad(unit.then(|| {
                    "Valid units for this parameter are \"B\", \"kB\", \"MB\", \"GB\", and \"TB\".".into()
                }))
            })?;
            if units < min || units > max {
                let unit = if unit_kb == 1 { "kB".to_owned() } else { format!("{unit_kb}kB") };
                return Err(SettingError::InvalidValue {
                    message: format!(
                        "{units} {unit} is outside the valid range for parameter \"{name}\" ({min} .. {max})"
                    ),
                    detail: None,
                    hint: None,
                });
            }
            Ok(show_memory(units * unit_kb))
        }
        Kind::Int { min, max } => {
            let n = integer(value).ok_or_else(|| bad(None))?;
            if n < min || n > max {
                return Err(SettingError::InvalidValue {
                    message: format!(
                        "{n} is outside the valid range for parameter \"{name}\" ({min} .. {max})"
                    ),
                    detail: None,
                    hint: None,
                });
            }
            Ok(n.to_string())
        }
        Kind::Real { min, max } => {
            let x: f64 =
                value.trim().parse().ok().filter(|x: &f64| x.is_finite()).ok_or_else(|| bad(None))?;
            if x < min || x > max {
                return Err(SettingError::InvalidValue {
                    message: format!(
                        "{} is outside the valid range for parameter \"{name}\" ({} .. {})",
                        show_real(x),
                        show_real(min),
                        show_real(max)
                    ),
                    detail: None,
                    hint: None,
                });
            }
            Ok(show_real(x))
        }
        Kind::Millis { min, max } => {
            let ms = millis(value).ok_or_else(|| {
                bad(Some(
                    "Valid units for this parameter are \"us\", \"ms\", \"s\", \"min\", \"h\", and \"d\"."
                        .into(),
                ))
            })?;
            if ms < min || ms > max {
                return Err(SettingError::InvalidValue {
                    message: format!(
                        "{} ms is outside the valid range for parameter \"{name}\" ({} .. {})",
                        show_real(ms),
                        show_real(min),
                        show_real(max)
                    ),
                    detail: None,
                    hint: None,
                });
            }
            Ok(show_millis(ms))
        }
        Kind::Bool => super::parse_bool(name, value).map(super::on_off),
        Kind::Enum(values) => {
            let v = value.trim().to_ascii_lowercase();
            if let Some(found) = values.iter().find(|w| **w == v) {
                return Ok((*found).to_owned());
            }
            // PostgreSQL's hidden synonyms of the boolean-like ones.
            let on_off = values.contains(&"on") && values.contains(&"off");
            match v.as_str() {
                "true" | "yes" | "1" if on_off => Ok("on".into()),
                "false" | "no" | "0" if on_off => Ok("off".into()),
                _ => Err(bad(Some(format!("Available values: {}.", values.join(", "))))),
            }
        }
        Kind::OneOf { values, what } => match values.iter().find(|w| **w == value) {
            Some(found) => Ok((*found).to_owned()),
            // PostgreSQL's index access methods exist, of another type.
            None if what == "Table access method"
                && ["btree", "hash", "gist", "gin", "spgist", "brin"].contains(&value) =>
            {
                Err(SettingError::WrongKind(format!("access method \"{value}\" is not of type TABLE")))
            }
            None => Err(SettingError::InvalidValue {
                message: format!("invalid value for parameter \"{name}\": \"{value}\""),
                detail: Some(format!("{what} \"{value}\" does not exist.")),
                hint: None,
            }),
        },
    }
}

/// An integer as PostgreSQL's settings read one (decimal, or hex with 0x).
fn integer(value: &str) -> Option<i64> {
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
fn memory_units(value: &str, unit_kb: i64) -> Result<i64, bool> {
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
fn show_memory(kb: i64) -> String {
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
fn millis(value: &str) -> Option<f64> {
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
fn show_millis(ms: f64) -> String {
    if ms == 0.0 {
        "0".into()
    } else if ms.fract() == 0.0 {
        format!("{}ms", show_real(ms))
    } else {
        format!("{}us", show_real((ms * 1000.0).round()))
    }
}

/// A real as PostgreSQL's `%g` shows it, for the values settings hold.
fn show_real(x: f64) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_is_read_with_units_and_shown_in_the_largest() {
        let mut t = Tunables::default();
        assert_eq!(t.show("work_mem").as_deref(), Some("4MB"));
        t.set("work_mem", "64MB").unwrap();
        assert_eq!(t.show("work_mem").as_deref(), Some("64MB"));
        t.set("work_mem", "100000").unwrap();
        assert_eq!(t.show("work_mem").as_deref(), Some("100000kB"));
        t.set("work_mem", "1GB").unwrap();
        assert_eq!(t.show("work_mem").as_deref(), Some("1GB"));
        let e = t.set("work_mem", "10kB").unwrap_err();
        assert_eq!(
            e.to_string(),
            "10 kB is outside the valid range for parameter \"work_mem\" (64 .. 2147483647)"
        );
        assert!(matches!(t.set("work_mem", "12XB"), Err(SettingError::InvalidValue { hint: Some(_), .. })));
        t.set("min_parallel_table_scan_size", "0").unwrap();
        assert_eq!(t.show("min_parallel_table_scan_size").as_deref(), Some("0"));
        t.set("min_parallel_table_scan_size", "16MB").unwrap();
        assert_eq!(t.show("min_parallel_table_scan_size").as_deref(), Some("16MB"));
    }

    #[test]
    fn numbers_enums_and_names_are_checked() {
        let mut t = Tunables::default();
        t.set("parallel_setup_cost", "0").unwrap();
        assert_eq!(t.show("parallel_setup_cost").as_deref(), Some("0"));
        t.set("parallel_tuple_cost", "0.5").unwrap();
        assert_eq!(t.show("parallel_tuple_cost").as_deref(), Some("0.5"));
        assert!(t.set("max_parallel_workers_per_gather", "2000").is_err());
        assert!(t.set("max_parallel_workers_per_gather", "x").is_err());
        t.set("force_parallel_mode", "REGRESS").unwrap();
        assert_eq!(t.show("force_parallel_mode").as_deref(), Some("regress"));
        t.set("force_parallel_mode", "true").unwrap();
        assert_eq!(t.show("force_parallel_mode").as_deref(), Some("on"));
        assert!(t.set("plan_cache_mode", "sometimes").is_err());
        t.set("vacuum_cost_delay", "2").unwrap();
        assert_eq!(t.show("vacuum_cost_delay").as_deref(), Some("2ms"));
        t.set("vacuum_cost_delay", "500us").unwrap();
        assert_eq!(t.show("vacuum_cost_delay").as_deref(), Some("500us"));
        assert!(t.set("default_table_access_method", "btree").is_err());
        t.set("jit", "off").unwrap();
        assert_eq!(t.show("jit").as_deref(), Some("off"));
        // What SHOW prints is read back the same (RESET sets it).
        for name in Tunables::names() {
            let shown = t.show(name).unwrap();
            let mut u = Tunables::default();
            u.set(name, &shown).unwrap();
            assert_eq!(u.show(name).unwrap(), shown, "{name}");
        }
    }
}
