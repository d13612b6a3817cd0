//! One backend's catalog cache: relation name → definition and storage, as
//! of the last accepted invalidations (PostgreSQL's relcache and syscache,
//! collapsed into one map).
//!
//! An entry is dropped when an invalidation for its oid arrives (or all of
//! them, on a reset), and the whole cache when a level that did DDL aborts
//! (CACHE-OWN). Statements lock their relations before they accept
//! invalidations, and re-bind when a name no longer resolves to the same
//! entry (PLAN-FRESH).

use std::collections::HashMap;

use snapscale_sinval::{Invalidation, Received, Sinval};

use snapscale_values::SqlError;
use crate::plan::Rel;

/// Where the binder finds relations.
pub(crate) trait Resolver {
    /// The relation `name` (already normalised), if it exists.
    fn resolve(&mut self, name: &str) -> Result<Option<Rel>, SqlError>;
    /// The session's TimeZone: literals of timestamptz are read in it when
    /// the statement is bound, as PostgreSQL reads them at parse analysis.
    fn zone(&self) -> snapscale_values::Zone {
        snapscale_values::Zone::UTC
    }
}

/// See the module documentation.
#[derive(Default)]
pub(crate) struct RelCache {
    by_name: HashMap<String, Rel>,
    received: Vec<Invalidation>,
}

impl RelCache {
    pub(crate) fn get(&self, name: &str) -> Option<&Rel> {
        self.by_name.get(name)
    }

    pub(crate) fn insert(&mut self, name: String, rel: Rel) {
        self.by_name.insert(name, rel);
    }

    /// Forgets relation `oid` under any name.
    pub(crate) fn remove_oid(&mut self, oid: u32) {
        self.by_name.retain(|_, r| r.entry.oid != oid);
    }

    pub(crate) fn clear(&mut self) {
        self.by_name.clear();
    }

    /// Reads this backend's invalidation messages and drops what they name.
    pub(crate) fn accept(&mut self, sinval: &Sinval, slot: u32) {
        self.received.clear();
        match sinval.receive(slot, &mut self.received) {
            Received::Nothing => {}
            Received::Reset => self.by_name.clear(),
            Received::Messages(_) => {
                for m in std::mem::take(&mut self.received) {
                    match m {
                        Invalidation::Relation(oid) | Invalidation::Index(oid) => self.remove_oid(oid),
                        Invalidation::All => self.by_name.clear(),
                    }
                }
            }
        }
    }
}
