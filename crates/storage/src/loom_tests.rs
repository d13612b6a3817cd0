//! Loom models of the row header's lock-free protocol. Run with
//! `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=2 cargo test -p
//! snapscale-storage --release --lib loom_`.

use std::sync::Arc;

use loom::thread;
use snapscale_txn::{Hints, Xid};

use crate::version::{Version, NO_TID};

/// HINT-XMAX: a reader that decided "xmax aborted" for one deleter never
/// leaves that hint on a newer deleter installed concurrently.
#[test]
fn loom_stale_xmax_hint_never_sticks() {
    loom::model(|| {
        let v = Arc::new(Version::new(Xid(5), 0, ()));
        v.set_xmax(Xid(7), 0, false, NO_TID);
        let writer = {
            let v = Arc::clone(&v);
            thread::spawn(move || v.set_xmax(Xid(9), 0, false, 3))
        };
        let seen = v.header();
        if seen.xids.xmax == Xid(7) {
            let hints = v.hints_for(&seen);
            hints.set_bits(Hints::XMAX_INVALID); // "7 aborted"
            v.keep_hints(&seen, &hints);
        }
        writer.join().unwrap();
        let now = v.header();
        assert_eq!(now.xids.xmax, Xid(9));
        assert_eq!(v.hints_for(&now).get() & Hints::XMAX_INVALID, 0, "stale hint on the new deleter");
    });
}

/// XMAX-PUBLISH: a reader that sees the new xmax sees the `next` link and
/// cmax stored before it.
#[test]
fn loom_new_xmax_comes_with_its_link() {
    loom::model(|| {
        let v = Arc::new(Version::new(Xid(5), 0, ()));
        let writer = {
            let v = Arc::clone(&v);
            thread::spawn(move || v.set_xmax(Xid(9), 4, false, 3))
        };
        let h = v.header();
        if h.xids.xmax == Xid(9) {
            assert_eq!((h.next, h.xids.cmax), (3, 4), "xmax published before its link");
        }
        writer.join().unwrap();
    });
}
