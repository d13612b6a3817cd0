//! Hot standby: the primary's transactions, replayed into the engine.
//!
//! A standby's row versions carry the primary's xids. Its sessions are
//! read-only; one thread, replay, tells the engine through the
//! [`Replayer`] which primary xids exist, which committed and which
//! aborted, in WAL order. Sessions then take snapshots and decide
//! visibility through the usual APIs. Two strategies:
//!
//! * `known-assigned` (PostgreSQL 9.0–17): replay keeps the running xids
//!   in KnownAssignedXids (`procarray/known_assigned.rs`) and a snapshot
//!   copies them under the shared proc-array lock; a tree with more than
//!   `SUBXID_CACHE` subxids keeps only its top there (the subxids are found
//!   through parent links; `last_overflowed`).
//! * `csn` (the 2024 "CSN snapshots in hot standby" design): replay stamps
//!   each replayed commit with the standby's own next CSN in its CSN log
//!   and publishes `next_csn` after the stamps (REPLAY-STAMP); snapshots are
//!   taken lock-free as on a primary.
//!
//! Per record, the order is the primary's: the status log first (CLOG-TREE,
//! VISIBILITY-ORDER), then the running set (KnownAssignedXids under the
//! exclusive lock, KA-CONSISTENCY; or the CSN log, REPLAY-STAMP).
//!
//! ```text
//!   observe(x)     extend pages up to x (generator lock, XIDMAP-EXTEND);
//!                  every xid in (latest observed, x] becomes running
//!   assign(t, s)   observe s; parent link s -> t; known-assigned: the
//!                  65th subxid of t overflows the tree out of the array
//!   commit(t, ss)  status log (tree), then array removal / CSN stamps
//!   abort(xs)      status log (aborted), then array removal / stamps
//!   running_xacts  xids below oldest_running still running vanished in a
//!                  primary crash: aborted
//! ```

mod known_assigned;
#[cfg(all(test, not(loom)))]
mod tests;

use std::collections::{BTreeSet, HashMap};
use std::fmt;
use std::sync::Arc;

use crate::clog::XidStatus;
use crate::csn::{Csn, CsnValue};
use crate::engine::{Engine, Full};
use crate::error::TxnError;
use crate::procarray::SUBXID_CACHE;
use crate::sync::atomic::Ordering::Relaxed;
use crate::xid::Xid;
use crate::xidmap::Lookup;

/// The primary's running transactions at one WAL position (PostgreSQL's
/// xl_running_xacts).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RunningXacts {
    /// The primary's next xid at that point.
    pub next_xid: Xid,
    /// Every xid below it had finished (committed ones with their commit
    /// record already in the WAL).
    pub oldest_running: Xid,
    /// Every running xid, top-level and subtransaction, as (xid, parent or
    /// `Xid::INVALID`); exact when produced by [`Engine::running_xacts`].
    pub xids: Vec<(Xid, Xid)>,
}

impl Engine {
    /// The exact running set now, for a running-xacts WAL record or a
    /// checkpoint: every assigned xid below `next_xid` that has neither
    /// committed nor aborted, subxids included (committed-into-parent ones
    /// too: their tree still runs), with their parent links. Holds the xid
    /// generator lock while it reads, so no xid is assigned meanwhile.
    /// `csn` mode scans the CSN log from `oldest_active`; the other modes
    /// scan the status log from the horizon's `oldest_considered_running`.
    /// O(xids in flight + the span they cover); for periodic records and
    /// checkpoints, never a hot path. (On a standby it answers the same way
    /// from replay's state; [`Replayer::running`] is the cheaper source
    /// there.)
    pub fn running_xacts(&self) -> RunningXacts {
        // Before the generator lock (lock order: proc-array lock first). An
        // xid running later was running then or is newer than every xid
        // then, so the horizon is a lower bound for the scan.
        let horizon = self.csn.is_none().then(|| self.compute_horizons().oldest_considered_running);
        let generator = self.procarray.next_xid.lock();
        let next_xid = *generator;
        let mut xids = Vec::new();
        match &self.csn {
            Some(csn) => {
                for x in csn.oldest_active().0..next_xid.0 {
                    let x = Xid(x);
                    let Lookup::Word(word) = csn.log.lookup(x) else { continue };
                    match CsnValue::decode(word) {
                        CsnValue::Subxact(parent) => xids.push((x, parent)),
                        // A committing top is listed too: conservative (a
                        // reader of the record keeps it running a little
                        // longer, never finishes it early).
                        v if !v.is_final() => xids.push((x, self.subtrans.parent(x))),
                        _ => {}
                    }
                }
            }
            None => {
                let from = horizon.expect("computed above").max(self.clog.map().oldest());
                for x in from.0..next_xid.0 {
                    let x = Xid(x);
                    let running = match self.clog.stored_status(x) {
                        Some(XidStatus::InProgress) => true,
                        // Its tree is being marked committed: running until
                        // the top's mark (CLOG-TREE).
                        Some(XidStatus::SubCommitted) => !self.clog.did_commit(x, &self.subtrans),
                        _ => false,
                    };
                    if running {
                        xids.push((x, self.subtrans.parent(x)));
                    }
                }
            }
        }
        drop(generator);
        let oldest_running = xids.first().map_or(next_xid, |&(x, _)| x);
        RunningXacts { next_xid, oldest_running, xids }
    }

    /// The standby's replayer. Exactly one exists (panics if asked twice,
    /// or on a primary); create it right after [`Engine::new`], before any
    /// session takes a snapshot (panics if one is held).
    ///
    /// REPLAY-START: the xid space starts at s = min(oldest listed xid,
    /// `start.next_xid`); the logs' floor moves there and their pages are
    /// extended up to `next_xid - 1`. The listed xids are running (parent
    /// links set; known-assigned: entries, except the subxids of a top with
    /// more than `SUBXID_CACHE` of them, which overflow; csn: IN_PROGRESS).
    /// Every other xid in `[s, next_xid)` finished before the start point;
    /// it is marked aborted in the status log and the CSN log. That is safe
    /// because no row version on the standby carries it: the caller loads
    /// the rows that exist at the start point with `Xid::FROZEN`, and replay
    /// from the start point never names such an xid again (a record that
    /// does is skipped as already finished). `latest_completed` becomes
    /// `next_xid - 1`, so xmax covers everything the list describes.
    ///
    /// Panics if the span `[s, next_xid)` does not fit in the rings (the
    /// primary's own rings bound it; a standby configured with smaller ones
    /// cannot start).
    pub fn replayer(self: &Arc<Self>, start: &RunningXacts) -> Replayer {
        assert!(self.is_standby(), "Engine::replayer: only a standby replays (EngineConfig::standby)");
        assert!(self.take_replayer_slot(), "Engine::replayer: a standby has exactly one replayer");
        let next = start.next_xid;
        assert!(next.is_normal(), "REPLAY-START: next_xid {next:?} is a reserved xid");
        let mut listed = start.xids.clone();
        listed.sort_unstable();
        listed.dedup_by_key(|&mut (x, _)| x);
        let parents: HashMap<Xid, Xid> = listed.iter().copied().collect();
        for &(x, p) in &listed {
            assert!(
                x.is_normal() && x < next,
                "REPLAY-START: listed xid {x:?} is not below next_xid {next:?}"
            );
            assert!(!p.is_valid() || p < x, "REPLAY-START: listed xid {x:?} has a newer parent {p:?}");
        }
        let s = listed.first().map_or(next, |&(x, _)| x);
        // A listed subxid's top: the last listed ancestor. (A parent that is
        // not listed has finished: the list is inconsistent there, and the
        // xid counts as its own top.)
        let top_of = |mut x: Xid| {
            while let Some(&p) = parents.get(&x).filter(|p| parents.contains_key(p)) {
                x = p;
            }
            x
        };
        let mut replayer = Replayer {
            engine: Arc::clone(self),
            latest_observed: Xid(next.0 - 1),
            extended: Xid(next.0 - 1),
            trees: HashMap::new(),
            top_of: HashMap::new(),
            overflowed: BTreeSet::new(),
            next_csn: crate::csn::FIRST_CSN,
        };
        for &(x, _) in &listed {
            let top = top_of(x);
            if top != x {
                let tree = replayer.trees.entry(top).or_default();
                tree.subs.insert(x);
                tree.assigned += 1;
                replayer.top_of.insert(x, top);
            }
        }
        let known_assigned = self.is_known_assigned();
        if known_assigned {
            for tree in replayer.trees.values_mut() {
                if tree.assigned > SUBXID_CACHE {
                    tree.overflowed = true;
                    replayer.overflowed.extend(tree.subs.iter().copied());
                }
            }
        }

        let mut members = self.procarray.lock.write();
        // Relaxed: a diagnostic precondition; a session taking a snapshot
        // concurrently with the replayer's creation is the bug this reports,
        // whichever value it reads.
        let early = members.slots.iter().map(|&slot| (slot, self.procarray.xmin_cell(slot).load(Relaxed)));
        if let Some((slot, xmin)) = early.clone().find(|&(_, xmin)| xmin != 0) {
            // Not while holding the lock: a panic there poisons it for good.
            drop(members);
            panic!(
                "REPLAY-START: session slot {slot} holds a snapshot (xmin {xmin}) taken before the replayer"
            );
        }
        let mut generator = self.procarray.next_xid.lock();
        // XIDMAP-FLOOR: every xid below s finished before the start point.
        self.clog.map().set_floor(s);
        self.subtrans.map().set_floor(s);
        if let Some(csn) = &self.csn {
            csn.log.set_floor(s);
        }
        for x in s.0..next.0 {
            let x = Xid(x);
            let fits = self.clog.map().extend(x)
                && self.subtrans.map().extend(x)
                && self.csn.as_ref().is_none_or(|c| c.log.extend(x));
            assert!(
                fits,
                "REPLAY-START: the start list spans {} xids (from {s:?} to {next:?}), more than the status \
                 log, parent-link or CSN-log ring holds; configure larger rings",
                next.0 - s.0
            );
        }
        *generator = next;
        for &(x, p) in &listed {
            if p.is_valid() && parents.contains_key(&p) {
                // SUBTRANS-PARENT: before any snapshot can exist.
                self.subtrans.set_parent(x, p);
            }
        }
        let mut gap = Vec::new();
        let mut listed_iter = listed.iter().map(|&(x, _)| x).peekable();
        for x in s.0..next.0 {
            if listed_iter.next_if_eq(&Xid(x)).is_none() {
                gap.push(Xid(x));
            }
        }
        // REPLAY-START: finished before the start point; nothing carries them.
        self.clog.abort(&gap);
        if let Some(csn) = &self.csn {
            for &(x, _) in &listed {
                csn.replay_observe(x);
            }
            csn.abort_marks(&gap);
            csn.start_at(s, next);
            csn.advance_oldest_active(s);
        }
        if known_assigned {
            let entries: Vec<Xid> =
                listed.iter().map(|&(x, _)| x).filter(|x| !replayer.overflowed.contains(x)).collect();
            let ka = members.ka.as_mut().expect("a known-assigned engine has KnownAssignedXids");
            ka.make_room(entries.len());
            if let Some(&newest) = replayer.overflowed.last() {
                ka.raise_last_overflowed(newest);
            }
            ka.append(entries);
        }
        members.latest_completed = Xid(next.0 - 1);
        members.completion_count += 1;
        drop(generator);
        drop(members);
        replayer
    }
}

/// A running transaction tree with subxids, as replay knows it.
#[derive(Debug, Default)]
struct Tree {
    /// Its running subxids.
    subs: BTreeSet<Xid>,
    /// Subxids it was ever assigned (never decreases: PostgreSQL's overflow
    /// is per transaction).
    assigned: usize,
    /// `known-assigned`: its subxids are not in KnownAssignedXids.
    overflowed: bool,
}

/// The standby's replay state: the one writer of the primary's xids into
/// the engine. Created by [`Engine::replayer`]; called by the single replay
/// thread in WAL order.
pub struct Replayer {
    engine: Arc<Engine>,
    /// The newest xid replay has observed: every xid up to it is known to
    /// the engine (running, or finished).
    latest_observed: Xid,
    /// The newest xid whose log pages exist (ahead of `latest_observed` only
    /// after an observation failed half way).
    extended: Xid,
    /// Running trees with subxids, by top.
    trees: HashMap<Xid, Tree>,
    /// Running subxid -> its top.
    top_of: HashMap<Xid, Xid>,
    /// `known-assigned`: running subxids of overflowed trees (not in the
    /// array; found through parent links).
    overflowed: BTreeSet<Xid>,
    /// `csn`: the CSN the next replayed commit gets (replay is the only
    /// writer of the engine's next_csn, REPLAY-STAMP).
    next_csn: Csn,
}

impl fmt::Debug for Replayer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Replayer")
            .field("mode", &self.engine.mode())
            .field("latest_observed", &self.latest_observed)
            .field("trees", &self.trees.len())
            .field("overflowed", &self.overflowed.len())
            .finish_non_exhaustive()
    }
}

impl Replayer {
    /// The engine replayed into.
    pub fn engine(&self) -> &Arc<Engine> {
        &self.engine
    }

    /// The newest xid observed so far.
    pub fn latest_observed(&self) -> Xid {
        self.latest_observed
    }

    /// `xid` appeared in the WAL (a change or an assignment names it). Every
    /// xid in (latest observed, xid] becomes known-running: the primary
    /// assigns xids in order, and one that never wrote WAL may still run
    /// (PostgreSQL's RecordKnownAssignedTransactionIds). Their log pages are
    /// extended under the generator lock before any of them is published
    /// (XIDMAP-EXTEND). An xid at or below the latest observed is a no-op.
    /// A full parent-link or CSN-log ring is truncated to the horizon and
    /// retried; a full status log (or a ring pinned by a running xid or a
    /// snapshot) is `TxnError::XidSpaceExhausted`, and nothing is published.
    pub fn observe(&mut self, xid: Xid) -> Result<(), TxnError> {
        if !xid.is_normal() || xid <= self.latest_observed {
            return Ok(());
        }
        self.extend_through(xid)?;
        self.publish_observed(xid, None);
        Ok(())
    }

    /// Subtransaction `sub` of top-level `top` (an assignment record; the
    /// primary writes one before a subxid's first change). Observes both and
    /// links `sub` to `top` (SUBTRANS-PARENT). `known-assigned`: once `top`
    /// has had more than `SUBXID_CACHE` subxids, its subxids leave
    /// KnownAssignedXids and `last_overflowed` rises past them (snapshots
    /// whose xmin is at or below it are suboverflowed and map a subxid to
    /// its top through the parent links); later ones never enter. `csn`:
    /// only the link (the subxid stays IN_PROGRESS until its tree ends).
    /// A finished `sub` is skipped; a `sub` whose top has finished is
    /// aborted (it cannot outlive its tree).
    pub fn assign(&mut self, top: Xid, sub: Xid) -> Result<(), TxnError> {
        assert!(
            top.is_normal() && sub > top,
            "replay: assignment of subxid {sub:?} to top {top:?}: a subxid is newer than its top"
        );
        if self.top_of.contains_key(&sub) || self.finished(sub) {
            return Ok(());
        }
        if self.finished(top) {
            self.observe(sub)?;
            let live = if self.finished(sub) { Vec::new() } else { vec![sub] };
            self.finish_aborted(live);
            return Ok(());
        }
        self.extend_through(sub)?;
        // SUBTRANS-PARENT: the link exists before the subxid can leave the
        // array or be published as overflowed.
        self.engine.subtrans.set_parent(sub, top);
        let known_assigned = self.engine.is_known_assigned();
        let tree = self.trees.entry(top).or_default();
        tree.assigned += 1;
        tree.subs.insert(sub);
        self.top_of.insert(sub, top);
        let overflow = known_assigned && tree.assigned > SUBXID_CACHE;
        let first_overflow = overflow && !tree.overflowed;
        tree.overflowed |= overflow;
        let is_new = sub > self.latest_observed;
        // Subxids already in the array that must leave it now.
        let leaving: Vec<Xid> = match (first_overflow, overflow) {
            (true, _) => tree.subs.iter().copied().filter(|&s| s != sub || !is_new).collect(),
            (false, true) if !is_new => vec![sub],
            _ => Vec::new(),
        };
        if overflow {
            self.overflowed.extend(tree.subs.iter().copied());
        }
        if is_new {
            self.publish_observed(sub, overflow.then_some(sub));
        }
        if !leaving.is_empty() {
            self.ka_overflow(&leaving);
        }
        Ok(())
    }

    /// A commit record: `top` and its committed subxids. Observes them;
    /// links subxids that have no parent link to `top` (CLOG-TREE resolves
    /// sub-committed marks through them); commits the tree in the status log
    /// (VISIBILITY-ORDER); then `known-assigned`: removes the tree from
    /// KnownAssignedXids, raises `latest_completed` and bumps the completion
    /// count under the exclusive lock (KA-CONSISTENCY); `csn`: stamps the
    /// subxids, then the top, with the standby's next CSN and publishes the
    /// next CSN after them (REPLAY-STAMP), then advances `oldest_active`.
    /// Returns that CSN (`csn` mode).
    ///
    /// Subxids of the tree that replay knows but the record does not list
    /// are aborted with it (they did not commit). An xid already finished
    /// (or below the logs' floor) is skipped, never an error: a start list
    /// may be a little stale. If `top` itself had already finished, its
    /// unfinished subxids are aborted and `None` is returned.
    pub fn commit(&mut self, top: Xid, subxids: &[Xid]) -> Result<Option<Csn>, TxnError> {
        for &s in subxids {
            assert!(s > top, "replay: commit record of {top:?} lists subxid {s:?}, not newer than its top");
        }
        self.observe(subxids.iter().copied().fold(top, Xid::max))?;
        let top_live = !self.finished(top);
        let mut subs: Vec<Xid> = subxids.iter().copied().filter(|&s| !self.finished(s)).collect();
        subs.sort_unstable();
        subs.dedup();
        let mut extra: Vec<Xid> = match self.trees.get(&top) {
            Some(tree) => tree
                .subs
                .iter()
                .copied()
                .filter(|s| subs.binary_search(s).is_err() && !self.finished(*s))
                .collect(),
            None => Vec::new(),
        };
        if !top_live {
            extra.append(&mut subs);
            extra.sort_unstable();
        }
        for &s in &subs {
            if !self.engine.subtrans.parent(s).is_valid() {
                self.engine.subtrans.set_parent(s, top);
            }
        }
        // Status log first (VISIBILITY-ORDER, CLOG-TREE).
        self.engine.clog.abort(&extra);
        if top_live {
            self.engine.clog.commit_tree(top, &subs);
        }
        let mut done = extra.clone();
        if top_live {
            done.push(top);
            done.extend_from_slice(&subs);
        }
        let mut csn_stamped = None;
        match &self.engine.csn {
            Some(csn) => {
                if !extra.is_empty() {
                    csn.abort(&extra);
                }
                if top_live {
                    let stamped = csn.replay_commit(top, &subs, self.next_csn);
                    self.next_csn = stamped + 1;
                    csn_stamped = Some(stamped);
                }
            }
            None => {
                if !done.is_empty() {
                    self.ka_complete(&done);
                }
            }
        }
        self.forget(&done);
        Ok(csn_stamped)
    }

    /// An abort record: a whole tree, or a rolled-back subtransaction and
    /// its committed children. Observes them, marks them aborted in the
    /// status log, then removes them from KnownAssignedXids (exclusive lock;
    /// `latest_completed` raised) or stamps them ABORTED and advances
    /// `oldest_active`. Aborting a top aborts every running subxid replay
    /// knows for it. Already-finished xids are skipped.
    pub fn abort(&mut self, xids: &[Xid]) -> Result<(), TxnError> {
        let Some(&newest) = xids.iter().max() else { return Ok(()) };
        self.observe(newest)?;
        let live: Vec<Xid> = xids.iter().copied().filter(|&x| !self.finished(x)).collect();
        let live = self.with_subtrees(live);
        self.finish_aborted(live);
        Ok(())
    }

    /// A periodic running-xacts record: observes up to `next_xid - 1`; every
    /// xid below `oldest_running` that replay still thinks running vanished
    /// without an abort record (a primary crash): it is marked aborted and
    /// removed (PostgreSQL's ExpireOldKnownAssignedTransactionIds), with the
    /// rest of its tree. Never adds running xids (only the start list does).
    pub fn running_xacts(&mut self, r: &RunningXacts) -> Result<(), TxnError> {
        if r.next_xid > Xid::FIRST_NORMAL {
            self.observe(Xid(r.next_xid.0 - 1))?;
        }
        let bound = r.oldest_running.min(r.next_xid);
        let below: Vec<Xid> = match &self.engine.csn {
            Some(csn) => {
                let mut out = Vec::new();
                for x in csn.oldest_active().0..bound.0.min(self.latest_observed.0 + 1) {
                    if let Lookup::Word(word) = csn.log.lookup(Xid(x)) {
                        if !CsnValue::decode(word).is_final() {
                            out.push(Xid(x));
                        }
                    }
                }
                out
            }
            None => {
                let mut out = self.ka_valid_below(bound);
                out.extend(self.overflowed.range(..bound).copied());
                out
            }
        };
        let live: Vec<Xid> = below.into_iter().filter(|&x| !self.finished(x)).collect();
        let live = self.with_subtrees(live);
        self.finish_aborted(live);
        Ok(())
    }

    /// The running set as the standby sees it now, as a [`RunningXacts`]
    /// (for the standby's own restartpoints: a standby restarts from it as
    /// from a primary's list). `known-assigned`: the valid entries and the
    /// running subxids of overflowed trees; `csn`: the CSN log's unfinished
    /// entries from `oldest_active`. Parents from the parent links.
    pub fn running(&self) -> RunningXacts {
        let next_xid = self.latest_observed.next();
        let mut xids: Vec<Xid> = match &self.engine.csn {
            Some(csn) => (csn.oldest_active().0..next_xid.0)
                .map(Xid)
                .filter(|&x| match csn.log.lookup(x) {
                    Lookup::Word(word) => !CsnValue::decode(word).is_final(),
                    _ => false,
                })
                .collect(),
            None => {
                let mut out = self.ka_valid_below(next_xid);
                out.extend(self.overflowed.iter().copied());
                out
            }
        };
        xids.retain(|&x| !self.finished(x));
        xids.sort_unstable();
        let oldest_running = xids.first().copied().unwrap_or(next_xid);
        let xids = xids.into_iter().map(|x| (x, self.engine.subtrans.parent(x))).collect();
        RunningXacts { next_xid, oldest_running, xids }
    }

    /// Is `xid` still running as far as replay knows? An xid above the
    /// latest observed one counts as running (the primary may have assigned
    /// it); one below the logs' floor has finished.
    pub fn is_running(&self, xid: Xid) -> bool {
        xid.is_normal() && !self.finished(xid)
    }

    /// Finished as far as replay knows: committed or aborted in the status
    /// log (replay's own marks: it writes every finish there first), or
    /// below its floor. Reserved xids count as finished.
    fn finished(&self, xid: Xid) -> bool {
        if !xid.is_normal() {
            return true;
        }
        if xid > self.latest_observed {
            return false;
        }
        let clog = &self.engine.clog;
        xid < clog.map().oldest()
            || !matches!(clog.stored_status(xid), Some(XidStatus::InProgress | XidStatus::SubCommitted))
    }

    /// `xids` (unfinished) plus the unfinished subxids of every top among
    /// them, sorted: a tree ends with its top.
    fn with_subtrees(&self, mut xids: Vec<Xid>) -> Vec<Xid> {
        let tops: Vec<Xid> = xids.clone();
        for top in tops {
            if let Some(tree) = self.trees.get(&top) {
                xids.extend(tree.subs.iter().copied().filter(|&s| !self.finished(s)));
            }
        }
        xids.sort_unstable();
        xids.dedup();
        xids
    }

    /// Aborts `live` (unfinished, sorted, deduplicated): status log, then
    /// the running set.
    fn finish_aborted(&mut self, live: Vec<Xid>) {
        if live.is_empty() {
            return;
        }
        // VISIBILITY-ORDER: the status log before the running set.
        self.engine.clog.abort(&live);
        match &self.engine.csn {
            Some(csn) => csn.abort(&live),
            None => self.ka_complete(&live),
        }
        self.forget(&live);
    }

    /// Drops replay's bookkeeping of finished xids.
    fn forget(&mut self, done: &[Xid]) {
        for &x in done {
            if let Some(top) = self.top_of.remove(&x) {
                if let Some(tree) = self.trees.get_mut(&top) {
                    tree.subs.remove(&x);
                }
            }
            self.overflowed.remove(&x);
            self.trees.remove(&x);
        }
    }

    /// Extends every log up to `xid` under the generator lock
    /// (XIDMAP-EXTEND), and in `csn` mode initialises the new CSN-log words
    /// and publishes the lock-free next xid. A log that needs a new page
    /// and has none to reuse, or whose ring is full, is first truncated to
    /// its floor (`Engine::truncate_to_floor`), and the extension retried
    /// once, allowed to allocate then.
    fn extend_through(&mut self, xid: Xid) -> Result<(), TxnError> {
        match self.try_extend(xid, false) {
            Ok(()) => Ok(()),
            Err(_) => {
                self.engine.truncate_to_floor();
                self.try_extend(xid, true).map_err(|full| match full {
                    Full::Ring(log) => self.engine.exhausted(log),
                    Full::WouldAllocate => unreachable!("allowed to allocate"),
                })
            }
        }
    }

    fn try_extend(&mut self, xid: Xid, may_allocate: bool) -> Result<(), Full> {
        let engine = &self.engine;
        let mut generator = engine.procarray.next_xid.lock();
        while self.extended < xid {
            let x = self.extended.next();
            engine.extend_logs(x, may_allocate)?;
            if let Some(csn) = &engine.csn {
                csn.replay_observe(x);
            }
            self.extended = x;
            *generator = x.next();
        }
        if let Some(csn) = &engine.csn {
            if xid > self.latest_observed {
                csn.replay_publish_next_xid(xid.next());
            }
        }
        Ok(())
    }

    /// Makes every xid in (latest observed, xid] running (pages extended):
    /// `known-assigned` appends them to the array, except `overflowed_sub`
    /// (a subxid of an overflowed tree), whose `last_overflowed` is raised
    /// instead.
    fn publish_observed(&mut self, xid: Xid, overflowed_sub: Option<Xid>) {
        if self.engine.csn.is_none() {
            self.ka_append(self.latest_observed.next(), xid, overflowed_sub);
        }
        self.latest_observed = xid;
    }
}
