//! snapscale's shared invalidation queue: when a session commits a catalog
//! change, every other session learns which cached catalog entries to drop.
//!
//! The sender queues its messages after leaving the running set and before
//! releasing its locks; a receiver checks the queue right after acquiring a
//! lock. So a session holding a relation lock never uses a catalog entry
//! older than the last committed change to that relation. The invariants
//! and interlocks are in this crate's README.md (tags SINVAL-HASMSG,
//! SINVAL-PUBLISH, SINVAL-RESET, SINVAL-CATCHUP).

mod message;
mod queue;
mod sync;

#[cfg(all(test, loom))]
mod loom_tests;

pub use message::Invalidation;
pub use queue::{ReadPath, Received, Sinval, SinvalConfig};

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use Invalidation::*;

    fn queue(capacity: usize, read_path: ReadPath) -> Sinval {
        let q = Sinval::new(SinvalConfig { max_sessions: 4, capacity, read_path });
        for slot in 0..3 {
            q.attach(slot);
        }
        q
    }

    #[test]
    fn every_session_reads_every_message_in_order() {
        for path in [ReadPath::FastPath, ReadPath::Locked] {
            let q = queue(8, path);
            let mut got = Vec::new();
            assert_eq!(q.receive(0, &mut got), Received::Nothing);
            q.send(&[Relation(1), Index(2)]);
            q.send(&[Relation(3)]);
            assert_eq!(q.receive(0, &mut got), Received::Messages(3));
            assert_eq!(got, [Relation(1), Index(2), Relation(3)]);
            got.clear();
            assert_eq!(q.receive(0, &mut got), Received::Nothing, "{path:?}: consumed");
            assert_eq!(q.receive(1, &mut got), Received::Messages(3));
            assert_eq!(got, [Relation(1), Index(2), Relation(3)]);
        }
    }

    #[test]
    fn a_session_that_attaches_later_sees_no_backlog() {
        let q = queue(8, ReadPath::FastPath);
        q.send(&[Relation(1)]);
        q.attach(3);
        let mut got = Vec::new();
        assert_eq!(q.receive(3, &mut got), Received::Nothing);
        q.send(&[Relation(2)]);
        assert_eq!(q.receive(3, &mut got), Received::Messages(1));
        assert_eq!(got, [Relation(2)]);
    }

    #[test]
    fn a_session_too_far_behind_is_reset_not_blocking_writers() {
        let q = queue(4, ReadPath::FastPath);
        let mut got = Vec::new();
        for oid in 0..10 {
            q.send(&[Relation(oid)]);
            // Session 1 keeps up; session 0 never reads.
            got.clear();
            assert_ne!(q.receive(1, &mut got), Received::Reset);
        }
        got.clear();
        assert_eq!(q.receive(0, &mut got), Received::Reset);
        assert!(got.is_empty());
        q.send(&[Relation(99)]);
        assert_eq!(q.receive(0, &mut got), Received::Messages(1));
        assert_eq!(got, [Relation(99)]);
    }

    #[test]
    fn a_detached_session_holds_nothing_back() {
        let q = queue(4, ReadPath::FastPath);
        q.detach(0);
        let mut got = Vec::new();
        for oid in 0..20 {
            q.send(&[Relation(oid)]);
            got.clear();
            q.receive(1, &mut got);
            q.receive(2, &mut got);
        }
        assert_eq!(q.lag(1), 0);
    }

    #[tokio::test]
    async fn an_idle_session_is_asked_to_catch_up_before_reset() {
        let q = std::sync::Arc::new(queue(8, ReadPath::FastPath));
        let q2 = std::sync::Arc::clone(&q);
        let waiter = tokio::spawn(async move { q2.catchup_requested(0).await });
        let mut got = Vec::new();
        for oid in 0..5 {
            q.send(&[Relation(oid)]);
            q.receive(1, &mut got);
            q.receive(2, &mut got);
        }
        // Session 0 lags 5 > 8 / 2: it was notified, and can still catch up.
        tokio::time::timeout(std::time::Duration::from_secs(5), waiter)
            .await
            .expect("catch-up request arrives")
            .unwrap();
        got.clear();
        assert_eq!(q.receive(0, &mut got), Received::Messages(5));
    }

    #[test]
    fn many_messages_in_one_send_wrap_the_ring() {
        let q = queue(4, ReadPath::FastPath);
        q.detach(0);
        q.detach(2);
        let msgs: Vec<_> = (0..10).map(Relation).collect();
        q.send(&msgs);
        let mut got = Vec::new();
        // Session 1 could not keep up with one 10-message send into 4 slots.
        assert_eq!(q.receive(1, &mut got), Received::Reset);
    }

    #[test]
    // The `done` flag only stops the receiver threads: outside any model.
    #[allow(clippy::disallowed_types)]
    fn concurrent_senders_and_receivers_lose_nothing() {
        use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
        use std::sync::Arc;
        // Miri interprets every step: a smaller run keeps it to seconds.
        const PER_SENDER: u32 = if cfg!(miri) { 50 } else { 5_000 };
        let q = Arc::new(Sinval::new(SinvalConfig {
            max_sessions: 4,
            capacity: 64,
            read_path: ReadPath::FastPath,
        }));
        for slot in 0..2 {
            q.attach(slot);
        }
        let done = Arc::new(AtomicBool::new(false));
        let receivers: Vec<_> = (0..2u32)
            .map(|slot| {
                let (q, done) = (Arc::clone(&q), Arc::clone(&done));
                std::thread::spawn(move || {
                    let mut last = [None::<u32>; 2];
                    let mut consume = |r: Received, got: Vec<Invalidation>| {
                        if r == Received::Reset {
                            last = [None; 2];
                        }
                        for m in got {
                            let Relation(oid) = m else { panic!("unexpected {m:?}") };
                            let (t, i) = ((oid / 1_000_000) as usize, oid % 1_000_000);
                            // Each sender's messages arrive in order, none
                            // skipped unless a reset intervened.
                            if let Some(prev) = last[t] {
                                assert_eq!(i, prev + 1, "message lost or reordered");
                            }
                            last[t] = Some(i);
                        }
                        r
                    };
                    while !done.load(SeqCst) {
                        let mut got = Vec::new();
                        let r = q.receive(slot, &mut got);
                        consume(r, got);
                    }
                    // Everything is sent: one more fast-path check must bring
                    // us to the end of both senders, unless it is a reset.
                    let mut got = Vec::new();
                    let r = q.receive(slot, &mut got);
                    if consume(r, got) != Received::Reset {
                        for l in last.iter().flatten() {
                            assert_eq!(*l, PER_SENDER - 1, "final check missed messages");
                        }
                    }
                    assert_eq!(q.lag(slot), 0);
                })
            })
            .collect();
        let senders: Vec<_> = (0..2u32)
            .map(|t| {
                let q = Arc::clone(&q);
                std::thread::spawn(move || {
                    for i in 0..PER_SENDER {
                        q.send(&[Relation(t * 1_000_000 + i)]);
                    }
                })
            })
            .collect();
        for s in senders {
            s.join().unwrap();
        }
        done.store(true, SeqCst);
        for r in receivers {
            r.join().unwrap();
        }
    }
}
