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
use snapscale_values::{SqlType, Value};

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
        Value::Int(_) | Value::Float(_) | Value::Float4(_) | Value::Reg(..) | Value::Numeric(_) => 2,
        Value::Text(_) => 3,
        Value::Date(_) => 4,
        Value::Timestamp(_) => 5,
        Value::Interval(_) => 6,
        Value::TimestampTz(_) => 7,
        Value::Array(_) => 8,
        Value::Record(_) => 9,
        Value::Uuid(_) => 10,
        Value::Bytes(_) => 11,
        Value::Json(_) => 12,
        Value::Jsonb(_) => 13,
        Value::JsonPath(_) => 14,
        Value::Time(_) => 15,
        Value::TimeTz(_) => 16,
        Value::Enum(_) => 17,
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

/// The key of a one-column integer index: the integer itself, NULLs last
/// (the derived order compares `null` first: false before true).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
struct IntKey {
    null: bool,
    value: i64,
}

impl IntKey {
    /// The key of an integer or NULL; `None` for any other value.
    fn of(v: &Value) -> Option<IntKey> {
        match v {
            Value::Int(i) => Some(IntKey { null: false, value: *i }),
            Value::Null => Some(IntKey { null: true, value: 0 }),
            _ => None,
        }
    }

    fn value(self) -> Value {
        if self.null {
            Value::Null
        } else {
            Value::Int(self.value)
        }
    }
}

/// An index's entries, in the form its key columns allow.
#[derive(Debug)]
enum Entries {
    /// One column of an integer type (smallint, integer, bigint): a point
    /// lookup's comparisons on the way down are of machine integers held in
    /// the nodes. A value of another kind (none is expected: columns hold
    /// their type's values) turns the index into `Values` first.
    Int(BTreeMap<IntKey, Tids>),
    /// Every other index.
    Values(BTreeMap<Stored, Tids>),
}

impl Entries {
    /// The integer form becomes the general one.
    fn generalize(&mut self) -> &mut BTreeMap<Stored, Tids> {
        if let Entries::Int(ints) = self {
            let values =
                std::mem::take(ints).into_iter().map(|(k, tids)| (Stored::One(k.value()), tids)).collect();
            *self = Entries::Values(values);
        }
        match self {
            Entries::Values(values) => values,
            Entries::Int(_) => unreachable!("generalized above"),
        }
    }
}

/// True if no key lies between `lo` and `hi` (`BTreeMap::range` panics
/// on such bounds: a lower bound above the upper, or one key excluded).
fn is_empty<K: Ord>(lo: &Bound<K>, hi: &Bound<K>) -> bool {
    match (lo, hi) {
        (Bound::Included(a), Bound::Included(b)) => a > b,
        (Bound::Included(a) | Bound::Excluded(a), Bound::Included(b) | Bound::Excluded(b)) => a >= b,
        _ => false,
    }
}

/// The integer key of `values` if it is the key of a one-column integer
/// index.
fn int_key(values: &[Value]) -> Option<IntKey> {
    match values {
        [v] => IntKey::of(v),
        _ => None,
    }
}

/// One index's entries. See the module documentation.
#[derive(Debug)]
pub struct Index {
    /// Indexed column positions.
    pub columns: Vec<usize>,
    /// The column types (char(n) keys compare without trailing blanks).
    types: Vec<SqlType>,
    pub unique: bool,
    entries: RwLock<Entries>,
    /// Serialises check-then-insert of unique keys (PostgreSQL holds the
    /// btree leaf page lock across the check and the insertion).
    unique_check: Mutex<()>,
}

impl Index {
    /// An empty index over `columns` of types `types`.
    pub fn new(columns: Vec<usize>, types: Vec<SqlType>, unique: bool) -> Index {
        let entries = match types[..] {
            [SqlType::Int2 | SqlType::Int4 | SqlType::Int8] => Entries::Int(BTreeMap::new()),
            _ => Entries::Values(BTreeMap::new()),
        };
        Index { columns, types, unique, entries: RwLock::new(entries), unique_check: Mutex::new(()) }
    }

    /// The key of `row`.
    pub fn key_of(&self, row: &[Value]) -> Key {
        Key(self.columns.iter().zip(&self.types).map(|(&c, &ty)| normalize(ty, row[c].clone())).collect())
    }

    /// True if `row`'s key is `key` (`key_of(row) == key`, without building
    /// the key).
    pub fn row_has_key(&self, row: &[Value], key: &[Value]) -> bool {
        self.columns.len() == key.len()
            && self.columns.iter().zip(&self.types).zip(key).all(|((&c, &ty), k)| match (ty, &row[c], k) {
                // char(n) keys are held without their padding (`normalize`).
                (SqlType::Char(_), Value::Text(s), Value::Text(k)) => s.trim_end_matches(' ') == k,
                (_, v, k) => value_order(v, k).is_eq(),
            })
    }

    /// Normalises probe values for column `i` of the key.
    pub fn normalize_probe(&self, i: usize, v: Value) -> Value {
        normalize(self.types[i], v)
    }

    /// Adds an entry.
    pub fn insert(&self, key: Key, tid: Tid) {
        let mut entries = self.entries.write().expect("index lock poisoned");
        if let (Entries::Int(ints), Some(k)) = (&mut *entries, int_key(&key.0)) {
            ints.entry(k).or_default().push(tid);
            return;
        }
        entries.generalize().entry(Stored::of(key.0)).or_default().push(tid);
    }

    /// Removes the entries of removed versions.
    pub fn remove(&self, key: &Key, tid: Tid) {
        let mut entries = self.entries.write().expect("index lock poisoned");
        fn take<K: Ord>(map: &mut BTreeMap<K, Tids>, key: &K, tid: Tid) {
            if let Some(tids) = map.get_mut(key) {
                tids.retain(|t| *t != tid);
                if tids.is_empty() {
                    map.remove(key);
                }
            }
        }
        match &mut *entries {
            Entries::Int(ints) => {
                // A key of another kind was never inserted here.
                if let Some(k) = int_key(&key.0) {
                    take(ints, &k, tid);
                }
            }
            Entries::Values(values) => take(values, &Stored::probe(&key.0), tid),
        }
    }

    /// Tids under keys whose leading columns equal `prefix`.
    pub fn lookup_prefix(&self, prefix: &[Value]) -> Vec<Tid> {
        let entries = self.entries.read().expect("index lock poisoned");
        let values = match &*entries {
            Entries::Int(ints) => {
                return match prefix {
                    [] => ints.values().flatten().copied().collect(),
                    [v] => match IntKey::of(v) {
                        Some(k) => ints.get(&k).map_or_else(Vec::new, |tids| tids.to_vec()),
                        // A probe of another kind (a float, an oid): compared
                        // as the general form compares, entry by entry.
                        None => ints
                            .iter()
                            .filter(|(k, _)| value_order(&k.value(), v).is_eq())
                            .flat_map(|(_, tids)| tids.iter().copied())
                            .collect(),
                    },
                    _ => Vec::new(),
                };
            }
            Entries::Values(values) => values,
        };
        let probe = Stored::probe(prefix);
        if prefix.len() == self.columns.len() {
            return values.get(&probe).map_or_else(Vec::new, |tids| tids.to_vec());
        }
        values
            .range(probe..)
            .take_while(|(k, _)| {
                k.values()[..prefix.len()].iter().zip(prefix).all(|(a, b)| value_order(a, b).is_eq())
            })
            .flat_map(|(_, tids)| tids.iter().copied())
            .collect()
    }

    /// Tids whose first column lies within the bounds, NULLs excepted.
    pub fn lookup_range(&self, lower: Bound<Value>, upper: Bound<Value>) -> Vec<Tid> {
        let entries = self.entries.read().expect("index lock poisoned");
        let above = |first: &Value| match &lower {
            Bound::Included(v) => value_order(first, v).is_ge(),
            Bound::Excluded(v) => value_order(first, v).is_gt(),
            Bound::Unbounded => true,
        };
        let below = |first: &Value| match &upper {
            Bound::Included(v) => value_order(first, v).is_le(),
            Bound::Excluded(v) => value_order(first, v).is_lt(),
            Bound::Unbounded => true,
        };
        match &*entries {
            Entries::Int(ints) => {
                let int_bound = |b: &Bound<Value>| match b {
                    Bound::Included(v) => IntKey::of(v).map(Bound::Included),
                    Bound::Excluded(v) => IntKey::of(v).map(Bound::Excluded),
                    Bound::Unbounded => Some(Bound::Unbounded),
                };
                match (int_bound(&lower), int_bound(&upper)) {
                    // Integer bounds: the tree's own range (which must not
                    // be handed an empty one), NULLs (last) cut off.
                    (Some(lo), Some(hi)) if is_empty(&lo, &hi) => Vec::new(),
                    (Some(lo), Some(hi)) => ints
                        .range((lo, hi))
                        .take_while(|(k, _)| !k.null)
                        .flat_map(|(_, tids)| tids.iter().copied())
                        .collect(),
                    // Bounds of another kind: compared as values.
                    _ => ints
                        .iter()
                        .take_while(|(k, _)| !k.null)
                        .filter(|(k, _)| {
                            let v = k.value();
                            above(&v) && below(&v)
                        })
                        .flat_map(|(_, tids)| tids.iter().copied())
                        .collect(),
                }
            }
            Entries::Values(values) => {
                // From the first key whose first column reaches the lower
                // bound (a one-value key sorts before the keys it starts).
                let start = match &lower {
                    Bound::Included(v) | Bound::Excluded(v) => Bound::Included(Stored::One(v.clone())),
                    Bound::Unbounded => Bound::Unbounded,
                };
                values
                    .range((start, Bound::Unbounded))
                    .skip_while(|(k, _)| !above(&k.values()[0]))
                    .take_while(|(k, _)| below(&k.values()[0]))
                    .filter(|(k, _)| !matches!(k.values()[0], Value::Null))
                    .flat_map(|(_, tids)| tids.iter().copied())
                    .collect()
            }
        }
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
    use proptest::prelude::*;

    use super::*;

    impl Index {
        /// Range lookup by a walk from the first key (what lookup_range
        /// did before it started at the lower bound): the reference.
        fn range_by_walk(&self, lower: &Bound<Value>, upper: &Bound<Value>) -> Vec<Tid> {
            let mut entries = self.entries.write().unwrap();
            entries
                .generalize()
                .iter()
                .skip_while(|(k, _)| match lower {
                    Bound::Included(v) => value_order(&k.values()[0], v).is_lt(),
                    Bound::Excluded(v) => value_order(&k.values()[0], v).is_le(),
                    Bound::Unbounded => false,
                })
                .take_while(|(k, _)| match upper {
                    Bound::Included(v) => value_order(&k.values()[0], v).is_le(),
                    Bound::Excluded(v) => value_order(&k.values()[0], v).is_lt(),
                    Bound::Unbounded => true,
                })
                .filter(|(k, _)| !matches!(k.values()[0], Value::Null))
                .flat_map(|(_, tids)| tids.iter().copied())
                .collect()
        }

        /// The same index in the general form, whatever its types.
        fn general(columns: Vec<usize>, types: Vec<SqlType>, unique: bool) -> Index {
            let ix = Index::new(columns, types, unique);
            ix.entries.write().unwrap().generalize();
            ix
        }
    }

    #[derive(Clone, Debug)]
    enum Op {
        Insert(Value, Tid),
        Remove(Value, Tid),
        Prefix(Value),
        Range(Bound<Value>, Bound<Value>),
    }

    fn value() -> impl Strategy<Value = Value> {
        prop_oneof![
            6 => (-8i64..8).prop_map(Value::Int),
            1 => Just(Value::Null),
            1 => (-16i64..16).prop_map(|h| Value::Float(h as f64 / 2.0)),
        ]
    }

    fn bound() -> impl Strategy<Value = Bound<Value>> {
        prop_oneof![
            value().prop_map(Bound::Included),
            value().prop_map(Bound::Excluded),
            Just(Bound::Unbounded),
        ]
    }

    fn op() -> impl Strategy<Value = Op> {
        // Stored keys are integers or NULL, as in an integer column, and
        // once in a while a float, which turns the index general.
        let stored = prop_oneof![20 => (-8i64..8).prop_map(Value::Int), 2 => Just(Value::Null), 1 => Just(Value::Float(0.5))];
        prop_oneof![
            4 => (stored.clone(), 0u32..6).prop_map(|(v, t)| Op::Insert(v, Tid::from(t))),
            2 => (stored, 0u32..6).prop_map(|(v, t)| Op::Remove(v, Tid::from(t))),
            2 => value().prop_map(Op::Prefix),
            2 => (bound(), bound()).prop_map(|(lo, hi)| Op::Range(lo, hi)),
        ]
    }

    proptest! {
        /// The integer form answers every lookup as the general form does
        /// (which orders keys as PostgreSQL's btree), including probes and
        /// bounds of other numeric kinds, NULLs, empty ranges and the turn
        /// to the general form.
        #[test]
        fn integer_keys_answer_as_the_general_form(ops in proptest::collection::vec(op(), 1..60)) {
            let int = Index::new(vec![0], vec![SqlType::Int8], false);
            let general = Index::general(vec![0], vec![SqlType::Int8], false);
            for op in ops {
                match op {
                    Op::Insert(v, t) => {
                        int.insert(Key(vec![v.clone()]), t);
                        general.insert(Key(vec![v]), t);
                    }
                    Op::Remove(v, t) => {
                        int.remove(&Key(vec![v.clone()]), t);
                        general.remove(&Key(vec![v]), t);
                    }
                    Op::Prefix(v) => {
                        prop_assert_eq!(int.lookup_prefix(std::slice::from_ref(&v)), general.lookup_prefix(&[v]));
                        prop_assert_eq!(int.lookup_prefix(&[]), general.lookup_prefix(&[]));
                    }
                    Op::Range(lo, hi) => {
                        let walked = general.range_by_walk(&lo, &hi);
                        prop_assert_eq!(general.lookup_range(lo.clone(), hi.clone()), walked.clone());
                        prop_assert_eq!(int.lookup_range(lo, hi), walked);
                    }
                }
            }
        }
    }

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
