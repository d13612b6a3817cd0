//! Ordered indexes: key → tids of row versions.
//!
//! Like PostgreSQL's btree, an index points at versions, not rows: an
//! update adds an entry for the new version and leaves the old one, and a
//! reader decides visibility on the version it reaches. Entries leave only
//! when VACUUM removes their version, before its tid can be reused; a
//! reader that races with reuse re-checks its predicate on the row it
//! fetched, so a reused tid is never taken for the old row.
//!
//! The entries live in `crossbeam-skiplist`'s lock-free skip list, whose
//! readers take no lock and write no shared word (INDEX-READS in the crate
//! README): a point lookup on every core reads the same nodes without
//! moving their cache lines, where a reader-writer lock made each lookup
//! write the lock's word. One tree entry is one (key, tid) pair, so the versions of
//! one key are independent entries: adding or removing one never rewrites
//! another's, and writers of different keys meet only in the leaf they
//! share.

use std::cmp::Ordering;
use std::hash::{BuildHasher, Hash, Hasher};
use std::ops::Bound;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::Instant;

use crossbeam_epoch as epoch;
use crossbeam_skiplist::base::SkipList;
use snapscale_storage::Tid;
use snapscale_values::{SqlError, SqlType, Value};

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
/// An integer (or NULL) alone is compared as a machine integer.
#[derive(Clone, Debug)]
enum Stored {
    Int(IntKey),
    One(Value),
    Many(Box<[Value]>),
}

impl Stored {
    fn of(values: Vec<Value>) -> Stored {
        match <[Value; 1]>::try_from(values) {
            Ok([v]) => Stored::one(v),
            Err(values) => Stored::Many(values.into_boxed_slice()),
        }
    }

    fn one(v: Value) -> Stored {
        match IntKey::of(&v) {
            Some(k) => Stored::Int(k),
            None => Stored::One(v),
        }
    }

    /// The stored form of probe values (a copy: an integer costs no
    /// allocation, a one-column key no vector).
    fn probe(values: &[Value]) -> Stored {
        match values {
            [v] => Stored::one(v.clone()),
            _ => Stored::Many(values.into()),
        }
    }

    /// `f` of the key's values; an integer key lends a value made on the
    /// stack.
    fn with_values<T>(&self, f: impl FnOnce(&[Value]) -> T) -> T {
        match self {
            Stored::Int(k) => f(std::slice::from_ref(&k.value())),
            Stored::One(v) => f(std::slice::from_ref(v)),
            Stored::Many(values) => f(values),
        }
    }

    /// The order of the first column against `v`.
    fn first_order(&self, v: &Value) -> Ordering {
        match (self, IntKey::of(v)) {
            (Stored::Int(k), Some(probe)) => k.cmp(&probe),
            _ => self.with_values(|values| value_order(&values[0], v)),
        }
    }

    fn first_is_null(&self) -> bool {
        match self {
            Stored::Int(k) => k.null,
            Stored::One(v) => matches!(v, Value::Null),
            Stored::Many(values) => matches!(values[0], Value::Null),
        }
    }
}

impl Ord for Stored {
    fn cmp(&self, other: &Self) -> Ordering {
        match (self, other) {
            (Stored::Int(a), Stored::Int(b)) => a.cmp(b),
            _ => self.with_values(|a| other.with_values(|b| values_order(a, b))),
        }
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

/// The key of an integer or NULL: the integer itself, NULLs last (the
/// derived order compares `null` first: false before true), as
/// [`value_order`] orders them.
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

/// One entry of the tree: a key and a version that has it. Entries of one
/// key are ordered by `age`, then tid.
#[derive(Clone, Debug)]
struct Entry {
    key: Stored,
    age: u64,
    tid: Tid,
}

impl Ord for Entry {
    fn cmp(&self, other: &Self) -> Ordering {
        self.key.cmp(&other.key).then(self.age.cmp(&other.age)).then(self.tid.cmp(&other.tid))
    }
}

impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Entry {}

/// The age of an entry made now: smaller for newer entries, from a clock
/// every core reads without writing. Under a whole key of a unique index
/// the entries are the versions of one row (and of rows deleted before it
/// was inserted), made one after the other: a version's maker waited for
/// its predecessor's to end, and the monotonic clock keeps that order. A
/// lookup then meets the newest version first (UNIQUE-ONE-VISIBLE), as tid
/// order, with tids reused after VACUUM, would not.
fn age_now() -> u64 {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    u64::MAX - EPOCH.get_or_init(Instant::now).elapsed().as_nanos() as u64
}

impl Entry {
    /// Before every entry of `key`.
    fn first(key: Stored) -> Self {
        Entry { key, age: 0, tid: Tid::MIN }
    }
}

/// Stripes of the unique-check lock: two insertions of one key always
/// take the same stripe, insertions of different keys rarely do.
const UNIQUE_STRIPES: usize = 64;

/// The stripe of `key`: a hash of its first column where that column's
/// equality is its representation's (equal values hash alike), stripe 0
/// for the other kinds (floats: -0 equals 0; arrays, records...).
fn stripe(key: &Key) -> usize {
    let mut h = rustc_hash::FxBuildHasher.build_hasher();
    match key.0.first() {
        Some(Value::Int(i)) => i.hash(&mut h),
        Some(Value::Text(s)) => s.hash(&mut h),
        Some(Value::Uuid(u)) => u.hash(&mut h),
        Some(Value::Bytes(b)) => b.hash(&mut h),
        Some(Value::Numeric(n)) => n.hash(&mut h),
        Some(Value::Date(d)) => d.hash(&mut h),
        Some(Value::Timestamp(t) | Value::TimestampTz(t)) => t.hash(&mut h),
        _ => return 0,
    }
    // Fx mixes into the high bits.
    (h.finish() >> (64 - UNIQUE_STRIPES.trailing_zeros())) as usize
}

/// The key of a row in an index whose key parts are expressions or whose
/// entries are limited by a predicate: the SQL layer compiles one from the
/// definition's text (the catalog's `KeyCompiler`).
pub trait KeyFunction: Send + Sync {
    /// The row's key, or `None` where the predicate leaves the row out.
    /// An error is the expression's: the write that needs the key fails.
    fn key(&self, row: &[Value]) -> Result<Option<Vec<Value>>, SqlError>;
    /// The compiled form, for the layer that compiled it (its planner
    /// matches a query's expressions against the index's).
    fn as_any(&self) -> &dyn std::any::Any;
}

/// The key function of a definition that could not be compiled: every
/// key asked of it is the compiler's error.
struct Uncompiled(SqlError);

impl KeyFunction for Uncompiled {
    fn key(&self, _row: &[Value]) -> Result<Option<Vec<Value>>, SqlError> {
        Err(self.0.clone())
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// One index's entries. See the module documentation.
pub struct Index {
    /// Indexed column positions (the catalog's `EXPRESSION` for an
    /// expression's key part).
    pub columns: Vec<usize>,
    /// How keys are computed where they are not read from `columns`.
    computed: Option<Arc<dyn KeyFunction>>,
    /// The column types (char(n) keys compare without trailing blanks).
    types: Vec<SqlType>,
    pub unique: bool,
    /// UNIQUE NULLS NOT DISTINCT: a key with a NULL is checked like any
    /// other (else NULLs never collide).
    pub nulls_not_distinct: bool,
    entries: SkipList<Entry, ()>,
    /// For a table with columns added without a rewrite (MISSING-COLUMN):
    /// each column's missing value, as the definition it was built for
    /// has them, so a key read from a row stored before them is the key
    /// of the row as that definition reads it.
    fill: Option<Arc<[Value]>>,
    /// Serialise check-then-insert of one unique key (UNIQUE-CHECK;
    /// PostgreSQL holds the key's btree leaf page lock across the check and
    /// the insertion), striped by key.
    unique_checks: Box<[Mutex<()>]>,
}

impl std::fmt::Debug for Index {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Index")
            .field("columns", &self.columns)
            .field("unique", &self.unique)
            .finish_non_exhaustive()
    }
}

impl Index {
    /// An empty index over `columns` of types `types`.
    pub fn new(columns: Vec<usize>, types: Vec<SqlType>, unique: bool) -> Index {
        let stripes = if unique { UNIQUE_STRIPES } else { 0 };
        Index {
            columns,
            computed: None,
            types,
            unique,
            nulls_not_distinct: false,
            entries: SkipList::new(epoch::default_collector().clone()),
            fill: None,
            unique_checks: (0..stripes).map(|_| Mutex::new(())).collect(),
        }
    }

    /// An empty index whose keys `compiled` computes (or that fails every
    /// write with the compiler's error).
    pub fn computed(
        columns: Vec<usize>,
        compiled: Result<(Arc<dyn KeyFunction>, Vec<SqlType>), SqlError>,
        unique: bool,
    ) -> Index {
        let (f, types) = compiled.unwrap_or_else(|e| (Arc::new(Uncompiled(e)), Vec::new()));
        Index { computed: Some(f), ..Index::new(columns, types, unique) }
    }

    /// The compiled key function, where keys are computed.
    pub fn key_function(&self) -> Option<&dyn KeyFunction> {
        self.computed.as_deref()
    }

    /// This index with NULLs in a key counting as equal values (UNIQUE
    /// NULLS NOT DISTINCT).
    pub fn with_nulls_not_distinct(mut self, yes: bool) -> Index {
        self.nulls_not_distinct = yes;
        self
    }

    /// This index reading rows stored without the last columns of its
    /// table's definition as holding `fill`'s values (MISSING-COLUMN).
    pub fn with_fill(mut self, fill: Option<Arc<[Value]>>) -> Index {
        self.fill = fill;
        self
    }

    /// `row` widened to the definition this index was built for, where it
    /// was stored before some of its columns were added.
    fn widened<'r>(&self, row: &'r [Value]) -> std::borrow::Cow<'r, [Value]> {
        match &self.fill {
            Some(fill) if crate::missing::is_short(row, fill.len()) => {
                std::borrow::Cow::Owned(crate::missing::pad(row, fill.len(), |c| {
                    fill.get(c).cloned().unwrap_or(Value::Null)
                }))
            }
            _ => std::borrow::Cow::Borrowed(row),
        }
    }

    /// Whether inserting `key` must check for another row with it: in a
    /// unique index, unless a NULL in it makes it distinct from all.
    pub fn checks_unique(&self, key: &Key) -> bool {
        self.unique && (self.nulls_not_distinct || !key.has_null())
    }

    /// The key of `row`: `None` if a partial index leaves it out, an error
    /// if a key expression fails on it.
    pub fn key_of(&self, row: &[Value]) -> Result<Option<Key>, SqlError> {
        let row = &*self.widened(row);
        if let Some(f) = &self.computed {
            let Some(values) = f.key(row)? else { return Ok(None) };
            let key = values.into_iter().zip(&self.types).map(|(v, &ty)| normalize(ty, v)).collect();
            return Ok(Some(Key(key)));
        }
        Ok(Some(self.column_key(row)))
    }

    /// The key of `row` in an index of columns.
    fn column_key(&self, row: &[Value]) -> Key {
        Key(self.columns.iter().zip(&self.types).map(|(&c, &ty)| normalize(ty, row[c].clone())).collect())
    }

    /// True if `row`'s key is `key` (`key_of(row) == key`, without building
    /// the key where it is read from columns).
    pub fn row_has_key(&self, row: &[Value], key: &[Value]) -> bool {
        let row = &*self.widened(row);
        if self.computed.is_some() {
            return matches!(self.key_of(row), Ok(Some(k)) if k.0.len() == key.len()
                && k.0.iter().zip(key).all(|(a, b)| value_order(a, b).is_eq()));
        }
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

    /// Whether entries of `key` are ordered by age (newest first): under a
    /// whole key of a unique index, where they are few (one row's
    /// versions). Elsewhere (NULLs in a unique index, any other index) a
    /// key may have a great many, and a removal must find its entry without
    /// a walk over them: their age is 0 and they follow tid order.
    fn aged(&self, key: &[Value]) -> bool {
        self.unique && !key.iter().any(|v| matches!(v, Value::Null))
    }

    /// Adds an entry (a second one for the same key and tid is one entry).
    pub fn insert(&self, key: Key, tid: Tid) {
        let age = if self.aged(&key.0) { age_now() } else { 0 };
        let guard = epoch::pin();
        self.entries.get_or_insert(Entry { key: Stored::of(key.0), age, tid }, (), &guard).release(&guard);
    }

    /// Removes the entries of removed versions.
    pub fn remove(&self, key: &Key, tid: Tid) {
        let aged = self.aged(&key.0);
        let guard = epoch::pin();
        let mut entry = Entry::first(Stored::probe(&key.0));
        if aged {
            let mut found = None;
            self.walk(Bound::Included(&entry), &guard, |e| {
                if e.key != entry.key {
                    return false;
                }
                if e.tid == tid {
                    found = Some(e.age);
                    return false;
                }
                true
            });
            match found {
                Some(age) => entry.age = age,
                None => return,
            }
        }
        entry.tid = tid;
        if let Some(removed) = self.entries.remove(&entry, &guard) {
            removed.release(&guard);
        }
    }

    /// The first `Some` that `f` gives for the tids under the whole `key`
    /// of a unique index, newest first: a lookup that stops at the version
    /// its snapshot sees (UNIQUE-ONE-VISIBLE) reads no further entries.
    pub fn find_in_key<T>(&self, key: &[Value], mut f: impl FnMut(Tid) -> Option<T>) -> Option<T> {
        let guard = epoch::pin();
        let first = Entry::first(Stored::probe(key));
        let mut found = None;
        self.walk(Bound::Included(&first), &guard, |e| {
            if e.key != first.key {
                return false;
            }
            found = f(e.tid);
            found.is_none()
        });
        found
    }

    /// Removes the entries of removed versions, a key's at once: under a
    /// whole key of a unique index, one walk over its entries finds all of
    /// them (a hot row's pruned versions), where one walk per entry would
    /// cost the square of their number.
    pub fn remove_all(&self, dead: impl IntoIterator<Item = (Key, Tid)>) {
        let mut dead: Vec<(Key, Tid)> = dead.into_iter().collect();
        dead.sort_by(|a, b| a.0.cmp(&b.0));
        let guard = epoch::pin();
        for group in dead.chunk_by(|a, b| a.0 == b.0) {
            let key = &group[0].0;
            if !self.aged(&key.0) {
                for (key, tid) in group {
                    self.remove(key, *tid);
                }
                continue;
            }
            let first = Entry::first(Stored::probe(&key.0));
            let mut doomed = Vec::with_capacity(group.len());
            self.walk(Bound::Included(&first), &guard, |e| {
                if e.key != first.key {
                    return false;
                }
                if group.iter().any(|(_, t)| *t == e.tid) {
                    doomed.push(Entry { key: first.key.clone(), age: e.age, tid: e.tid });
                }
                doomed.len() < group.len()
            });
            for entry in doomed {
                if let Some(removed) = self.entries.remove(&entry, &guard) {
                    removed.release(&guard);
                }
            }
        }
    }

    /// Calls `f` on the entries from `from` on, in order, while it says so.
    /// The walk reads what is present without a lock: it meets every entry
    /// that was present when it started and stays (INDEX-READS).
    fn walk(&self, from: Bound<&Entry>, guard: &epoch::Guard, mut f: impl FnMut(&Entry) -> bool) {
        let mut at = match from {
            Bound::Unbounded => self.entries.front(guard),
            from => self.entries.lower_bound(from, guard),
        };
        while let Some(e) = at {
            if !f(e.key()) {
                return;
            }
            at = e.next();
        }
    }

    /// Tids under keys whose leading columns equal `prefix`, in key order;
    /// under one whole key of a unique index, newest first.
    pub fn lookup_prefix(&self, prefix: &[Value]) -> Vec<Tid> {
        let guard = epoch::pin();
        let mut tids = Vec::new();
        if prefix.is_empty() {
            self.walk(Bound::Unbounded, &guard, |e| {
                tids.push(e.tid);
                true
            });
            return tids;
        }
        let first = Entry::first(Stored::probe(prefix));
        if prefix.len() == self.columns.len() {
            self.walk(Bound::Included(&first), &guard, |e| {
                let same = e.key == first.key;
                if same {
                    tids.push(e.tid);
                }
                same
            });
            return tids;
        }
        // A prefix sorts before the keys that extend it.
        self.walk(Bound::Included(&first), &guard, |e| {
            let within = e.key.with_values(|k| {
                k[..prefix.len()].iter().zip(prefix).all(|(a, b)| value_order(a, b).is_eq())
            });
            if within {
                tids.push(e.tid);
            }
            within
        });
        tids
    }

    /// Tids whose first column lies within the bounds, NULLs excepted, in
    /// key order.
    pub fn lookup_range(&self, lower: Bound<Value>, upper: Bound<Value>) -> Vec<Tid> {
        let above = |e: &Entry| match &lower {
            Bound::Included(v) => e.key.first_order(v).is_ge(),
            Bound::Excluded(v) => e.key.first_order(v).is_gt(),
            Bound::Unbounded => true,
        };
        let below = |e: &Entry| match &upper {
            Bound::Included(v) => e.key.first_order(v).is_le(),
            Bound::Excluded(v) => e.key.first_order(v).is_lt(),
            Bound::Unbounded => true,
        };
        let guard = epoch::pin();
        // From the first key whose first column reaches the lower bound (a
        // one-value key sorts before the keys it starts).
        let start = match &lower {
            Bound::Included(v) | Bound::Excluded(v) => {
                Some(Entry::first(Stored::probe(std::slice::from_ref(v))))
            }
            Bound::Unbounded => None,
        };
        let mut tids = Vec::new();
        self.walk(start.as_ref().map_or(Bound::Unbounded, Bound::Included), &guard, |e| {
            if !above(e) {
                return true;
            }
            let inside = below(e) && !e.key.first_is_null();
            if inside {
                tids.push(e.tid);
            }
            inside
        });
        tids
    }

    /// Holds off other unique checks of `key` in this index.
    pub fn lock_unique(&self, key: &Key) -> MutexGuard<'_, ()> {
        self.unique_checks[stripe(key)].lock().expect("index lock poisoned")
    }
}

/// A heap's indexes by oid. Added, never removed while the heap lives (a
/// rolled-back build's entries stay until the heap goes, as VACUUM must
/// still clean them), and found without a lock: a list of nodes each
/// published once through a `OnceLock`, whose readers load and write
/// nothing else (the per-update lookup of every index of a hot table read
/// a shared lock word before).
#[derive(Default)]
pub struct Indexes {
    head: OnceLock<Box<IndexNode>>,
    /// Serialises additions (and the build of an index's entries).
    adding: Mutex<()>,
}

struct IndexNode {
    oid: u32,
    index: std::sync::Arc<Index>,
    next: OnceLock<Box<IndexNode>>,
}

impl Indexes {
    fn nodes(&self) -> impl Iterator<Item = &IndexNode> {
        std::iter::successors(self.head.get(), |n| n.next.get()).map(|n| &**n)
    }

    /// The index with `oid`.
    pub fn get(&self, oid: u32) -> Option<&std::sync::Arc<Index>> {
        self.nodes().find(|n| n.oid == oid).map(|n| &n.index)
    }

    /// The index with `oid`, made by `build` if there is none (one builder
    /// at a time; the others wait and find its index).
    pub fn get_or_add(&self, oid: u32, build: impl FnOnce() -> Index) -> &std::sync::Arc<Index> {
        if let Some(ix) = self.get(oid) {
            return ix;
        }
        let _adding = self.adding.lock().expect("index list lock poisoned");
        if let Some(ix) = self.get(oid) {
            return ix;
        }
        let node = Box::new(IndexNode { oid, index: std::sync::Arc::new(build()), next: OnceLock::new() });
        let tail = self.nodes().last().map_or(&self.head, |n| &n.next);
        // Only adders set a node's link, one at a time, at the tail.
        let _ = tail.set(node);
        &tail.get().expect("set above").index
    }

    /// Every index.
    pub fn all(&self) -> impl Iterator<Item = &std::sync::Arc<Index>> {
        self.nodes().map(|n| &n.index)
    }
}

impl std::fmt::Debug for Indexes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.nodes().map(|n| n.oid)).finish()
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
    use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
    use std::sync::Arc;

    use proptest::prelude::*;

    use super::*;

    /// The reference: every (key, tid) in a sorted vector.
    #[derive(Default)]
    struct Model(Vec<(Vec<Value>, Tid)>);

    impl Model {
        fn insert(&mut self, key: Vec<Value>, tid: Tid) {
            if !self.0.iter().any(|(k, t)| *t == tid && values_order(k, &key).is_eq()) {
                self.0.push((key, tid));
                self.0.sort_by(|(a, s), (b, t)| values_order(a, b).then(s.cmp(t)));
            }
        }

        fn remove(&mut self, key: &[Value], tid: Tid) {
            self.0.retain(|(k, t)| !(*t == tid && values_order(k, key).is_eq()));
        }

        fn prefix(&self, prefix: &[Value]) -> Vec<Tid> {
            let matches =
                |k: &[Value]| k[..prefix.len()].iter().zip(prefix).all(|(a, b)| value_order(a, b).is_eq());
            self.0.iter().filter(|(k, _)| matches(k)).map(|(_, t)| *t).collect()
        }

        fn range(&self, lower: &Bound<Value>, upper: &Bound<Value>) -> Vec<Tid> {
            let inside = |v: &Value| {
                !matches!(v, Value::Null)
                    && match lower {
                        Bound::Included(b) => value_order(v, b).is_ge(),
                        Bound::Excluded(b) => value_order(v, b).is_gt(),
                        Bound::Unbounded => true,
                    }
                    && match upper {
                        Bound::Included(b) => value_order(v, b).is_le(),
                        Bound::Excluded(b) => value_order(v, b).is_lt(),
                        Bound::Unbounded => true,
                    }
            };
            self.0.iter().filter(|(k, _)| inside(&k[0])).map(|(_, t)| *t).collect()
        }
    }

    #[derive(Clone, Debug)]
    enum Op {
        Insert(Vec<Value>, Tid),
        Remove(Vec<Value>, Tid),
        Prefix(Vec<Value>),
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

    fn op(columns: usize) -> impl Strategy<Value = Op> {
        // Stored keys are integers or NULL, as in an integer column, and
        // once in a while a float, which the tree orders among them.
        let stored = prop_oneof![20 => (-8i64..8).prop_map(Value::Int), 2 => Just(Value::Null), 1 => Just(Value::Float(0.5))];
        let key = proptest::collection::vec(stored, columns);
        prop_oneof![
            4 => (key.clone(), 0u64..6).prop_map(|(k, t)| Op::Insert(k, t)),
            2 => (key, 0u64..6).prop_map(|(k, t)| Op::Remove(k, t)),
            2 => proptest::collection::vec(value(), 0..=columns).prop_map(Op::Prefix),
            2 => (bound(), bound()).prop_map(|(lo, hi)| Op::Range(lo, hi)),
        ]
    }

    fn check(columns: usize, ops: Vec<Op>) -> Result<(), TestCaseError> {
        let ix = Index::new((0..columns).collect(), vec![SqlType::Int8; columns], false);
        let mut model = Model::default();
        for op in ops {
            match op {
                Op::Insert(k, t) => {
                    ix.insert(Key(k.clone()), t);
                    model.insert(k, t);
                }
                Op::Remove(k, t) => {
                    ix.remove(&Key(k.clone()), t);
                    model.remove(&k, t);
                }
                Op::Prefix(p) => prop_assert_eq!(ix.lookup_prefix(&p), model.prefix(&p), "prefix {:?}", p),
                Op::Range(lo, hi) => {
                    prop_assert_eq!(
                        ix.lookup_range(lo.clone(), hi.clone()),
                        model.range(&lo, &hi),
                        "{:?}..{:?}",
                        lo,
                        hi
                    )
                }
            }
        }
        Ok(())
    }

    proptest! {
        /// Every lookup answers as a sorted list of (key, tid) does, in
        /// PostgreSQL's btree order: integer keys against probes and bounds
        /// of other numeric kinds, NULLs last, empty ranges, prefixes of
        /// every length, one entry per (key, tid).
        #[test]
        fn lookups_answer_as_the_sorted_entries(ops in proptest::collection::vec(op(1), 1..60)) {
            check(1, ops)?;
        }

        #[test]
        fn two_column_lookups_answer_as_the_sorted_entries(ops in proptest::collection::vec(op(2), 1..60)) {
            check(2, ops)?;
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
        // Several versions under one key.
        let one = Index::new(vec![0], vec![SqlType::Int8], false);
        for tid in [4, 0, 2, 3, 1] {
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

    #[test]
    fn a_unique_key_lists_its_newest_entry_first() {
        let ix = Index::new(vec![0], vec![SqlType::Int8], true);
        for tid in [5, 2, 9] {
            ix.insert(Key(vec![Value::Int(7)]), tid);
        }
        ix.insert(Key(vec![Value::Int(8)]), 1);
        assert_eq!(ix.lookup_prefix(&[Value::Int(7)]), vec![9, 2, 5]);
        assert_eq!(ix.lookup_range(Bound::Included(Value::Int(7)), Bound::Unbounded), vec![9, 2, 5, 1]);
        ix.remove(&Key(vec![Value::Int(7)]), 2);
        ix.remove(&Key(vec![Value::Int(7)]), 4);
        assert_eq!(ix.lookup_prefix(&[Value::Int(7)]), vec![9, 5]);
        assert_eq!(
            ix.find_in_key(&[Value::Int(7)], |t| (t < 9).then_some(t)),
            Some(5),
            "newest first, stops at 5"
        );
        for tid in [11, 12, 13, 14] {
            ix.insert(Key(vec![Value::Int(7)]), tid);
        }
        let k = |v| Key(vec![Value::Int(v)]);
        ix.remove_all([(k(7), 12), (k(8), 1), (k(7), 5), (k(7), 14), (k(7), 99)]);
        assert_eq!(ix.lookup_prefix(&[Value::Int(7)]), vec![13, 11, 9]);
        assert!(ix.lookup_prefix(&[Value::Int(8)]).is_empty());
        // NULLs never conflict: tid order, removed without a walk.
        for tid in [3, 1] {
            ix.insert(Key(vec![Value::Null]), tid);
        }
        ix.remove(&Key(vec![Value::Null]), 3);
        assert_eq!(ix.lookup_prefix(&[Value::Null]), vec![1]);
    }

    #[test]
    fn equal_keys_share_a_unique_stripe() {
        let ix = Index::new(vec![0], vec![SqlType::Numeric(-1)], true);
        let a = Key(vec![Value::Numeric(snapscale_values::numeric::Numeric::parse("1.50").unwrap())]);
        let b = Key(vec![Value::Numeric(snapscale_values::numeric::Numeric::parse("1.5").unwrap())]);
        assert_eq!(stripe(&a), stripe(&b));
        let spread: std::collections::HashSet<usize> =
            (0..1000).map(|i| stripe(&Key(vec![Value::Int(i)]))).collect();
        assert!(spread.len() > UNIQUE_STRIPES / 2, "integer keys spread over the stripes: {spread:?}");
        drop(ix.lock_unique(&a));
    }

    /// INDEX-READS: a reader finds every entry that was present when its
    /// lookup began and stayed, while writers insert and remove other
    /// entries around it (leaf splits and merges included); the checker is
    /// the set of entries that never leave.
    #[test]
    fn lookups_find_every_stable_entry_under_concurrent_writes() {
        const KEYS: i64 = 4000;
        let ix = Arc::new(Index::new(vec![0], vec![SqlType::Int8], false));
        // Stable: every key at tid 0. Churned: tids 1.. come and go.
        for k in 0..KEYS {
            ix.insert(Key(vec![Value::Int(k)]), 0);
        }
        let stop = Arc::new(AtomicBool::new(false));
        let writers: Vec<_> = (0..2u64)
            .map(|w| {
                let (ix, stop) = (Arc::clone(&ix), Arc::clone(&stop));
                std::thread::spawn(move || {
                    let mut round = 0u64;
                    while !stop.load(Relaxed) {
                        round += 1;
                        for k in (0..KEYS).filter(|k| (*k as u64 + round) % 3 == w) {
                            let tid = 1 + (round % 4) * 2 + w;
                            ix.insert(Key(vec![Value::Int(k)]), tid);
                            if round > 1 {
                                ix.remove(&Key(vec![Value::Int(k)]), 1 + ((round - 1) % 4) * 2 + w);
                            }
                        }
                    }
                })
            })
            .collect();
        let readers: Vec<_> = (0..2)
            .map(|r| {
                let ix = Arc::clone(&ix);
                std::thread::spawn(move || {
                    for i in 0..20_000i64 {
                        let k = (i * 7919 + r * 13) % KEYS;
                        assert!(ix.lookup_prefix(&[Value::Int(k)]).contains(&0), "point lookup lost key {k}");
                        if i % 1000 == 0 {
                            let tids = ix.lookup_range(
                                Bound::Included(Value::Int(100)),
                                Bound::Excluded(Value::Int(600)),
                            );
                            assert_eq!(
                                tids.iter().filter(|t| **t == 0).count(),
                                500,
                                "range lost stable entries"
                            );
                        }
                    }
                })
            })
            .collect();
        for r in readers {
            r.join().unwrap();
        }
        stop.store(true, Relaxed);
        for w in writers {
            w.join().unwrap();
        }
    }
}
