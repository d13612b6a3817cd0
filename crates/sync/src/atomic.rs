//! Atomics, std build: std's atomic types behind types of this crate.
//!
//! Under `--cfg loom` the crate's `atomic` module is loom's own; this is the
//! other half of that split. Each type is a `#[repr(transparent)]` wrapper
//! whose methods forward to std's with `#[inline]`, so it costs nothing and
//! keeps std's size, alignment and auto traits (`Send`, `Sync`,
//! `RefUnwindSafe`); `Debug` prints the value exactly as std's does.
//!
//! The wrappers exist for the ban on direct std atomics in the concurrency
//! crates (their `clippy.toml`): clippy's `disallowed-types` matches the
//! definition a path resolves to, not the path, so a plain re-export of
//! `std::sync::atomic::AtomicU64` from here would be indistinguishable from
//! a direct use of std's type, which loom never sees.
//!
//! The API is loom 0.7's: what one half offers, the other offers too,
//! including the owner-only helpers (`unsync_load`, and `with_mut` on
//! integers and pointers), so code that builds on std builds under loom.

use std::fmt;
use std::sync::atomic as std_atomic;

pub use std::sync::atomic::Ordering;

/// An atomic fence (std's `fence`; loom's under `--cfg loom`).
#[inline]
pub fn fence(order: Ordering) {
    std_atomic::fence(order);
}

macro_rules! atomic_int {
    ($name:ident, $int:ty) => {
        #[doc = concat!("std's `", stringify!($name), "` (loom's under `--cfg loom`).")]
        #[repr(transparent)]
        #[derive(Default)]
        pub struct $name(std_atomic::$name);

        impl $name {
            /// A new atomic holding `value`.
            #[inline]
            pub fn new(value: $int) -> Self {
                Self(std_atomic::$name::new(value))
            }

            /// Exclusive access to the value (the atomic is not shared).
            #[inline]
            pub fn with_mut<R>(&mut self, f: impl FnOnce(&mut $int) -> R) -> R {
                f(self.0.get_mut())
            }

            /// Loads the value without synchronisation.
            ///
            /// # Safety
            ///
            /// No other thread may write the atomic concurrently (the caller
            /// is its only writer, or it is not shared yet).
            #[inline]
            pub unsafe fn unsync_load(&self) -> $int {
                // SAFETY: the caller guarantees no concurrent write, so a
                // plain read of the initialised value cannot race.
                unsafe { *self.0.as_ptr() }
            }

            /// The value, consuming the atomic.
            #[inline]
            pub fn into_inner(self) -> $int {
                self.0.into_inner()
            }

            /// std's `load`.
            #[inline]
            pub fn load(&self, order: Ordering) -> $int {
                self.0.load(order)
            }

            /// std's `store`.
            #[inline]
            pub fn store(&self, value: $int, order: Ordering) {
                self.0.store(value, order)
            }

            /// std's `swap`.
            #[inline]
            pub fn swap(&self, value: $int, order: Ordering) -> $int {
                self.0.swap(value, order)
            }

            /// std's `compare_exchange`.
            #[inline]
            pub fn compare_exchange(
                &self,
                current: $int,
                new: $int,
                success: Ordering,
                failure: Ordering,
            ) -> Result<$int, $int> {
                self.0.compare_exchange(current, new, success, failure)
            }

            /// std's `compare_exchange_weak`.
            #[inline]
            pub fn compare_exchange_weak(
                &self,
                current: $int,
                new: $int,
                success: Ordering,
                failure: Ordering,
            ) -> Result<$int, $int> {
                self.0.compare_exchange_weak(current, new, success, failure)
            }

            /// std's `fetch_add`.
            #[inline]
            pub fn fetch_add(&self, value: $int, order: Ordering) -> $int {
                self.0.fetch_add(value, order)
            }

            /// std's `fetch_sub`.
            #[inline]
            pub fn fetch_sub(&self, value: $int, order: Ordering) -> $int {
                self.0.fetch_sub(value, order)
            }

            /// std's `fetch_and`.
            #[inline]
            pub fn fetch_and(&self, value: $int, order: Ordering) -> $int {
                self.0.fetch_and(value, order)
            }

            /// std's `fetch_nand`.
            #[inline]
            pub fn fetch_nand(&self, value: $int, order: Ordering) -> $int {
                self.0.fetch_nand(value, order)
            }

            /// std's `fetch_or`.
            #[inline]
            pub fn fetch_or(&self, value: $int, order: Ordering) -> $int {
                self.0.fetch_or(value, order)
            }

            /// std's `fetch_xor`.
            #[inline]
            pub fn fetch_xor(&self, value: $int, order: Ordering) -> $int {
                self.0.fetch_xor(value, order)
            }

            /// std's `fetch_max`.
            #[inline]
            pub fn fetch_max(&self, value: $int, order: Ordering) -> $int {
                self.0.fetch_max(value, order)
            }

            /// std's `fetch_min`.
            #[inline]
            pub fn fetch_min(&self, value: $int, order: Ordering) -> $int {
                self.0.fetch_min(value, order)
            }

            /// std's `fetch_update`.
            #[inline]
            pub fn fetch_update<F>(
                &self,
                set_order: Ordering,
                fetch_order: Ordering,
                f: F,
            ) -> Result<$int, $int>
            where
                F: FnMut($int) -> Option<$int>,
            {
                self.0.fetch_update(set_order, fetch_order, f)
            }
        }

        impl From<$int> for $name {
            #[inline]
            fn from(value: $int) -> Self {
                Self::new(value)
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Debug::fmt(&self.0, f)
            }
        }
    };
}

atomic_int!(AtomicU8, u8);
atomic_int!(AtomicU16, u16);
atomic_int!(AtomicU32, u32);
atomic_int!(AtomicU64, u64);
atomic_int!(AtomicUsize, usize);
atomic_int!(AtomicI8, i8);
atomic_int!(AtomicI16, i16);
atomic_int!(AtomicI32, i32);
atomic_int!(AtomicI64, i64);
atomic_int!(AtomicIsize, isize);

/// std's `AtomicBool` (loom's under `--cfg loom`).
#[repr(transparent)]
#[derive(Default)]
pub struct AtomicBool(std_atomic::AtomicBool);

impl AtomicBool {
    /// A new atomic holding `value`.
    #[inline]
    pub fn new(value: bool) -> Self {
        Self(std_atomic::AtomicBool::new(value))
    }

    /// Loads the value without synchronisation.
    ///
    /// # Safety
    ///
    /// No other thread may write the atomic concurrently (the caller is its
    /// only writer, or it is not shared yet).
    #[inline]
    pub unsafe fn unsync_load(&self) -> bool {
        // SAFETY: the caller guarantees no concurrent write, so a plain read
        // of the initialised value cannot race.
        unsafe { *self.0.as_ptr() }
    }

    /// The value, consuming the atomic.
    #[inline]
    pub fn into_inner(self) -> bool {
        self.0.into_inner()
    }

    /// std's `load`.
    #[inline]
    pub fn load(&self, order: Ordering) -> bool {
        self.0.load(order)
    }

    /// std's `store`.
    #[inline]
    pub fn store(&self, value: bool, order: Ordering) {
        self.0.store(value, order)
    }

    /// std's `swap`.
    #[inline]
    pub fn swap(&self, value: bool, order: Ordering) -> bool {
        self.0.swap(value, order)
    }

    /// std's `compare_exchange`.
    #[inline]
    pub fn compare_exchange(
        &self,
        current: bool,
        new: bool,
        success: Ordering,
        failure: Ordering,
    ) -> Result<bool, bool> {
        self.0.compare_exchange(current, new, success, failure)
    }

    /// std's `compare_exchange_weak`.
    #[inline]
    pub fn compare_exchange_weak(
        &self,
        current: bool,
        new: bool,
        success: Ordering,
        failure: Ordering,
    ) -> Result<bool, bool> {
        self.0.compare_exchange_weak(current, new, success, failure)
    }

    /// std's `fetch_and`.
    #[inline]
    pub fn fetch_and(&self, value: bool, order: Ordering) -> bool {
        self.0.fetch_and(value, order)
    }

    /// std's `fetch_nand`.
    #[inline]
    pub fn fetch_nand(&self, value: bool, order: Ordering) -> bool {
        self.0.fetch_nand(value, order)
    }

    /// std's `fetch_or`.
    #[inline]
    pub fn fetch_or(&self, value: bool, order: Ordering) -> bool {
        self.0.fetch_or(value, order)
    }

    /// std's `fetch_xor`.
    #[inline]
    pub fn fetch_xor(&self, value: bool, order: Ordering) -> bool {
        self.0.fetch_xor(value, order)
    }

    /// std's `fetch_update`.
    #[inline]
    pub fn fetch_update<F>(&self, set_order: Ordering, fetch_order: Ordering, f: F) -> Result<bool, bool>
    where
        F: FnMut(bool) -> Option<bool>,
    {
        self.0.fetch_update(set_order, fetch_order, f)
    }
}

impl From<bool> for AtomicBool {
    #[inline]
    fn from(value: bool) -> Self {
        Self::new(value)
    }
}

impl fmt::Debug for AtomicBool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

/// std's `AtomicPtr` (loom's under `--cfg loom`).
#[repr(transparent)]
pub struct AtomicPtr<T>(std_atomic::AtomicPtr<T>);

impl<T> AtomicPtr<T> {
    /// A new atomic holding `value`.
    #[inline]
    pub fn new(value: *mut T) -> Self {
        Self(std_atomic::AtomicPtr::new(value))
    }

    /// Loads the value without synchronisation.
    ///
    /// # Safety
    ///
    /// No other thread may write the atomic concurrently (the caller is its
    /// only writer, or it is not shared yet).
    #[inline]
    pub unsafe fn unsync_load(&self) -> *mut T {
        // SAFETY: the caller guarantees no concurrent write, so a plain read
        // of the initialised value cannot race.
        unsafe { *self.0.as_ptr() }
    }

    /// Exclusive access to the value (the atomic is not shared).
    #[inline]
    pub fn with_mut<R>(&mut self, f: impl FnOnce(&mut *mut T) -> R) -> R {
        f(self.0.get_mut())
    }

    /// The value, consuming the atomic.
    #[inline]
    pub fn into_inner(self) -> *mut T {
        self.0.into_inner()
    }

    /// std's `load`.
    #[inline]
    pub fn load(&self, order: Ordering) -> *mut T {
        self.0.load(order)
    }

    /// std's `store`.
    #[inline]
    pub fn store(&self, value: *mut T, order: Ordering) {
        self.0.store(value, order)
    }

    /// std's `swap`.
    #[inline]
    pub fn swap(&self, value: *mut T, order: Ordering) -> *mut T {
        self.0.swap(value, order)
    }

    /// std's `compare_exchange`.
    #[inline]
    pub fn compare_exchange(
        &self,
        current: *mut T,
        new: *mut T,
        success: Ordering,
        failure: Ordering,
    ) -> Result<*mut T, *mut T> {
        self.0.compare_exchange(current, new, success, failure)
    }

    /// std's `compare_exchange_weak`.
    #[inline]
    pub fn compare_exchange_weak(
        &self,
        current: *mut T,
        new: *mut T,
        success: Ordering,
        failure: Ordering,
    ) -> Result<*mut T, *mut T> {
        self.0.compare_exchange_weak(current, new, success, failure)
    }

    /// std's `fetch_update`.
    #[inline]
    pub fn fetch_update<F>(&self, set_order: Ordering, fetch_order: Ordering, f: F) -> Result<*mut T, *mut T>
    where
        F: FnMut(*mut T) -> Option<*mut T>,
    {
        self.0.fetch_update(set_order, fetch_order, f)
    }
}

impl<T> Default for AtomicPtr<T> {
    /// A null pointer.
    #[inline]
    fn default() -> Self {
        Self(std_atomic::AtomicPtr::default())
    }
}

impl<T> From<*mut T> for AtomicPtr<T> {
    #[inline]
    fn from(value: *mut T) -> Self {
        Self::new(value)
    }
}

impl<T> fmt::Debug for AtomicPtr<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}
