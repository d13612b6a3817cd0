//! Writers: UPDATE, DELETE and row locks in four modes (UPDATE-OUTCOME,
//! ROW-LOCKS and XMAX-MULTI in the crate README).
//!
//! Under the table's write lock a writer reads the version's xmax as a
//! list of holders (a plain xmax is one, a multixact several), asks each
//! holder's state, and then either answers without a change (the row is
//! gone, changed, or held in a conflicting mode by a running transaction:
//! the caller waits for that one and asks again) or installs a new xmax:
//! itself alone, or a new multixact of itself and every holder that still
//! counts. PostgreSQL's heap_lock_tuple and heap_update decide the same
//! way (HeapTupleSatisfiesUpdate, DoesMultiXactIdConflict,
//! compute_new_xmax_infomask); waiting for a multi's conflicting members
//! one after another, each time after looking again, is its
//! MultiXactIdWait.

use snapscale_txn::{Member, MemberStatus, MultiXactId, RowLockMode, Session, Xid, XidState};

use super::{Outcome, StorageError, Table};
use crate::version::{Gone, Header, NewXmax, Tid, Version, NO_TID};

/// The kind of change.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Change {
    /// An update of this strength (NoKeyUpdate or Update).
    Update(RowLockMode),
    Delete,
    Lock(RowLockMode),
}

impl Change {
    fn mode(self) -> RowLockMode {
        match self {
            Change::Update(m) | Change::Lock(m) => m,
            Change::Delete => RowLockMode::Update,
        }
    }
}

/// What the writer decided, before it changes anything. `follow`: a
/// FOR KEY SHARE lock also goes to the newer version (its tid, and the
/// updater that made it).
enum Decision {
    /// Answer without a change.
    Answer(Outcome),
    /// Our transaction already holds the lock.
    Held { follow: Option<(Tid, Xid)> },
    /// Install: `keep` are the holders that still count (running or ours,
    /// our own current xid's excepted), `own` the strongest lock our
    /// current xid already holds.
    Install { keep: Vec<Member>, own: Option<RowLockMode>, updater_kept: bool, follow: Option<(Tid, Xid)> },
}

/// The holders an xmax names: none, one plain xid, or a multi's members.
pub(super) fn holders(session: &Session, h: &Header) -> Result<Vec<Member>, Gone> {
    if let Some(multi) = h.multi {
        return Ok(session.engine().try_multi_members(multi)?);
    }
    let xmax = h.xids.xmax;
    if !xmax.is_valid() {
        return Ok(Vec::new());
    }
    let status = if h.xids.xmax_lock_only {
        MemberStatus::Lock(h.mode)
    } else if h.mode == RowLockMode::NoKeyUpdate {
        MemberStatus::NoKeyUpdate
    } else {
        MemberStatus::Update
    };
    Ok(vec![Member { xid: xmax, status }])
}

/// The state of a holder's xid; a truncated status is the header's own
/// (plain xmax) or a member's (FREEZE-TRUNCATE).
pub(super) fn state_of(session: &Session, h: &Header, xid: Xid) -> Result<XidState, Gone> {
    session
        .try_xid_state(xid)
        .map_err(|t| if h.multi.is_some() { Gone::Member(t.0) } else { Gone::Status(t.0) })
}

impl<R: Clone + Send + Sync + 'static> Table<R> {
    /// Updates the version at `tid` to `data`, changing a unique key (the
    /// UPDATE strength; see [`Table::update_as`]).
    pub fn update(&self, session: &mut Session, tid: Tid, data: R) -> Result<Outcome, StorageError> {
        self.update_as(session, tid, data, RowLockMode::Update)
    }

    /// Updates the version at `tid` to `data` with `strength`:
    /// `NoKeyUpdate` when no column of a unique index changes value (a
    /// concurrent FOR KEY SHARE locker then neither blocks it nor is
    /// blocked, and keeps its lock on the new version), `Update` otherwise.
    pub fn update_as(
        &self,
        session: &mut Session,
        tid: Tid,
        data: R,
        strength: RowLockMode,
    ) -> Result<Outcome, StorageError> {
        assert!(strength >= RowLockMode::NoKeyUpdate, "an update is at least a no-key update");
        self.modify(session, tid, Change::Update(strength), Some(data))
    }

    /// Deletes the version at `tid`.
    pub fn delete(&self, session: &mut Session, tid: Tid) -> Result<Outcome, StorageError> {
        self.modify(session, tid, Change::Delete, None)
    }

    /// Locks the version at `tid` in `mode` (SELECT … FOR KEY SHARE / SHARE
    /// / NO KEY UPDATE / UPDATE). Lockers in compatible modes hold it at
    /// once, named by a multixact.
    pub fn lock_row(
        &self,
        session: &mut Session,
        tid: Tid,
        mode: RowLockMode,
    ) -> Result<Outcome, StorageError> {
        self.modify(session, tid, Change::Lock(mode), None)
    }

    /// Who holds the version at `tid` (PostgreSQL's pgrowlocks): the
    /// multixact its xmax names, if any, and the holders, finished ones
    /// included. `None` if the tid is empty.
    pub fn holders(&self, session: &Session, tid: Tid) -> Option<(Option<MultiXactId>, Vec<Member>)> {
        let v = self.get(tid)?;
        Some(v.decide(|h| Ok((h.multi, holders(session, h)?))))
    }

    /// UPDATE-OUTCOME: decides as PostgreSQL's HeapTupleSatisfiesUpdate and
    /// leaves waiting and re-checking to the caller. A FOR KEY SHARE lock
    /// of a version whose updater changed no key (running or committed)
    /// is granted, and follows the update chain to lock the newer versions
    /// too (PostgreSQL's heap_lock_updated_tuple), so that their deleter or
    /// key updater waits for it.
    fn modify(
        &self,
        session: &mut Session,
        tid: Tid,
        change: Change,
        mut data: Option<R>,
    ) -> Result<Outcome, StorageError> {
        // The xid first: assignment may wait on nothing but must not happen
        // under our write lock (it takes the xid generator lock).
        let xid = session.assign_xid()?;
        let cid = Self::cid(session)?;
        let _write = self.write.lock();
        let (mut at, mut chained_from) = (tid, None);
        loop {
            let v = match self.get(at) {
                Some(v) if chained_from.is_none_or(|updater| v.raw_xmin() == updater) => v,
                // The chain ends (a reused tid ends it too).
                Some(_) => return Ok(Outcome::Ok(tid)),
                None if chained_from.is_some() => return Ok(Outcome::Ok(tid)),
                None => return Ok(Outcome::Invisible),
            };
            // Vacuum may freeze or mark the version meanwhile, but not change
            // its xmax: that needs the write lock we hold.
            let header = std::cell::Cell::new(None);
            let decided = v.decide(|h| {
                header.set(Some(*h));
                Self::decide_change(session, &v, h, (xid, cid), change, chained_from.is_some())
            });
            let h = header.get().expect("decided on a header");
            let follow = match decided {
                Decision::Answer(outcome) if chained_from.is_none() => return Ok(outcome),
                // A newer version we cannot see, or one we changed: ours
                // already, or nothing to protect.
                Decision::Answer(Outcome::Invisible | Outcome::SelfModified) => return Ok(Outcome::Ok(tid)),
                Decision::Answer(outcome) => return Ok(outcome),
                Decision::Held { follow } => follow,
                Decision::Install { keep, own, updater_kept, follow } => {
                    let installed = self.install(
                        session,
                        &v,
                        &h,
                        (at, xid, cid),
                        change,
                        data.take(),
                        (keep, own, updater_kept),
                    )?;
                    if !matches!(change, Change::Lock(_)) {
                        return Ok(installed);
                    }
                    follow
                }
            };
            match follow {
                Some((next, updater)) => (at, chained_from) = (next, Some(updater)),
                None => return Ok(Outcome::Ok(tid)),
            }
        }
    }

    /// Installs the new xmax decided on (and, for an update, the new
    /// version); returns the outcome.
    #[allow(clippy::too_many_arguments, reason = "one caller; the parts of one decision")]
    fn install(
        &self,
        session: &Session,
        v: &Version<R>,
        h: &Header,
        (tid, xid, cid): (Tid, Xid, u32),
        change: Change,
        data: Option<R>,
        (keep, own, updater_kept): (Vec<Member>, Option<RowLockMode>, bool),
    ) -> Result<Outcome, StorageError> {
        let engine = session.engine();
        let xmax_of = |keep: &[Member], me: Option<Member>| -> Result<NewXmax, StorageError> {
            let all: Vec<Member> = keep.iter().copied().chain(me).collect();
            Ok(match all.as_slice() {
                [] => NewXmax::None,
                [m] => NewXmax::Xid { xid: m.xid, mode: m.status.mode(), lock_only: !m.status.is_update() },
                _ => NewXmax::Multi {
                    multi: engine.create_multi(&all)?,
                    lock_only: !all.iter().any(|m| m.status.is_update()),
                },
            })
        };
        match change {
            Change::Lock(mode) => {
                let mode = own.map_or(mode, |o| o.max(mode));
                let xmax = xmax_of(&keep, Some(Member { xid, status: MemberStatus::Lock(mode) }))?;
                // An updater kept as a member keeps its link and its
                // command id (a later command of its own reads by it).
                let (cmax, next) = if updater_kept { (v.cmax(), h.next) } else { (cid, NO_TID) };
                v.set_xmax(xmax, cmax, next);
                Ok(Outcome::Ok(tid))
            }
            Change::Delete | Change::Update(_) => {
                // The strongest of the update and a lock our xid held: an
                // UPDATE after our own FOR UPDATE is a key update for others.
                let strength = own.map_or(change.mode(), |o| o.max(change.mode()));
                let status = if strength == RowLockMode::Update {
                    MemberStatus::Update
                } else {
                    MemberStatus::NoKeyUpdate
                };
                let me = Member { xid, status };
                let Some(data) = data else {
                    v.set_xmax(xmax_of(&keep, Some(me))?, cid, NO_TID);
                    return Ok(Outcome::Ok(tid));
                };
                // The lockers still holding the row hold the new version too
                // (a FOR KEY SHARE lock survives a no-key update, as the
                // foreign-key checks that take it need).
                let new = Version::new(xid, cid, data);
                let lockers: Vec<Member> = keep.iter().copied().filter(|m| !m.status.is_update()).collect();
                let carried = xmax_of(&lockers, None)?;
                let old = xmax_of(&keep, Some(me))?;
                if carried != NewXmax::None {
                    new.set_xmax(carried, 0, NO_TID);
                }
                let new_tid = self.put(new);
                v.set_xmax(old, cid, new_tid);
                Ok(Outcome::Ok(new_tid))
            }
        }
    }

    /// The decision on one header (see the module documentation). In PostgreSQL's order: our own
    /// update first, then running holders in a conflicting mode (waited
    /// for even when the updater has committed), then a committed update.
    /// A version reached by following the chain (`chained`) needs no
    /// visible inserter: its inserter is the updater we passed.
    fn decide_change(
        session: &Session,
        v: &Version<R>,
        h: &Header,
        (xid, cid): (Xid, u32),
        change: Change,
        chained: bool,
    ) -> Result<Decision, Gone> {
        let answer = |o| Ok(Decision::Answer(o));
        if h.dead {
            return answer(Outcome::Invisible);
        }
        // The inserter must be visible to this command.
        if session.is_current_xid(h.xids.xmin) {
            if v.cmin >= cid && !chained {
                return answer(Outcome::Invisible);
            }
        } else if !chained && session.try_xid_state(h.xids.xmin)? != XidState::Committed {
            return answer(Outcome::Invisible);
        }
        let mode = change.mode();
        let mut states = Vec::new();
        for m in holders(session, h)? {
            let state = state_of(session, h, m.xid)?;
            if state == XidState::Current && m.status.is_update() {
                // Our own update or delete: this version is behind us.
                return answer(Outcome::SelfModified);
            }
            states.push((m, state));
        }
        if let Some((m, _)) =
            states.iter().find(|(m, s)| *s == XidState::InProgress && mode.conflicts_with(m.status.mode()))
        {
            return answer(Outcome::BeingModified(m.xid));
        }
        let mut keep = Vec::new();
        let mut own = None;
        let mut updater_kept = false;
        let mut own_suffices = false;
        let mut follow = None;
        for (m, state) in states {
            match (state, m.status) {
                (XidState::Current, status) => {
                    let held = status.mode();
                    if let Change::Lock(_) = change {
                        // Any level of our transaction holding as strong a
                        // lock is enough (and must be: taking it again
                        // could wait for our own waiters).
                        own_suffices |= held >= mode;
                    }
                    if m.xid == xid {
                        own = Some(own.map_or(held, |o: RowLockMode| o.max(held)));
                    } else {
                        keep.push(m);
                    }
                }
                // Not conflicting (checked above).
                (XidState::InProgress, status) => {
                    if status.is_update() {
                        updater_kept = true;
                        follow = Some((h.next, m.xid));
                    }
                    keep.push(m);
                }
                // A key share beside a committed no-key update: granted on
                // this version, and on the newer ones.
                (XidState::Committed, MemberStatus::NoKeyUpdate)
                    if mode == RowLockMode::KeyShare && h.next != NO_TID =>
                {
                    updater_kept = true;
                    follow = Some((h.next, m.xid));
                    keep.push(m);
                }
                (XidState::Committed, MemberStatus::NoKeyUpdate | MemberStatus::Update)
                    if h.next != NO_TID =>
                {
                    return answer(Outcome::Updated { xmax: m.xid, next: h.next });
                }
                (XidState::Committed, MemberStatus::NoKeyUpdate | MemberStatus::Update) => {
                    return answer(Outcome::Deleted(m.xid))
                }
                // A finished locker, an aborted updater: no longer count.
                (XidState::Committed | XidState::Aborted, _) => {}
            }
        }
        let follow = follow
            .filter(|(next, _)| *next != NO_TID && matches!(change, Change::Lock(RowLockMode::KeyShare)));
        if own_suffices {
            return Ok(Decision::Held { follow });
        }
        Ok(Decision::Install { keep, own, updater_kept, follow })
    }
}
