//! Enum values: the labels of user-defined enum types.
//!
//! Each label is one shared cell ([`EnumLabel`]) that the type's catalog
//! definition and every stored value point to, so that
//!
//! * values order by a key fixed when the label is made ([`OrderKey`]):
//!   adding a label between two others never changes an existing key, so
//!   the order of two values can be read from the values alone, by any
//!   index or sort, with no catalog lookup (PostgreSQL reaches the same
//!   end with even oids and a sort-order cache; its `enumsortorder`, which
//!   it renumbers, is kept beside the cell in the catalog, for `pg_enum`);
//! * `ALTER TYPE … RENAME VALUE` renames the cell, and with it every value
//!   already stored (PostgreSQL stores the label's oid, and prints it by
//!   looking the name up).
//!
//! A cell's name changes only under its type's DDL lock; readers take the
//! name's read lock for the moment of a clone.

use std::cmp::Ordering;
use std::collections::HashMap;
use std::sync::{Arc, OnceLock, RwLock};

/// Where a label sorts among its type's labels: a number, then a fraction
/// of base-256 digits that never ends in a zero digit, so that there is
/// always room between two keys.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct OrderKey {
    major: u64,
    frac: Box<[u8]>,
}

/// The first label's major number: room for as many labels before it.
const FIRST_MAJOR: u64 = 1 << 32;

impl OrderKey {
    /// The key of a type's first label.
    pub fn first() -> OrderKey {
        OrderKey { major: FIRST_MAJOR, frac: Box::new([]) }
    }

    /// A key after `self` and before every key greater than `self`'s major
    /// number (a label added at the end).
    pub fn after(&self) -> OrderKey {
        match self.major.checked_add(1) {
            Some(major) => OrderKey { major, frac: Box::new([]) },
            None => OrderKey { major: self.major, frac: frac_between(&self.frac, None).into() },
        }
    }

    /// A key before `self` (a label added before the first), `None` when
    /// there is no room left below.
    pub fn before(&self) -> Option<OrderKey> {
        if !self.frac.is_empty() {
            return Some(OrderKey { major: self.major, frac: Box::new([]) });
        }
        Some(OrderKey { major: self.major.checked_sub(1)?, frac: Box::new([]) })
    }

    /// A key strictly between `lo` and `hi` (`lo < hi`).
    pub fn between(lo: &OrderKey, hi: &OrderKey) -> OrderKey {
        debug_assert!(lo < hi);
        if hi.major - lo.major >= 2 {
            return OrderKey { major: lo.major + 1, frac: Box::new([]) };
        }
        // Same major: a fraction between theirs. Adjacent majors: any
        // fraction above lo's sorts before hi's major.
        let bound = (hi.major == lo.major).then_some(&*hi.frac);
        OrderKey { major: lo.major, frac: frac_between(&lo.frac, bound).into() }
    }

    /// The bytes that [`OrderKey::decode`] reads back.
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.major.to_le_bytes());
        out.extend_from_slice(&(self.frac.len() as u32).to_le_bytes());
        out.extend_from_slice(&self.frac);
    }

    /// A key from its encoding, and the bytes it took.
    pub fn decode(b: &[u8]) -> Option<(OrderKey, usize)> {
        let major = u64::from_le_bytes(b.get(..8)?.try_into().ok()?);
        let n = u32::from_le_bytes(b.get(8..12)?.try_into().ok()?) as usize;
        let frac: Box<[u8]> = b.get(12..12usize.checked_add(n)?)?.into();
        if frac.last() == Some(&0) {
            return None;
        }
        Some((OrderKey { major, frac }, 12 + n))
    }
}

/// Digits strictly between `lo` and `hi` (`None`: no upper bound), ending
/// in a nonzero digit. Missing digits of `lo` count as 0; `hi` never runs
/// out first, because `lo < hi` and no fraction ends in 0.
fn frac_between(lo: &[u8], hi: Option<&[u8]>) -> Vec<u8> {
    let mut out = Vec::new();
    let mut hi = hi;
    for i in 0.. {
        let l = u16::from(lo.get(i).copied().unwrap_or(0));
        let h = match hi {
            Some(h) => u16::from(h.get(i).copied().unwrap_or(0)),
            None => 256,
        };
        if h - l >= 2 {
            out.push(((l + h) / 2) as u8);
            return out;
        }
        out.push(l as u8);
        if h == l + 1 {
            // Anything above lo's remaining digits stays below hi.
            hi = None;
        }
    }
    unreachable!("the loop returns once lo's digits run out")
}

/// One label of an enum type. See the module documentation.
pub struct EnumLabel {
    /// The label's oid (pg_enum.oid).
    pub oid: u32,
    /// Its type's oid.
    pub type_oid: u32,
    pub key: OrderKey,
    name: RwLock<Arc<str>>,
}

impl EnumLabel {
    pub fn new(oid: u32, type_oid: u32, key: OrderKey, name: Arc<str>) -> Arc<EnumLabel> {
        Arc::new(EnumLabel { oid, type_oid, key, name: RwLock::new(name) })
    }

    /// The label as it prints now.
    pub fn name(&self) -> Arc<str> {
        Arc::clone(&self.name.read().unwrap_or_else(|e| e.into_inner()))
    }

    /// Renames the label, for every value that holds it; returns the old
    /// name. Called under the type's DDL lock, and to undo one.
    pub fn rename(&self, name: Arc<str>) -> Arc<str> {
        std::mem::replace(&mut *self.name.write().unwrap_or_else(|e| e.into_inner()), name)
    }

    /// The order of two labels: by type, then by key.
    pub fn order(&self, other: &EnumLabel) -> Ordering {
        (self.type_oid, &self.key).cmp(&(other.type_oid, &other.key))
    }
}

impl PartialEq for EnumLabel {
    fn eq(&self, other: &EnumLabel) -> bool {
        self.oid == other.oid && self.type_oid == other.type_oid
    }
}

impl std::fmt::Debug for EnumLabel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "EnumLabel({}, {:?})", self.oid, &*self.name())
    }
}

/// A user-defined type as a column type names it: its oid, and its name
/// as of when the type was resolved. Two of them are the same type when
/// their oids are. Four bytes (an index into the process's table of the
/// type names ever resolved), so that `SqlType`, which every expression
/// node carries, stays small and `Copy`.
#[derive(Clone, Copy)]
pub struct UserType(u32);

/// What a [`UserType`] stands for.
struct TypeInfo {
    oid: u32,
    name: &'static str,
    array_name: &'static str,
    array_internal: &'static str,
}

/// Every (oid, name) pair resolved, once each. Bounded by the type names
/// and oids ever created, not by the statements that use them.
#[derive(Default)]
struct TypeTable {
    infos: Vec<&'static TypeInfo>,
    index: HashMap<(u32, &'static str), u32>,
}

fn types() -> &'static RwLock<TypeTable> {
    static TYPES: OnceLock<RwLock<TypeTable>> = OnceLock::new();
    TYPES.get_or_init(Default::default)
}

impl UserType {
    pub fn new(oid: u32, name: &str) -> UserType {
        if let Some(&i) = types().read().unwrap_or_else(|e| e.into_inner()).index.get(&(oid, name)) {
            return UserType(i);
        }
        let mut t = types().write().unwrap_or_else(|e| e.into_inner());
        if let Some(&i) = t.index.get(&(oid, name)) {
            return UserType(i);
        }
        let leak = |s: String| -> &'static str { Box::leak(s.into_boxed_str()) };
        let info: &'static TypeInfo = Box::leak(Box::new(TypeInfo {
            oid,
            name: leak(name.to_owned()),
            array_name: leak(format!("{name}[]")),
            array_internal: leak(format!("_{name}")),
        }));
        let i = t.infos.len() as u32;
        t.infos.push(info);
        t.index.insert((oid, info.name), i);
        UserType(i)
    }

    fn info(self) -> &'static TypeInfo {
        types().read().unwrap_or_else(|e| e.into_inner()).infos[self.0 as usize]
    }

    pub fn oid(self) -> u32 {
        self.info().oid
    }

    /// The name, as messages print it.
    pub fn name(self) -> &'static str {
        self.info().name
    }

    /// `name[]`, how its array type prints in messages.
    pub fn array_name(self) -> &'static str {
        self.info().array_name
    }

    /// `_name`, its array type's internal name.
    pub fn array_internal(self) -> &'static str {
        self.info().array_internal
    }

    /// Its array type's oid: the type's own plus one (CREATE TYPE takes
    /// two consecutive oids).
    pub fn array_oid(self) -> u32 {
        self.oid().wrapping_add(1)
    }
}

impl PartialEq for UserType {
    fn eq(&self, other: &UserType) -> bool {
        self.0 == other.0 || self.oid() == other.oid()
    }
}

impl Eq for UserType {}

impl std::hash::Hash for UserType {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.oid().hash(state);
    }
}

impl std::fmt::Debug for UserType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "UserType({}, {:?})", self.oid(), self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn key(major: u64, frac: &[u8]) -> OrderKey {
        OrderKey { major, frac: frac.into() }
    }

    #[test]
    fn thirty_labels_fit_between_two() {
        let (lo, hi) = (OrderKey::first(), OrderKey::first().after());
        let mut below = hi.clone();
        for _ in 0..1000 {
            let k = OrderKey::between(&lo, &below);
            assert!(lo < k && k < below, "{lo:?} {k:?} {below:?}");
            below = k;
        }
        assert!(below.frac.len() <= 130, "keys grow by about a bit per split: {}", below.frac.len());
    }

    #[test]
    fn keys_round_trip() {
        let k = key(7, &[3, 255, 1]);
        let mut b = Vec::new();
        k.encode(&mut b);
        assert_eq!(OrderKey::decode(&b), Some((k, b.len())));
        assert_eq!(OrderKey::decode(&b[..b.len() - 1]), None);
    }

    proptest! {
        #[test]
        fn between_is_strictly_between(
            a in (0u64..4, proptest::collection::vec(any::<u8>(), 0..4)),
            b in (0u64..4, proptest::collection::vec(any::<u8>(), 0..4)),
        ) {
            let trim = |mut v: Vec<u8>| { while v.last() == Some(&0) { v.pop(); } v };
            let (a, b) = (key(a.0, &trim(a.1)), key(b.0, &trim(b.1)));
            prop_assume!(a != b);
            let (lo, hi) = if a < b { (a, b) } else { (b, a) };
            let k = OrderKey::between(&lo, &hi);
            prop_assert!(lo < k && k < hi);
            prop_assert!(k.frac.last() != Some(&0));
            let after = lo.after();
            prop_assert!(after > lo);
        }
    }
}

#[cfg(test)]
mod size_tests {
    /// Every expression node carries a type, and the binder's and the
    /// evaluator's recursion frames hold them (max_stack_depth): naming a
    /// user type costs four bytes, not a name.
    #[test]
    fn a_user_type_keeps_sql_type_small() {
        assert_eq!(std::mem::size_of::<super::UserType>(), 4);
        assert!(std::mem::size_of::<crate::SqlType>() <= 12, "{}", std::mem::size_of::<crate::SqlType>());
    }
}
