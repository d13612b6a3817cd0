//! The one place that chooses between std and loom synchronisation types.
//!
//! Every concurrent structure of snapscale (txn, sinval, lock) imports its
//! atomics, locks and `UnsafeCell` from here, so the same code is
//! model-checked by loom when built with `RUSTFLAGS="--cfg loom"` and runs on
//! std otherwise (the convention of tokio's and crossbeam's loom shims).
//!
//! Lock poisoning is decided once, here: a panic while holding a lock over
//! shared state (the proc array, the invalidation queue, a lock-table
//! partition) leaves that state half-updated and untrustworthy, so poisoning
//! is fatal: PostgreSQL's PANIC inside a critical section.
//!
//! The concurrency crates enforce the rule with clippy: each has a
//! `clippy.toml` that bans std's atomics, `fence`, `Mutex`, `RwLock`,
//! `Condvar` and `UnsafeCell`. Clippy matches a banned type by its
//! definition, not by the path that named it, so in the std build every type
//! exported here is this crate's own thin wrapper (see [`atomic`]), never a
//! re-export of std's. `Arc` is not shimmed: it only counts references, no
//! model relies on it, and std's is what the crates' public APIs return.

// The shim is the one place that may name std's primitives: the
// concurrency crates ban them in their clippy.toml.
#![allow(clippy::disallowed_types, clippy::disallowed_methods)]

#[cfg(loom)]
pub use loom::sync::atomic;
#[cfg(not(loom))]
pub mod atomic;

#[cfg(loom)]
use loom::sync as imp;
#[cfg(not(loom))]
use std::sync as imp;

pub use imp::{MutexGuard, RwLockReadGuard, RwLockWriteGuard};

const POISONED: &str = "a thread panicked holding a lock over shared state: it cannot be trusted";

/// A mutex whose `lock` returns the guard and treats poisoning as fatal.
#[derive(Debug, Default)]
pub struct Mutex<T>(imp::Mutex<T>);

impl<T> Mutex<T> {
    /// A new mutex.
    pub fn new(value: T) -> Self {
        Self(imp::Mutex::new(value))
    }

    /// Locks, waiting if needed.
    pub fn lock(&self) -> MutexGuard<'_, T> {
        self.0.lock().expect(POISONED)
    }

    /// `None` when another thread holds the lock.
    pub fn try_lock(&self) -> Option<MutexGuard<'_, T>> {
        match self.0.try_lock() {
            Ok(guard) => Some(guard),
            Err(std::sync::TryLockError::WouldBlock) => None,
            Err(std::sync::TryLockError::Poisoned(_)) => panic!("{POISONED}"),
        }
    }
}

/// A reader-writer lock whose guards are returned directly; poisoning is fatal.
#[derive(Debug, Default)]
pub struct RwLock<T>(imp::RwLock<T>);

impl<T> RwLock<T> {
    /// A new lock.
    pub fn new(value: T) -> Self {
        Self(imp::RwLock::new(value))
    }

    /// Shared access.
    pub fn read(&self) -> RwLockReadGuard<'_, T> {
        self.0.read().expect(POISONED)
    }

    /// Exclusive access.
    pub fn write(&self) -> RwLockWriteGuard<'_, T> {
        self.0.write().expect(POISONED)
    }
}

/// `UnsafeCell` with loom's closure API, so loom checks every access for
/// races while the std build compiles to plain pointer accesses.
#[cfg(loom)]
pub use loom::cell::UnsafeCell;

/// `UnsafeCell` with loom's closure API (std build).
#[cfg(not(loom))]
#[derive(Debug, Default)]
pub struct UnsafeCell<T>(std::cell::UnsafeCell<T>);

#[cfg(not(loom))]
impl<T> UnsafeCell<T> {
    /// A new cell.
    pub fn new(value: T) -> Self {
        Self(std::cell::UnsafeCell::new(value))
    }

    /// Shared access to the raw pointer.
    pub fn with<R>(&self, f: impl FnOnce(*const T) -> R) -> R {
        f(self.0.get())
    }

    /// Exclusive access to the raw pointer.
    pub fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
        f(self.0.get())
    }
}

/// One step of a short wait for another thread that holds no lock and does
/// no I/O (a committer between taking its CSN and stamping it): spin a
/// little, then yield. Under loom, always yield so the model can progress.
pub fn backoff(spins: &mut u32) {
    *spins += 1;
    #[cfg(loom)]
    loom::thread::yield_now();
    #[cfg(not(loom))]
    if *spins < 64 {
        std::hint::spin_loop();
    } else {
        std::thread::yield_now();
    }
}
