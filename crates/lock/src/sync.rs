//! Synchronisation types: std, or loom's under `--cfg loom` (the shim is
//! the `snapscale-sync` crate).
//!
//! The fast path, the strong-lock counters and the lock-table partitions
//! import their atomics and mutexes from here, so the synchronous paths
//! (`try_lock`, `unlock`, the fast-path transfer) are model-checked by loom
//! under `--cfg loom` and run on std otherwise. Waiting uses tokio's
//! channels and timers, which loom does not see; the models therefore drive
//! only the paths that never wait.
//!
//! Lock poisoning is decided once, here: a panic while holding a partition
//! or a fast-path mutex leaves grant counts half-updated, and a lock table
//! whose counts cannot be trusted can grant conflicting locks, so poisoning
//! is fatal (PostgreSQL's PANIC inside a critical section).

pub(crate) use snapscale_sync::{atomic, Mutex, MutexGuard};
