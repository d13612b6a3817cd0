//! `csn` mode: commit-sequence-number snapshots on the primary
//! (csn-and-peers.md Part 4; seed 004 extended to the primary).
//!
//! A snapshot is `(xmin, xmax, csn)`, taken with three loads and two stores
//! to the session's own cache line, whatever the number of sessions. An xid
//! between xmin and xmax is visible iff its CSN-log entry holds a commit
//! sequence number below the snapshot's `csn`. Nothing on the snapshot path
//! takes a lock; nothing on the commit path takes the proc-array lock.
//!
//! Commit of a tree (CSN-COMMIT):
//!
//! ```text
//!   1. status log: the tree commits (CLOG-TREE)
//!   2. log[top]  = COMMITTING(owner slot)          Release
//!   3. csn       = next_csn.fetch_add(1)           AcqRel
//!   4. log[sub]  = csn for every committed subxid  Release
//!      log[top]  = csn                             Release
//!   5. advance oldest_active past finished xids    Release, one advancer
//!                                                  at a time (CSN-ADVANCE)
//! ```
//!
//! Snapshot (CSN-SNAPSHOT), in this order:
//!
//! ```text
//!   0. my xmin slot = ACQUIRING; fence(SeqCst)   (only if nothing advertised)
//!   1. xmin = oldest_active_xid        Acquire  (before the CSN)
//!   2. csn  = next_csn                 Acquire
//!   3. xmax = next_xid                 Acquire  (after the CSN)
//!   4. my csn slot = csn, my xmin slot = xmin (Release)
//! ```
//!
//! The ordering arguments are in the crate README (CSN-COMMIT,
//! CSN-SNAPSHOT, CSN-ADVANCE, CSN-ACQUIRING) and are model-checked in
//! `loom_tests.rs`. The log is a ring truncated to the horizon when full;
//! an xid whose entry was recycled has finished (XIDMAP-FLOOR).

mod memo;
mod value;

pub(crate) use memo::{Memo, Memoized};
pub(crate) use value::CsnValue;
pub use value::{Csn, FIRST_CSN};

use crate::sync::atomic::{fence, AtomicU64, Ordering::*};
use crate::sync::Mutex;
use crate::xid::Xid;
use crate::xidmap::{Lookup, XidMap};
use crossbeam_utils::CachePadded;

/// The xmin-slot value a session stores while it takes a CSN snapshot.
pub(crate) const ACQUIRING: u64 = u64::MAX;

/// The shared state of `csn` mode.
pub(crate) struct CsnState {
    /// Xid -> CSN-log word (see `value.rs`).
    pub(crate) log: XidMap,
    /// The next CSN to hand out. Alone on its line: every commit RMWs it and
    /// every snapshot reads it.
    next_csn: CachePadded<AtomicU64>,
    /// Every xid below this has finished, with its status log and CSN log
    /// entries final.
    oldest_active: CachePadded<AtomicU64>,
    /// The next xid to hand out, readable without the generator lock.
    next_xid: CachePadded<AtomicU64>,
    /// One advancer of `oldest_active` at a time.
    advancer: Mutex<()>,
    /// CSN-log loads made by visibility checks (for the lab).
    pub(crate) log_loads: AtomicU64,
    /// Xids passed by advancers of `oldest_active`, counted only under loom:
    /// the models check that each is passed exactly once.
    #[cfg(loom)]
    pub(crate) passed: AtomicU64,
}

/// What a CSN snapshot needs from its taker.
pub(crate) struct Acquired {
    pub(crate) xmin: Xid,
    pub(crate) xmax: Xid,
    pub(crate) csn: Csn,
}

impl CsnState {
    /// The state of an engine whose first xid is `first_xid`.
    pub(crate) fn new(log: XidMap, first_xid: Xid) -> Self {
        Self {
            log,
            next_csn: CachePadded::new(AtomicU64::new(FIRST_CSN)),
            oldest_active: CachePadded::new(AtomicU64::new(first_xid.0)),
            next_xid: CachePadded::new(AtomicU64::new(first_xid.0)),
            advancer: Mutex::new(()),
            log_loads: AtomicU64::new(0),
            #[cfg(loom)]
            passed: AtomicU64::new(0),
        }
    }

    /// Called under the xid generator lock once `xid` is chosen and its log
    /// page exists: records it running (or as a subxact of `parent`) before
    /// it is handed out, then moves the lock-free `next_xid` past it.
    pub(crate) fn on_assign(&self, xid: Xid, parent: Option<Xid>) {
        let word = self.log.word(xid).expect("CSN-log page extended before assignment");
        let value = parent.map_or(CsnValue::InProgress, CsnValue::Subxact);
        // Release: pairs with the Acquire in `XidMap::load`. A recycled page
        // may hold an old value, so the word is always written.
        word.store(value.encode(), Release);
        // Release (CSN-SNAPSHOT step 3): sequenced before this transaction's
        // later CSN fetch_add, so a snapshot that reads that CSN or a later
        // one reads an xmax above `xid`.
        self.next_xid.store(xid.0 + 1, Release);
    }

    fn store(&self, xid: Xid, value: CsnValue) {
        let word = self.log.word(xid).expect("CSN-log page of a live xid");
        // Release (CSN-COMMIT): pairs with the Acquire in `XidMap::load`.
        word.store(value.encode(), Release);
    }

    /// Steps 2–5 of CSN-COMMIT. The status log was written by the caller.
    pub(crate) fn commit(&self, owner: u32, top: Xid, subxids: &[Xid]) -> Csn {
        self.store(top, CsnValue::Committing(owner));
        // AcqRel (CSN-COMMIT step 3): the RMW is the commit point in
        // visibility order. It is sequenced after the COMMITTING store and
        // heads a release sequence that every later RMW of next_csn extends,
        // so a snapshot whose Acquire load of next_csn reads this RMW or a
        // later one also sees COMMITTING or the final CSN in top's slot:
        // never IN_PROGRESS (invariant I1).
        let csn = self.next_csn.fetch_add(1, AcqRel);
        for &sub in subxids {
            self.store(sub, CsnValue::Committed(csn));
        }
        self.store(top, CsnValue::Committed(csn));
        self.advance_oldest_active(top);
        csn
    }

    /// Marks `xids` aborted (no COMMITTING phase: nobody may see an abort as
    /// committed anyway) and advances `oldest_active` if they held it.
    pub(crate) fn abort(&self, xids: &[Xid]) {
        for &xid in xids {
            self.store(xid, CsnValue::Aborted);
        }
        if let Some(&oldest) = xids.iter().min() {
            self.advance_oldest_active(oldest);
        }
    }

    /// Standby replay start (REPLAY-START), under the generator lock and
    /// before any snapshot: the xid space is `[oldest, next)`, whose log
    /// pages the caller has extended.
    pub(crate) fn start_at(&self, oldest: Xid, next: Xid) {
        self.log.set_floor(oldest);
        // Release (CSN-SNAPSHOT step 1): pairs with the Acquire load in
        // `acquire`; no snapshot exists yet, so this is for uniformity.
        self.oldest_active.store(oldest.0, Release);
        // Release (CSN-SNAPSHOT step 3): pairs with the Acquire in `acquire`.
        self.next_xid.store(next.0, Release);
    }

    /// Standby replay: records an observed xid as running. Its page exists
    /// (XIDMAP-EXTEND) and the generator lock is held. Subxids too stay
    /// IN_PROGRESS (no SUBXACT link: their parent is in the parent links)
    /// until their tree's commit or abort stamps them.
    pub(crate) fn replay_observe(&self, xid: Xid) {
        // Release: pairs with the Acquire in `XidMap::load`. A recycled page
        // was zeroed, but the word is written anyway, as in `on_assign`.
        self.log
            .word(xid)
            .expect("CSN-log page extended before observation")
            .store(CsnValue::InProgress.encode(), Release);
    }

    /// Standby replay: publishes `next` as the lock-free next xid (the xmax
    /// source), after the pages of every xid below it exist and are
    /// initialised (XIDMAP-EXTEND). Generator lock held.
    pub(crate) fn replay_publish_next_xid(&self, next: Xid) {
        // Release (CSN-SNAPSHOT step 3, XIDMAP-EXTEND): pairs with the
        // Acquire in `acquire`; a snapshot whose xmax covers an xid finds its
        // page. Replay stores it before stamping any commit of those xids, so
        // a snapshot that sees the commit's CSN (Acquire, REPLAY-STAMP) reads
        // an xmax above the committed xids.
        self.next_xid.store(next.0, Release);
    }

    /// Standby replay of a commit record (REPLAY-STAMP): stamps every
    /// subxid, then the top, with the standby's next CSN, and only then
    /// publishes the next CSN. No COMMITTING phase: replay is the only
    /// writer of `next_csn`, so nobody can take a snapshot that covers the
    /// CSN before every stamp is done. Then advances `oldest_active`
    /// (replay is its only advancer).
    ///
    /// `csn` is the next CSN, which replay (the only writer) keeps itself:
    /// no load of next_csn before the stamps. (Loom's DPOR remembers only
    /// the last access of a thread to an atomic; a load followed by the
    /// publishing RMW would hide the race with snapshots from it.)
    pub(crate) fn replay_commit(&self, top: Xid, subxids: &[Xid], csn: Csn) -> Csn {
        for &sub in subxids {
            self.store(sub, CsnValue::Committed(csn));
        }
        self.store(top, CsnValue::Committed(csn));
        // Release (REPLAY-STAMP): pairs with the Acquire load of next_csn
        // in `acquire` (and the AcqRel RMW in `horizon_start`). A snapshot
        // that reads csn + 1 or more synchronises with this write, sequenced
        // after every stamp above: it sees the whole tree committed with a
        // CSN below its own. One that reads csn or less treats the tree as
        // running (a stamp it sees is csn, not below its CSN). Moving this
        // write before the stamps, or making it Relaxed, lets a snapshot
        // with CSN csn + 1 find the top IN_PROGRESS and later committed
        // (loom_standby_replay_stamp_vs_snapshot). A read-modify-write, not
        // a store: the same for a single writer, and it keeps next_csn's
        // modification order a chain of RMWs (the horizon's fetch_add(0)
        // included), as on a primary; loom orders a plain store and another
        // thread's RMW only partially, and then lets a snapshot read a CSN
        // older than one it has synchronised with, which C++ forbids.
        let previous = self.next_csn.fetch_add(1, Release);
        debug_assert_eq!(previous, csn, "REPLAY-STAMP: replay is the only writer of next_csn");
        let oldest = subxids.iter().copied().fold(top, Xid::min);
        self.advance_oldest_active(oldest);
        csn
    }

    /// Standby replay start (REPLAY-START): marks `xids` aborted, before
    /// any snapshot exists; the caller then advances `oldest_active` once.
    pub(crate) fn abort_marks(&self, xids: &[Xid]) {
        for &xid in xids {
            self.store(xid, CsnValue::Aborted);
        }
    }

    /// Moves `oldest_active` past every finished xid (CSN-ADVANCE;
    /// amortised O(1) per xid: each is passed once). Anyone who finished an
    /// xid at or above it tries; a failed try-lock is retried after the
    /// holder is done, so no completion is left behind.
    pub(crate) fn advance_oldest_active(&self, finished: Xid) {
        loop {
            // Relaxed: a hint. A value above `finished` was stored by an
            // advancer that saw our stamp final (it passes only final
            // entries), so our xid is covered; a stale lower value only sends
            // us to the lock, under which the value is read again.
            if finished.0 < self.oldest_active.load(Relaxed) {
                return;
            }
            let Some(_advancer) = self.advancer.try_lock() else {
                // CSN-ADVANCE: the holder may have found our entry not yet
                // final and be about to stop short of it. Wait for it to
                // finish, then retry, so our xid is passed by it or by us.
                drop(self.advancer.lock());
                continue;
            };
            // Relaxed: only advancers store it, under the lock we hold, whose
            // acquisition ordered the previous holder's store before this.
            let mut x = self.oldest_active.load(Relaxed);
            #[cfg(loom)]
            let start = x;
            // Acquire: pairs with the Release in on_assign.
            let next = self.next_xid.load(Acquire);
            while x < next {
                match self.log.load(Xid(x)).map(CsnValue::decode) {
                    Some(v) if v.is_final() => x += 1,
                    _ => break,
                }
            }
            // Relaxed: a model-checking statistic, read after every thread
            // has joined.
            #[cfg(loom)]
            self.passed.fetch_add(x - start, Relaxed);
            // Release (CSN-SNAPSHOT step 1): pairs with the Acquire load in
            // `acquire`; everything below `x` was stamped before this store.
            self.oldest_active.store(x, Release);
            return;
        }
    }

    /// Steps 1–3 of CSN-SNAPSHOT. The caller has stored ACQUIRING into its
    /// xmin slot and issued a SeqCst fence if it had no xmin advertised
    /// (CSN-ACQUIRING), and publishes afterwards.
    pub(crate) fn acquire(&self) -> Acquired {
        // Acquire (step 1, before the CSN): pairs with the advancer's Release
        // store; every xid below is stamped, so its CSN, if any, is below any
        // CSN read afterwards.
        let xmin = Xid(self.oldest_active.load(Acquire));
        // Acquire (step 2): synchronises with the commit RMWs (I1).
        let csn = self.next_csn.load(Acquire);
        // Acquire (step 3): pairs with the Release in `on_assign`.
        let xmax = Xid(self.next_xid.load(Acquire));
        Acquired { xmin, xmax: xmax.max(xmin), csn }
    }

    /// The resolved state of `xid` now: final, or running, waiting out a
    /// COMMITTING window (never on a lock: spin, then yield). An xid whose
    /// entry was truncated and recycled resolves to `Truncated`: finished,
    /// outcome in the status log (XIDMAP-FLOOR).
    pub(crate) fn resolve(&self, xid: Xid) -> CsnValue {
        let mut spins = 0u32;
        loop {
            // Relaxed counter: statistics only.
            self.log_loads.fetch_add(1, Relaxed);
            let value = match self.log.lookup(xid) {
                Lookup::Word(word) => CsnValue::decode(word),
                Lookup::Truncated => CsnValue::Truncated,
                // Never extended: never handed out.
                Lookup::Missing => CsnValue::InProgress,
            };
            match value {
                CsnValue::Committing(_) => {
                    // The owner is between steps 3 and 4: no I/O, no locks.
                    crate::sync::backoff(&mut spins);
                }
                CsnValue::Subxact(parent) => match self.resolve(parent) {
                    CsnValue::Committed(_) | CsnValue::Truncated => {
                        // Children are stamped before the top (step 4): now
                        // that the top reads committed (or finished long
                        // enough ago to be truncated), our slot is final.
                        let again = match self.log.lookup(xid) {
                            Lookup::Word(word) => CsnValue::decode(word),
                            Lookup::Truncated => CsnValue::Truncated,
                            Lookup::Missing => CsnValue::InProgress,
                        };
                        assert!(
                            again.is_final(),
                            "CSN-COMMIT violated: {xid:?} is {again:?} after its top committed"
                        );
                        return again;
                    }
                    // An aborted ancestor: the whole subtree is aborted (the
                    // stamps may still be on their way).
                    CsnValue::Aborted => return CsnValue::Aborted,
                    _ => return CsnValue::InProgress,
                },
                v => return v,
            }
        }
    }

    /// True while `xid` (or its tree) has not finished.
    pub(crate) fn is_running(&self, xid: Xid) -> bool {
        matches!(self.resolve(xid), CsnValue::InProgress)
    }

    /// Was `xid` running for the CSN snapshot `(xmin, xmax, snapshot_csn)`?
    /// Uses and fills the snapshot's memo.
    pub(crate) fn xid_in_snapshot(
        &self,
        xid: Xid,
        (xmin, xmax, snapshot_csn): (Xid, Xid, Csn),
        memo: Option<&Memo>,
    ) -> bool {
        if xid < xmin {
            return false;
        }
        if xid >= xmax {
            return true;
        }
        if let Some(answer) = memo.and_then(|m| m.get(xid)) {
            return answer == Memoized::InSnapshot;
        }
        let in_snapshot = match self.resolve(xid) {
            CsnValue::Committed(csn) => csn >= snapshot_csn,
            CsnValue::Aborted => false,
            // Truncation never passes a live snapshot's advertised xmin, which
            // is at most `snapshot.xmin`: this snapshot was used after release.
            CsnValue::Truncated => panic!(
                "XIDMAP-TRUNCATE violated: CSN of {xid:?} asked under a snapshot with xmin {xmin:?} \
                 after truncation to {:?} (a snapshot used after its release?)",
                self.log.oldest()
            ),
            // Running now: it had not committed when the snapshot was taken,
            // and any later commit gets a CSN >= the snapshot's.
            _ => true,
        };
        if let Some(memo) = memo {
            memo.record(xid, if in_snapshot { Memoized::InSnapshot } else { Memoized::NotInSnapshot });
        }
        in_snapshot
    }

    /// The xid and CSN bounds for horizons (CSN-ACQUIRING), read before
    /// scanning the sessions' slots, followed by the SeqCst fence that pairs
    /// with the one in `Engine::take_csn_snapshot`.
    ///
    /// The counters are read with read-modify-writes that change nothing:
    /// a modification sequenced before our fence is, by the fence rule,
    /// observed (or superseded) by every load sequenced after a later fence,
    /// which is what makes a session we miss read counters at least as new
    /// as ours. Two RMWs per horizon computation, none on the snapshot path.
    pub(crate) fn horizon_start(&self) -> (Xid, Csn) {
        // AcqRel RMW: see above; Acquire pairs with the advancer's Release.
        let oldest = Xid(self.oldest_active.fetch_add(0, AcqRel));
        // AcqRel RMW: see above; joins the commits' release sequence.
        let csn = self.next_csn.fetch_add(0, AcqRel);
        // SeqCst fence (CSN-ACQUIRING): pairs with the fence after the
        // ACQUIRING store in take_csn_snapshot.
        fence(SeqCst);
        (oldest, csn)
    }

    /// Every xid below this has finished, with its status-log and CSN-log
    /// entries final (XIDMAP-FLOOR: at least every truncation point).
    pub(crate) fn oldest_active(&self) -> Xid {
        // Acquire: pairs with the advancer's Release store; the final entries
        // of every xid below are visible to the caller.
        Xid(self.oldest_active.load(Acquire))
    }

    /// The next xid (lock-free read).
    pub(crate) fn next_xid(&self) -> Xid {
        // Acquire: pairs with the Release in `on_assign`.
        Xid(self.next_xid.load(Acquire))
    }
}
