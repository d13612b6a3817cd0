//! The one place that chooses between std and loom synchronisation types.
//!
//! Every concurrent structure in this crate imports its atomics, locks and
//! `UnsafeCell` from here, so the same code is model-checked by loom under
//! `--cfg loom` and runs on std otherwise. Lock poisoning is decided once,
//! here: a panic while holding a lock over shared transaction state leaves that
//! state half-updated, so poisoning is fatal (the PostgreSQL analogue is a
//! PANIC inside a critical section).

#[cfg(loom)]
pub(crate) use loom::sync::atomic;
#[cfg(not(loom))]
pub(crate) use std::sync::atomic;

#[cfg(loom)]
use loom::sync as imp;
#[cfg(not(loom))]
use std::sync as imp;

pub(crate) use imp::{MutexGuard, RwLockReadGuard, RwLockWriteGuard};

/// A mutex whose `lock` returns the guard and treats poisoning as fatal.
#[derive(Debug, Default)]
pub(crate) struct Mutex<T>(imp::Mutex<T>);

impl<T> Mutex<T> {
    pub(crate) fn new(value: T) -> Self {
        Self(imp::Mutex::new(value))
    }

    pub(crate) fn lock(&self) -> MutexGuard<'_, T> {
        self.0.lock().expect("a thread panicked holding a transaction-state mutex")
    }

    /// `None` when another thread holds the lock (the try-lock of seed 000).
    pub(crate) fn try_lock(&self) -> Option<MutexGuard<'_, T>> {
        match self.0.try_lock() {
            Ok(guard) => Some(guard),
            Err(std::sync::TryLockError::WouldBlock) => None,
            Err(std::sync::TryLockError::Poisoned(_)) => {
                panic!("a thread panicked holding a transaction-state mutex")
            }
        }
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
        self.0.read().expect("a thread panicked holding the proc-array lock")
    }

    pub(crate) fn write(&self) -> RwLockWriteGuard<'_, T> {
        self.0.write().expect("a thread panicked holding the proc-array lock")
    }
}

/// `UnsafeCell` with loom's closure API, so loom can check every access for
/// races while the std build compiles to plain pointer accesses.
#[cfg(loom)]
pub(crate) use loom::cell::UnsafeCell;

#[cfg(not(loom))]
#[derive(Debug, Default)]
pub(crate) struct UnsafeCell<T>(std::cell::UnsafeCell<T>);

#[cfg(not(loom))]
impl<T> UnsafeCell<T> {
    pub(crate) fn new(value: T) -> Self {
        Self(std::cell::UnsafeCell::new(value))
    }

    pub(crate) fn with<R>(&self, f: impl FnOnce(*const T) -> R) -> R {
        f(self.0.get())
    }

    pub(crate) fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
        f(self.0.get())
    }
}

/// One step of a short wait for another thread that holds no lock and does
/// no I/O (a committer between taking its CSN and stamping it): spin a
/// little, then yield. Under loom, always yield so the model can progress.
pub(crate) fn backoff(spins: &mut u32) {
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
