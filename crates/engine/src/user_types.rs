//! User-defined types in the catalog: enums and domains.
//!
//! A type is a catalog row like a relation (`RelEntry::user_type`), so it
//! is created, altered and dropped inside transactions, logged, replayed
//! and invalidated exactly as relations are; it shares their names, as a
//! PostgreSQL table shares its name with its row type. It has an empty
//! storage of its own, which no statement ever writes, so that every path
//! that handles catalog rows handles it unchanged.
//!
//! An enum's labels are shared cells ([`EnumLabel`]): its definition and
//! every stored value hold the same cell, which is how RENAME VALUE reaches
//! stored values. Cells decoded from the WAL or a checkpoint are made
//! shared again by [`EnumRegistry`] before any session sees them.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use snapscale_values::{EnumLabel, OrderKey, SqlType, Value};

/// What kind of type a catalog row defines.
#[derive(Clone, Debug, PartialEq)]
pub enum TypeDef {
    Enum(EnumDef),
    Domain(DomainDef),
    /// A composite type: its attributes are the entry's columns.
    Composite,
}

/// An enum type: its labels in their order.
#[derive(Clone, Debug, PartialEq)]
pub struct EnumDef {
    pub labels: Vec<EnumDefLabel>,
}

/// One label as the catalog holds it.
#[derive(Clone, Debug, PartialEq)]
pub struct EnumDefLabel {
    pub cell: Arc<EnumLabel>,
    /// The name as of this catalog row (the cell's, once committed).
    pub name: Arc<str>,
    /// pg_enum.enumsortorder, kept as PostgreSQL assigns and renumbers it.
    pub sort_order: f32,
    /// The top-level transaction that added it with ALTER TYPE, while it
    /// runs (not logged): until it commits the label is unsafe to use,
    /// even in a type that transaction created (PostgreSQL's "unsafe use
    /// of new value": an index could hold a label a rollback removes).
    pub added_in: Option<u64>,
}

/// A domain: a base type with constraints.
#[derive(Clone, Debug, PartialEq)]
pub struct DomainDef {
    /// The underlying scalar type (never a domain).
    pub base: SqlType,
    /// The domain it is declared over, if it is declared over one: that
    /// domain's constraints apply too.
    pub parent: Option<u32>,
    pub not_null: bool,
    /// The DEFAULT expression's text.
    pub default: Option<String>,
    /// CHECK constraints: name and expression text over VALUE.
    pub checks: Vec<CheckDef>,
}

/// A CHECK constraint, of a domain (on VALUE) or of a table (on its
/// columns, by name): its expression kept as SQL text, bound again by each
/// statement that checks it, as a column default is.
#[derive(Clone, Debug, PartialEq)]
pub struct CheckDef {
    pub name: String,
    pub expr: String,
    /// Whether the values stored when it was added were checked (`false`
    /// after ADD … NOT VALID until VALIDATE CONSTRAINT). New values are
    /// checked either way.
    pub validated: bool,
}

/// Why a label could not be added or renamed (the SQL layer words it).
#[derive(Debug, PartialEq)]
pub enum LabelError {
    Exists,
    NoNeighbour,
    NoRoom,
}

impl EnumDef {
    /// A new type's labels, in order, with sort orders 1, 2, … and cells
    /// made with `oid` (called once per label, in order).
    pub fn new(type_oid: u32, names: &[String], mut oid: impl FnMut() -> u32) -> EnumDef {
        let mut key = OrderKey::first();
        let mut labels = Vec::with_capacity(names.len());
        for (i, n) in names.iter().enumerate() {
            if i > 0 {
                key = key.after();
            }
            let name: Arc<str> = n.as_str().into();
            labels.push(EnumDefLabel {
                cell: EnumLabel::new(oid(), type_oid, key.clone(), Arc::clone(&name)),
                name,
                sort_order: (i + 1) as f32,
                added_in: None,
            });
        }
        EnumDef { labels }
    }

    pub fn position(&self, name: &str) -> Option<usize> {
        self.labels.iter().position(|l| &*l.name == name)
    }

    /// Adds `name` at the end, or before or after `neighbour` (`before`),
    /// with PostgreSQL's sort orders: the neighbours' mean in float4,
    /// renumbering all labels 1..n when the mean equals one of them.
    pub fn add(
        &mut self,
        type_oid: u32,
        name: &str,
        neighbour: Option<(&str, bool)>,
        oid: u32,
        xid: u64,
    ) -> Result<(), LabelError> {
        if self.position(name).is_some() {
            return Err(LabelError::Exists);
        }
        // Where it goes: between labels `at - 1` and `at`.
        let at = match neighbour {
            None => self.labels.len(),
            Some((n, before)) => self.position(n).ok_or(LabelError::NoNeighbour)? + usize::from(!before),
        };
        let key = match (at.checked_sub(1).map(|i| &self.labels[i]), self.labels.get(at)) {
            (None, None) => OrderKey::first(),
            (Some(lo), None) => lo.cell.key.after(),
            (None, Some(hi)) => hi.cell.key.before().ok_or(LabelError::NoRoom)?,
            (Some(lo), Some(hi)) => OrderKey::between(&lo.cell.key, &hi.cell.key),
        };
        let sort_order = self.sort_order_at(at, neighbour.map(|(_, before)| before));
        let name: Arc<str> = name.into();
        self.labels.insert(
            at,
            EnumDefLabel {
                cell: EnumLabel::new(oid, type_oid, key, Arc::clone(&name)),
                name,
                sort_order,
                added_in: Some(xid),
            },
        );
        Ok(())
    }

    /// The sort order of a label going in at `at` (renumbering the others
    /// first if they leave no float4 between them).
    fn sort_order_at(&mut self, at: usize, before: Option<bool>) -> f32 {
        loop {
            let lo = at.checked_sub(1).map(|i| self.labels[i].sort_order);
            let hi = self.labels.get(at).map(|l| l.sort_order);
            let (nbr, other) = match before {
                // Added at the end: one more than the last.
                None => return lo.map_or(1.0, |l| l + 1.0),
                Some(true) => (hi, lo),
                Some(false) => (lo, hi),
            };
            let nbr = nbr.expect("the neighbour exists");
            let Some(other) = other else {
                return if before == Some(true) { nbr - 1.0 } else { nbr + 1.0 };
            };
            let mid = (nbr + other) / 2.0;
            if mid != nbr && mid != other {
                return mid;
            }
            for (i, l) in self.labels.iter_mut().enumerate() {
                l.sort_order = (i + 1) as f32;
            }
        }
    }
}

/// The database's enum label cells by oid, so that decoded values and
/// definitions share the cells of the labels they name.
#[derive(Default)]
pub struct EnumRegistry {
    cells: Mutex<HashMap<u32, Arc<EnumLabel>>>,
}

impl EnumRegistry {
    fn cell(&self, decoded: &Arc<EnumLabel>) -> Arc<EnumLabel> {
        let mut cells = self.cells.lock().unwrap_or_else(|e| e.into_inner());
        Arc::clone(cells.entry(decoded.oid).or_insert_with(|| Arc::clone(decoded)))
    }

    /// A type definition with its labels' cells shared; a definition
    /// names its labels as of its commit, so the cells take its names
    /// (`RelEntry::share_labels` applies it to a catalog row).
    pub fn intern_def(&self, def: &mut TypeDef) {
        if let TypeDef::Enum(def) = def {
            for l in &mut def.labels {
                l.cell = self.cell(&l.cell);
                if l.cell.name() != l.name {
                    l.cell.rename(Arc::clone(&l.name));
                }
            }
        }
    }

    /// A stored row with its enum values' cells shared (the same row when
    /// it holds none).
    pub fn intern_shared_row(&self, row: Arc<[Value]>) -> Arc<[Value]> {
        if !row.iter().any(has_enum) {
            return row;
        }
        let mut owned = row.to_vec();
        self.intern_row(&mut owned);
        owned.into()
    }

    /// `row` with its enum values' cells shared.
    pub fn intern_row(&self, row: &mut [Value]) {
        for v in row.iter_mut() {
            match v {
                Value::Enum(l) => *l = self.cell(l),
                Value::Array(array) if array.iter().any(has_enum) => {
                    let mut owned = array.to_vec();
                    self.intern_row(&mut owned);
                    *array = std::sync::Arc::new(array.reshaped(owned));
                }
                Value::Record(items) if items.iter().any(has_enum) => {
                    let mut owned = items.to_vec();
                    self.intern_row(&mut owned);
                    *items = owned.into();
                }
                _ => {}
            }
        }
    }
}

fn has_enum(v: &Value) -> bool {
    match v {
        Value::Enum(_) => true,
        Value::Array(array) => array.iter().any(has_enum),
        Value::Record(items) => items.iter().any(has_enum),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn def(names: &[&str]) -> EnumDef {
        let mut n = 100;
        let names: Vec<String> = names.iter().map(|s| s.to_string()).collect();
        EnumDef::new(1, &names, || {
            n += 1;
            n
        })
    }

    fn orders(d: &EnumDef) -> Vec<(String, f32)> {
        d.labels.iter().map(|l| (l.name.to_string(), l.sort_order)).collect()
    }

    /// PostgreSQL 15's pg_enum after enum.sql's planets statements.
    #[test]
    fn sort_orders_follow_postgresql() {
        let mut d = def(&["venus", "earth", "mars"]);
        d.add(1, "uranus", None, 200, 7).unwrap();
        d.add(1, "mercury", Some(("venus", true)), 201, 7).unwrap();
        d.add(1, "saturn", Some(("uranus", true)), 202, 7).unwrap();
        d.add(1, "jupiter", Some(("mars", false)), 203, 7).unwrap();
        d.add(1, "neptune", Some(("uranus", false)), 204, 7).unwrap();
        let want = [
            ("mercury", 0.0),
            ("venus", 1.0),
            ("earth", 2.0),
            ("mars", 3.0),
            ("jupiter", 3.25),
            ("saturn", 3.5),
            ("uranus", 4.0),
            ("neptune", 5.0),
        ];
        assert_eq!(orders(&d), want.iter().map(|(n, o)| (n.to_string(), *o)).collect::<Vec<_>>());
        let keys: Vec<_> = d.labels.iter().map(|l| l.cell.key.clone()).collect();
        assert!(keys.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(d.add(1, "pluto", Some(("zeus", false)), 205, 7), Err(LabelError::NoNeighbour));
        assert_eq!(d.add(1, "mars", None, 205, 7), Err(LabelError::Exists));
    }

    /// enum.sql's insenum: thirty labels before L2 renumber once float4
    /// runs out, as PostgreSQL does.
    #[test]
    fn renumbers_when_float4_runs_out() {
        let mut d = def(&["L1", "L2"]);
        for i in 1..=30 {
            d.add(1, &format!("i{i}"), Some(("L2", true)), 300 + i, 7).unwrap();
        }
        let names: Vec<_> = d.labels.iter().map(|l| l.name.to_string()).collect();
        let mut want = vec!["L1".to_string()];
        want.extend((1..=30).map(|i| format!("i{i}")));
        want.push("L2".into());
        assert_eq!(names, want);
        let so: Vec<f32> = d.labels.iter().map(|l| l.sort_order).collect();
        assert!(so.windows(2).all(|w| w[0] < w[1]), "{so:?}");
        let keys: Vec<_> = d.labels.iter().map(|l| l.cell.key.clone()).collect();
        assert!(keys.windows(2).all(|w| w[0] < w[1]));
    }
}
