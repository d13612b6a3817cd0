//! Synchronisation types: std, or loom's under `--cfg loom` (see the
//! `snapscale-sync` crate, which also decides that poisoning is fatal).

pub(crate) use snapscale_sync::{atomic, backoff, Mutex, RwLock, RwLockWriteGuard, UnsafeCell};

/// Loom's leak tracking, for structures that allocate with `Box` on
/// lock-free paths (the models then fail on a lost or leaked allocation).
#[cfg(loom)]
pub(crate) use loom::alloc::Track;
