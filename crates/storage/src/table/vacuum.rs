//! Vacuum: removing what no snapshot sees, freezing what every snapshot
//! sees, and replacing finished multixacts (VACUUM-CUTOFF,
//! FREEZE-TRUNCATE and MULTI-TRUNCATE in the crate README).

use std::sync::Arc;

use snapscale_sync::atomic::Ordering::*;
use snapscale_txn::{Member, MultiXactId, Session, Xid, XidState};

use super::modify::{holders, state_of};
use super::Table;
use crate::version::{Header, NewXmax, Tid, Version};

/// How a vacuum pass freezes and what it does with dead versions.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct VacuumOptions {
    /// Freeze committed xmins (and clear finished lock-only or aborted
    /// xmaxes) older than this many xids before the newest completed xid,
    /// and below the cutoff (PostgreSQL's `vacuum_freeze_min_age`; 0 is
    /// VACUUM (FREEZE): everything below the cutoff, and every multixact
    /// that still has finished members is rebuilt from its live ones).
    pub freeze_min_age: u64,
    /// Remove dead versions and reuse their tids. Without it they are only
    /// marked dead (invisible to all, their xids' status no longer needed):
    /// a table whose tids are held elsewhere (the catalog's), or a pass
    /// that must not touch indexes.
    pub remove: bool,
}

/// What a vacuum pass did.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct VacuumStats {
    /// The data horizon it fixed at its start (VACUUM-CUTOFF).
    pub cutoff: Xid,
    /// Versions removed (with `remove`).
    pub removed: usize,
    /// Versions found dead and marked, removed or not.
    pub dead: usize,
    /// Versions kept.
    pub kept: usize,
    /// Versions frozen by this pass.
    pub frozen: usize,
    /// Finished lock-only or aborted xmaxes cleared, and multixacts
    /// replaced, by this pass.
    pub cleared: usize,
    /// The table's frozen xid after the pass ([`Table::frozen_xid`]).
    pub frozen_xid: Xid,
    /// The table's oldest multixact after the pass ([`Table::min_multi`]).
    pub min_multi: MultiXactId,
}

/// What a kept version's xmax becomes.
enum Fate {
    /// Stays as it is.
    Keep,
    /// Replaced, under the write lock, if it is still `old` then.
    Replace { old: NewXmax, new: Replacement },
}

/// A replacement for an xmax.
enum Replacement {
    Xmax(NewXmax),
    /// A new multixact of these (live) members.
    Members(Vec<Member>),
}

/// What one version's decision found.
struct Verdict {
    freeze: bool,
    fate: Fate,
    /// xids the header shows (xmin, plain xmax, every member of a multi
    /// it keeps), for the frozen xid.
    xids: Vec<Xid>,
    multi: Option<MultiXactId>,
}

impl<R: Clone + Send + Sync + 'static> Table<R> {
    /// Removes versions no snapshot can see any more (PostgreSQL's VACUUM)
    /// and freezes those every snapshot sees, with `freeze_min_age` 0 (see
    /// [`Table::vacuum_with`]). Returns how many were removed; their tids
    /// are reused.
    pub fn vacuum(&self, session: &mut Session) -> usize {
        self.vacuum_with(session, VacuumOptions { freeze_min_age: 0, remove: true }, |_| {}).removed
    }

    /// One vacuum pass (PostgreSQL's lazy VACUUM), by one accurate cutoff
    /// fixed at its start, the data horizon (VACUUM-CUTOFF: OldestXmin; not
    /// GlobalVis, whose cheap test may answer "needed" conservatively;
    /// horizons can move back later, but everything below the cutoff is
    /// removable for good, pg-snapshot-internals §10.2):
    ///
    /// * a version whose inserter aborted, or whose deleter (not a mere
    ///   locker; a multixact's updater member) committed below the cutoff,
    ///   is dead: marked so, and with `remove` taken out of the table,
    ///   `before_reuse` getting the removed versions before their tids can
    ///   be reused (so that indexes drop their entries first);
    /// * a kept version whose inserter committed below the freeze limit
    ///   (the cutoff, or `freeze_min_age` xids before the newest completed
    ///   xid if that is older) is frozen, and a finished lock-only or
    ///   aborted xmax below it is cleared, under the write lock;
    /// * a kept version whose xmax is a multixact gets, under the write
    ///   lock, what is left of it once its finished members are dropped
    ///   (PostgreSQL's FreezeMultiXactId): nothing, the one member left as
    ///   a plain xid, or (a multi old enough, or VACUUM FREEZE) a new multi
    ///   of the live members;
    /// * the table's frozen xid rises to the oldest xid a kept version
    ///   still shows, or the cutoff (FREEZE-TRUNCATE), and its oldest multi
    ///   to the oldest multi a kept version still names, or the next multi
    ///   when the pass began (MULTI-TRUNCATE).
    pub fn vacuum_with(
        &self,
        session: &mut Session,
        options: VacuumOptions,
        before_reuse: impl FnOnce(&[(Tid, R)]),
    ) -> VacuumStats {
        let engine = Arc::clone(session.engine());
        // Under the write lock: every multi this table's versions name was
        // created and installed under it, so all of them, even one
        // installed just now, are below what we read, and every later one
        // is at or above it (MULTI-TRUNCATE).
        let next_multi = {
            let _write = self.write.lock();
            engine.next_multi()
        };
        let horizons = engine.compute_horizons();
        let cutoff = horizons.data_oldest_nonremovable;
        let newest = horizons.latest_completed.next().0;
        let freeze_limit = cutoff.min(Xid(newest.saturating_sub(options.freeze_min_age)));
        // Multis below this are rebuilt from their live members even when
        // several are left, so that the log can be truncated past them: a
        // quarter of the log's ring behind the newest, or all of them under
        // VACUUM FREEZE.
        let rebuild_below = if options.freeze_min_age == 0 {
            next_multi
        } else {
            MultiXactId(next_multi.0.saturating_sub(engine.multi_log_state().capacity / 4))
        };
        let mut stats = VacuumStats { cutoff, ..VacuumStats::default() };
        // The oldest xid and multi a kept version still shows.
        let mut oldest = cutoff;
        let mut oldest_multi = next_multi;
        let mut dead = Vec::new();
        let mut replace = Vec::new();
        for (tid, v) in self.versions() {
            let verdict = v.decide(|h| {
                if h.dead {
                    return Ok(None);
                }
                let xmin = h.xids.xmin;
                let xmin_state = session.try_xid_state(xmin)?;
                if xmin_state == XidState::Aborted {
                    return Ok(None);
                }
                let freeze = xmin_state == XidState::Committed && xmin.is_normal() && xmin < freeze_limit;
                let mut xids = vec![xmin];
                let fate = if h.multi.is_some() {
                    match Self::multi_fate(session, h, cutoff, rebuild_below, &mut xids)? {
                        Some(fate) => fate,
                        None => return Ok(None),
                    }
                } else {
                    let xmax = h.xids.xmax;
                    let xmax_state = if xmax.is_valid() { Some(session.try_xid_state(xmax)?) } else { None };
                    if xmax_state == Some(XidState::Committed) && !h.xids.xmax_lock_only && xmax < cutoff {
                        return Ok(None);
                    }
                    let finished_lock = h.xids.xmax_lock_only && xmax_state == Some(XidState::Committed);
                    if xmax < freeze_limit && (finished_lock || xmax_state == Some(XidState::Aborted)) {
                        Fate::Replace { old: h.xmax(), new: Replacement::Xmax(NewXmax::None) }
                    } else {
                        xids.push(xmax);
                        Fate::Keep
                    }
                };
                Ok(Some(Verdict { freeze, fate, xids, multi: h.multi }))
            });
            let Some(verdict) = verdict else {
                v.mark_dead();
                stats.dead += 1;
                dead.push((tid, v));
                continue;
            };
            stats.kept += 1;
            if verdict.freeze {
                v.mark_frozen();
                stats.frozen += 1;
            }
            for x in verdict.xids.iter().skip(usize::from(verdict.freeze)) {
                if x.is_normal() {
                    oldest = oldest.min(*x);
                }
            }
            match verdict.fate {
                Fate::Keep => {
                    if let Some(m) = verdict.multi {
                        oldest_multi = oldest_multi.min(m);
                    }
                }
                Fate::Replace { old, new } => replace.push((v, old, new)),
            }
        }
        if !replace.is_empty() {
            self.replace_xmaxes(session, replace, &mut stats, &mut oldest, &mut oldest_multi);
        }
        // Release (FREEZE-TRUNCATE): pairs with the Acquire load in
        // `frozen_xid`; whoever truncates the status log by the new value
        // sees every mark and cleared xmax of this pass.
        let before = self.frozen_xid.fetch_max(oldest.0, Release);
        stats.frozen_xid = Xid(before.max(oldest.0));
        // Release (MULTI-TRUNCATE): pairs with the Acquire load in
        // `min_multi`; whoever truncates the multixact log by the new value
        // sees every replacement of this pass.
        let before = self.min_multi.fetch_max(oldest_multi.0, Release);
        stats.min_multi = MultiXactId(before.max(oldest_multi.0));
        if options.remove && !dead.is_empty() {
            let mut removed = Vec::with_capacity(dead.len());
            let free = self.free.lock();
            for (tid, v) in &dead {
                // Another pass may have removed it (and the tid be reused).
                if self.slots.take_if(*tid, v) {
                    removed.push((*tid, v.data.clone()));
                }
            }
            drop(free);
            before_reuse(&removed);
            stats.removed = removed.len();
            self.free.lock().extend(removed.iter().map(|(tid, _)| *tid));
        }
        stats
    }

    /// What a multixact xmax becomes (PostgreSQL's FreezeMultiXactId), or
    /// `None` if its updater committed below the cutoff (the version is
    /// dead). Adds the xids the header keeps showing to `xids`.
    fn multi_fate(
        session: &Session,
        h: &Header,
        cutoff: Xid,
        rebuild_below: MultiXactId,
        xids: &mut Vec<Xid>,
    ) -> Result<Option<Fate>, crate::version::Gone> {
        let members = holders(session, h)?;
        let mut live = Vec::new();
        let mut finished = false;
        for m in &members {
            match (state_of(session, h, m.xid)?, m.status.is_update()) {
                (XidState::Committed, true) if m.xid < cutoff => return Ok(None),
                // A committed updater stays: the version is deleted, for
                // snapshots that began after it.
                (XidState::InProgress, _) | (XidState::Committed, true) => live.push(*m),
                // Vacuum's session holds no row locks.
                (XidState::Current, _) => live.push(*m),
                _ => finished = true,
            }
        }
        let old = h.xmax();
        let new = match live.as_slice() {
            [] => Replacement::Xmax(NewXmax::None),
            [m] => Replacement::Xmax(NewXmax::Xid {
                xid: m.xid,
                mode: m.status.mode(),
                lock_only: !m.status.is_update(),
            }),
            _ if finished && h.multi.is_some_and(|m| m < rebuild_below) => Replacement::Members(live),
            _ => {
                xids.extend(members.iter().map(|m| m.xid));
                return Ok(Some(Fate::Keep));
            }
        };
        Ok(Some(Fate::Replace { old, new }))
    }

    /// Installs the replacements vacuum decided, each only if the version's
    /// xmax is still the one it was decided on (under the write lock, as
    /// every xmax change: a writer that installed another meanwhile, a
    /// transaction running now, keeps it).
    fn replace_xmaxes(
        &self,
        session: &Session,
        replace: Vec<(Arc<Version<R>>, NewXmax, Replacement)>,
        stats: &mut VacuumStats,
        oldest: &mut Xid,
        oldest_multi: &mut MultiXactId,
    ) {
        let engine = session.engine();
        let _write = self.write.lock();
        for (v, old, new) in replace {
            let h = v.header();
            if h.dead || h.xmax() != old {
                if let Some(m) = h.multi {
                    *oldest_multi = (*oldest_multi).min(m);
                } else if h.xids.xmax.is_valid() {
                    *oldest = (*oldest).min(h.xids.xmax);
                }
                continue;
            }
            let new = match new {
                Replacement::Xmax(x) => x,
                Replacement::Members(members) => match engine.create_multi(&members) {
                    Ok(multi) => {
                        for m in &members {
                            *oldest = (*oldest).min(m.xid);
                        }
                        NewXmax::Multi { multi, lock_only: !members.iter().any(|m| m.status.is_update()) }
                    }
                    Err(_) => {
                        // The log is full: this one stays as it was.
                        *oldest_multi = (*oldest_multi).min(h.multi.expect("a multi"));
                        continue;
                    }
                },
            };
            if let NewXmax::Xid { xid, .. } = new {
                *oldest = (*oldest).min(xid);
            }
            // The link and command id stay while an updater does (kept as
            // the plain xmax, it still names its new version); lockers
            // alone have none.
            let has_updater = match new {
                NewXmax::None => false,
                NewXmax::Xid { lock_only, .. } | NewXmax::Multi { lock_only, .. } => !lock_only,
            };
            v.set_xmax(new, v.cmax(), if has_updater { h.next } else { crate::version::NO_TID });
            stats.cleared += 1;
        }
    }
}
