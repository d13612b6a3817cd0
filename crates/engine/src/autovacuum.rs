//! Freezing, the database's frozen xid, and autovacuum (PostgreSQL's
//! names): what keeps the xid logs, the row versions and the memory
//! bounded on a server left alone under write load (FROZEN-XID in the
//! crate README; FREEZE-TRUNCATE in the storage crate's).
//!
//! ```text
//!   vacuum pass (per heap)   freezes below min(cutoff, newest - vacuum_freeze_min_age),
//!                            removes the dead, raises the heap's frozen xid
//!   advance_frozen_xid       datfrozenxid = min(frozen xid of every reachable heap,
//!                            the catalog's); the engine truncates its status log
//!                            below min(datfrozenxid, horizon), parent links and
//!                            CSN log below the horizon
//!   autovacuum worker        every autovacuum_naptime, or when an xid passes
//!                            datfrozenxid + autovacuum_freeze_max_age: vacuums
//!                            heaps with many dead versions, freezes old ones,
//!                            advances datfrozenxid, warns when the status log
//!                            is three quarters full and names what holds it
//!   a full status log        the writer freezes everything first, then retries;
//!                            54000 names the session, xmin and age that pin it
//!   the multixact log        the same passes replace finished multixacts; the
//!                            oldest multi = min(every reachable heap's), and the
//!                            log is truncated below it; a heap whose oldest multi
//!                            lags by a quarter of the log's ring is vacuumed; a
//!                            full log makes the writer freeze everything first
//! ```
//!
//! The limits follow the status log's capacity C: `autovacuum_freeze_max_age`
//! is used up to C/2 and `vacuum_freeze_min_age` up to half of that, as
//! PostgreSQL clamps the latter to half the former, so the worker has half
//! the ring to catch up in.

use std::collections::HashMap;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::Instant;

use snapscale_lock::LockTag;
use snapscale_sqlstate::SqlState;
use snapscale_storage::{VacuumOptions, VacuumStats};
use snapscale_txn::{HeldBy, IsolationLevel, Session, TxnError, Xid};
use snapscale_values::SqlError;
use tracing::{error, info, warn};

use crate::catalog::Heap;
use crate::database::Database;
use crate::vacuum_state::{AutovacuumWorker, FrozenXid, Limits, XidLogState};

impl Database {
    /// The freeze limits now, clamped to the status log's capacity.
    pub fn xid_limits(&self) -> Limits {
        let capacity = self.engine.status_log_capacity();
        let config = &self.autovacuum.config;
        let freeze_max_age = config.freeze_max_age.min(capacity / 2).max(1);
        let freeze_min_age = config.freeze_min_age.min(freeze_max_age / 2);
        Limits { capacity, freeze_max_age, freeze_min_age, warn_span: capacity - capacity / 4 }
    }

    /// The xid logs' state now.
    pub fn xid_log_state(&self) -> XidLogState {
        let pages = self.engine.log_pages();
        XidLogState {
            next_xid: self.engine.next_xid(),
            frozen: self.engine.frozen_xid(),
            status_span: self.engine.status_log_span(),
            status_capacity: self.engine.status_log_capacity(),
            resident_pages: (pages.status.0, pages.parent_links.0, pages.csn.map_or(0, |c| c.0)),
            resident_bytes: pages.resident_bytes(),
        }
    }

    /// The multixact log's state now (a diagnostic; tests check it stays
    /// bounded).
    pub fn multi_log_state(&self) -> snapscale_txn::MultiLogState {
        self.engine.multi_log_state()
    }

    /// Autovacuum rounds done so far.
    pub fn autovacuum_rounds(&self) -> u64 {
        // Relaxed: a counter for tests.
        self.autovacuum.rounds.load(Relaxed)
    }

    /// One vacuum pass over `heap` (VACUUM, autovacuum, or PRUNE's), one
    /// pruner at a time; `freeze_min_age` 0 is VACUUM (FREEZE).
    pub fn vacuum_heap(
        &self,
        session: &mut Session,
        heap: &Heap,
        freeze_min_age: u64,
        auto: bool,
    ) -> VacuumStats {
        let _one = heap.pruning.lock().unwrap_or_else(|e| e.into_inner());
        // Relaxed: a heuristic counter (PRUNE); the pass computes its own
        // cutoff.
        heap.changes.store(0, Relaxed);
        let stats = heap.vacuum(session, VacuumOptions { freeze_min_age, remove: true });
        heap.record_vacuum(auto);
        stats
    }

    /// VACUUM of `heaps`, or of everything reachable (the catalog's own
    /// table included) when `heaps` is `None`; then the frozen xid
    /// advances.
    pub fn vacuum_relations(
        &self,
        session: &mut Session,
        heaps: Option<Vec<Arc<Heap>>>,
        freeze: bool,
        mut check: impl FnMut() -> Result<(), SqlError>,
    ) -> Result<(), SqlError> {
        let min_age = if freeze { 0 } else { self.xid_limits().freeze_min_age };
        let all = heaps.is_none();
        let heaps =
            heaps.unwrap_or_else(|| self.catalog.reachable_storages().into_iter().map(|(_, h)| h).collect());
        for heap in heaps {
            check()?;
            self.vacuum_heap(session, &heap, min_age, false);
        }
        if all {
            self.catalog.table.vacuum_with(
                session,
                VacuumOptions { freeze_min_age: min_age, remove: false },
                |_| {},
            );
        }
        self.advance_frozen_xid();
        Ok(())
    }

    /// Raises the database's frozen xid to the oldest reachable heap's (the
    /// catalog's table included) and lets the engine truncate its logs
    /// (FREEZE-TRUNCATE: every heap a reader can still reach counts,
    /// dropped ones a reader holds too, and each heap is in the catalog's
    /// map before anyone writes into it).
    pub fn advance_frozen_xid(&self) -> FrozenXid {
        let mut frozen = self.catalog.table.frozen_xid();
        let mut oldest_multi = self.catalog.table.min_multi();
        let mut holder = Holder::Catalog;
        for (id, heap) in self.catalog.reachable_storages() {
            let f = heap.table.frozen_xid();
            if f < frozen {
                frozen = f;
                holder = id.map_or(Holder::Dropped, Holder::Storage);
            }
            // MULTI-TRUNCATE: as the frozen xid, over the same heaps.
            oldest_multi = oldest_multi.min(heap.table.min_multi());
        }
        let status_log_from = self.engine.advance_frozen_xid(frozen);
        let oldest_multi = self.engine.advance_oldest_multi(oldest_multi);
        let wake_at = frozen.0.saturating_add(self.xid_limits().freeze_max_age);
        // Relaxed: a hint for writers (see `note_xid`).
        self.autovacuum.wake_at.store(wake_at, Relaxed);
        FrozenXid { frozen, oldest: self.holder_name(holder), status_log_from, oldest_multi }
    }

    fn holder_name(&self, holder: Holder) -> String {
        match holder {
            Holder::Catalog => "the catalog".into(),
            Holder::Dropped => "a dropped table a session still reads".into(),
            Holder::Storage(id) => self
                .catalog
                .table
                .all_versions()
                .into_iter()
                .filter(|(_, e)| e.storage == id)
                .map(|(_, e)| format!("table \"{}\"", e.name))
                .last()
                .unwrap_or_else(|| format!("storage {id}")),
        }
    }

    /// A writer got `xid`: past datfrozenxid + the freeze max age, the
    /// worker is woken rather than left to its naptime.
    pub fn note_xid(&self, xid: Xid) {
        let state = &self.autovacuum;
        // Relaxed (both): hints; a late wake-up costs one naptime at most,
        // and the full-log path below freezes anyway.
        if xid.0 >= state.wake_at.load(Relaxed) && !state.wake_pending.swap(true, Relaxed) {
            let mut s = state.signal.state.lock().unwrap_or_else(|e| e.into_inner());
            s.0 = true;
            drop(s);
            state.signal.cond.notify_all();
        }
    }

    /// The status log is full: if only freezing is missing, freeze every
    /// reachable heap now (autovacuum's work, done by the writer that needs
    /// it: marking only, so no index is touched) and advance the frozen
    /// xid. One writer at a time; the others wait for it and retry.
    pub fn freeze_for_xid_space(&self, session: &mut Session, err: &TxnError) {
        let TxnError::XidSpaceExhausted { held_by: HeldBy::Unfrozen { frozen, .. }, .. } = err else {
            return;
        };
        let _one = self.autovacuum.emergency.lock().unwrap_or_else(|e| e.into_inner());
        if self.engine.frozen_xid() > *frozen {
            return; // another writer did it while we waited
        }
        let started = Instant::now();
        let now = self.freeze_everything(session);
        warn!(
            frozen_xid = now.frozen.0,
            oldest = %now.oldest,
            ms = started.elapsed().as_millis() as u64,
            "the status log was full with tables not yet frozen: a writer froze every table first"
        );
    }

    /// Freezes every reachable heap and the catalog at once (a writer that
    /// found a log full), then advances the frozen xid and oldest multi.
    fn freeze_everything(&self, session: &mut Session) -> FrozenXid {
        let mark = VacuumOptions { freeze_min_age: 0, remove: false };
        for (_, heap) in self.catalog.reachable_storages() {
            heap.table.vacuum_with(session, mark, |_| {});
        }
        self.catalog.table.vacuum_with(session, mark, |_| {});
        self.advance_frozen_xid()
    }

    /// The multixact log is full (MULTI-TRUNCATE): freeze every reachable
    /// heap now, which replaces every multi whose members finished and
    /// rebuilds the others from their live members, and advance the oldest
    /// multi. One writer at a time; true if the log has room again (the
    /// caller retries), false if live multis fill it.
    pub fn freeze_for_multi_space(&self, session: &mut Session, err: &TxnError) -> bool {
        let TxnError::MultiXactSpaceExhausted { oldest, .. } = err else { return false };
        let _one = self.autovacuum.emergency.lock().unwrap_or_else(|e| e.into_inner());
        if self.engine.oldest_multi() > *oldest {
            return true; // another writer did it while we waited
        }
        let started = Instant::now();
        let now = self.freeze_everything(session);
        warn!(
            oldest_multi = now.oldest_multi.0,
            ms = started.elapsed().as_millis() as u64,
            "the multixact log was full with old multixacts not yet replaced: a writer froze every table first"
        );
        now.oldest_multi > *oldest
    }

    /// The 54000 for an xid that cannot be assigned, naming the real cause:
    /// the session (pid), xmin and age of the snapshot or transaction that
    /// pins the log, or the table not frozen.
    pub fn xid_space_error(&self, err: TxnError) -> SqlError {
        let TxnError::XidSpaceExhausted { log, oldest, capacity, held_by } = err else {
            return crate::errors::txn_error(err);
        };
        let head = format!(
            "cannot assign a transaction id: the {}'s {capacity} xids since xid {oldest} are in use",
            log.name()
        );
        let (cause, hint) = match held_by {
            HeldBy::Snapshot { slot, xmin, age } => (
                format!(
                    "the session with pid {} holds a snapshot with xmin {xmin}, {age} xids old",
                    slot + 1
                ),
                format!(
                    "End that session's transaction, or its session: SELECT pg_terminate_backend({}).",
                    slot + 1
                ),
            ),
            HeldBy::Transaction { slot, xid, age } => {
                let slot = slot.or_else(|| self.slot_of_xid(xid));
                let who = slot
                    .map_or_else(|| "a session".to_owned(), |s| format!("the session with pid {}", s + 1));
                (
                    format!("{who} has had transaction {xid} open for {age} xids"),
                    "Commit or roll back that transaction.".to_owned(),
                )
            }
            HeldBy::Unfrozen { frozen, age } => {
                let now = self.advance_frozen_xid();
                (
                    format!("{} is not frozen past xid {frozen} ({age} xids old)", now.oldest),
                    "Run VACUUM (FREEZE).".to_owned(),
                )
            }
        };
        SqlError::new(SqlState::PROGRAM_LIMIT_EXCEEDED, format!("{head}: {cause}")).with_hint(hint)
    }

    /// The slot of the session running `xid` (every xid is registered with
    /// the lock manager: XID-WAITABLE).
    fn slot_of_xid(&self, xid: Xid) -> Option<u32> {
        (0..self.locks.config().max_sessions)
            .find(|&slot| self.locks.held_locks(slot).iter().any(|h| h.tag == LockTag::Transaction(xid.0)))
    }

    /// Logs a warning, at most every 10 s, when the status log is three
    /// quarters full, naming what holds it (PostgreSQL warns before
    /// wraparound the same way).
    fn warn_if_nearly_full(&self, limits: &Limits, frozen: &FrozenXid) {
        let span = self.engine.status_log_span();
        if span <= limits.warn_span {
            return;
        }
        let now = snapscale_values::now_micros();
        // Relaxed: only the worker writes it.
        if now.saturating_sub(self.autovacuum.last_warning.load(Relaxed)) < 10_000_000 {
            return;
        }
        self.autovacuum.last_warning.store(now, Relaxed);
        let next = self.engine.next_xid();
        let horizon = self.engine.compute_horizons().oldest_considered_running;
        let cause = if frozen.frozen < horizon {
            format!("{} is not frozen past xid {}", frozen.oldest, frozen.frozen)
        } else {
            match self.engine.horizon_holder(horizon, next) {
                HeldBy::Snapshot { slot, xmin, age } => {
                    format!(
                        "the session with pid {} holds a snapshot with xmin {xmin}, {age} xids old",
                        slot + 1
                    )
                }
                HeldBy::Transaction { slot, xid, age } => {
                    let slot = slot.or_else(|| self.slot_of_xid(xid));
                    let who = slot.map_or_else(
                        || "a session".to_owned(),
                        |s| format!("the session with pid {}", s + 1),
                    );
                    format!("{who} has had transaction {xid} open for {age} xids")
                }
                HeldBy::Unfrozen { .. } => unreachable!("a horizon holder is a session"),
            }
        };
        warn!(
            span,
            capacity = limits.capacity,
            left = limits.capacity - span,
            "the status log must be truncated within {} transactions: {cause}",
            limits.capacity - span
        );
    }

    /// One autovacuum round: vacuum every heap with enough dead versions,
    /// freeze every heap older than the freeze max age (and the catalog's
    /// table), advance the frozen xid, warn if the log is nearly full.
    pub fn autovacuum_round(&self, session: &mut Session) {
        let started = Instant::now();
        let limits = self.xid_limits();
        let config = &self.autovacuum.config;
        let next = self.engine.next_xid();
        let mut vacuumed = Vec::new();
        let mut removed = 0;
        let mut frozen_versions = 0;
        // A heap whose oldest multixact lags by a quarter of the log's ring
        // is vacuumed too (PostgreSQL's multixact freeze max age).
        let multis = self.engine.multi_log_state();
        let multi_lag =
            |heap: &Heap| multis.next.0.saturating_sub(heap.table.min_multi().0) > multis.capacity / 4;
        let tuned = self.storage_parameters(session);
        for (id, heap) in self.catalog.reachable_storages() {
            let age = next.0.saturating_sub(heap.table.frozen_xid().0);
            // Relaxed: a heuristic counter (PRUNE).
            let changes = heap.changes.load(Relaxed) as f64;
            let size = heap.table.allocated_slots() as f64;
            // A table's own storage parameters (RELOPTIONS) over the
            // server's settings, as PostgreSQL's autovacuum reads them.
            let own = id.and_then(|id| tuned.get(&id));
            let param = |name: &str| own.and_then(|e| e.option(name));
            let enabled =
                param("autovacuum_enabled").is_none_or(|v| snapscale_values::pg_bool(v) != Some(false));
            let threshold = param("autovacuum_vacuum_threshold")
                .and_then(|v| v.parse::<f64>().ok())
                .unwrap_or(config.vacuum_threshold as f64);
            let scale = param("autovacuum_vacuum_scale_factor")
                .and_then(|v| v.trim().parse::<f64>().ok())
                .unwrap_or(config.vacuum_scale_factor);
            let dead_due = config.enabled && enabled && changes > threshold + scale * size;
            if dead_due || age > limits.freeze_max_age || multi_lag(&heap) {
                let stats = self.vacuum_heap(session, &heap, limits.freeze_min_age, true);
                removed += stats.removed;
                frozen_versions += stats.frozen;
                vacuumed.push(id);
            }
        }
        // Autoanalyze after the vacuums, under a snapshot of its own (the
        // vacuums' cutoffs are not held back by it).
        let analyzed = self.autoanalyze(session);
        if next.0.saturating_sub(self.catalog.table.frozen_xid().0) > limits.freeze_max_age {
            let mark = VacuumOptions { freeze_min_age: limits.freeze_min_age, remove: false };
            self.catalog.table.vacuum_with(session, mark, |_| {});
        }
        let frozen = self.advance_frozen_xid();
        // Relaxed (both): see `note_xid`.
        self.autovacuum.wake_pending.store(false, Relaxed);
        self.autovacuum.rounds.fetch_add(1, Relaxed);
        self.warn_if_nearly_full(&limits, &frozen);
        let lagging = next.0.saturating_sub(frozen.frozen.0) > limits.freeze_max_age;
        if !vacuumed.is_empty() || analyzed > 0 || lagging {
            let state = self.xid_log_state();
            let message = "autovacuum round";
            let (heaps, ms) = (vacuumed.len(), started.elapsed().as_millis() as u64);
            let fields = (frozen.frozen.0, state.status_span, state.resident_bytes);
            if lagging {
                // The frozen xid lags: the log names what holds it.
                info!(
                    heaps, removed, frozen_versions, ms, frozen_xid = fields.0, status_span = fields.1,
                    xid_log_bytes = fields.2, oldest = %frozen.oldest, "{message}: {} holds the frozen xid back",
                    frozen.oldest
                );
            } else {
                tracing::debug!(
                    heaps, removed, frozen_versions, ms, frozen_xid = fields.0, status_span = fields.1,
                    xid_log_bytes = fields.2, oldest = %frozen.oldest, "{message}"
                );
            }
        }
    }

    /// The storage parameters of every relation that has some, by storage
    /// id, as the catalog has them committed now (read in a transaction
    /// of the worker's own, ended before any heap is vacuumed so its
    /// snapshot holds no horizon back). Empty if the catalog cannot be
    /// read.
    fn storage_parameters(&self, session: &mut Session) -> HashMap<u64, Arc<crate::catalog::RelEntry>> {
        if session.begin(IsolationLevel::ReadCommitted).is_err() {
            return HashMap::new();
        }
        let rows = match session.register_snapshot() {
            Ok((_, snapshot)) => self.catalog.table.scan(&session.reader(&snapshot)),
            Err(_) => Vec::new(),
        };
        session.abort();
        rows.into_iter().filter(|(_, e)| !e.options.is_empty()).map(|(_, e)| (e.storage, e)).collect()
    }

    /// Starts the autovacuum worker on a thread of its own, with the
    /// proc-array slot the database attached for it (a primary only; a
    /// standby freezes on its replay thread). Dropping the handle stops it.
    pub fn start_autovacuum(self: &Arc<Self>) -> Result<AutovacuumWorker, String> {
        let session = self
            .autovacuum
            .session
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
            .ok_or("autovacuum has no session (a standby, or already started)")?;
        let db = Arc::clone(self);
        let signal = Arc::clone(&self.autovacuum.signal);
        let thread = std::thread::Builder::new()
            .name("autovacuum".into())
            .spawn(move || worker(db, session))
            .map_err(|e| format!("could not start autovacuum: {e}"))?;
        Ok(AutovacuumWorker { signal, thread: Some(thread) })
    }

    /// A standby's freezing, on its replay thread between records: a round
    /// when the status log is half full, or its frozen xid older than the
    /// freeze max age (replay's xids need the log as a primary's do).
    pub fn standby_freeze(&self, session: &mut Session) {
        let limits = self.xid_limits();
        let next = self.engine.next_xid();
        let lagging = next.0.saturating_sub(self.engine.frozen_xid().0) > limits.freeze_max_age;
        if lagging || self.engine.status_log_span() > limits.capacity / 2 {
            self.autovacuum_round(session);
        }
    }
}

/// Which relation holds the frozen xid back.
#[derive(Clone, Copy)]
enum Holder {
    Catalog,
    Dropped,
    Storage(u64),
}

/// The worker: a round every naptime or when woken, until stopped. A
/// panic costs one round, never the process.
fn worker(db: Arc<Database>, mut session: Session) {
    let signal = Arc::clone(&db.autovacuum.signal);
    let naptime = db.autovacuum.config.naptime;
    loop {
        {
            let state = signal.state.lock().unwrap_or_else(|e| e.into_inner());
            let (mut state, _) = signal
                .cond
                .wait_timeout_while(state, naptime, |s| !s.0 && !s.1)
                .unwrap_or_else(|e| e.into_inner());
            if state.1 {
                return;
            }
            state.0 = false;
        }
        if let Err(panic) = std::panic::catch_unwind(AssertUnwindSafe(|| db.autovacuum_round(&mut session))) {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            error!(panic = %what, "an autovacuum round panicked; the next one runs on time");
        }
    }
}
