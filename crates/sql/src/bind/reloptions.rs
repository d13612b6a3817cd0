//! Storage parameters (PostgreSQL's reloptions): which each kind of
//! relation takes, their values' checks with PostgreSQL's messages, and
//! how a list given to CREATE or ALTER … SET / RESET becomes the list a
//! relation keeps (RELOPTIONS in crates/sql/README.md).
//!
//! A kept list is text, `name=value`, as pg_class.reloptions shows it.
//! Most parameters tune PostgreSQL's page layout or its vacuum's costs,
//! which have nothing to act on here; they are checked and kept, so a
//! schema that sets them loads and reads back as written. What acts here:
//! `autovacuum_enabled`, `autovacuum_vacuum_threshold` and
//! `autovacuum_vacuum_scale_factor` (the autovacuum worker reads them),
//! and a view's `check_option`.

use snapscale_engine::catalog::CheckOption;
use snapscale_sqlstate::SqlState;
use snapscale_values::SqlError;

use snapscale_engine::LockMode;

use super::{relation_name, Binder, Resolver};
use crate::parse::reloptions_syntax::{AlterOptions, OptionsTarget, StorageParam};
use crate::plan::{Plan, RelKind, Utility};

/// Which parameters a list is checked against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Family {
    /// A table or a materialized view.
    Heap,
    /// A table's TOAST table (`toast.` parameters).
    Toast,
    View,
    /// A btree index (the only access method here).
    Btree,
}

#[derive(Clone, Copy)]
enum Kind {
    Bool,
    Int(i64, i64),
    Real(f64, f64),
    /// Accepted spellings (any case), and the DETAIL naming them.
    Enum(&'static [&'static str], &'static str),
}

/// A parameter: its name, families, kind, and whether changing it needs
/// an ACCESS EXCLUSIVE lock (else SHARE UPDATE EXCLUSIVE suffices).
struct Spec(&'static str, &'static [Family], Kind, bool);

const HEAP_TOAST: &[Family] = &[Family::Heap, Family::Toast];
const HEAP: &[Family] = &[Family::Heap];
const INT_MAX: i64 = i32::MAX as i64;
const INDEX_CLEANUP: &[&str] = &["auto", "on", "off", "true", "false", "yes", "no", "1", "0"];

/// PostgreSQL 15's parameters for these families.
const SPECS: &[Spec] = &[
    Spec("autovacuum_enabled", HEAP_TOAST, Kind::Bool, false),
    Spec("user_catalog_table", HEAP, Kind::Bool, true),
    Spec("vacuum_truncate", HEAP_TOAST, Kind::Bool, false),
    Spec("security_barrier", &[Family::View], Kind::Bool, true),
    Spec("security_invoker", &[Family::View], Kind::Bool, true),
    Spec("deduplicate_items", &[Family::Btree], Kind::Bool, false),
    Spec("fillfactor", &[Family::Heap, Family::Btree], Kind::Int(10, 100), false),
    Spec("autovacuum_vacuum_threshold", HEAP_TOAST, Kind::Int(0, INT_MAX), false),
    Spec("autovacuum_vacuum_insert_threshold", HEAP_TOAST, Kind::Int(-1, INT_MAX), false),
    Spec("autovacuum_analyze_threshold", HEAP, Kind::Int(0, INT_MAX), false),
    Spec("autovacuum_vacuum_cost_limit", HEAP_TOAST, Kind::Int(1, 10000), false),
    Spec("autovacuum_freeze_min_age", HEAP_TOAST, Kind::Int(0, 1_000_000_000), false),
    Spec("autovacuum_multixact_freeze_min_age", HEAP_TOAST, Kind::Int(0, 1_000_000_000), false),
    Spec("autovacuum_freeze_max_age", HEAP_TOAST, Kind::Int(100_000, 2_000_000_000), false),
    Spec("autovacuum_multixact_freeze_max_age", HEAP_TOAST, Kind::Int(10_000, 2_000_000_000), false),
    Spec("autovacuum_freeze_table_age", HEAP_TOAST, Kind::Int(0, 2_000_000_000), false),
    Spec("autovacuum_multixact_freeze_table_age", HEAP_TOAST, Kind::Int(0, 2_000_000_000), false),
    Spec("log_autovacuum_min_duration", HEAP_TOAST, Kind::Int(-1, INT_MAX), false),
    Spec("toast_tuple_target", HEAP, Kind::Int(128, 8160), false),
    Spec("parallel_workers", HEAP, Kind::Int(0, 1024), false),
    Spec("autovacuum_vacuum_cost_delay", HEAP_TOAST, Kind::Real(0.0, 100.0), false),
    Spec("autovacuum_vacuum_scale_factor", HEAP_TOAST, Kind::Real(0.0, 100.0), false),
    Spec("autovacuum_vacuum_insert_scale_factor", HEAP_TOAST, Kind::Real(0.0, 100.0), false),
    Spec("autovacuum_analyze_scale_factor", HEAP, Kind::Real(0.0, 100.0), false),
    Spec("vacuum_cleanup_index_scale_factor", &[Family::Btree], Kind::Real(0.0, 1e10), false),
    Spec(
        "vacuum_index_cleanup",
        HEAP_TOAST,
        Kind::Enum(INDEX_CLEANUP, "Valid values are \"on\", \"off\", and \"auto\"."),
        false,
    ),
    Spec(
        "check_option",
        &[Family::View],
        Kind::Enum(&["local", "cascaded"], "Valid values are \"local\" and \"cascaded\"."),
        true,
    ),
];

fn invalid(message: String) -> SqlError {
    SqlError::new(SqlState::INVALID_PARAMETER_VALUE, message)
}

/// PostgreSQL's transformRelOptions: `old` (one namespace's list, without
/// its prefix) changed by `params`. SET and CREATE replace or add the
/// parameters of `namespace` in the order given; RESET drops them. Every
/// element's namespace must be one of `namespaces` (CREATE and SET).
/// `oids`: CREATE TABLE, where `oids=false` is accepted and dropped.
pub(crate) fn transform(
    old: &[String],
    params: &[StorageParam],
    namespace: Option<&str>,
    namespaces: &[&str],
    oids: bool,
    reset: bool,
) -> Result<Vec<String>, SqlError> {
    let ours = |p: &StorageParam| p.namespace.as_deref() == namespace;
    let mut out: Vec<String> = old
        .iter()
        .filter(|o| {
            !params
                .iter()
                .any(|p| ours(p) && o.strip_prefix(p.name.as_str()).is_some_and(|r| r.starts_with('=')))
        })
        .cloned()
        .collect();
    for p in params {
        if reset {
            if p.value.is_some() {
                return Err(SqlError::new(
                    SqlState::SYNTAX_ERROR,
                    "RESET must not include values for parameters",
                ));
            }
            continue;
        }
        if let Some(ns) = &p.namespace {
            if !namespaces.contains(&ns.as_str()) {
                return Err(invalid(format!("unrecognized parameter namespace \"{ns}\"")));
            }
        }
        if !ours(p) {
            continue;
        }
        if p.name.contains('=') {
            return Err(invalid(format!("invalid option name \"{}\": must not contain \"=\"", p.name)));
        }
        let value = p.value.as_deref().unwrap_or("true");
        if oids && p.namespace.is_none() && p.name == "oids" {
            if snapscale_values::pg_bool(value) != Some(false) {
                return Err(SqlError::new(
                    SqlState::FEATURE_NOT_SUPPORTED,
                    "tables declared WITH OIDS are not supported",
                ));
            }
            continue;
        }
        out.push(format!("{}={value}", p.name));
    }
    Ok(out)
}

/// Checks a kept list against `family`, in its order, as PostgreSQL
/// parses one: an unknown name, a name given twice, a bad value. The
/// returned flag: some parameter needs an ACCESS EXCLUSIVE lock to change.
pub(crate) fn validate(options: &[String], family: Family) -> Result<bool, SqlError> {
    let mut seen: Vec<&str> = Vec::new();
    let mut exclusive = false;
    for o in options {
        let (name, value) = o.split_once('=').unwrap_or((o, ""));
        let Some(spec) = SPECS.iter().find(|s| s.0 == name && s.1.contains(&family)) else {
            return Err(invalid(format!("unrecognized parameter \"{name}\"")));
        };
        if seen.contains(&name) {
            return Err(invalid(format!("parameter \"{name}\" specified more than once")));
        }
        seen.push(name);
        exclusive |= spec.3;
        match spec.2 {
            Kind::Bool => {
                if snapscale_values::pg_bool(value).is_none() {
                    return Err(invalid(format!("invalid value for boolean option \"{name}\": {value}")));
                }
            }
            Kind::Int(min, max) => {
                let n = parse_int(value).ok_or_else(|| {
                    invalid(format!("invalid value for integer option \"{name}\": {value}"))
                })?;
                if n < min || n > max {
                    return Err(invalid(format!("value {value} out of bounds for option \"{name}\""))
                        .with_detail(format!("Valid values are between \"{min}\" and \"{max}\".")));
                }
            }
            Kind::Real(min, max) => {
                let x = parse_real(value).ok_or_else(|| {
                    invalid(format!("invalid value for floating point option \"{name}\": {value}"))
                })?;
                if x < min || x > max {
                    return Err(invalid(format!("value {value} out of bounds for option \"{name}\""))
                        .with_detail(format!("Valid values are between \"{min:.6}\" and \"{max:.6}\".")));
                }
            }
            Kind::Enum(values, detail) => {
                if !values.iter().any(|v| v.eq_ignore_ascii_case(value)) {
                    return Err(invalid(format!("invalid value for enum option \"{name}\": {value}"))
                        .with_detail(detail));
                }
            }
        }
    }
    Ok(exclusive)
}

/// An integer as PostgreSQL's parse_int reads a reloption: decimal, hex
/// (`0x`) or octal (leading `0`), or a number with a fraction or exponent
/// rounded to the nearest; surrounding blanks allowed; within 32 bits.
fn parse_int(text: &str) -> Option<i64> {
    let t = text.trim();
    let (negative, digits) = match t.as_bytes().first()? {
        b'-' => (true, &t[1..]),
        b'+' => (false, &t[1..]),
        _ => (false, t),
    };
    let whole = if let Some(hex) = digits.strip_prefix("0x").or_else(|| digits.strip_prefix("0X")) {
        i64::from_str_radix(hex, 16).ok()
    } else if digits.len() > 1 && digits.starts_with('0') && digits.bytes().all(|b| b.is_ascii_digit()) {
        i64::from_str_radix(digits, 8).ok()
    } else if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
        digits.parse::<i64>().ok()
    } else {
        None
    };
    let n = match whole {
        Some(n) if negative => -n,
        Some(n) => n,
        None => {
            let x = parse_real(t)?;
            let rounded = x.round_ties_even();
            if !(i32::MIN as f64..=i32::MAX as f64).contains(&rounded) {
                return None;
            }
            rounded as i64
        }
    };
    (i64::from(i32::MIN)..=i64::from(i32::MAX)).contains(&n).then_some(n)
}

/// A floating-point number as PostgreSQL's parse_real reads a reloption.
fn parse_real(text: &str) -> Option<f64> {
    let t = text.trim();
    let numeric = t.bytes().any(|b| b.is_ascii_digit())
        && t.bytes().all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-'));
    let special = matches!(t.to_ascii_lowercase().trim_start_matches(['+', '-']), "infinity" | "inf" | "nan");
    if !numeric && !special {
        return None;
    }
    t.parse::<f64>().ok().filter(|x| !x.is_nan())
}

/// CREATE TABLE / MATERIALIZED VIEW's list: the table's parameters and
/// its TOAST table's (kept as `toast.name=value`), each checked.
pub(crate) fn create_heap(params: &[StorageParam], table: bool) -> Result<Vec<String>, SqlError> {
    let main = transform(&[], params, None, &["toast"], table, false)?;
    validate(&main, Family::Heap)?;
    let toast = transform(&[], params, Some("toast"), &["toast"], table, false)?;
    validate(&toast, Family::Toast)?;
    Ok(main.into_iter().chain(toast.into_iter().map(|o| format!("toast.{o}"))).collect())
}

/// CREATE VIEW's list (with a trailing WITH CHECK OPTION's as PostgreSQL
/// adds it), checked, and the check option it sets.
pub(crate) fn create_view(
    params: &[StorageParam],
    trailing: Option<CheckOption>,
) -> Result<(Vec<String>, Option<CheckOption>), SqlError> {
    let mut params = params.to_vec();
    if let Some(c) = trailing {
        let value = match c {
            CheckOption::Local => "local",
            CheckOption::Cascaded => "cascaded",
        };
        params.push(StorageParam { namespace: None, name: "check_option".into(), value: Some(value.into()) });
    }
    let options = transform(&[], &params, None, &[], false, false)?;
    validate(&options, Family::View)?;
    let check_option = check_option_of(&options);
    Ok((options, check_option))
}

/// The check option a view's kept list sets.
pub(crate) fn check_option_of(options: &[String]) -> Option<CheckOption> {
    let value = options.iter().find_map(|o| o.strip_prefix("check_option="))?;
    Some(if value.eq_ignore_ascii_case("local") { CheckOption::Local } else { CheckOption::Cascaded })
}

/// CREATE INDEX's list, checked.
pub(crate) fn create_index(params: &[StorageParam]) -> Result<Vec<String>, SqlError> {
    let options = transform(&[], params, None, &[], false, false)?;
    validate(&options, Family::Btree)?;
    Ok(options)
}

/// ALTER … SET / RESET of a relation whose kept list is `old`: the new
/// list, and whether the change needs an ACCESS EXCLUSIVE lock. A table's
/// TOAST parameters change beside its own.
pub(crate) fn alter(
    old: &[String],
    params: &[StorageParam],
    family: Family,
    reset: bool,
) -> Result<(Vec<String>, bool), SqlError> {
    let namespaces: &[&str] = if family == Family::Heap { &["toast"] } else { &[] };
    let (old_main, old_toast): (Vec<String>, Vec<String>) =
        old.iter().cloned().partition(|o| !o.starts_with("toast."));
    let main = transform(&old_main, params, None, namespaces, false, reset)?;
    // RESET names parameters that need not be set; their locks count.
    let named: Vec<String> =
        params.iter().filter(|p| p.namespace.is_none()).map(|p| format!("{}=", p.name)).collect();
    let mut exclusive = validate(&main, family)?;
    exclusive |=
        SPECS.iter().any(|s| s.3 && s.1.contains(&family) && named.iter().any(|n| n[..n.len() - 1] == *s.0));
    if family != Family::Heap {
        return Ok((main, exclusive));
    }
    let old_toast: Vec<String> = old_toast.iter().map(|o| o["toast.".len()..].to_owned()).collect();
    let toast = transform(&old_toast, params, Some("toast"), namespaces, false, reset)?;
    validate(&toast, Family::Toast)?;
    Ok((main.into_iter().chain(toast.into_iter().map(|o| format!("toast.{o}"))).collect(), exclusive))
}

impl<R: Resolver> Binder<'_, R> {
    /// `ALTER {TABLE | INDEX | VIEW | MATERIALIZED VIEW} … {SET | RESET}
    /// (…)`: the relation's (or index's) new list. ALTER TABLE reaches a
    /// view, a materialized view or an index too, as PostgreSQL's does;
    /// the others name only their own kind. The lock is PostgreSQL's:
    /// SHARE UPDATE EXCLUSIVE unless a parameter named needs more.
    pub(super) fn alter_options(&mut self, a: &AlterOptions) -> Result<Plan, SqlError> {
        let name = relation_name(&a.name)?;
        let tag = match a.target {
            OptionsTarget::Table => "ALTER TABLE",
            OptionsTarget::Index => "ALTER INDEX",
            OptionsTarget::View => "ALTER VIEW",
            OptionsTarget::MatView => "ALTER MATERIALIZED VIEW",
        };
        let wrong =
            |what: &str| SqlError::new(SqlState::WRONG_OBJECT_TYPE, format!("\"{name}\" is not {what}"));
        if let Some(rel) = self.resolver.resolve(&name)? {
            let family = match RelKind::of(&rel.entry) {
                RelKind::Sequence if a.target == OptionsTarget::Table => {
                    let action = if a.reset { "RESET" } else { "SET" };
                    return Err(SqlError::new(
                        SqlState::WRONG_OBJECT_TYPE,
                        format!("ALTER action {action} cannot be performed on relation \"{name}\""),
                    )
                    .with_detail("This operation is not supported for sequences."));
                }
                RelKind::Table if matches!(a.target, OptionsTarget::Table) => Family::Heap,
                RelKind::MatView if matches!(a.target, OptionsTarget::Table | OptionsTarget::MatView) => {
                    Family::Heap
                }
                RelKind::View if matches!(a.target, OptionsTarget::Table | OptionsTarget::View) => {
                    Family::View
                }
                _ => {
                    return Err(match a.target {
                        OptionsTarget::Index => wrong("an index"),
                        OptionsTarget::View => wrong("a view"),
                        _ => wrong("a materialized view"),
                    })
                }
            };
            let (options, exclusive) = alter(&rel.entry.options, &a.params, family, a.reset)?;
            let sets_check_option =
                !a.reset && a.params.iter().any(|p| p.namespace.is_none() && p.name == "check_option");
            if let (Family::View, true, Some(view)) = (family, sets_check_option, rel.entry.view.as_ref()) {
                let names: Vec<&str> = rel.entry.columns.iter().map(|c| c.name.as_str()).collect();
                self.check_option_allowed(&name, rel.entry.oid, &view.query, &names)?;
            }
            let mode = if exclusive { LockMode::AccessExclusive } else { LockMode::ShareUpdateExclusive };
            let rel = self.any_relation(&a.name, mode)?;
            return Ok(Plan::Utility(Utility::SetOptions { rel, index: None, options, tag }));
        }
        if matches!(a.target, OptionsTarget::Table | OptionsTarget::Index) {
            if let Some(owner) = self.resolver.index_owner(&name)? {
                let name = snapscale_engine::names::bare(&name);
                let def = owner.entry.indexes.iter().find(|i| i.name == name).expect("its owner has it");
                let (options, _) = alter(&def.options, &a.params, Family::Btree, a.reset)?;
                let table = self.name_of(&owner.entry)?;
                let rel = self.rel(&table, LockMode::ShareUpdateExclusive)?;
                return Ok(Plan::Utility(Utility::SetOptions { rel, index: Some(name), options, tag }));
            }
        }
        if a.if_exists {
            return Ok(Plan::Utility(Utility::Skip {
                code: SqlState::SUCCESSFUL_COMPLETION,
                notice: format!("relation \"{name}\" does not exist, skipping"),
                tag,
            }));
        }
        Err(SqlError::new(SqlState::UNDEFINED_TABLE, format!("relation \"{name}\" does not exist")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(namespace: Option<&str>, name: &str, value: Option<&str>) -> StorageParam {
        StorageParam::of(namespace, name, value)
    }

    fn message(e: SqlError) -> String {
        e.into_data().message
    }

    #[test]
    fn values_are_checked_as_postgresql_checks_them() {
        let ok = |list: &[&str], f| validate(&list.iter().map(|s| s.to_string()).collect::<Vec<_>>(), f);
        assert!(ok(
            &["fillfactor=30", "autovacuum_enabled=false", "autovacuum_analyze_scale_factor=0.2"],
            Family::Heap
        )
        .is_ok());
        assert_eq!(
            message(ok(&["fillfactor=2"], Family::Heap).unwrap_err()),
            "value 2 out of bounds for option \"fillfactor\""
        );
        assert_eq!(
            message(ok(&["fillfactor=-30.1"], Family::Heap).unwrap_err()),
            "value -30.1 out of bounds for option \"fillfactor\""
        );
        assert_eq!(
            message(ok(&["fillfactor=true"], Family::Heap).unwrap_err()),
            "invalid value for integer option \"fillfactor\": true"
        );
        assert_eq!(
            message(ok(&["autovacuum_enabled=12"], Family::Heap).unwrap_err()),
            "invalid value for boolean option \"autovacuum_enabled\": 12"
        );
        let e = ok(&["autovacuum_analyze_scale_factor=110.0"], Family::Heap).unwrap_err();
        assert_eq!(e.detail.as_deref(), Some("Valid values are between \"0.000000\" and \"100.000000\"."));
        assert_eq!(
            message(ok(&["fillfactor=30", "fillfactor=40"], Family::Heap).unwrap_err()),
            "parameter \"fillfactor\" specified more than once"
        );
        assert_eq!(
            message(ok(&["fillfactor=30"], Family::Toast).unwrap_err()),
            "unrecognized parameter \"fillfactor\""
        );
        assert!(ok(&["deduplicate_items=off", "fillfactor=70"], Family::Btree).is_ok());
        assert!(ok(&["check_option=LOCAL"], Family::View).unwrap());
        assert_eq!(parse_int("010"), Some(8));
        assert_eq!(parse_int("0x10"), Some(16));
        assert_eq!(parse_int("10.5"), Some(10));
        assert_eq!(parse_int("2147483648"), None);
    }

    #[test]
    fn set_and_reset_keep_order_as_postgresql_does() {
        let old: Vec<String> =
            ["fillfactor=30", "autovacuum_enabled=false", "autovacuum_analyze_scale_factor=0.2"]
                .iter()
                .map(|s| s.to_string())
                .collect();
        let set =
            [p(None, "fillfactor", Some("31")), p(None, "autovacuum_analyze_scale_factor", Some("0.3"))];
        let (new, exclusive) = alter(&old, &set, Family::Heap, false).unwrap();
        assert_eq!(new, ["autovacuum_enabled=false", "fillfactor=31", "autovacuum_analyze_scale_factor=0.3"]);
        assert!(!exclusive);
        let (new, _) = alter(&new, &[p(None, "autovacuum_enabled", None)], Family::Heap, false).unwrap();
        assert_eq!(new, ["fillfactor=31", "autovacuum_analyze_scale_factor=0.3", "autovacuum_enabled=true"]);
        let (new, _) =
            alter(&new, &[p(Some("toast"), "autovacuum_enabled", Some("off"))], Family::Heap, false).unwrap();
        assert_eq!(new.last().unwrap(), "toast.autovacuum_enabled=off");
        let (new, _) = alter(
            &new,
            &[p(None, "fillfactor", None), p(Some("toast"), "autovacuum_enabled", None)],
            Family::Heap,
            true,
        )
        .unwrap();
        assert_eq!(new, ["autovacuum_analyze_scale_factor=0.3", "autovacuum_enabled=true"]);
        let e = alter(&new, &[p(None, "fillfactor", Some("12"))], Family::Heap, true).unwrap_err();
        assert_eq!(message(e), "RESET must not include values for parameters");
        let e = create_heap(&[p(Some("nope"), "fillfactor", Some("2"))], true).unwrap_err();
        assert_eq!(message(e), "unrecognized parameter namespace \"nope\"");
        assert_eq!(create_heap(&[p(None, "oids", Some("false"))], true).unwrap(), Vec::<String>::new());
        assert!(create_heap(&[p(None, "oids", None)], true).is_err());
    }
}
