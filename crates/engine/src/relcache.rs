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
use std::sync::Arc;

use snapscale_sinval::{Invalidation, Received, Sinval};

use crate::catalog::Rel;

/// See the module documentation.
pub struct RelCache {
    by_name: HashMap<String, Rel>,
    received: Vec<Invalidation>,
    /// The search_path the names were resolved under (REL-KEY).
    path: Arc<[String]>,
    /// Counts the catalog changes this backend has heard of (invalidations
    /// accepted, its own DDL, entries forgotten): a plan kept across
    /// statements (PL-CACHE) made at another generation is made again.
    generation: u64,
}

impl RelCache {
    /// Makes the cache hold what names find under `path`: if that is not
    /// the search_path they were resolved under, every name is forgotten.
    /// (A SET re-makes the session's path even when it says the same: the
    /// new one is adopted, so that the next call is a pointer compare.)
    pub fn follow(&mut self, path: &Arc<[String]>) {
        if Arc::ptr_eq(&self.path, path) {
            return;
        }
        if self.path != *path {
            self.by_name.clear();
            self.generation += 1;
        }
        self.path = Arc::clone(path);
    }

    pub fn get(&self, name: &str) -> Option<&Rel> {
        self.by_name.get(name)
    }

    pub fn insert(&mut self, name: String, rel: Rel) {
        self.by_name.insert(name, rel);
    }

    /// Forgets relation `oid` under any name.
    pub fn remove_oid(&mut self, oid: u32) {
        self.by_name.retain(|_, r| r.entry.oid != oid);
        self.generation += 1;
    }

    pub fn clear(&mut self) {
        self.by_name.clear();
        self.generation += 1;
    }

    /// A catalog change this backend made or heard of (see `generation`).
    pub fn bump(&mut self) {
        self.generation += 1;
    }

    /// The catalog changes heard of so far.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Reads this backend's invalidation messages and drops what they name.
    pub fn accept(&mut self, sinval: &Sinval, slot: u32) {
        self.received.clear();
        match sinval.receive(slot, &mut self.received) {
            Received::Nothing => {}
            Received::Reset => self.clear(),
            Received::Messages(_) => {
                self.generation += 1;
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

impl Default for RelCache {
    fn default() -> Self {
        RelCache {
            by_name: HashMap::new(),
            received: Vec::new(),
            path: Arc::from(vec!["public".to_owned()]),
            generation: 0,
        }
    }
}
