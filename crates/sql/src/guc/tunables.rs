//! Settings that tune machinery this engine does not have, or has in
//! another shape: the memory budgets of sorts and hashes (rows live in
//! memory here and nothing spills), parallel query, JIT, the cost-based
//! vacuum delay, TOAST compression, the plan cache's mode, the limits on
//! join reordering (joins are planned in their written order). Applications,
//! migration tools and PostgreSQL's own tests SET them (`SET work_mem =
//! '64MB'` before a report is ordinary), so each is accepted, checked as
//! PostgreSQL checks it (its type, units, range and values, with
//! PostgreSQL's messages), kept per session, shown and reset; none of them
//! changes what a statement computes or how it is run, except
//! `default_statistics_target`, which ANALYZE reads (`exec/analyze.rs`).

use std::collections::BTreeMap;

use super::SettingError;
use crate::setting_kinds::{
    integer, kind, memory_units, millis, show_memory, show_millis, show_real, Kind, TUNABLES,
};

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
