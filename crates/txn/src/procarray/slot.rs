//! What one session slot holds, in each of the three historical layouts.
//!
//! * [`Proc`] is the PGPROC: one per slot, large, allocated once. In the
//!   `pgproc` layout (PostgreSQL before 9.2) the fields a snapshot builder
//!   reads, xid, xmin and the vacuum flags, sit in its first cache line next to
//!   fields the owner writes for other reasons, and the builder visits one
//!   `Proc` per session: a cache miss per session.
//! * [`PgXact`] is the 9.2–13 "hot" struct: xid, xmin, flags and subxid state
//!   packed into 24 bytes in a separate array indexed by slot, so one cache
//!   line serves a few sessions. xmin still shares the line with xid, so every
//!   read-only snapshot dirties a line other builders read.
//! * The `dense` layout (PostgreSQL 14) keeps xids, subxid states and status
//!   flags in arrays indexed by position in the proc array (see
//!   `DenseArrays`), and the advertised xmin in `Proc::xmin`, alone on its own
//!   cache line.
//!
//! Every field is an atomic because readers other than the owner read it
//! without holding the owner's locks; each access site names its pairing.

use crate::sync::atomic::{AtomicU16, AtomicU32, AtomicU64, AtomicU8};
use crossbeam_utils::CachePadded;

/// Subxids a slot caches before it overflows (PGPROC_MAX_CACHED_SUBXIDS).
/// Two under loom so the overflow path is reached with few operations.
#[cfg(not(loom))]
pub const SUBXID_CACHE: usize = 64;
#[cfg(loom)]
pub const SUBXID_CACHE: usize = 2;

/// Status flag: the session runs a lazy VACUUM. Snapshots and the data horizon
/// ignore its xid and xmin (a vacuum never stamps its xid on row versions and
/// needs nothing newer than its own xmin kept).
pub const FLAG_IN_VACUUM: u8 = 0x02;

/// A slot's subxid cache state packed into 16 bits: count in the low byte,
/// overflow in bit 8 (PostgreSQL's `XidCacheStatus`).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub(crate) struct SubxidState {
    pub(crate) count: u8,
    pub(crate) overflowed: bool,
}

impl SubxidState {
    pub(crate) const EMPTY: SubxidState = SubxidState { count: 0, overflowed: false };

    pub(crate) fn pack(self) -> u16 {
        self.count as u16 | ((self.overflowed as u16) << 8)
    }

    pub(crate) fn unpack(bits: u16) -> SubxidState {
        SubxidState { count: bits as u8, overflowed: bits & 0x100 != 0 }
    }
}

/// The legacy hot fields of a PGPROC, in the order PostgreSQL 9.1 kept them at
/// the top of the struct: read by every `pgproc` snapshot builder, written by
/// the owner (xmin at every snapshot).
#[derive(Default)]
#[repr(C)]
pub(crate) struct LegacyHot {
    pub(crate) xid: AtomicU64,
    pub(crate) xmin: AtomicU64,
    pub(crate) flags: AtomicU8,
}

/// One session slot: the PGPROC.
#[repr(C)]
pub(crate) struct Proc {
    /// `pgproc` layout only: xid, xmin, flags (see [`LegacyHot`]).
    pub(crate) legacy: LegacyHot,
    /// Position of this slot in the proc array's member list. Changes only
    /// under both the proc-array lock (exclusive) and the xid generator lock,
    /// so either lock pins it.
    pub(crate) pgxactoff: AtomicU32,
    /// The session's current virtual transaction counter (owner-written).
    pub(crate) vxid_local: AtomicU64,
    /// Xid this session waits for, if any (owner-written; read by deadlock
    /// detection in the lock manager issue).
    pub(crate) wait_xid: AtomicU64,
    /// `pgproc` layout only: the subxid cache state, kept beside the cache as
    /// PostgreSQL 9.1's `XidCache` had it.
    pub(crate) legacy_subxid_state: AtomicU16,
    /// The subxid cache: the first `SUBXID_CACHE` subxids of the running
    /// transaction. Written by the owner under the xid generator lock,
    /// shrunk only under the exclusive proc-array lock.
    pub(crate) subxids: [AtomicU64; SUBXID_CACHE],
    /// `dense` and `csn` layouts: what the session advertises about its
    /// snapshots, alone on its cache line because it changes at every
    /// snapshot of every transaction (SNAPSHOT-XMIN).
    pub(crate) advert: CachePadded<Advert>,
}

/// A session's advertised snapshot bounds.
#[derive(Default)]
pub(crate) struct Advert {
    /// The oldest xmin of the snapshots it holds (0 = none; `ACQUIRING`
    /// while a CSN snapshot is being taken).
    pub(crate) xmin: AtomicU64,
    /// `csn` mode: the CSN of its oldest held snapshot (0 = none), for the
    /// CSN horizon.
    pub(crate) csn: AtomicU64,
}

impl Proc {
    pub(crate) fn new() -> Self {
        Self {
            legacy: LegacyHot::default(),
            pgxactoff: AtomicU32::new(u32::MAX),
            vxid_local: AtomicU64::new(0),
            wait_xid: AtomicU64::new(0),
            legacy_subxid_state: AtomicU16::new(0),
            subxids: std::array::from_fn(|_| AtomicU64::new(0)),
            advert: CachePadded::new(Advert::default()),
        }
    }
}

/// The 9.2–13 hot struct (`pgxact` layout), one per slot in a separate array.
#[derive(Default)]
#[repr(C)]
pub(crate) struct PgXact {
    pub(crate) xid: AtomicU64,
    pub(crate) xmin: AtomicU64,
    pub(crate) flags: AtomicU8,
    pub(crate) subxid_state: AtomicU16,
}

#[cfg(not(loom))]
const _: () = assert!(std::mem::size_of::<PgXact>() == 24, "PGXACT is 24 bytes: a few per line");
