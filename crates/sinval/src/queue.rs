//! The shared invalidation queue (PostgreSQL's sinvaladt.c, with the 2011
//! has-messages fast path and 64-bit message numbers).
//!
//! ```text
//!   ring:     [ m4 | m5 | m6 | m7 ]      capacity 4, slot = number mod 4
//!   min = 4 (oldest still needed)        max = 8 (next to write)
//!   session A: next = 4, has_messages    session B: next = 8 (caught up)
//! ```
//!
//! Writers append under the write lock and publish `max`; readers consume
//! from their own position. A session's first check is its own
//! `has_messages` flag, read without any lock (SINVAL-HASMSG); only if it
//! is set does it take the read lock and copy. A session that falls so far
//! behind that a writer needs its slots is reset (SINVAL-RESET): it skips to
//! `max` and must rebuild its whole catalog cache. Before that happens, the
//! furthest-behind session is asked to catch up through an async
//! notification (SINVAL-CATCHUP).

use tokio::sync::Notify;

use crate::message::Invalidation;
use crate::sync::atomic::{fence, AtomicBool, AtomicU64, Ordering::*};
use crate::sync::{Mutex, RwLock};

/// How a session reads the queue (compared by `lab sinval`).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub enum ReadPath {
    /// Check the own has-messages flag without a lock first (PostgreSQL 9.2+).
    #[default]
    FastPath,
    /// Every check takes the read lock and the max-number lock (before 2011).
    Locked,
}

/// Queue settings.
#[derive(Clone, Copy, Debug)]
pub struct SinvalConfig {
    /// Session slots (the proc array's `max_sessions`).
    pub max_sessions: usize,
    /// Ring capacity in messages (PostgreSQL: 4 096).
    pub capacity: usize,
    /// The read path.
    pub read_path: ReadPath,
}

impl Default for SinvalConfig {
    fn default() -> Self {
        Self { max_sessions: 100, capacity: 4096, read_path: ReadPath::FastPath }
    }
}

/// What a receive found.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Received {
    /// Nothing new.
    Nothing,
    /// This many messages were appended to the caller's buffer, in order.
    Messages(usize),
    /// The session fell too far behind: drop every cached catalog entry.
    Reset,
}

/// One session's read state.
struct Slot {
    /// Attached. Changed only under both locks (exclusive).
    active: AtomicBool,
    /// The next message number this session will read. Written by the
    /// owner under the shared read lock, by attach under the exclusive one;
    /// read by cleanup under the exclusive read lock.
    next: AtomicU64,
    /// Set by cleanup (exclusive read lock) when the session's unread
    /// messages were overwritten; cleared by the owner (shared read lock).
    reset: AtomicBool,
    /// Set by every writer after publishing; cleared by the owner before it
    /// reads `max` (SINVAL-HASMSG).
    has_messages: AtomicBool,
    /// A catch-up request is outstanding: set by the one sender that
    /// notifies, cleared by the owner when it reads (and by attach).
    signaled: AtomicBool,
    /// Wakes the owner's idle wait when a catch-up is requested.
    catchup: Notify,
}

/// Write-side state, guarded by the write lock.
struct Writer {
    /// The oldest message number some active, non-reset session still needs.
    min: u64,
}

/// The queue. See the module documentation.
pub struct Sinval {
    config: SinvalConfig,
    ring: Box<[AtomicU64]>,
    /// One past the newest message: everything below is in the ring.
    max: AtomicU64,
    /// PostgreSQL's SInvalWriteLock.
    write_lock: Mutex<Writer>,
    /// PostgreSQL's SInvalReadLock: shared to read (and update one's own
    /// slot), exclusive for whole-queue maintenance (cleanup, attach, detach).
    read_lock: RwLock<()>,
    /// The `locked` read path's emulation of msgnumLock.
    max_lock: Mutex<()>,
    slots: Box<[Slot]>,
}

impl std::fmt::Debug for Sinval {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sinval").field("config", &self.config).finish_non_exhaustive()
    }
}

impl Sinval {
    /// An empty queue.
    pub fn new(config: SinvalConfig) -> Sinval {
        assert!(config.capacity >= 2, "the ring needs at least two slots");
        Sinval {
            ring: (0..config.capacity).map(|_| AtomicU64::new(0)).collect(),
            max: AtomicU64::new(0),
            write_lock: Mutex::new(Writer { min: 0 }),
            read_lock: RwLock::new(()),
            max_lock: Mutex::new(()),
            slots: (0..config.max_sessions)
                .map(|_| Slot {
                    active: AtomicBool::new(false),
                    next: AtomicU64::new(0),
                    reset: AtomicBool::new(false),
                    has_messages: AtomicBool::new(false),
                    signaled: AtomicBool::new(false),
                    catchup: Notify::new(),
                })
                .collect(),
            config,
        }
    }

    /// The settings.
    pub fn config(&self) -> SinvalConfig {
        self.config
    }

    /// Starts reading at the current end of the queue (no backlog), as a
    /// new session does.
    pub fn attach(&self, slot: u32) {
        let _writer = self.write_lock.lock();
        let _maintenance = self.read_lock.write();
        let s = &self.slots[slot as usize];
        // Relaxed throughout: both locks are held exclusively; every later
        // reader of these fields takes one of them.
        s.next.store(self.max.load(Relaxed), Relaxed);
        s.reset.store(false, Relaxed);
        s.has_messages.store(false, Relaxed);
        // Relaxed: `signaled` guards no data and its only other access, the
        // swap in `send`, is a read-modify-write that reads the latest value
        // whatever the ordering (SINVAL-CATCHUP).
        s.signaled.store(false, Relaxed);
        s.active.store(true, Relaxed);
    }

    /// Stops reading; the slot no longer holds back the queue.
    pub fn detach(&self, slot: u32) {
        let _writer = self.write_lock.lock();
        let _maintenance = self.read_lock.write();
        // Relaxed: both locks held exclusively.
        self.slots[slot as usize].active.store(false, Relaxed);
    }

    /// Appends `messages` for every other session (and the sender: its own
    /// caches are invalidated the same way).
    pub fn send(&self, messages: &[Invalidation]) {
        if messages.is_empty() {
            return;
        }
        let cap = self.config.capacity as u64;
        let mut writer = self.write_lock.lock();
        for chunk in messages.chunks(self.config.capacity / 2) {
            let n = chunk.len() as u64;
            // Relaxed: only writers store `max`, under the write lock we hold.
            let max = self.max.load(Relaxed);
            if max + n - writer.min > cap {
                self.cleanup(&mut writer, max, n);
            }
            for (i, m) in chunk.iter().enumerate() {
                // Relaxed: published by the Release store of `max` below.
                self.ring[((max + i as u64) % cap) as usize].store(m.encode(), Relaxed);
            }
            // Release (SINVAL-PUBLISH): pairs with the Acquire load of `max`
            // in `receive`; a reader that sees the new max sees the messages.
            self.max.store(max + n, Release);
            // SeqCst fence (SINVAL-HASMSG): pairs with the reader's fence
            // between clearing its flag and loading `max`. Either the reader's
            // fence comes later (it sees our max) or our flag store below is
            // later than its clear in the flag's modification order (it will
            // look again).
            fence(SeqCst);
            for s in self.slots.iter() {
                // Relaxed: ordered after `max` by the fence above; a reader
                // that finds it set does its own synchronisation.
                if s.active.load(Relaxed) {
                    s.has_messages.store(true, Relaxed);
                }
            }
        }
        // Ask the furthest-behind session to catch up before it would have
        // to be reset: at most one request in flight (PostgreSQL's daisy
        // chain: the catching-up session's next send or read passes it on).
        // Relaxed: we still hold the write lock.
        let max = self.max.load(Relaxed);
        let to_signal = self.furthest_behind(max).filter(|&(_, lag)| lag > cap / 2).map(|(slot, _)| slot);
        drop(writer);
        if let Some(slot) = to_signal {
            let s = &self.slots[slot];
            // AcqRel (SINVAL-CATCHUP): pairs with the same swap by other
            // senders. Being one read-modify-write, it lets exactly one of
            // them notify until the owner's Relaxed clear in `receive` or
            // `attach` re-arms it; the orderings add nothing the protocol
            // relies on (the flag guards no data, and `Notify` keeps a permit
            // with its own synchronisation), so Relaxed would be enough.
            if !s.signaled.swap(true, AcqRel) {
                s.catchup.notify_one();
            }
        }
    }

    /// The active, non-reset session with the oldest position, and its lag.
    fn furthest_behind(&self, max: u64) -> Option<(usize, u64)> {
        self.slots
            .iter()
            .enumerate()
            // Relaxed: a heuristic for whom to signal; positions only grow.
            .filter(|(_, s)| s.active.load(Relaxed) && !s.reset.load(Relaxed))
            .map(|(i, s)| (i, max.saturating_sub(s.next.load(Relaxed))))
            .max_by_key(|&(_, lag)| lag)
    }

    /// Makes room for `n` messages (PostgreSQL's SICleanupQueue): resets
    /// every session whose unread messages would be overwritten and moves
    /// `min`. Holds the read lock exclusively, so no reader is copying.
    fn cleanup(&self, writer: &mut Writer, max: u64, n: u64) {
        let _maintenance = self.read_lock.write();
        let cap = self.config.capacity as u64;
        let keep_from = (max + n).saturating_sub(cap);
        let mut min = max;
        for s in self.slots.iter() {
            // Relaxed: the exclusive read lock orders every owner update of
            // these fields (made under the shared lock) before us.
            if !s.active.load(Relaxed) || s.reset.load(Relaxed) {
                continue;
            }
            let next = s.next.load(Relaxed);
            if next < keep_from {
                // SINVAL-RESET: its unread messages are about to be
                // overwritten; it will skip to max and rebuild its caches.
                s.reset.store(true, Relaxed);
                s.has_messages.store(true, Relaxed);
            } else {
                min = min.min(next);
            }
        }
        writer.min = min;
    }

    /// Reads this session's new messages into `out` (PostgreSQL's
    /// ReceiveSharedInvalidMessages / SIGetDataEntries).
    pub fn receive(&self, slot: u32, out: &mut Vec<Invalidation>) -> Received {
        let s = &self.slots[slot as usize];
        if self.config.read_path == ReadPath::FastPath {
            // Relaxed (SINVAL-HASMSG fast path): a stale `false` is harmless.
            // Callers check right after acquiring a lock the sender held
            // while sending, so that acquisition orders this load after the
            // relevant store; anything else is merely seen at the next check.
            if !s.has_messages.load(Relaxed) {
                return Received::Nothing;
            }
        }
        let _reader = self.read_lock.read();
        // Clear the flag *before* reading max (SINVAL-HASMSG): clearing it
        // after could swallow the flag of a writer that published after our
        // read of max, and its messages would wait for the next send.
        // Relaxed store, ordered by the fence.
        s.has_messages.store(false, Relaxed);
        // SeqCst fence: pairs with the writer's fence in `send`.
        fence(SeqCst);
        let max = match self.config.read_path {
            // Acquire (SINVAL-PUBLISH): pairs with the writer's Release store.
            ReadPath::FastPath => self.max.load(Acquire),
            ReadPath::Locked => {
                let _max_lock = self.max_lock.lock();
                // Acquire: as above (the lock is the old-style barrier).
                self.max.load(Acquire)
            }
        };
        // Relaxed: `reset` is set under the exclusive read lock, ordered
        // before our shared acquisition.
        if s.reset.load(Relaxed) {
            s.reset.store(false, Relaxed);
            // Relaxed: owner's own position; cleanup reads it under the
            // exclusive lock.
            s.next.store(max, Relaxed);
            // Relaxed: re-arms the catch-up request; pairs with the swap in
            // `send` (see `attach`). A sender that still reads `true` skips
            // one request, harmless now that we are caught up.
            s.signaled.store(false, Relaxed);
            return Received::Reset;
        }
        // Relaxed: only we write our position while the shared lock is held.
        let next = s.next.load(Relaxed);
        let cap = self.config.capacity as u64;
        for n in next..max {
            // Relaxed: ordered after the writer's stores by the Acquire of
            // `max`; slots below `max` are not overwritten while we hold the
            // shared lock (overwriting needs cleanup's exclusive lock first).
            out.push(Invalidation::decode(self.ring[(n % cap) as usize].load(Relaxed)));
        }
        // Relaxed: see above.
        s.next.store(max, Relaxed);
        // Relaxed: re-arms the catch-up request, as in the reset branch.
        s.signaled.store(false, Relaxed);
        if max > next {
            Received::Messages((max - next) as usize)
        } else {
            Received::Nothing
        }
    }

    /// Resolves when this session is asked to catch up (it fell more than
    /// half the ring behind). An idle session awaits this beside its client
    /// socket and then calls [`Sinval::receive`]; no polling.
    pub async fn catchup_requested(&self, slot: u32) {
        self.slots[slot as usize].catchup.notified().await;
    }

    /// Wakes `slot`'s idle wait as a catch-up request would, for a reason
    /// of its owner's (a server shutting down ends idle sessions through
    /// it, at no cost to their wait). Spurious as a catch-up: the owner
    /// reads the queue and finds what it finds. `signaled` is left alone,
    /// so senders' requests go on as before. A slot reused by a later
    /// session gets one spurious catch-up at most.
    pub fn wake_idle(&self, slot: u32) {
        self.slots[slot as usize].catchup.notify_one();
    }

    /// How far behind `slot` is (diagnostics and tests).
    pub fn lag(&self, slot: u32) -> u64 {
        // Relaxed: a diagnostic.
        self.max.load(Relaxed).saturating_sub(self.slots[slot as usize].next.load(Relaxed))
    }
}
