//! Synchronisation types: std, or loom's under `--cfg loom` (see the
//! `snapscale-sync` crate, which also decides that poisoning is fatal).

pub(crate) use snapscale_sync::{atomic, Mutex, RwLock};
