//! Row-lock modes and multixacts: a row's xmax naming several transactions
//! at once (PostgreSQL's MultiXactId), each with the lock it holds or the
//! change it made.
//!
//! ```text
//!   position:  M       M+1       M+2       M+3      M'= M+3+...
//!   word:     [HEAD|2][x7 share][x9 share][HEAD|1]...
//!              ^ the multi's id is the position of its head word
//! ```
//!
//! The log is one [`XidMap`] indexed by position, not by xid: a multi of n
//! members takes n + 1 consecutive words, its head (a count) and its
//! members, and its id is the position of the head. Ids are therefore
//! increasing but not consecutive, which costs nothing here (they are 64
//! bits wide and never wrap) and saves PostgreSQL's second map from ids to
//! member offsets. A multi never changes once created: adding a member to
//! a row's lockers creates a new multi (PostgreSQL's MultiXactIdExpand).
//!
//! The engine's calls on it are in `multixact_api.rs`.
//!
//! MULTI-PUBLISH (crate README): the creator stores the words, then the
//! storage layer stores the id into a row header with Release; a reader
//! loads the header with Acquire and then the words, which
//! [`XidMap::load`] reads with Acquire and re-checks against a recycle.
//! MULTI-TRUNCATE: the log is truncated only below the engine's oldest
//! multi, which the SQL layer raises once no row version references an
//! older one (the storage crate's vacuum replaces finished multis first);
//! a reader that finds its multi gone gets [`MultiTruncated`] and reads
//! the header again.

use std::fmt;

use crate::error::TxnError;
use crate::sync::atomic::{AtomicU64, Ordering::*};
use crate::sync::Mutex;
use crate::xid::Xid;
use crate::xidmap::{Extend, Lookup, XidMap};

/// The four row-lock modes, weakest first (PostgreSQL's LockTupleMode).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug, Hash)]
pub enum RowLockMode {
    /// FOR KEY SHARE: what a foreign-key check takes; only a change of the
    /// key (or a delete) conflicts.
    KeyShare,
    /// FOR SHARE.
    Share,
    /// FOR NO KEY UPDATE, and an UPDATE that changes no unique key.
    NoKeyUpdate,
    /// FOR UPDATE, a DELETE, and an UPDATE that changes a unique key.
    Update,
}

impl RowLockMode {
    /// PostgreSQL's conflict table: KEY SHARE conflicts only with UPDATE;
    /// SHARE with NO KEY UPDATE and UPDATE; NO KEY UPDATE with everything
    /// but KEY SHARE; UPDATE with everything.
    pub fn conflicts_with(self, other: RowLockMode) -> bool {
        use RowLockMode::*;
        match (self, other) {
            (KeyShare, m) | (m, KeyShare) => m == Update,
            (Share, Share) => false,
            _ => true,
        }
    }

    /// The clause that takes it (`FOR <name>`).
    pub fn name(self) -> &'static str {
        match self {
            RowLockMode::KeyShare => "KEY SHARE",
            RowLockMode::Share => "SHARE",
            RowLockMode::NoKeyUpdate => "NO KEY UPDATE",
            RowLockMode::Update => "UPDATE",
        }
    }

    /// 0..=3, weakest first (the row header packs it in two bits).
    pub fn code(self) -> u64 {
        self as u64
    }

    /// The mode of [`RowLockMode::code`].
    pub fn from_code(code: u64) -> RowLockMode {
        match code & 3 {
            0 => RowLockMode::KeyShare,
            1 => RowLockMode::Share,
            2 => RowLockMode::NoKeyUpdate,
            _ => RowLockMode::Update,
        }
    }
}

/// What one member of a multi did to the row (PostgreSQL's
/// MultiXactStatus): held a lock, or changed it.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub enum MemberStatus {
    /// A row lock of this mode (FOR KEY SHARE … FOR UPDATE).
    Lock(RowLockMode),
    /// An update that left every unique key alone.
    NoKeyUpdate,
    /// A delete, or an update that changed a unique key.
    Update,
}

impl MemberStatus {
    /// The lock this status holds on the row, for conflicts.
    pub fn mode(self) -> RowLockMode {
        match self {
            MemberStatus::Lock(m) => m,
            MemberStatus::NoKeyUpdate => RowLockMode::NoKeyUpdate,
            MemberStatus::Update => RowLockMode::Update,
        }
    }

    /// True for the updater (or deleter) member: the only one readers ask
    /// about.
    pub fn is_update(self) -> bool {
        !matches!(self, MemberStatus::Lock(_))
    }

    fn code(self) -> u64 {
        match self {
            MemberStatus::Lock(m) => m.code(),
            MemberStatus::NoKeyUpdate => 4,
            MemberStatus::Update => 5,
        }
    }

    fn from_code(code: u64) -> MemberStatus {
        match code {
            4 => MemberStatus::NoKeyUpdate,
            5 => MemberStatus::Update,
            c => MemberStatus::Lock(RowLockMode::from_code(c)),
        }
    }
}

/// One member of a multi.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub struct Member {
    pub xid: Xid,
    pub status: MemberStatus,
}

/// A multixact id: the position of its head word in the log. 0 is none.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct MultiXactId(pub u64);

impl MultiXactId {
    /// No multi (and the first position is 1).
    pub const INVALID: MultiXactId = MultiXactId(0);
    const FIRST: u64 = 1;
}

impl fmt::Debug for MultiXactId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "m{}", self.0)
    }
}

impl fmt::Display for MultiXactId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// A multi looked up after the log was truncated past it: every row
/// version that referenced it had it replaced first (MULTI-TRUNCATE), so
/// the caller reads the version's header again.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct MultiTruncated(pub MultiXactId);

/// The highest xid a member word (and a row header) can hold: 58 bits,
/// more than a server hands out in centuries.
pub const MAX_XID: u64 = (1 << 58) - 1;

/// A head word: this bit and the member count. Member words have it clear
/// and are never zero (their status code is stored plus one), so a zero
/// word read where a multi should be is a broken publication, caught.
const HEAD: u64 = 1 << 63;
const STATUS_SHIFT: u32 = 58;

fn member_word(m: Member) -> u64 {
    assert!(m.xid.0 <= MAX_XID, "xid {:?} does not fit a multixact member", m.xid);
    m.xid.0 | ((m.status.code() + 1) << STATUS_SHIFT)
}

fn member_of(word: u64) -> Member {
    let code = word >> STATUS_SHIFT;
    assert!(
        (1..=6).contains(&code),
        "MULTI-PUBLISH violated: member word {word:#x} read before it was written"
    );
    Member { xid: Xid(word & MAX_XID), status: MemberStatus::from_code(code - 1) }
}

/// The multixact log. See the module documentation.
pub(crate) struct MultiXactLog {
    pub(crate) map: XidMap,
    /// The next position: a new multi's id. Held while a multi's pages are
    /// extended and its words written, and while the log is truncated
    /// (PostgreSQL's MultiXactGenLock), which serialises the map's
    /// extension and truncation as it requires.
    pub(crate) next: Mutex<u64>,
    /// A lock-free copy of `next` for vacuum's cutoff and statistics.
    pub(crate) next_published: AtomicU64,
    /// PostgreSQL's datminmxid: no row version references an older multi
    /// (MULTI-TRUNCATE). Only rises; the log is truncated to it.
    pub(crate) oldest: AtomicU64,
}

impl MultiXactLog {
    pub(crate) fn new(ring_pages: usize, page_words: usize) -> Self {
        let map = XidMap::with_page_words(1, ring_pages, page_words);
        map.set_floor(Xid(MultiXactId::FIRST));
        MultiXactLog {
            map,
            next: Mutex::new(MultiXactId::FIRST),
            next_published: AtomicU64::new(MultiXactId::FIRST),
            oldest: AtomicU64::new(MultiXactId::FIRST),
        }
    }

    /// Makes every page of positions `[from, to)` ready (generator held).
    fn extend(&self, from: u64, to: u64, may_allocate: bool) -> Extend {
        let per_page = self.map.xids_per_page();
        let mut pos = from;
        while pos < to {
            // Allocates only if allowed or if the map holds fewer than two
            // pages, as the xid logs do (XIDMAP-REUSE).
            match self.map.extend_with(Xid(pos), may_allocate || self.map.resident_pages() < 2) {
                Extend::Ready => {}
                other => return other,
            }
            pos = (pos / per_page + 1) * per_page;
        }
        Extend::Ready
    }

    pub(crate) fn create(&self, members: &[Member]) -> Result<MultiXactId, TxnError> {
        let n = members.len() as u64;
        assert!(n >= 1, "a multixact has members");
        let mut next = self.next.lock();
        let start = *next;
        let end = start + n + 1;
        if self.extend(start, end, false) != Extend::Ready {
            // Truncate to the oldest multi still referenced, then allow an
            // allocation: the log holds the pages it must, plus one.
            self.map.truncate(Xid(self.oldest_multi().0));
            if self.extend(start, end, true) != Extend::Ready {
                return Err(TxnError::MultiXactSpaceExhausted {
                    oldest: MultiXactId(self.map.oldest().0),
                    capacity: self.map.capacity_xids(),
                });
            }
        }
        for (i, m) in members.iter().enumerate() {
            let word = self.map.word(Xid(start + 1 + i as u64)).expect("extended above");
            // Release (XIDMAP-TRUNCATE): pairs with the Acquire word load
            // in `XidMap::load`. A reader still asking about a multi whose
            // page this one recycled, and that reads this word, then
            // synchronises with the recycle before it (the zeroing and the
            // new tag), so its tag re-check answers "truncated" instead of
            // taking our member for its own; a Relaxed store would not
            // carry that (loom found a reader reading this member as the
            // head of the multi it asked about). The members' publication
            // to readers of a row is the header's Release (MULTI-PUBLISH).
            word.store(member_word(*m), Release);
        }
        let head = self.map.word(Xid(start)).expect("extended above");
        // Release: as the members above.
        head.store(HEAD | n, Release);
        *next = end;
        // Release: pairs with the Acquire in `next_multi`; a vacuum that
        // reads this under the table's write lock finds every multi its
        // table references below it (MULTI-TRUNCATE).
        self.next_published.store(end, Release);
        Ok(MultiXactId(start))
    }

    fn lookup(&self, pos: u64, multi: MultiXactId) -> Result<u64, MultiTruncated> {
        match self.map.lookup(Xid(pos)) {
            Lookup::Word(w) => Ok(w),
            Lookup::Truncated => Err(MultiTruncated(multi)),
            Lookup::Missing => panic!("multixact {multi:?} read before it was created"),
        }
    }

    /// Calls `each` for every member of `multi` until it returns false.
    pub(crate) fn members_with(
        &self,
        multi: MultiXactId,
        mut each: impl FnMut(Member) -> bool,
    ) -> Result<(), MultiTruncated> {
        let head = self.lookup(multi.0, multi)?;
        assert!(head & HEAD != 0, "MULTI-PUBLISH violated: {multi:?} has no head word ({head:#x})");
        for i in 1..=(head & !HEAD) {
            if !each(member_of(self.lookup(multi.0 + i, multi)?)) {
                break;
            }
        }
        Ok(())
    }

    pub(crate) fn oldest_multi(&self) -> MultiXactId {
        // Acquire (MULTI-TRUNCATE): pairs with the Release fetch_max in
        // `advance_oldest_multi`; a truncation below the value read comes
        // after the vacuum passes its caller observed.
        MultiXactId(self.oldest.load(Acquire))
    }
}
