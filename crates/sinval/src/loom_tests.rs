//! Loom models of the queue's lock-free parts. Run with
//! `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=2 cargo test -p
//! snapscale-sinval --release --lib loom_`.

use std::sync::Arc;

use loom::thread;

use crate::{Invalidation, ReadPath, Received, Sinval, SinvalConfig};

fn queue(capacity: usize) -> Arc<Sinval> {
    let q = Sinval::new(SinvalConfig { max_sessions: 2, capacity, read_path: ReadPath::FastPath });
    q.attach(0);
    Arc::new(q)
}

/// SINVAL-HASMSG: a reader racing a writer never loses a message: whatever
/// it did not get during the race, its next check through the lock-free
/// fast path gets. Fails if the reader clears its flag after reading max,
/// or without the fences.
#[test]
fn loom_no_message_lost_across_the_has_messages_race() {
    loom::model(|| {
        let q = queue(4);
        let q2 = Arc::clone(&q);
        let writer = thread::spawn(move || q2.send(&[Invalidation::Relation(7)]));
        let mut got = Vec::new();
        q.receive(0, &mut got);
        writer.join().unwrap();
        q.receive(0, &mut got);
        assert_eq!(got, [Invalidation::Relation(7)]);
    });
}

/// SINVAL-RESET vs a concurrent read: a reader either receives the messages
/// in order or is told to reset; it never reads a slot being overwritten.
#[test]
fn loom_reset_vs_concurrent_read() {
    loom::model(|| {
        let q = queue(2);
        q.send(&[Invalidation::Relation(1)]);
        let q2 = Arc::clone(&q);
        // Two more messages overflow the two-slot ring: session 0, which has
        // not read message 1, is reset unless it reads first.
        let writer = thread::spawn(move || q2.send(&[Invalidation::Relation(2), Invalidation::Relation(3)]));
        let mut got = Vec::new();
        let first = q.receive(0, &mut got);
        writer.join().unwrap();
        let second = q.receive(0, &mut got);
        let reset = first == Received::Reset || second == Received::Reset;
        if !reset {
            assert_eq!(got, [1, 2, 3].map(Invalidation::Relation), "{first:?} {second:?}");
        } else {
            // Before the reset an in-order prefix, after it the messages
            // sent since, in order: never a repeat, never out of order.
            let oids: Vec<u32> = got
                .iter()
                .map(|m| match m {
                    Invalidation::Relation(oid) => *oid,
                    other => panic!("unexpected {other:?}"),
                })
                .collect();
            assert!(oids.windows(2).all(|w| w[0] < w[1]), "{oids:?} {first:?} {second:?}");
        }
    });
}
