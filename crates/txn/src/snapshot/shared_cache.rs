//! `shared-cached`: one snapshot cached in shared state for every session
//! (seed 000, "Cache data in GetSnapshotData()", 2017).
//!
//! The cache holds a *complete* snapshot (every running xid, the builder's
//! own included) tagged with the completion count it was built at. Under the
//! shared proc-array lock a session either copies the cache, when its tag
//! equals the current completion count, or builds its own snapshot and, if it
//! wins a try-lock and the cache is still stale, writes it into the cache. A
//! copy or a fresh build drops the session's own xids before use.
//!
//! Why no one can write the cache while another copies it (SHARED-CACHE):
//! a copier holds the shared proc-array lock and saw `built_at == C`, the
//! current count; the count cannot change before it releases the lock (that
//! needs the exclusive lock). A writer holds the try-lock and writes only if
//! it saw `built_at != C'` under that lock, where C' is the count during its
//! own shared hold. If the two holds overlap, C' = C; `built_at` reached C
//! through a writer's Release store made under the try-lock, so any later
//! try-lock holder sees C and does not write. Hence writes happen only in a
//! period where no copier can be reading the same tag.

use super::{Builder, Snapshot};
use crate::procarray::{Members, ProcArray};
use crate::sync::atomic::{AtomicU64, Ordering::*};
use crate::sync::{Mutex, UnsafeCell};
use crate::xid::Xid;

/// See the module documentation.
pub(crate) struct SharedCache {
    build_lock: Mutex<()>,
    /// Completion count the cached snapshot belongs to; 0 = never built.
    built_at: AtomicU64,
    data: UnsafeCell<Snapshot>,
}

// SAFETY: `data` is written only by the try-lock holder while no reader can be
// copying it (module documentation, SHARED-CACHE); loom checks this protocol.
unsafe impl Sync for SharedCache {}

/// Whether the snapshot came from the cache.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum CacheOutcome {
    Copied,
    Built,
}

impl SharedCache {
    pub(crate) fn new() -> Self {
        Self {
            build_lock: Mutex::new(()),
            built_at: AtomicU64::new(0),
            data: UnsafeCell::new(Snapshot::default()),
        }
    }

    /// Fills `out` for `me` from the cache or by building; the caller holds
    /// `members` (the shared proc-array lock). `own_subxids` are the builder's
    /// own cached subxids, dropped from the result.
    pub(crate) fn snapshot(
        &self,
        procarray: &ProcArray,
        members: &Members,
        me: Builder,
        own_subxids: &[Xid],
        out: &mut Snapshot,
    ) -> CacheOutcome {
        let count = members.completion_count;
        // Acquire (SHARED-CACHE): pairs with the Release store of `built_at`
        // below; seeing the current count means the data written before that
        // store is visible.
        let outcome = if self.built_at.load(Acquire) == count {
            // SAFETY: no writer while the tag equals the current count.
            self.data.with(|d| out.clone_from(unsafe { &*d }));
            procarray.advertise_xmin(me.slot, out.xmin);
            CacheOutcome::Copied
        } else {
            procarray.build(members, me, true, out);
            if let Some(_writer) = self.build_lock.try_lock() {
                // Relaxed: written only under this try-lock, which we hold.
                if self.built_at.load(Relaxed) != count {
                    // SAFETY: no copier can hold tag `count` yet (see docs).
                    self.data.with_mut(|d| unsafe { (*d).clone_from(out) });
                    // Release (SHARED-CACHE): pairs with the Acquire above.
                    self.built_at.store(count, Release);
                }
            }
            CacheOutcome::Built
        };
        if me.xid.is_valid() {
            let list = out.xids_mut();
            list.xip.retain(|&x| x != me.xid);
            if !own_subxids.is_empty() {
                list.subxip.retain(|x| !own_subxids.contains(x));
            }
        }
        outcome
    }
}
