//! Horizons: which xids no snapshot can still need.
//!
//! [`Engine::compute_horizons`] is the accurate computation: under the shared
//! proc-array lock, the minimum over every session's running xid and
//! advertised xmin, starting from `latest_completed + 1`. It is a lower bound,
//! not a monotone value: two calls may return decreasing results.
//!
//! [`GlobalVis`] is the cheap per-session test (PostgreSQL 14): two bounds,
//! `maybe_needed` (below it: removable for sure) and `definitely_needed` (at
//! or above it: needed), kept up to date for free at every snapshot build; an
//! xid between them triggers an accurate computation only when something may
//! have changed since the last one.
//!
//! Why reading xmins under a *shared* lock is safe (HORIZON-SAFETY): a session
//! advertising its first xmin also holds the lock shared, so the two are not
//! excluded. But both see the same running xids and the same
//! `latest_completed` (nothing leaves the running set while either holds the
//! lock), and the xmin being advertised is the minimum of exactly those, so
//! the horizon is at most that xmin whether or not it sees the store.

use crate::csn::{Csn, CsnState, ACQUIRING};
use crate::engine::Engine;
use crate::procarray::FLAG_IN_VACUUM;
use crate::sync::atomic::Ordering::{Acquire, Relaxed, Release};
use crate::sync::backoff;
use crate::xid::Xid;

/// The result of an accurate horizon computation.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Horizons {
    /// Minimum over every session (vacuuming ones included) of its xid and
    /// xmin: the commit-status log and parent links are truncated below this.
    pub oldest_considered_running: Xid,
    /// Row versions deleted by a committed xid below this are invisible to
    /// every current and future snapshot.
    pub data_oldest_nonremovable: Xid,
    /// `latest_completed` when computed (`csn` mode: the newest xid handed
    /// out, an upper bound; it keeps no completion counter).
    pub latest_completed: Xid,
    /// `csn` mode: every snapshot now or later has a CSN at least this, so a
    /// version deleted by a transaction that committed with a smaller CSN is
    /// invisible to all of them. More precise than the xid horizon when an
    /// old writer holds back xmin while all snapshots are recent.
    pub oldest_snapshot_csn: Option<Csn>,
}

impl Engine {
    /// Computes the horizons accurately (PostgreSQL's ComputeXidHorizons).
    pub fn compute_horizons(&self) -> Horizons {
        if let Some(csn) = &self.csn {
            return self.compute_csn_horizons(csn);
        }
        let pa = &self.procarray;
        let members = pa.lock.read();
        let mut start = members.latest_completed.next();
        if let Some(ka) = &members.ka {
            // Standby (KA-HORIZON): the oldest xid replay still considers
            // running. A subxid that left the array because its tree
            // overflowed is newer than its top, which stays an entry while
            // the tree runs; xids appended concurrently (shared lock) are
            // above latest_completed.
            if let Some(first) = ka.first_valid() {
                start = start.min(first);
            }
        }
        let mut oldest_running = start;
        let mut data = start;
        for (pos, &slot) in members.slots.iter().enumerate() {
            // Relaxed: xids are ordered by the lock chain (XID-PUBLISH);
            // xmins are covered by HORIZON-SAFETY (module docs). Each is
            // loaded once.
            let xid = Xid(pa.xid_cell(slot, pos).load(Relaxed));
            let xmin = Xid(pa.xmin_cell(slot).load(Relaxed));
            let oldest = match (xid.is_valid(), xmin.is_valid()) {
                (false, false) => continue,
                (true, false) => xid,
                (false, true) => xmin,
                (true, true) => xid.min(xmin),
            };
            oldest_running = oldest_running.min(oldest);
            // Relaxed: only the owner writes its flags.
            if pa.flags_cell(slot, pos).load(Relaxed) & FLAG_IN_VACUUM == 0 {
                data = data.min(oldest);
            }
        }
        Horizons {
            oldest_considered_running: oldest_running,
            data_oldest_nonremovable: data,
            latest_completed: members.latest_completed,
            oldest_snapshot_csn: None,
        }
    }

    /// `csn` mode (CSN-ACQUIRING): read the counters first, then every
    /// session's advertised bounds, waiting out a session caught between
    /// announcing ACQUIRING and publishing its xmin (three loads long).
    fn compute_csn_horizons(&self, csn: &CsnState) -> Horizons {
        let (oldest_active, next_csn) = csn.horizon_start();
        let mut xid_horizon = oldest_active;
        let mut csn_horizon = next_csn;
        let members = self.procarray.lock.read();
        for &slot in &members.slots {
            let advert = self.procarray.advert(slot);
            let mut spins = 0;
            let xmin = loop {
                // Acquire (CSN-ACQUIRING): after the fence in horizon_start;
                // pairs with the Release xmin store in take_csn_snapshot.
                let v = advert.xmin.load(Acquire);
                if v != ACQUIRING {
                    break Xid(v);
                }
                backoff(&mut spins);
            };
            if xmin.is_valid() {
                xid_horizon = xid_horizon.min(xmin);
                // Acquire: the Release xmin store that followed the CSN
                // store is ordered before this by the load above.
                let c = advert.csn.load(Acquire);
                if c != 0 {
                    csn_horizon = csn_horizon.min(c);
                }
            }
        }
        Horizons {
            oldest_considered_running: xid_horizon,
            data_oldest_nonremovable: xid_horizon,
            latest_completed: Xid(csn.next_xid().0.saturating_sub(1)),
            oldest_snapshot_csn: Some(csn_horizon),
        }
    }

    /// Forgets commit status and parent links (and in `csn` mode CSN-log
    /// entries) below `below`, capped at the current
    /// `oldest_considered_running`. The caller guarantees that no row
    /// version stamped with an older xid still needs its status (it has been
    /// removed, frozen or marked dead), the XIDMAP-TRUNCATE rule: `below`
    /// becomes the frozen xid ([`Engine::advance_frozen_xid`]) if it is
    /// newer. Every xid below the point has finished and reads so from then
    /// on (XIDMAP-FLOOR). Returns the point used.
    pub fn truncate_logs(&self, below: Xid) -> Xid {
        let horizon = self.compute_horizons().oldest_considered_running;
        let below = below.min(horizon);
        // Release (FREEZE-TRUNCATE): as in `advance_frozen_xid`.
        self.frozen_xid_cell().fetch_max(below.0, Release);
        let _generator = self.procarray.next_xid.lock();
        self.clog.map().truncate(below);
        self.subtrans.map().truncate(below);
        if let Some(csn) = &self.csn {
            csn.log.truncate(below);
        }
        below
    }

    /// The oldest xid whose status is still tracked.
    pub fn oldest_tracked_xid(&self) -> Xid {
        self.clog.map().oldest()
    }

    /// Every xid below this has finished, and its final status is visible
    /// to the caller (XIDMAP-FLOOR): the newest truncation point of the
    /// logs, and in `csn` mode `oldest_active` (which no truncation point
    /// passes). Lock-free; fresher than a session's `recent_xmin`, which is
    /// as old as the session's last snapshot.
    pub(crate) fn finished_floor(&self) -> Xid {
        match &self.csn {
            Some(csn) => csn.oldest_active(),
            None => self.clog.map().oldest().max(self.subtrans.map().oldest()),
        }
    }
}

/// A session's cheap "is this deleted version dead to everyone?" state.
#[derive(Clone, Copy, Debug, Default)]
pub struct GlobalVis {
    /// Xids below this are removable for sure.
    pub maybe_needed: Xid,
    /// Xids at or above this are treated as needed.
    pub definitely_needed: Xid,
    /// The session's `recent_xmin` at the last accurate computation.
    accurate_at: Option<Xid>,
}

impl GlobalVis {
    /// Folds in a freshly built snapshot's xmin (dense modes): anything at or
    /// above it is needed by us; `oldest_tracked` is a weak lock-free lower
    /// bound for everyone.
    pub(crate) fn after_build(&mut self, snapshot_xmin: Xid, oldest_tracked: Xid) {
        self.definitely_needed = self.definitely_needed.max(snapshot_xmin);
        self.maybe_needed = self.maybe_needed.max(oldest_tracked).min(self.definitely_needed);
    }

    /// Legacy modes: the loop computed the global xmin exactly.
    pub(crate) fn set_exact(&mut self, global_xmin: Xid) {
        self.maybe_needed = global_xmin;
        self.definitely_needed = global_xmin;
    }

    /// Applies an accurate computation. The new `maybe_needed` is assigned,
    /// not maxed: horizons may move backwards and the test must follow.
    pub(crate) fn apply(&mut self, horizons: &Horizons, recent_xmin: Xid) {
        self.maybe_needed = horizons.data_oldest_nonremovable;
        self.definitely_needed = self.definitely_needed.max(self.maybe_needed);
        self.accurate_at = Some(recent_xmin);
    }

    /// The two-bound test; `None` means "in between, ask accurately".
    pub(crate) fn quick_test(&self, xid: Xid) -> Option<bool> {
        if xid < self.maybe_needed {
            Some(true)
        } else if xid >= self.definitely_needed {
            Some(false)
        } else {
            None
        }
    }

    /// Whether an accurate computation can tell anything new: never computed,
    /// or the session built a snapshot with a different xmin since.
    pub(crate) fn worth_recomputing(&self, recent_xmin: Xid) -> bool {
        self.accurate_at != Some(recent_xmin)
    }
}
