//! The one place that chooses between std and loom synchronisation types.
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

#![allow(clippy::disallowed_types)]

#[cfg(loom)]
pub(crate) use loom::sync::atomic;
#[cfg(not(loom))]
pub(crate) use std::sync::atomic;

#[cfg(loom)]
use loom::sync as imp;
#[cfg(not(loom))]
use std::sync as imp;

pub(crate) use imp::MutexGuard;

/// A mutex whose `lock` returns the guard and treats poisoning as fatal.
#[derive(Debug, Default)]
pub(crate) struct Mutex<T>(imp::Mutex<T>);

impl<T> Mutex<T> {
    pub(crate) fn new(value: T) -> Self {
        Self(imp::Mutex::new(value))
    }

    pub(crate) fn lock(&self) -> MutexGuard<'_, T> {
        self.0.lock().expect("a thread panicked holding a lock-manager mutex")
    }
}
