//! Ordered indexes: key → tids of row versions.
//!
//! Like PostgreSQL's btree, an index points at versions, not rows: an
//! update adds an entry for the new version and leaves the old one, and a
//! reader decides visibility on the version it reaches. Entries leave only
//! when VACUUM removes their version, before its tid can be reused; a
//! reader that races with reuse re-checks its predicate on the row it
//! fetched, so a reused tid is never taken for the old row.

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::{Mutex, MutexGuard, RwLock};

use smallvec::SmallVec;
use snapscale_storage::Tid;

use crate::types::{SqlType, Value};

/// An index key: one value per indexed column, ordered as PostgreSQL's
/// default btree operator classes order them (NULLs last).
#[derive(Clone, Debug)]
pub struct Key(pub Vec<Value>);

fn value_order(a: &Value, b: &Value) -> Ordering {
    match (a, b) {
        (Value::Null, Value::Null) => Ordering::Equal,
        (Value::Null, _) => Ordering::Greater,
        (_, Value::Null) => Ordering::Less,
        // Kinds of one column agree; across kinds, any fixed order will do.
        _ => a.compare(b).unwrap_or_else(|| kind(a).cmp(&kind(b))),
    }
}

fn kind(v: &Value) -> u8 {
    match v {
        Value::Null => 0,
        Value::Bool(_) => 1,
        Value::Int(_) | Value::Float(_) | Value::Reg(..) => 2,
        Value::Text(_) => 3,
        Value::Date(_) => 4,
        Value::Timestamp(_) => 5,
        Value::Interval(_) => 6,
        Value::TimestampTz(_) => 7,
        Value::Array(_) => 8,
        Value::Record(_) => 9,
    }
}

/// Column by column, then shorter first (a prefix sorts before the keys
/// that extend it).
fn values_order(a: &[Value], b: &[Value]) -> Ordering {
    for (a, b) in a.iter().zip(b) {
        match value_order(a, b) {
            Ordering::Equal => {}
            unequal => return unequal,
        }
    }
    a.len().cmp(&b.len())
}

impl Ord for Key {
    fn cmp(&self, other: &Self) -> Ordering {
        values_order(&self.0, &other.0)
    }
}

impl PartialOrd for Key {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Key {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Key {}

impl Key {
    /// True if some column is NULL (unique indexes never conflict on those).
    pub fn has_null(&self) -> bool {
        self.0.iter().any(|v| matches!(v, Value::Null))
    }
}

/// A key as the index's tree holds it, ordered as [`Key`]. A one-column
/// key sits in the tree's node itself: the comparisons on the way down a
/// point lookup then read the node they are in, where a `Vec` per key cost
/// a pointer chase (and at a million keys a cache miss) per comparison.
#[derive(Debug)]
enum Stored {
    One(Value),
    Many(Box<[Value]>),
}

impl Stored {
    fn of(values: Vec<Value>) -> Stored {
        match <[Value; 1]>::try_from(values) {
            Ok([v]) => Stored::One(v),
            Err(values) => Stored::Many(values.into_boxed_slice()),
        }
    }

    /// The stored form of probe values (a copy: an integer costs no
    /// allocation, a one-column key no vector).
    fn probe(values: &[Value]) -> Stored {
        match values {
            [v] => Stored::One(v.clone()),
            _ => Stored::Many(values.into()),
        }
    }

    fn values(&self) -> &[Value] {
        match self {
            Stored::One(v) => std::slice::from_ref(v),
            Stored::Many(values) => values,
        }
    }
}

impl Ord for Stored {
    fn cmp(&self, other: &Self) -> Ordering {
        values_order(self.values(), other.values())
    }
}

impl PartialOrd for Stored {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Stored {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Stored {}

/// The versions under one key: inline up to two (a row and its newest
/// update, until VACUUM), so that reading them is no second pointer chase.
type Tids = SmallVec<[Tid; 2]>;

/// One index's entries. See the module documentation.
#[derive(Debug)]
pub struct Index {
    /// Indexed column positions.
    pub columns: Vec<usize>,
    /// The column types (char(n) keys compare without trailing blanks).
    types: Vec<SqlType>,
    pub unique: bool,
    entries: RwLock<BTreeMap<Stored, Tids>>,
    /// Serialises check-then-insert of unique keys (PostgreSQL holds the
    /// btree leaf page lock across the check and the insertion).
    unique_check: Mutex<()>,
}

impl Index {
    /// An empty index over `columns` of types `types`.
    pub fn new(columns: Vec<usize>, types: Vec<SqlType>, unique: bool) -> Index {
        Index { columns, types, unique, entries: RwLock::new(BTreeMap::new()), unique_check: Mutex::new(()) }
    }

    /// The key of `row`.
    pub fn key_of(&self, row: &[Value]) -> Key {
        Key(self.columns.iter().zip(&self.types).map(|(&c, &ty)| normalize(ty, row[c].clone())).collect())
    }

    /// Normalises probe values for column `i` of the key.
    pub fn normalize_probe(&self, i: usize, v: Value) -> Value {
        normalize(self.types[i], v)
    }

    /// Adds an entry.
    pub fn insert(&self, key: Key, tid: Tid) {
        self.entries.write().expect("index lock poisoned").entry(Stored::of(key.0)).or_default().push(tid);
    }

    /// Removes the entries of removed versions.
    pub fn remove(&self, key: &Key, tid: Tid) {
        let mut entries = self.entries.write().expect("index lock poisoned");
        let key = Stored::probe(&key.0);
        if let Some(tids) = entries.get_mut(&key) {
            tids.retain(|t| *t != tid);
            if tids.is_empty() {
                entries.remove(&key);
            }
        }
    }

    /// Tids under keys whose leading columns equal `prefix`.
    pub fn lookup_prefix(&self, prefix: &[Value]) -> Vec<Tid> {
        let entries = self.entries.read().expect("index lock poisoned");
        let probe = Stored::probe(prefix);
        if prefix.len() == self.columns.len() {
            return entries.get(&probe).map_or_else(Vec::new, |tids| tids.to_vec());
        }
        entries
            .range(probe..)
            .take_while(|(k, _)| {
                k.values()[..prefix.len()].iter().zip(prefix).all(|(a, b)| value_order(a, b).is_eq())
            })
            .flat_map(|(_, tids)| tids.iter().copied())
            .collect()
    }

    /// Tids whose first column lies within the bounds.
    pub fn lookup_range(&self, lower: Bound<Value>, upper: Bound<Value>) -> Vec<Tid> {
        let entries = self.entries.read().expect("index lock poisoned");
        let first = |k: &Stored| k.values()[0].clone();
        entries
            .iter()
            .skip_while(|(k, _)| match &lower {
                Bound::Included(v) => value_order(&first(k), v).is_lt(),
                Bound::Excluded(v) => value_order(&first(k), v).is_le(),
                Bound::Unbounded => false,
            })
            .take_while(|(k, _)| match &upper {
                Bound::Included(v) => value_order(&first(k), v).is_le(),
                Bound::Excluded(v) => value_order(&first(k), v).is_lt(),
                Bound::Unbounded => true,
            })
            .filter(|(k, _)| !matches!(k.values()[0], Value::Null))
            .flat_map(|(_, tids)| tids.iter().copied())
            .collect()
    }

    /// Holds off other unique checks of this index.
    pub fn lock_unique(&self) -> MutexGuard<'_, ()> {
        self.unique_check.lock().expect("index lock poisoned")
    }
}

/// char(n) compares without its padding.
fn normalize(ty: SqlType, v: Value) -> Value {
    match (ty, v) {
        (SqlType::Char(_), Value::Text(s)) => Value::Text(s.trim_end_matches(' ').to_owned()),
        (_, v) => v,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn range_and_prefix_lookups() {
        let ix = Index::new(vec![0], vec![SqlType::Int4], true);
        for i in 0..10 {
            ix.insert(Key(vec![Value::Int(i)]), i as Tid);
        }
        ix.insert(Key(vec![Value::Null]), 99);
        assert_eq!(ix.lookup_prefix(&[Value::Int(3)]), vec![3]);
        assert_eq!(ix.lookup_range(Bound::Excluded(Value::Int(7)), Bound::Unbounded), vec![8, 9]);
        assert_eq!(
            ix.lookup_range(Bound::Included(Value::Int(1)), Bound::Included(Value::Int(2))),
            vec![1, 2]
        );
        ix.remove(&Key(vec![Value::Int(3)]), 3);
        assert!(ix.lookup_prefix(&[Value::Int(3)]).is_empty());
    }

    #[test]
    fn keys_of_one_and_many_columns_order_alike() {
        // Two columns: a one-column prefix finds every key it starts.
        let ix = Index::new(vec![0, 1], vec![SqlType::Int4, SqlType::Text], false);
        for (i, (a, b)) in [(2, "b"), (1, "z"), (2, "a"), (3, "a"), (2, "c")].into_iter().enumerate() {
            ix.insert(Key(vec![Value::Int(a), Value::Text(b.into())]), i as Tid);
        }
        ix.insert(Key(vec![Value::Int(2), Value::Null]), 9);
        assert_eq!(ix.lookup_prefix(&[Value::Int(2)]), vec![2, 0, 4, 9], "in key order, NULL last");
        assert_eq!(ix.lookup_prefix(&[Value::Int(2), Value::Text("b".into())]), vec![0]);
        // Several versions under one key, beyond what is held inline.
        let one = Index::new(vec![0], vec![SqlType::Int8], true);
        for tid in 0..5 {
            one.insert(Key(vec![Value::Int(7)]), tid);
        }
        one.remove(&Key(vec![Value::Int(7)]), 1);
        assert_eq!(one.lookup_prefix(&[Value::Int(7)]), vec![0, 2, 3, 4]);
        assert_eq!(
            values_order(&[Value::Int(1)], &[Value::Int(1), Value::Int(0)]),
            Ordering::Less,
            "a prefix first"
        );
    }
}
