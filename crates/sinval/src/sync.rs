//! std or loom synchronisation types (see `crates/txn/src/sync.rs` for the
//! rationale). Poisoning is fatal: a panic while holding the queue's locks
//! leaves read positions that cannot be trusted.

#[cfg(loom)]
pub(crate) use loom::sync::atomic;
#[cfg(not(loom))]
pub(crate) use std::sync::atomic;

#[cfg(loom)]
use loom::sync as imp;
#[cfg(not(loom))]
use std::sync as imp;

pub(crate) use imp::{MutexGuard, RwLockReadGuard, RwLockWriteGuard};

/// A mutex whose `lock` returns the guard; poisoning is fatal.
#[derive(Debug, Default)]
pub(crate) struct Mutex<T>(imp::Mutex<T>);

impl<T> Mutex<T> {
    pub(crate) fn new(value: T) -> Self {
        Self(imp::Mutex::new(value))
    }

    pub(crate) fn lock(&self) -> MutexGuard<'_, T> {
        self.0.lock().expect("a thread panicked holding a sinval mutex")
    }
}

/// A reader-writer lock whose guards are returned directly; poisoning is fatal.
#[derive(Debug, Default)]
pub(crate) struct RwLock<T>(imp::RwLock<T>);

impl<T> RwLock<T> {
    pub(crate) fn new(value: T) -> Self {
        Self(imp::RwLock::new(value))
    }

    pub(crate) fn read(&self) -> RwLockReadGuard<'_, T> {
        self.0.read().expect("a thread panicked holding the sinval read lock")
    }

    pub(crate) fn write(&self) -> RwLockWriteGuard<'_, T> {
        self.0.write().expect("a thread panicked holding the sinval read lock")
    }
}
